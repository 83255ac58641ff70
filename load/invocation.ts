/**
 * argv → the options of a load run or merge: pure (the environment comes in as an argument), so it
 * is tested directly; bin/commands/load-*.ts declare the options and call these. Each message names
 * the option and the rule, and a programmatic caller gets the same checks: the target options'
 * rules are the ones every command shares (src/target.ts).
 */
import type { GithubEnvironment } from '../src/conform.ts';
import { LoadUsageError, UsageError } from '../src/errors.ts';
import type { KeyEnvironment } from '../src/profile.ts';
import { DEFAULT_KEY_ENV, targetKey, validateTargetOptions } from '../src/target.ts';
import { githubEnvironment } from '../reports/github.ts';
import type { FanoutOptions } from './fanout/run.ts';
import {
  FANOUT_DEFAULTS,
  MAX_CLIENTS_PER_HOST,
  MAX_SHARDS,
  parseDuration,
  parseRate,
  parseShard,
  parseStartAt,
  positiveInt,
} from './options.ts';
import { parseLoadReports } from './report/index.ts';
import type { RestOptions } from './rest/run.ts';
import { ARRIVALS } from './rest/schedule.ts';
import type { ReferenceProcessOptions } from './target.ts';
import { parseThresholds } from './thresholds.ts';
import { parseLabels } from './trend/history.ts';
import { parseMinEffect } from './trend/options.ts';

/**
 * The load tools: three runs, the merge of their results, the judgement of a history of runs
 * and the search for a capacity.
 */
export const LOAD_MODES = ['fanout', 'rest', 'calibrate', 'merge', 'trend', 'capacity'] as const;
export type LoadMode = (typeof LOAD_MODES)[number];
/** The modes that run one measurement. */
export type LoadRunMode = 'fanout' | 'rest' | 'calibrate';

/** What a load run was asked for. */
export interface LoadInvocation {
  mode: LoadRunMode;
  target: {
    profile?: string;
    target?: string;
    key?: string;
    ws?: string;
    keysFrom?: string;
    /** A PEM file of the CA that signs the target, trusted beside Node's own. */
    ca?: string;
    reference: ReferenceProcessOptions;
  };
  fanout: FanoutOptions;
  rest: RestOptions;
  reports: string[];
  outDir: string;
  progress: boolean | undefined;
  /** GitHub Actions' step summary file and run page (for `--report github`). */
  github: GithubEnvironment;
  /** `--history FILE`: the run's row is appended there; `--label`s go with it; `--judge` judges the file after. */
  history?: { file: string; labels: Record<string, string>; judge: boolean; minEffect?: number; groupBy?: string };
  /** `--remote-write URL`: live metrics every second, labelled with the `--label`s. */
  live?: { url: string; labels: Record<string, string> };
}

/** `conform load merge RESULT…`: the files, extra thresholds, report formats and folder. */
export interface MergeInvocation {
  files: string[];
  thresholds: string[];
  reports: string[];
  outDir: string;
}

type Argv = Record<string, unknown>;
export const one = (v: unknown): unknown => (Array.isArray(v) ? v[v.length - 1] : v);
export const str = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : String(one(v)));
export const list = (v: unknown): string[] | undefined =>
  v === undefined
    ? undefined
    : (Array.isArray(v) ? v : [v])
        .flatMap((x) => String(x).split(','))
        .map((x) => x.trim())
        .filter(Boolean);

/**
 * The target options of a load run: a profile, a URL with its key (`--key`, else the variable
 * `--key-env` names in `env`, else the first key of `--keys-from`), or neither: the reference
 * service in its own process. Checked by the rules every command shares.
 */
function targetArgs(argv: Argv, env: KeyEnvironment): Omit<LoadInvocation['target'], 'reference'> {
  const given = {
    target: str(argv.target),
    key: str(argv.key),
    ws: str(argv.ws),
    profile: str(argv.profile),
    ca: str(argv.ca),
  };
  const keyEnv = str(argv['key-env']) ?? DEFAULT_KEY_ENV;
  const key = targetKey({ ...given, keyEnv }, env);
  try {
    validateTargetOptions({ ...given, key, keyEnv }, { option: '--keys-from FILE', given: Boolean(argv['keys-from']) });
  } catch (err) {
    if (err instanceof UsageError) throw new LoadUsageError(err.message);
    throw err;
  }
  return {
    ...(given.profile ? { profile: given.profile } : {}),
    ...(given.target ? { target: given.target } : {}),
    ...(key ? { key } : {}),
    ...(given.ws ? { ws: given.ws } : {}),
    ...(given.ca ? { ca: given.ca } : {}),
    ...(str(argv['keys-from']) ? { keysFrom: str(argv['keys-from'])! } : {}),
  };
}

/** What the reference service started for the run (or calibrate's broadcast server) is told. */
export function referenceArgs(argv: Argv): ReferenceProcessOptions {
  const reference: ReferenceProcessOptions = {};
  if (argv['push-interval'] !== undefined)
    reference.tickMs = parseDuration(str(argv['push-interval'])!, '--push-interval');
  if (argv['move-probability'] !== undefined) {
    const p = Number(one(argv['move-probability']));
    if (!(p >= 0 && p <= 1))
      throw new LoadUsageError(
        `--move-probability ${String(one(argv['move-probability']))}: must be a number from 0 to 1`,
      );
    reference.moveProbability = p;
  }
  if (argv['service-rate'] !== undefined)
    reference.restServiceRate = parseRate(str(argv['service-rate'])!, '--service-rate');
  return reference;
}

/** `--warmup`: a duration, or 0 for none. */
const warmupArg = (argv: Argv): { warmupMs?: number } =>
  argv.warmup !== undefined
    ? { warmupMs: str(argv.warmup) === '0' ? 0 : parseDuration(str(argv.warmup)!, '--warmup') }
    : {};

/** The options of the fan-out clients (`fanout`, and `calibrate` against its own server). */
function fanoutArgs(argv: Argv, shared: Pick<FanoutOptions, 'durationMs' | 'pair' | 'thresholds'>): FanoutOptions {
  const workersArg = str(argv.workers);
  const fanout: FanoutOptions = {
    ...(argv.clients !== undefined
      ? { clients: positiveInt(one(argv.clients), '--clients', MAX_CLIENTS_PER_HOST * MAX_SHARDS) }
      : {}),
    ...(argv.pairs !== undefined ? { pairs: positiveInt(one(argv.pairs), '--pairs', 100) } : {}),
    ...(shared.pair ? { pair: shared.pair } : {}),
    ...(shared.durationMs !== undefined ? { durationMs: shared.durationMs } : {}),
    ...warmupArg(argv),
    ...(argv['ramp-rate'] !== undefined ? { rampRate: parseRate(str(argv['ramp-rate'])!, '--ramp-rate') } : {}),
    ...(workersArg !== undefined
      ? { workers: workersArg === 'auto' ? ('auto' as const) : positiveInt(workersArg, '--workers', 64) }
      : {}),
    ...(argv['subscribe-after-ramp'] ? { subscribeAfterRamp: true } : {}),
    ...(argv['validate-per-second'] !== undefined
      ? { validatePerSecond: Number(one(argv['validate-per-second'])) }
      : {}),
    ...(argv['loss-window'] !== undefined
      ? { updateWindowMs: parseDuration(str(argv['loss-window'])!, '--loss-window') }
      : {}),
    ...(argv.shard !== undefined ? { shard: parseShard(str(argv.shard)!) } : {}),
    ...(argv['start-at'] !== undefined ? { startAtMs: parseStartAt(str(argv['start-at'])!) } : {}),
    thresholds: shared.thresholds,
  };
  if (fanout.validatePerSecond !== undefined && !(fanout.validatePerSecond >= 0))
    throw new LoadUsageError('--validate-per-second: must be 0 (off) or more');
  return fanout;
}

/** The options of REST load. */
function restArgs(argv: Argv, shared: Pick<RestOptions, 'durationMs' | 'pair' | 'thresholds'>): RestOptions {
  const endpoint = str(argv.endpoint);
  if (endpoint !== undefined && endpoint !== 'price' && endpoint !== 'pairs')
    throw new LoadUsageError(`--endpoint ${endpoint}: use price or pairs`);
  const arrival = str(argv.arrival);
  if (arrival !== undefined && !ARRIVALS.includes(arrival as 'uniform'))
    throw new LoadUsageError(`--arrival ${arrival}: use ${ARRIVALS.join(' or ')}`);
  return {
    ...(endpoint ? { endpoint: endpoint as 'price' | 'pairs' } : {}),
    ...(argv.rate !== undefined
      ? { rate: str(argv.rate) === 'max' ? ('max' as const) : parseRate(str(argv.rate)!, '--rate') }
      : {}),
    ...(arrival ? { arrival: arrival as 'uniform' | 'poisson' } : {}),
    ...(argv.seed !== undefined ? { seed: positiveInt(one(argv.seed), '--seed', 2 ** 31) } : {}),
    ...(argv.connections !== undefined
      ? { connections: positiveInt(one(argv.connections), '--connections', 10_000) }
      : {}),
    ...(argv.pipelining !== undefined ? { pipelining: positiveInt(one(argv.pipelining), '--pipelining', 100) } : {}),
    ...(argv.workers !== undefined
      ? { workers: str(argv.workers) === 'auto' ? ('auto' as const) : positiveInt(str(argv.workers)!, '--workers', 64) }
      : {}),
    ...(shared.durationMs !== undefined ? { durationMs: shared.durationMs } : {}),
    ...warmupArg(argv),
    ...(shared.pair ? { pair: shared.pair } : {}),
    thresholds: shared.thresholds,
  };
}

/**
 * Turns parsed argv of a run (`mode` fanout, rest or calibrate) into library options; throws
 * LoadUsageError or ThresholdError naming the option and the rule. `env` supplies the key when
 * `--key` is absent (`--key-env`, default DEFAULT_KEY_ENV) and GitHub Actions' summary file.
 */
export function parseLoadArgs(argv: Argv, env: KeyEnvironment = {}): LoadInvocation {
  const mode = str(argv.mode) as LoadMode;
  if (!LOAD_MODES.includes(mode))
    throw new LoadUsageError(`conform load ${String(argv.mode)}: unknown mode; use ${LOAD_MODES.join(', ')}`);
  if (mode === 'merge' || mode === 'trend' || mode === 'capacity')
    throw new LoadUsageError(`conform load ${mode} is not one run: it has its own parser`);
  const thresholds = list(argv.threshold) ?? [];
  parseThresholds(thresholds, mode === 'rest' ? 'rest' : 'fanout'); // fail fast, before anything starts
  const target = targetArgs(argv, env);
  const durationMs = argv.duration === undefined ? undefined : parseDuration(str(argv.duration)!, '--duration');
  const reference = referenceArgs(argv);
  const pair = list(argv.pair);
  const shared = { ...(durationMs !== undefined ? { durationMs } : {}), ...(pair ? { pair } : {}), thresholds };
  return {
    mode,
    target: { ...target, reference },
    fanout: fanoutArgs(argv, shared),
    rest: restArgs(argv, shared),
    reports: parseLoadReports(list(argv.report), 'run'),
    outDir: str(argv.out) ?? FANOUT_DEFAULTS.outDir,
    progress: argv.progress === undefined ? undefined : Boolean(one(argv.progress)),
    github: githubEnvironment(env),
    ...historyArgs(argv, mode),
  };
}

/**
 * `--history FILE [--judge [--min-effect P]]` and `--remote-write URL` of a fanout or rest run,
 * each with the run's `--label NAME=VALUE`s.
 */
function historyArgs(argv: Argv, mode: LoadRunMode): Pick<LoadInvocation, 'history' | 'live'> {
  const file = str(argv.history);
  const url = str(argv['remote-write']);
  const given = ['judge', 'min-effect', 'group-by'].filter((o) => argv[o] !== undefined && argv[o] !== false);
  if (file === undefined && given.length) throw new LoadUsageError(`--${given[0]}: only with --history FILE`);
  if (file === undefined && url === undefined) {
    if (argv.label !== undefined) throw new LoadUsageError('--label: only with --history FILE or --remote-write URL');
    return {};
  }
  if (mode === 'calibrate')
    throw new LoadUsageError('--history, --remote-write: calibrate measures the generator, not a target');
  const labels = parseLabels(
    (Array.isArray(argv.label) ? argv.label : argv.label === undefined ? [] : [argv.label]).map(String),
  );
  const minEffect = argv['min-effect'] === undefined ? {} : { minEffect: parseMinEffect(one(argv['min-effect'])) };
  const by = argv['group-by'] === undefined ? undefined : String(one(argv['group-by']));
  if (by !== undefined && !Object.hasOwn(labels, by))
    throw new LoadUsageError(`--group-by ${by}: give the run that label too (--label NAME=VALUE)`);
  const groupBy = by === undefined ? {} : { groupBy: by };
  return {
    ...(file === undefined
      ? {}
      : { history: { file, labels, judge: Boolean(one(argv.judge)), ...minEffect, ...groupBy } }),
    ...(url === undefined ? {} : { live: { url: parseRemoteWriteUrl(url), labels } }),
  };
}

/** `--remote-write URL`: an http or https URL (Prometheus: …/api/v1/write). */
function parseRemoteWriteUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new LoadUsageError(`--remote-write ${url}: not a URL; give e.g. http://127.0.0.1:9090/api/v1/write`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new LoadUsageError(`--remote-write ${url}: must be an http or https URL`);
  return u.href;
}

/** Turns argv of `conform load merge` into a MergeInvocation; throws LoadUsageError. */
export function parseMergeArgs(argv: Argv): MergeInvocation {
  const files = (Array.isArray(argv.results) ? argv.results : argv.results === undefined ? [] : [argv.results]).map(
    String,
  );
  if (!files.length)
    throw new LoadUsageError(
      'conform load merge: give the RESULT files to merge (load-fanout.json, k6 JSON results, load-rest.json)',
    );
  return {
    files,
    thresholds: list(argv.threshold) ?? [],
    reports: parseLoadReports(list(argv.report), 'merge'),
    outDir: str(argv.out) ?? FANOUT_DEFAULTS.outDir,
  };
}
