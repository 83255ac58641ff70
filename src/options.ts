/**
 * Options of a conform run, their defaults and their validation. Lives in the library so a
 * programmatic caller gets the same checks as the CLI; each message names the option and the rule.
 */
import { UsageError } from './errors.ts';
import { RUN_DEFAULTS } from './runner.ts';
import { DEFAULT_KEY_ENV, validateTargetOptions, type TargetOptions } from './target.ts';
import { checkSeed, parseBudget } from './explore/settings.ts';

/**
 * Everything a run can be told; each field's default is in OPTION_DEFAULTS. What the run is
 * pointed at (the target, its key, the stream's transport) is the target options of src/target.ts.
 */
export interface ConformOptions extends TargetOptions {
  only: string[];
  skip: string[];
  list: boolean;
  /** Names of report formats, checked against the registry the caller gives (reports/index.ts). */
  report: string[];
  out: string;
  concurrency: number;
  /** Per-check timeout, ms. */
  timeout: number;
  bail: boolean;
  rerunFailed?: string;
  baseline?: string;
  failOnChange: boolean;
  /** Largest REST body read, bytes. */
  maxBody: number;
  /** Largest WebSocket message accepted, bytes. */
  maxPayload: number;
  /** With --list: the traceability matrix (spec statement → checks → faults) instead of the list of checks. */
  matrix: boolean;
  /**
   * Percentage of the stated rules that need no operator state which have to be checked, else
   * exit 1; overrides the profile's `minCoverage`.
   */
  minCoverage?: number;
  /** The console lists every stated rule the run did not check in full, with why and what would. */
  listUnchecked: boolean;
  /** The console's whole detail: a line per finished check, every failure and observation in full. */
  verbose: boolean;
  /**
   * Longest a 50009 for a connection within a key's allowance is waited out, ms; overrides the
   * profile's `timing.slotReleaseWaitMs` (default 30 s).
   */
  slotReleaseWait?: number;
  /** Bound on the run's time waiting on the rate limit, ms; overrides the profile's `maxRateWaitMs`. */
  maxRateWait?: number;
  /** Adds the explorer (ws.explore) for this long, as typed (`60s`, `500ms`, `2m`). */
  explore?: string;
  /** The explorer's seed: the same seed draws the same sequences; default drawn and reported. */
  seed?: number;
  /** A replay file of the explorer: ws.explore runs its steps instead of exploring. */
  replay?: string;
}

/** Defaults: console report into ./conform-reports (git-ignored), the runner's concurrency and timeout. */
export const OPTION_DEFAULTS: Readonly<
  Omit<
    ConformOptions,
    | 'target'
    | 'key'
    | 'ws'
    | 'profile'
    | 'rerunFailed'
    | 'baseline'
    | 'transport'
    | 'event'
    | 'minCoverage'
    | 'slotReleaseWait'
    | 'maxRateWait'
    | 'explore'
    | 'seed'
    | 'replay'
  >
> = Object.freeze({
  keyEnv: DEFAULT_KEY_ENV,
  only: [],
  skip: [],
  list: false,
  report: ['console'] as ConformOptions['report'],
  out: 'conform-reports',
  concurrency: RUN_DEFAULTS.concurrency,
  timeout: RUN_DEFAULTS.timeoutMs,
  bail: false,
  failOnChange: false,
  maxBody: RUN_DEFAULTS.maxBodyBytes,
  maxPayload: RUN_DEFAULTS.maxPayloadBytes,
  matrix: false,
  listUnchecked: false,
  verbose: false,
});

/** Most checks in flight at once; beyond this the harness, not the target, is measured. */
export const MAX_CONCURRENCY = 64;

/**
 * Throws UsageError naming the first bad option, the target options first (src/target.ts). `key`
 * must already be read from the environment (`targetKey`); `reportFormats` are the names of the
 * report registry the run is given.
 */
export function validateOptions(o: ConformOptions, reportFormats: readonly string[]): void {
  validateTargetOptions(o);
  if (!Number.isInteger(o.concurrency) || o.concurrency < 1 || o.concurrency > MAX_CONCURRENCY)
    throw new UsageError(`--concurrency: must be an integer from 1 to ${MAX_CONCURRENCY} (got ${o.concurrency})`);
  if (!Number.isInteger(o.timeout) || o.timeout < 1)
    throw new UsageError(`--timeout: must be a positive integer of milliseconds (got ${o.timeout})`);
  if (o.report.length === 0) throw new UsageError(`--report: name at least one of ${reportFormats.join(', ')}`);
  for (const f of o.report)
    if (!reportFormats.includes(f))
      throw new UsageError(`--report: unknown format "${f}" (use ${reportFormats.join(', ')})`);
  if (!o.out) throw new UsageError('--out: must name a directory');
  if (o.failOnChange && !o.baseline) throw new UsageError('--fail-on-change needs --baseline REPORT.json');
  for (const [name, v] of [
    ['--max-body', o.maxBody],
    ['--max-payload', o.maxPayload],
  ] as const) {
    if (!Number.isInteger(v) || v < 1024)
      throw new UsageError(`${name}: must be an integer of bytes, at least 1024 (got ${v})`);
  }
  if (o.matrix && !o.list) throw new UsageError('--matrix goes with --list');
  if (o.listUnchecked && o.list) throw new UsageError('--list-unchecked lists what a run left unchecked: drop --list');
  if (o.listUnchecked && !o.report.includes('console'))
    throw new UsageError('--list-unchecked prints to the console: add console to --report');
  if (o.minCoverage !== undefined && !(Number.isFinite(o.minCoverage) && o.minCoverage >= 0 && o.minCoverage <= 100))
    throw new UsageError(`--min-coverage: must be a percentage from 0 to 100 (got ${o.minCoverage})`);
  if (o.slotReleaseWait !== undefined && !(Number.isInteger(o.slotReleaseWait) && o.slotReleaseWait >= 0))
    throw new UsageError(`--slot-release-wait: must be a whole number of milliseconds (got ${o.slotReleaseWait})`);
  if (o.maxRateWait !== undefined && !(Number.isInteger(o.maxRateWait) && o.maxRateWait >= 1))
    throw new UsageError(`--max-rate-wait: must be a positive integer of milliseconds (got ${o.maxRateWait})`);
  if (o.explore !== undefined) parseBudget(o.explore, '--explore');
  if (o.seed !== undefined) checkSeed(o.seed);
  if (o.seed !== undefined && o.explore === undefined && o.replay === undefined)
    throw new UsageError('--seed goes with --explore');
}

/**
 * Whether the console report uses ANSI colours: FORCE_COLOR decides when set (`0` or `false` turn
 * colour off, any other value on), else a non-empty NO_COLOR turns it off (no-color.org), else a
 * terminal gets colour. FORCE_COLOR winning over NO_COLOR is Node's own rule.
 */
export function colorWanted(env: { NO_COLOR?: string; FORCE_COLOR?: string }, tty: boolean): boolean {
  if (env.FORCE_COLOR !== undefined) return !['0', 'false'].includes(env.FORCE_COLOR.toLowerCase());
  if (env.NO_COLOR) return false;
  return tty;
}
