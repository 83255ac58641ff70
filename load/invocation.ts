/**
 * `conform load <fanout|rest|calibrate|merge>`: a yargs CommandModule, thin. `parseLoadArgs` turns
 * argv into library options (pure, tested), `runLoad` calls the library and writes the reports,
 * and the handler sets the exit code: 0 every threshold held, 1 one crossed, 2 usage error.
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { readFile } from 'node:fs/promises';
import { isBadInput, LoadUsageError, MergeInputError } from '../src/errors.ts';
import { runCalibrate } from './calibrate/run.ts';
import { runFanout, type FanoutOptions } from './fanout/run.ts';
import {
  FANOUT_DEFAULTS,
  MAX_CLIENTS_PER_HOST,
  MAX_SHARDS,
  parseDuration,
  parseRate,
  parseReports,
  parseShard,
  parseStartAt,
  positiveInt,
  REST_DEFAULTS,
} from './options.ts';
import { mergeResults, parseResultText, type MergeInput } from './merge.ts';
import { formatProgress, plannedSeconds } from './report/console.ts';
import { loadAnnotations, writeLoadCiReports } from './report/ci.ts';
import { githubEnvironment } from '../reports/github.ts';
import { maskKeys } from '../src/redact.ts';
import type { GithubEnvironment } from '../src/conform.ts';
import { formatMergedSummary, writeMergedReports } from './report/merge.ts';
import { resultLine, summary, writeReports, type LoadReport } from './report/write.ts';
import { runRest, type RestOptions } from './rest/run.ts';
import { ARRIVALS } from './rest/schedule.ts';
import { resolveTarget, type LoadTarget, type ReferenceProcessOptions } from './target.ts';
import { parseThresholds, type LoadKind } from './thresholds.ts';

export const LOAD_EXIT = { ok: 0, thresholdCrossed: 1, usage: 2 } as const;
export const LOAD_MODES = ['fanout', 'rest', 'calibrate', 'merge'] as const;
export type LoadMode = (typeof LOAD_MODES)[number];

export interface LoadInvocation {
  mode: LoadMode;
  target: {
    profile?: string;
    target?: string;
    key?: string;
    ws?: string;
    keysFrom?: string;
    reference: ReferenceProcessOptions;
  };
  fanout: FanoutOptions;
  rest: RestOptions;
  reports: string[];
  outDir: string;
  progress: boolean | undefined;
  /** GitHub Actions' step summary file and run page (for `--report github`). */
  github: GithubEnvironment;
}

const one = (v: unknown): unknown => (Array.isArray(v) ? v[v.length - 1] : v);
const str = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : String(one(v)));
const list = (v: unknown): string[] | undefined =>
  v === undefined
    ? undefined
    : (Array.isArray(v) ? v : [v])
        .flatMap((x) => String(x).split(','))
        .map((x) => x.trim())
        .filter(Boolean);

/**
 * Turns parsed argv into library options; throws LoadUsageError or ThresholdError naming the
 * option and the rule. `env` supplies the key when `--key` is absent (`--key-env`, default CONFORM_API_KEY).
 */
export function parseLoadArgs(
  argv: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>> = {},
): LoadInvocation {
  const mode = str(argv.mode) as LoadMode;
  if (!LOAD_MODES.includes(mode))
    throw new LoadUsageError(`conform load ${String(argv.mode)}: unknown mode; use ${LOAD_MODES.join(', ')}`);
  if (mode === 'merge')
    throw new LoadUsageError('conform load merge reads result files, it starts no run (parseMergeArgs)');
  const kind: LoadKind = mode === 'rest' ? 'rest' : 'fanout';
  const thresholds = list(argv.threshold) ?? [];
  parseThresholds(thresholds, kind); // fail fast, before anything starts
  const target = str(argv.target);
  const profile = str(argv.profile);
  if (target && profile) throw new LoadUsageError('--target and --profile: give one, not both');
  const key = str(argv.key) ?? (target ? env[str(argv['key-env']) ?? 'CONFORM_API_KEY'] : undefined);
  if (target && !key && !argv['keys-from'])
    throw new LoadUsageError(
      '--target needs a key: --key KEY, the CONFORM_API_KEY environment variable (see --key-env) or --keys-from FILE',
    );
  const workersArg = str(argv.workers);
  const duration = argv.duration === undefined ? undefined : parseDuration(str(argv.duration)!, '--duration');
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
  const pair = list(argv.pair);
  const fanout: FanoutOptions = {
    ...(argv.clients !== undefined
      ? { clients: positiveInt(one(argv.clients), '--clients', MAX_CLIENTS_PER_HOST * MAX_SHARDS) }
      : {}),
    ...(argv.pairs !== undefined ? { pairs: positiveInt(one(argv.pairs), '--pairs', 100) } : {}),
    ...(pair ? { pair } : {}),
    ...(duration !== undefined ? { durationMs: duration } : {}),
    ...(argv.warmup !== undefined
      ? { warmupMs: str(argv.warmup) === '0' ? 0 : parseDuration(str(argv.warmup)!, '--warmup') }
      : {}),
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
    thresholds,
  };
  if (fanout.validatePerSecond !== undefined && !(fanout.validatePerSecond >= 0))
    throw new LoadUsageError('--validate-per-second: must be 0 (off) or more');
  const endpoint = str(argv.endpoint);
  if (endpoint !== undefined && endpoint !== 'price' && endpoint !== 'pairs')
    throw new LoadUsageError(`--endpoint ${endpoint}: use price or pairs`);
  const arrival = str(argv.arrival);
  if (arrival !== undefined && !ARRIVALS.includes(arrival as 'uniform'))
    throw new LoadUsageError(`--arrival ${arrival}: use ${ARRIVALS.join(' or ')}`);
  const rest: RestOptions = {
    ...(endpoint ? { endpoint: endpoint as 'price' | 'pairs' } : {}),
    ...(argv.rate !== undefined
      ? { rate: str(argv.rate) === 'max' ? ('max' as const) : parseRate(str(argv.rate)!, '--rate') }
      : {}),
    ...(arrival ? { arrival: arrival as 'uniform' | 'poisson' } : {}),
    ...(argv.seed !== undefined ? { seed: positiveInt(one(argv.seed), '--seed', 2 ** 31) } : {}),
    ...(argv.connections !== undefined
      ? { connections: positiveInt(one(argv.connections), '--connections', 10_000) }
      : {}),
    ...(duration !== undefined ? { durationMs: duration } : {}),
    ...(argv.warmup !== undefined
      ? { warmupMs: str(argv.warmup) === '0' ? 0 : parseDuration(str(argv.warmup)!, '--warmup') }
      : {}),
    ...(pair ? { pair } : {}),
    thresholds,
  };
  return {
    mode,
    target: {
      ...(profile ? { profile } : {}),
      ...(target ? { target } : {}),
      ...(key ? { key } : {}),
      ...(str(argv.ws) ? { ws: str(argv.ws)! } : {}),
      ...(str(argv['keys-from']) ? { keysFrom: str(argv['keys-from'])! } : {}),
      reference,
    },
    fanout,
    rest,
    reports: parseReports(list(argv.report)),
    outDir: str(argv.out) ?? FANOUT_DEFAULTS.outDir,
    progress: argv.progress === undefined ? undefined : Boolean(one(argv.progress)),
    github: githubEnvironment(env),
  };
}

/** `conform load merge RESULT…`: the files, extra thresholds, report formats and folder. */
export interface MergeInvocation {
  files: string[];
  thresholds: string[];
  reports: string[];
  outDir: string;
}

const MERGE_REPORTS = ['console', 'json', 'html', 'junit'];

/** Turns argv of `conform load merge` into a MergeInvocation; throws LoadUsageError. */
export function parseMergeArgs(argv: Record<string, unknown>): MergeInvocation {
  const files = (Array.isArray(argv.results) ? argv.results : argv.results === undefined ? [] : [argv.results]).map(
    String,
  );
  if (!files.length)
    throw new LoadUsageError(
      'conform load merge: give the RESULT files to merge (load-fanout.json, k6 JSON results, load-rest.json)',
    );
  // The shared --report default (console,json,html) means "everything" here, JUnit included.
  const given = list(argv.report);
  const reports = !given || given.join(',') === FANOUT_DEFAULTS.reports.join(',') ? [...MERGE_REPORTS] : given;
  for (const r of reports)
    if (!MERGE_REPORTS.includes(r))
      throw new LoadUsageError(`--report ${r}: unknown format; use ${MERGE_REPORTS.join(', ')}`);
  return { files, thresholds: list(argv.threshold) ?? [], reports, outDir: str(argv.out) ?? FANOUT_DEFAULTS.outDir };
}

/** Reads the results, merges them, writes the reports; returns the exit code. */
export async function runMerge(inv: MergeInvocation, io: Pick<LoadIO, 'out'>): Promise<number> {
  const inputs: MergeInput[] = [];
  for (const file of inv.files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new MergeInputError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    const data = parseResultText(text);
    if (data === undefined) throw new MergeInputError(`${file}: neither JSON nor a log with a conform-result line`);
    inputs.push({ file, data });
  }
  const report = mergeResults(inputs, inv.thresholds);
  if (inv.reports.includes('console')) io.out(`${formatMergedSummary(report)}\n`);
  for (const f of await writeMergedReports(report, inv.reports, inv.outDir)) io.out(`wrote ${f}\n`);
  return report.thresholds.every((t) => t.ok) ? LOAD_EXIT.ok : LOAD_EXIT.thresholdCrossed;
}

export interface LoadIO {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Whether stderr is a TTY (live progress line). */
  tty: boolean;
}

/** Runs an invocation, writes its reports, and returns the exit code. */
export async function runLoad(inv: LoadInvocation, io: LoadIO): Promise<number> {
  const live = inv.progress ?? io.tty;
  const plannedS =
    inv.mode === 'merge'
      ? undefined
      : inv.mode === 'rest'
        ? plannedSeconds('rest', inv.rest, REST_DEFAULTS)
        : plannedSeconds(inv.mode, inv.fanout, FANOUT_DEFAULTS);
  const onProgress = live
    ? (p: Parameters<typeof formatProgress>[0]): void =>
        io.err(`\r\x1b[2K${formatProgress({ ...p, ...(plannedS === undefined ? {} : { plannedS }) })}`)
    : undefined;
  let target: LoadTarget | null = null;
  let report: LoadReport;
  try {
    if (inv.mode === 'calibrate') {
      const push = inv.target.reference.tickMs;
      report = await runCalibrate({
        ...inv.fanout,
        ...(push ? { pushIntervalMs: push } : {}),
        ...(onProgress ? { onProgress } : {}),
      });
    } else {
      // `rest` never opens a stream, so it needs no stream URL.
      target = await resolveTarget({ ...inv.target, needsStream: inv.mode === 'fanout' });
      report =
        inv.mode === 'fanout'
          ? await runFanout(target, { ...inv.fanout, ...(onProgress ? { onProgress } : {}) })
          : await runRest(target, {
              ...inv.rest,
              ...(onProgress ? { onProgress: (p) => onProgress({ phase: 'rest', ...p }) } : {}),
            });
    }
  } finally {
    if (live) io.err('\r\x1b[2K');
    await target?.close();
  }
  const secrets = target ? target.keys.map((k) => k.key) : [];
  if (inv.target.key) secrets.push(inv.target.key);
  const text = summary(report);
  if (inv.reports.includes('console')) io.out(`${text}\n`);
  if (inv.reports.includes('result')) io.out(resultLine(report, secrets));
  const written = await writeReports(report, inv.reports, inv.outDir, secrets);
  const scrub = maskKeys(secrets, '[redacted]');
  if (inv.reports.includes('github')) for (const a of loadAnnotations(report)) io.out(`${scrub(a)}\n`);
  written.push(...(await writeLoadCiReports(report, inv.reports, inv.outDir, text, inv.github, scrub)));
  for (const f of written) io.out(`wrote ${f}\n`);
  return report.thresholds.every((t) => t.ok) ? LOAD_EXIT.ok : LOAD_EXIT.thresholdCrossed;
}

/** Options shared by the three modes; `target`, `key`, `ws`, `profile` match the main command's. */
export function loadBuilder(y: Argv): Argv {
  return y
    .positional('mode', {
      choices: LOAD_MODES,
      describe:
        'fanout: WebSocket fan-out latency, skew and loss; rest: REST latency at a ' +
        "fixed arrival rate, or throughput with --rate max; calibrate: the generator's " +
        "own floor; merge: one report from several hosts' results",
      demandOption: true,
    })
    .positional('results', {
      type: 'string',
      array: true,
      describe: 'merge: result files (conform load JSON or k6 JSON from load/k6)',
    })
    .options({
      target: {
        type: 'string',
        describe:
          'REST base URL of the target; without --target or --profile the ' +
          'reference service is started in its own process',
      },
      key: { type: 'string', describe: 'API key for --target (prefer --key-env)' },
      'key-env': {
        type: 'string',
        default: 'CONFORM_API_KEY',
        describe: 'environment variable holding the key for --target',
      },
      ws: { type: 'string', describe: 'WebSocket URL for --target' },
      profile: { type: 'string', describe: 'target profile JSON' },
      'keys-from': {
        type: 'string',
        describe: 'file of keys to spread clients over: JSON [{ key, connections }] or KEY[,CONNECTIONS] lines',
      },
      clients: { type: 'number', describe: `WebSocket clients (default ${FANOUT_DEFAULTS.clients})` },
      pairs: { type: 'number', describe: `pairs per client, picked from /v1/pairs (default ${FANOUT_DEFAULTS.pairs})` },
      pair: { type: 'string', array: true, describe: 'pair codes to use instead (repeat or comma-separate)' },
      duration: {
        type: 'string',
        describe:
          `measured phase after the ramp, e.g. 20s (default ${FANOUT_DEFAULTS.durationMs / 1000}s; ` +
          `rest ${REST_DEFAULTS.durationMs / 1000}s)`,
      },
      'ramp-rate': {
        type: 'string',
        describe: `new connections per second, open model, e.g. 3000/s (default ${FANOUT_DEFAULTS.rampRate}/s)`,
      },
      workers: { type: 'string', describe: 'worker threads for the clients: auto (one per core) or a number' },
      threshold: {
        type: 'string',
        array: true,
        describe: "gate the exit code, e.g. 'latency.p99<50' 'skew.p99<20' 'lost==0' 'errors==0'",
      },
      // Defaults restated: the main command defines report and out with defaults of its own.
      report: {
        type: 'string',
        array: true,
        default: [...FANOUT_DEFAULTS.reports],
        describe:
          'report formats: console,json,html,ctrf,github,result (one conform-result line on stdout); ' +
          'merge: console,json,html,junit',
      },
      out: { type: 'string', default: FANOUT_DEFAULTS.outDir, describe: 'report folder' },
      progress: { type: 'boolean', describe: 'live progress line on stderr (default: when stderr is a TTY)' },
      'subscribe-after-ramp': {
        type: 'boolean',
        describe: 'connect every client first, then subscribe them all: the ramp is measured without traffic',
      },
      'validate-per-second': {
        type: 'number',
        describe:
          `push frames validated per second per worker; 0 = off ` +
          `(default ${FANOUT_DEFAULTS.validatePerSecond}: every frame at lower rates)`,
      },
      'loss-window': {
        type: 'string',
        describe:
          `a subscribed client that has not received an update this long after the first ` +
          `did has lost it (default ${FANOUT_DEFAULTS.updateWindowMs}ms)`,
      },
      shard: {
        type: 'string',
        describe:
          "fanout: this host's share i/n of a run spread over n hosts (--clients is " +
          "the whole run's; keys assigned over the whole run)",
      },
      'start-at': {
        type: 'string',
        describe:
          "fanout: wall-clock start of the whole run's ramp on every host (ISO date or " +
          "epoch ms); the measured window is the shared schedule's",
      },
      'push-interval': {
        type: 'string',
        describe: "embedded reference and calibrate: the server's push interval (default 100ms, i.e. 10 Hz per pair)",
      },
      'move-probability': {
        type: 'number',
        describe: 'embedded reference only: chance per push that a price moves (default 0.5)',
      },
      endpoint: { type: 'string', describe: 'rest: price or pairs (default price)' },
      rate: {
        type: 'string',
        describe:
          `rest: requests per second at intended times, latency from the intended send ` +
          `time (open model, default ${String(REST_DEFAULTS.rate)}); max: connections ` +
          `back to back, the most the target serves (closed model)`,
      },
      arrival: {
        type: 'string',
        describe:
          `rest, open model: intended times uniform ` +
          `(evenly spaced) or poisson ` +
          `(default ${REST_DEFAULTS.arrival})`,
      },
      seed: { type: 'number', describe: `rest: seed of the Poisson arrivals (default ${REST_DEFAULTS.seed})` },
      connections: {
        type: 'number',
        describe:
          `rest: most HTTP connections (open model) or connections sending back to ` +
          `back (max) (default ${REST_DEFAULTS.connections})`,
      },
      warmup: {
        type: 'string',
        describe:
          `settling time excluded from the figures: after the ramp (fanout, ` +
          `default ${FANOUT_DEFAULTS.warmupMs / 1000}s) or before the measured requests ` +
          `(rest, default ${REST_DEFAULTS.warmupMs / 1000}s)`,
      },
    });
}

/** `conform load <fanout|rest|calibrate>`; bin/cli.ts registers it. */
export const loadCommand: CommandModule = {
  command: 'load <mode> [results..]',
  describe:
    'load tools: fan-out latency, skew and loss; REST throughput; generator ' +
    "calibration; merging several hosts' results",
  builder: loadBuilder,
  async handler(argv: ArgumentsCamelCase) {
    try {
      if (argv.mode === 'merge') {
        process.exitCode = await runMerge(parseMergeArgs(argv as Record<string, unknown>), {
          out: (t) => process.stdout.write(t),
        });
        return;
      }
      const inv = parseLoadArgs(argv as Record<string, unknown>, process.env);
      process.exitCode = await runLoad(inv, {
        out: (t) => process.stdout.write(t),
        err: (t) => process.stderr.write(t),
        tty: process.stderr.isTTY === true,
      });
    } catch (err) {
      if (isBadInput(err)) {
        process.stderr.write(`conform: ${err.message}\n`);
        process.exitCode = LOAD_EXIT.usage;
        return;
      }
      throw err;
    }
  },
};
