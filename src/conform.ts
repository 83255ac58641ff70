/**
 * The programmatic entry of a conformance run: options in, exit code out. The CLI is a thin shell
 * around it; the embedded reference service and the report writers are passed in through its IO,
 * so the library never imports them.
 */
import { mkdir } from 'node:fs/promises';
import type { Check } from './check.ts';
import type { Profile } from './profile.ts';
import { type ConformOptions, validateOptions } from './options.ts';
import { MIN_FRAGMENT, profileSecretMap, redactorFor, shortKeys } from './redact.ts';
import {
  matches,
  runChecks,
  selectChecks,
  unknownSelectors,
  type RunHandler,
  type RunSettings,
  type TargetInfo,
} from './runner.ts';
import { compareWithBaseline, failedIds, readPastReport } from './baseline.ts';
import { ConformError, UsageError } from './errors.ts';
import { buildMatrix, type Matrix, type MatrixFault } from './matrix.ts';
import { discover, discoveryLines, skippedDiscovery, type Discovery } from './discovery/index.ts';
import { assertSetup } from './preflight.ts';
import { resolveTarget, type EmbeddedTarget, type ResolvedTarget, type Transport } from './target.ts';
import { PREFLIGHT_TIMEOUT_MS } from './timing/index.ts';
import { caOf } from './transports/tls-trust.ts';
import { exploreSettings } from './explore/settings.ts';

/**
 * Exit codes: every must check passed; a check failed or errored; usage, profile or reachability
 * problem; nothing failed, but network errors (connections refused or reset after the retries)
 * kept checks from a verdict, so the run is inconclusive rather than failed.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, inconclusive: 3 } as const;

/** Where the run is, as GitHub Actions tells its steps; both absent outside Actions. */
export interface GithubEnvironment {
  /** `$GITHUB_STEP_SUMMARY`: the file a step appends its Markdown summary to. */
  stepSummary?: string;
  /** The run's page, where its artifacts are listed. */
  runUrl?: string;
}

/** What a run asks of its report writers. */
export interface ReportOptions {
  /** Names of the registry of report formats (reports/index.ts). */
  formats: readonly string[];
  outDir: string;
  version: string;
  write: (text: string) => void;
  tty: boolean;
  /** ANSI colours in the console report; default follows `tty`. */
  color?: boolean;
  /** Told the path of each file written. */
  written?: (file: string) => void;
  /** Where a GitHub Actions step writes its job summary and where its run's artifacts are. */
  github?: GithubEnvironment;
  /** The console lists every rule not checked in full. */
  listUnchecked?: boolean;
  /** The console's whole detail: a line per check, every failure and observation in full. */
  verbose?: boolean;
  /** Columns a console line takes at most: the terminal's; default 120. */
  width?: number;
}

/**
 * The report formats and listings, given by the caller (reports/index.ts `REPORTS`): src/ never
 * imports reports/, so the names the options are checked against come in with the handlers.
 */
export interface Reports {
  /** Every format's name, in the order the handlers run. */
  formats: readonly string[];
  /** The handlers of the chosen formats. */
  handlers(options: ReportOptions): RunHandler[];
  /** The list of checks (`--list`): id, severity, tags, spec clause of each. */
  checkList(checks: readonly Check[]): string;
  /** The traceability matrix (`--list --matrix`). */
  matrix(m: Matrix): string;
}

export interface ConformIO {
  /** Standard output (reports, listings). */
  out: (text: string) => void;
  /** Standard error (the one-line problem). */
  err: (text: string) => void;
  tty: boolean;
  /** ANSI colours in the console report; default follows `tty`. */
  color?: boolean;
  /** Columns of the terminal the console report is written to; default 120. */
  width?: number;
  version: string;
  /** GitHub Actions' step summary file and run page, when the run is a step of one. */
  github?: GithubEnvironment;
  /** The report formats and listings (reports/index.ts `REPORTS`). */
  reports: Reports;
  /** Starts the embedded target when neither --target nor --profile is given. */
  startEmbedded?: (options: { transport?: Transport; event?: string }) => Promise<EmbeddedTarget>;
  /** The reference service's faults, for `--list --matrix`. */
  faults?: readonly MatrixFault[];
  /** Extra handlers (tests). */
  handlers?: RunHandler[];
  /** Where a profile's `keyEnv` references are read; default the process's environment. */
  env?: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal;
}

/** One line for a problem that ends the run with exit 2. */
export const problemLine = (err: unknown): string =>
  `conform: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`;

/** Runs conform with validated options; returns the exit code. Never throws for bad input. */
export async function conform(options: ConformOptions, registry: readonly Check[], io: ConformIO): Promise<number> {
  const run: RunState = { redact: (s) => s };
  try {
    return await conformRun(options, registry, io, run);
  } catch (err) {
    if (err instanceof ConformError || (err as NodeJS.ErrnoException)?.code) {
      io.err(`${run.redact(problemLine(err))}\n`);
      return EXIT.usage;
    }
    io.err(`${run.redact(problemLine(err))} (internal error)\n`);
    return EXIT.usage;
  }
}

/** What a run learns that the caller of `conformRun` needs after it: the redactor of its profile's keys. */
export interface RunState {
  redact: (s: string) => string;
}

/**
 * The run behind `conform()`: returns the exit code of a run that got to its verdict, and throws
 * what `conform()` answers with exit 2 (bad input, a target that is not there), so a programmatic
 * caller gets the error itself. `run.redact` is set once the profile is known.
 */
export async function conformRun(
  options: ConformOptions,
  registry: readonly Check[],
  io: ConformIO,
  run: RunState = { redact: (s) => s },
): Promise<number> {
  let embedded: EmbeddedTarget | undefined;
  try {
    validateOptions(options, io.reports.formats);
    const only = await selectedIds(options, registry, io);
    if (only === undefined) return EXIT.ok;
    if (options.list) {
      io.out(`${listing(options, registry, only, io)}\n`);
      return EXIT.ok;
    }
    const explore = await exploreSettings(options);
    const checks = selectChecks(registry, { only, skip: options.skip, explore: explore !== undefined });
    if (checks.length === 0) throw new UsageError('--only/--skip leave no check to run');
    const baseline = options.baseline ? await readPastReport(options.baseline, '--baseline') : undefined;
    await prepareOutDir(options);
    const resolved = await resolveTarget(options, { env: io.env ?? process.env, startEmbedded: io.startEmbedded });
    if (resolved.from === 'embedded') embedded = resolved.embedded;
    const { profile, discovery } = await runProfile(resolved, options, checks, io);
    const redact = redactorFor(profile);
    run.redact = redact;
    warnShortKeys(profile, io);
    const written: string[] = [];
    const outcome = await runChecks({
      profile,
      checks: discovery ? [discoveryCheck(discovery), ...checks] : checks,
      ...(discovery?.budget ? { connections: discovery.budget, timing: discovery.timing } : {}),
      handlers: [...io.reports.handlers(reportOptions(options, io, written)), ...(io.handlers ?? [])],
      target: { ...targetInfo(profile, redact, embedded !== undefined), source: resolved.from },
      redact,
      signal: io.signal,
      settings: { ...runSettings(options, profile), ...(explore ? { explore } : {}) },
      compare: baseline ? (results) => compareWithBaseline(baseline, results) : undefined,
    });
    for (const f of written) io.out(`report: ${f}\n`);
    if (outcome.summary.verdict === 'fail') return EXIT.failed;
    if (outcome.summary.verdict === 'inconclusive') return EXIT.inconclusive;
    if (options.failOnChange && (outcome.changes?.length ?? 0) > 0) return EXIT.failed;
    return EXIT.ok;
  } finally {
    await embedded?.close();
  }
}

/**
 * The ids, prefixes and tags the run is limited to: `--only`, narrowed to what failed or errored
 * in `--rerun-failed`'s report. Undefined when that report lists no check of this suite to
 * rerun (said on the console: the run has nothing to do).
 */
async function selectedIds(
  options: ConformOptions,
  registry: readonly Check[],
  io: ConformIO,
): Promise<string[] | undefined> {
  const bad = unknownSelectors(registry, [...options.only, ...options.skip]);
  if (bad.length)
    throw new UsageError(`--only/--skip: no check id, prefix or tag matches "${bad[0]}" (see conform --list)`);
  const only = options.only;
  if (!options.rerunFailed) return only;
  const ids = failedIds(await readPastReport(options.rerunFailed, '--rerun-failed'));
  const known = ids.filter((id) => registry.some((c) => c.id === id));
  if (known.length === 0) {
    io.out(`conform: ${options.rerunFailed} lists no failed or errored check of this suite: nothing to rerun\n`);
    return undefined;
  }
  return only.length ? known.filter((id) => only.some((s) => matches(registry.find((c) => c.id === id)!, s))) : known;
}

/** The text of `--list` (the checks) or `--list --matrix` (the traceability matrix). */
function listing(options: ConformOptions, registry: readonly Check[], only: readonly string[], io: ConformIO): string {
  if (options.matrix) return io.reports.matrix(buildMatrix(registry, io.faults ?? []));
  // The list shows disruptive checks too: they exist, they only run when asked for.
  const listed = registry.filter(
    (c) => (only.length === 0 || only.some((s) => matches(c, s))) && !options.skip.some((s) => matches(c, s)),
  );
  return io.reports.checkList(listed);
}

/** An unwritable --out is found now, not after the whole run. */
async function prepareOutDir(options: ConformOptions): Promise<void> {
  if (!options.report.some((f) => f !== 'console')) return;
  try {
    await mkdir(options.out, { recursive: true });
  } catch (err) {
    throw new UsageError(`--out: cannot create ${options.out} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

/**
 * The profile the checks run with. A profile file, and a `--target` URL, first pass `assertSetup`
 * (a refused key or a URL that is not the base URL stops the run); a `--target` run then runs
 * discovery, whose derived profile the checks get. `--slot-release-wait` overrides the profile's.
 */
async function runProfile(
  resolved: ResolvedTarget<EmbeddedTarget>,
  options: ConformOptions,
  checks: readonly Check[],
  io: ConformIO,
): Promise<{ profile: Profile; discovery?: Discovery }> {
  const setupMs = Math.min(PREFLIGHT_TIMEOUT_MS, options.timeout);
  let profile = resolved.profile;
  let discovery: Discovery | undefined;
  if (resolved.from === 'profile') await assertSetup(profile, redactorFor(profile), setupMs);
  if (resolved.from === 'target') {
    const streamChecks = checks.some((c) => c.needs.includes('ws'));
    discovery = await discoverTarget(profile, options, io, setupMs, streamChecks);
    profile = discovery.profile;
  }
  if (options.slotReleaseWait !== undefined)
    profile = { ...profile, timing: { ...profile.timing, slotReleaseWaitMs: options.slotReleaseWait } };
  return discovery ? { profile, discovery } : { profile };
}

/** A key too short to be told from the text around it is redacted only where it stands alone: say so. */
function warnShortKeys(profile: Profile, io: ConformIO): void {
  for (const name of shortKeys(profileSecretMap(profile)))
    io.err(
      `conform: warning: the ${name} key is shorter than ${MIN_FRAGMENT} characters; it is redacted only ` +
        'where it stands alone (a header value, a URL parameter, a quoted value), never inside words or ids\n',
    );
}

/**
 * The target as the reports show it. Its URLs may carry a key (a query parameter), so they pass the
 * redactor; ids, titles and prose never pass one.
 */
function targetInfo(profile: Profile, redact: (s: string) => string, embedded: boolean): TargetInfo {
  return {
    rest: redact(profile.rest),
    ws: profile.ws === undefined ? undefined : redact(profile.ws),
    name: profile.name,
    embedded,
  };
}

/** What the report writers are told; `written` collects the files they write. */
function reportOptions(options: ConformOptions, io: ConformIO, written: string[]): ReportOptions {
  return {
    formats: options.report,
    listUnchecked: options.listUnchecked,
    verbose: options.verbose,
    ...(io.width ? { width: io.width } : {}),
    outDir: options.out,
    version: io.version,
    write: io.out,
    tty: io.tty,
    color: io.color,
    written: (f) => written.push(f),
    ...(io.github ? { github: io.github } : {}),
  };
}

/** The runner's settings: the options', else the profile's bounds. */
function runSettings(options: ConformOptions, profile: Profile): Partial<RunSettings> {
  return {
    concurrency: options.concurrency,
    timeoutMs: options.timeout,
    bail: options.bail,
    maxBodyBytes: options.maxBody,
    maxPayloadBytes: options.maxPayload,
    minCoverage: options.minCoverage ?? profile.minCoverage,
    maxRateWaitMs: options.maxRateWait ?? profile.maxRateWaitMs,
  };
}

/**
 * The discovery step of `--target URL`: a wrong set-up stops here (exit 2); otherwise what one key
 * shows of the target, printed as it is found, becomes the run's profile.
 */
export async function discoverTarget(
  base: Profile,
  options: Pick<ConformOptions, 'ws' | 'transport' | 'event' | 'timeout' | 'keyEnv' | 'key'>,
  io: Pick<ConformIO, 'out' | 'signal'>,
  setupMs = Math.min(PREFLIGHT_TIMEOUT_MS, options.timeout),
  streamChecks = true,
): Promise<Discovery> {
  const redact = redactorFor(base);
  const { answered } = await assertSetup(base, redact, setupMs, `--key or ${options.keyEnv}`);
  if (!answered) {
    // A target silent to the key would cost discovery every wait it has; the run says why it stops.
    io.out(`discovery: skipped, ${redact(base.rest)} answered no request with the key\n`);
    return skippedDiscovery(base);
  }
  io.out(`discovery: what one key shows of ${redact(base.rest)}\n`);
  const found = await discover(
    {
      rest: base.rest,
      key: base.keys.primary.key,
      ...(caOf(base) ? { ca: caOf(base) } : {}),
      ...(options.ws ? { ws: options.ws } : {}),
      ...(options.transport ? { transport: options.transport } : {}),
      ...(options.event ? { event: options.event } : {}),
      redact,
      timeoutMs: setupMs,
      ...(io.signal ? { signal: io.signal } : {}),
      progress: (line) => io.out(`${line}\n`),
      streamChecks,
    },
    base,
  );
  for (const line of discoveryLines(found, redact)) io.out(`${line}\n`);
  return found;
}

/** What discovery found, as the observations of one check, so every report and --baseline show them. */
export function discoveryCheck(d: Discovery): Check {
  return {
    id: 'discovery',
    enforces: [],
    clause: { section: 'Endpoints', rule: 'what the target shows one key before the checks run' },
    title: 'lists pairs, prices a few, looks for the stream on the REST origin and measures it',
    expectation: 'nothing: what the spec leaves open is recorded, never judged',
    severity: 'observe',
    tags: ['rest'],
    needs: [],
    async run(ctx) {
      for (const o of d.observations) ctx.observe(o.name, o.value, o.note);
    },
  };
}
