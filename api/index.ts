/**
 * The package's programmatic entry, `import { runConformance, startReferenceServer } from
 * 'conform-harness'`: the suite run against a target, returning what the JSON report holds, and
 * the reference service. It joins the layers as bin/ does for the command line, without argv, exit
 * codes or output of its own: bad input is thrown (a `ConformError` with its stable `code`), and
 * nothing is printed unless `log` is given.
 */
import { readFileSync } from 'node:fs';
import { conformRun, type RunState } from '../src/conform.ts';
import { PACKAGE_JSON_URL } from '../src/module-url.ts';
import { OPTION_DEFAULTS, type ConformOptions } from '../src/options.ts';
import type { Profile } from '../src/profile.ts';
import type { RunEvent } from '../src/runner.ts';
import { targetKey, type Transport } from '../src/target.ts';
import { REPORTS } from '../reports/index.ts';
import { jsonReport, type JsonReport } from '../reports/json.ts';
import { startReferenceServer } from '../reference/index.ts';
import { CHECKS } from '../suites/index.ts';

export {
  coveringSeeds,
  DIALECT_SPACE,
  drawDialect,
  FAULTS,
  parseDialect,
  startReferenceServer,
  type Dialect,
  type FaultName,
  type PartialDialect,
  type ReferenceConfig,
  type ReferenceOptions,
  type ReferenceServer,
} from '../reference/index.ts';
export { ConformError, ERROR_CODES } from '../src/errors.ts';
export type { CheckResult, Evidence, Observation, Violation } from '../src/check.ts';
export type { Profile } from '../src/profile.ts';
export type { RunSummary, TargetInfo } from '../src/runner.ts';
export type { Transport } from '../src/target.ts';
export type { Cause } from '../reports/causes.ts';

/** What `runConformance` returns: the JSON report's content (`conform-report.json`), as an object. */
export type ConformanceReport = JsonReport;

/**
 * What a run is pointed at and how it runs; the command line's options, by their camel-case names.
 * With neither `profile` nor `target`, the embedded reference service is started and checked.
 */
export interface ConformanceOptions {
  /** A profile file, or the profile itself (validated as a file's would be: `server.profile` will do). */
  profile?: string | Profile;
  /** REST base URL of a target; discovery then learns the rest with one key. */
  target?: string;
  /** The key for `target`; else read from the environment variable `keyEnv` of `env`. */
  key?: string;
  /** Default `CONFORM_API_KEY`. */
  keyEnv?: string;
  /** The stream's URL for `target`, when it is not found on the REST origin. */
  ws?: string;
  /** Stream transport for `target` or the embedded service: `ws` (default) or `socketio` (with `event`). */
  transport?: Transport;
  event?: string;
  /** A PEM file of the CA that signs the target's certificate, trusted beside Node's own (`--ca`). */
  ca?: string;
  /** Check ids, id prefixes or tags to run (default: every check but the disruptive ones). */
  only?: string[];
  /** Check ids, id prefixes or tags to leave out. */
  skip?: string[];
  /** Checks in flight at once. */
  concurrency?: number;
  /** Per-check timeout, ms. */
  timeout?: number;
  bail?: boolean;
  /** The run fails (`summary.verdict` `fail`) when fewer than this percentage of the rules were checked. */
  minCoverage?: number;
  /** An earlier JSON report to compare with: `changes` of the result. */
  baseline?: string;
  /** Report files to write as well (`json`, `junit`, `html`, `ctrf`), into `out` (default `conform-reports`). */
  reports?: string[];
  out?: string;
  /** Largest REST body read, and largest stream message accepted, bytes. */
  maxBody?: number;
  maxPayload?: number;
  /** Longest a refused connection within a key's allowance is waited out, ms. */
  slotReleaseWait?: number;
  /** Longest the run waits on the target's rate limit in all, ms. */
  maxRateWait?: number;
  /** Receives what the command line prints (discovery, the console report); default: nothing is printed. */
  log?: (text: string) => void;
  /** What `log` gets is the console in full (`--verbose`). */
  verbose?: boolean;
  /** Where keys (`keyEnv`, a profile's `keyEnv` entries) are read; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Stops the run; the checks still running end as skipped. */
  signal?: AbortSignal;
}

const VERSION = (JSON.parse(readFileSync(PACKAGE_JSON_URL, 'utf8')) as { version: string }).version;

/** The options of a run as the library takes them; the console report only goes to `log`. */
function conformOptions(o: ConformanceOptions, env: Readonly<Record<string, string | undefined>>): ConformOptions {
  const reports = [...new Set(['console', ...(o.reports ?? [])])];
  const options: ConformOptions = {
    ...OPTION_DEFAULTS,
    ...(o.profile !== undefined ? { profile: o.profile } : {}),
    ...(o.target !== undefined ? { target: o.target } : {}),
    ...(o.key !== undefined ? { key: o.key } : {}),
    keyEnv: o.keyEnv ?? OPTION_DEFAULTS.keyEnv,
    ...(o.ws !== undefined ? { ws: o.ws } : {}),
    ...(o.transport !== undefined ? { transport: o.transport } : {}),
    ...(o.event !== undefined ? { event: o.event } : {}),
    ...(o.ca !== undefined ? { ca: o.ca } : {}),
    only: o.only ?? [],
    skip: o.skip ?? [],
    report: reports,
    out: o.out ?? OPTION_DEFAULTS.out,
    concurrency: o.concurrency ?? OPTION_DEFAULTS.concurrency,
    timeout: o.timeout ?? OPTION_DEFAULTS.timeout,
    bail: o.bail ?? false,
    verbose: o.verbose ?? false,
    maxBody: o.maxBody ?? OPTION_DEFAULTS.maxBody,
    maxPayload: o.maxPayload ?? OPTION_DEFAULTS.maxPayload,
    ...(o.minCoverage !== undefined ? { minCoverage: o.minCoverage } : {}),
    ...(o.baseline !== undefined ? { baseline: o.baseline } : {}),
    ...(o.slotReleaseWait !== undefined ? { slotReleaseWait: o.slotReleaseWait } : {}),
    ...(o.maxRateWait !== undefined ? { maxRateWait: o.maxRateWait } : {}),
  };
  const key = targetKey(options, env);
  if (key !== undefined) options.key = key;
  return options;
}

/**
 * Runs the checks against a target (a profile, a REST URL with a key, or the embedded reference
 * service) and returns what the JSON report holds: the summary with its verdict and rule coverage,
 * the causes, and every result with its evidence, keys redacted. `summary.verdict` is `fail`
 * exactly when the command line would exit 1. Throws a `ConformError` for what the command line
 * answers with exit 2: bad options, an invalid profile, a target that is not there or refuses the key.
 */
export async function runConformance(options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const env = options.env ?? process.env;
  const log = options.log ?? ((): void => {});
  let end: Extract<RunEvent, { type: 'run-end' }> | undefined;
  const run: RunState = { redact: (s) => s };
  try {
    await conformRun(
      conformOptions(options, env),
      CHECKS,
      {
        out: log,
        err: log,
        tty: false,
        color: false,
        version: VERSION,
        reports: REPORTS,
        env,
        ...(options.signal ? { signal: options.signal } : {}),
        handlers: [
          {
            handle(e) {
              if (e.type === 'run-end') end = e;
            },
          },
        ],
        startEmbedded: ({ transport, event }) =>
          startReferenceServer(transport === 'socketio' ? { transport, ...(event ? { event } : {}) } : {}),
      },
      run,
    );
  } catch (err) {
    // What reaches the caller passes the redactor, as the command line's one line does.
    if (err instanceof Error) err.message = run.redact(err.message);
    throw err;
  }
  if (!end) throw new Error('the run ended without a result (internal error)');
  return jsonReport(end, VERSION);
}
