/**
 * The runner: joins checks to transports. Runs the selected checks with bounded concurrency and a
 * timeout each, turns each into one verdict (pass / fail / skip / error) and emits one event
 * stream that every report writer listens to.
 */
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { Check, CheckResult, Outcome, Tag } from './check.ts';
import { TAGS } from './check.ts';
import type { Profile } from './profile.ts';
import type { Validator } from './validator.ts';
import { validator as defaultValidator } from './validator.ts';
import type { Redact } from './redact.ts';
import { oneLine, redactorFor } from './redact.ts';
import { blankResult, CheckFailed, CheckSkipped, createContext, type StreamFactory } from './context.ts';
import { streamFactoryFor } from './transports/stream-factory.ts';
import { ConnectionBudget } from './connection-budget.ts';
import { createRestClient } from './transports/rest-client.ts';
import { declaredRates, RequestBudget } from './request-budget.ts';
import { coverage, type Coverage } from './coverage.ts';
import type { Evidence } from './check.ts';
import { AbortedError, ConformError, errorCode, NetworkError, TimeoutError, UnreachableError } from './errors.ts';

/** Run-wide settings; each field's default is in RUN_DEFAULTS. */
export interface RunSettings {
  /** Checks in flight at once. */
  concurrency: number;
  /** Per-check timeout (ms) unless the check sets its own. */
  timeoutMs: number;
  /** Stop launching checks after the first fail or error. */
  bail: boolean;
  /** Largest REST body read, bytes. */
  maxBodyBytes: number;
  /** Largest WebSocket message accepted, bytes. */
  maxPayloadBytes: number;
  /** Percentage of the selected must checks that have to run (not skip), else the verdict is fail; none by default. */
  minCoverage?: number;
}

/**
 * Defaults of the runner: 4 checks at once, 15 s each, no bail, 1 MiB REST bodies, 1 MiB WebSocket
 * messages (the protocol's frames are under 1 KiB).
 */
export const RUN_DEFAULTS: Readonly<RunSettings> = Object.freeze({
  concurrency: 4,
  timeoutMs: 15_000,
  bail: false,
  maxBodyBytes: 1024 * 1024,
  maxPayloadBytes: 1024 * 1024,
});

/** Counts of a run. */
export interface RunSummary {
  total: number;
  pass: number;
  fail: number;
  skip: number;
  error: number;
  /** Observations recorded across every check. */
  observations: number;
  durationMs: number;
  /** How many must checks ran, the skip reasons grouped, what the target gave nothing of. */
  coverage: Coverage;
  /** `pass` when no check failed or errored and the coverage reached its minimum, if one was set. */
  verdict: 'pass' | 'fail';
}

/** Target description for reports (never a key). */
export interface TargetInfo {
  name?: string;
  rest: string;
  ws?: string;
  embedded?: boolean;
}

/** A change against a baseline run. */
export interface Change {
  id: string;
  kind: 'verdict' | 'observation' | 'new' | 'gone';
  name?: string;
  before: unknown;
  after: unknown;
}

/** The one event stream; report writers are handlers of it. */
export type RunEvent =
  | { type: 'run-start'; target: TargetInfo; checks: readonly Check[]; startedAt: string; settings: RunSettings }
  | { type: 'check-start'; check: Check }
  | { type: 'check-end'; result: CheckResult; done: number; total: number }
  | {
      type: 'run-end';
      results: CheckResult[];
      summary: RunSummary;
      startedAt: string;
      finishedAt: string;
      target: TargetInfo;
      changes?: Change[];
    };

/** A report writer or progress display. */
export interface RunHandler {
  handle(event: RunEvent): void | Promise<void>;
}

/** `keys.cryptoOnly` → whether the profile has it. */
export function profileHas(profile: Profile, path: string): boolean {
  let node: unknown = profile;
  for (const part of path.split('.')) {
    if (node === null || typeof node !== 'object') return false;
    node = (node as Record<string, unknown>)[part];
  }
  return node !== undefined && node !== null && !(Array.isArray(node) && node.length === 0);
}

/** Whether a selector (id, id prefix or tag) picks a check. */
export function matches(check: Check, selector: string): boolean {
  if ((TAGS as readonly string[]).includes(selector) && check.tags.includes(selector as Tag)) return true;
  if (check.id === selector) return true;
  const prefix = selector.endsWith('.') || selector.endsWith('*') ? selector.replace(/\*$/, '') : `${selector}.`;
  return check.id.startsWith(prefix);
}

/**
 * The checks a run executes, in registry order. `disruptive` checks run only when an `only`
 * selector names them (by id, prefix or tag): they load the target.
 */
export function selectChecks(
  checks: readonly Check[],
  select: { only?: readonly string[]; skip?: readonly string[] } = {},
): Check[] {
  const only = select.only ?? [];
  const skip = select.skip ?? [];
  return checks.filter((c) => {
    if (skip.some((s) => matches(c, s))) return false;
    if (only.length > 0) return only.some((s) => matches(c, s));
    return !c.tags.includes('disruptive');
  });
}

/** Selectors that match no check: a typo in --only / --skip is a usage error, not an empty run. */
export function unknownSelectors(checks: readonly Check[], selectors: readonly string[]): string[] {
  return selectors.filter((s) => !checks.some((c) => matches(c, s)));
}

/** Longest wait for the first HTTP response of a run. */
export const PREFLIGHT_TIMEOUT_MS = 10_000;

/**
 * Fails fast when the target takes no connection or does not answer HTTP at all, rather than a
 * cascade of timeouts: one GET of /v1/pairs without a key, any HTTP status will do.
 */
export async function assertReachable(restUrl: string, timeoutMs = PREFLIGHT_TIMEOUT_MS): Promise<void> {
  let url: URL;
  try {
    url = new URL(`${restUrl.replace(/\/+$/, '')}/v1/pairs`);
  } catch {
    throw new UnreachableError(`target ${restUrl} is not a URL`);
  }
  const origin = url.origin;
  await new Promise<void>((resolve, reject) => {
    const lib = url.protocol === 'https:' ? https : http;
    const req = lib.get(url, { agent: false, headers: { accept: 'application/json' } });
    const timer = setTimeout(() => {
      reject(new UnreachableError(`target ${origin} sent no HTTP response within ${timeoutMs} ms`));
      req.destroy();
    }, timeoutMs);
    req.once('response', (res) => {
      clearTimeout(timer);
      res.destroy();
      req.destroy();
      resolve();
    });
    req.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const code = err.code ?? err.message;
      reject(
        new UnreachableError(
          code.startsWith('HPE_')
            ? `target ${origin} does not answer HTTP (${code})`
            : `target ${origin} unreachable: ${code}`,
        ),
      );
    });
  });
}

/**
 * The second preflight: one GET of /v1/pairs with the primary key. A target that answers without
 * a key but never with one (a gateway whose backend hangs) would cost every check its timeout;
 * returns the evidence and the reason when that request got no answer in time.
 */
export async function keyedPreflight(
  profile: Profile,
  redact: Redact,
  timeoutMs: number,
): Promise<{ reason: string; evidence: Evidence[] } | undefined> {
  const evidence: Evidence[] = [];
  const rest = createRestClient({
    baseUrl: profile.rest,
    primaryKey: profile.keys.primary.key,
    record: (e) => evidence.push(e),
    redact,
    timeoutMs,
  });
  try {
    await rest.get({ path: '/v1/pairs' });
    return undefined;
  } catch (err) {
    // Only silence stops the run; any other failure is for the checks to judge and report.
    if (err instanceof TimeoutError)
      return {
        reason:
          `not run: the target answered no request with the primary key ` +
          `within ${timeoutMs} ms (preflight GET /v1/pairs)`,
        evidence,
      };
    return undefined;
  }
}

/** Fewest silent checks in a row that trip the circuit breaker (more with a higher concurrency). */
export const BREAKER_MIN = 6;

/** A check that ended in a timeout or network error without one HTTP response or inbound frame. */
function gotNoAnswer(r: CheckResult): boolean {
  if (r.outcome !== 'error' || (r.errorCode !== 'CONFORM_TIMEOUT' && r.errorCode !== 'CONFORM_NETWORK')) return false;
  return !r.evidence.some(
    (e) => (e.kind === 'http' && e.response !== undefined) || (e.kind === 'frame' && e.direction === 'in'),
  );
}

/** Errors that mean the target went away: the run stops rather than timing out check by check. */
const UNREACHABLE_ERRNO = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

export interface RunOptions {
  profile: Profile;
  checks: readonly Check[];
  settings?: Partial<RunSettings>;
  handlers?: readonly RunHandler[];
  target?: TargetInfo;
  validator?: Validator;
  redact?: Redact;
  createStream?: StreamFactory;
  /** Stops the run from outside (Ctrl-C). */
  signal?: AbortSignal;
  /** Fills `changes` of the run-end event (baseline comparison). */
  compare?: (results: CheckResult[]) => Change[];
  /** Skip the reachability probe (tests of synthetic checks with no target). */
  skipPreflight?: boolean;
}

export interface RunOutcome {
  results: CheckResult[];
  summary: RunSummary;
  changes?: Change[];
}

/** A check's time limit that stops counting while paused (the check waits for a connection slot). */
function timeLimit(
  ms: number,
  onExpire: () => void,
): { pause(): void; resume(): void; clear(): void; pausedMs(): number } {
  let left = ms;
  let since = performance.now();
  let cleared = false;
  let paused = 0;
  let timer: NodeJS.Timeout | undefined = setTimeout(onExpire, left);
  return {
    pause() {
      if (!timer) return;
      clearTimeout(timer);
      timer = undefined;
      const now = performance.now();
      left -= now - since;
      since = now;
    },
    resume() {
      if (timer || cleared) return;
      const now = performance.now();
      paused += now - since;
      since = now;
      timer = setTimeout(onExpire, Math.max(0, left));
    },
    pausedMs: () => paused,
    clear() {
      cleared = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

function timeoutOf(check: Check, profile: Profile, fallback: number): number {
  const t = typeof check.timeoutMs === 'function' ? check.timeoutMs(profile) : check.timeoutMs;
  return t && t > 0 ? t : fallback;
}

/** Counts, coverage and verdict of a list of results; `minCoverage` is a percentage of must checks that have to run. */
export function summarize(results: readonly CheckResult[], durationMs: number, minCoverage?: number): RunSummary {
  const count = (o: Outcome): number => results.filter((r) => r.outcome === o).length;
  const s = {
    total: results.length,
    pass: count('pass'),
    fail: count('fail'),
    skip: count('skip'),
    error: count('error'),
  };
  const cov = coverage(results, minCoverage);
  const verdict = s.fail + s.error > 0 || cov.met === false ? 'fail' : 'pass';
  return {
    ...s,
    observations: results.reduce((n, r) => n + r.observations.length, 0),
    durationMs,
    coverage: cov,
    verdict,
  };
}

/**
 * Runs the checks and emits the event stream. Throws UnreachableError when the target takes no
 * connection (before the first check, or when a check finds it gone): the caller exits 2.
 */
export async function runChecks(options: RunOptions): Promise<RunOutcome> {
  const settings: RunSettings = { ...RUN_DEFAULTS, ...options.settings };
  const { profile, checks } = options;
  const redact = options.redact ?? redactorFor(profile);
  const handlers = options.handlers ?? [];
  const target: TargetInfo = options.target ?? { rest: profile.rest, ws: profile.ws, name: profile.name };
  const emit = async (e: RunEvent): Promise<void> => {
    for (const h of handlers) await h.handle(e);
  };
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  // Picked once: a profile asking for Socket.IO without an event name is a usage error, before any check.
  const createStream = options.createStream ?? streamFactoryFor(profile);
  const budget = new RequestBudget(declaredRates(profile.keys));

  const preflightMs = Math.min(PREFLIGHT_TIMEOUT_MS, settings.timeoutMs);
  if (!options.skipPreflight) await assertReachable(profile.rest, preflightMs);
  const stalled = options.skipPreflight ? undefined : await keyedPreflight(profile, redact, preflightMs);
  await emit({ type: 'run-start', target, checks, startedAt, settings });

  const results: (CheckResult | undefined)[] = new Array(checks.length);
  const runAbort = new AbortController();
  const outer = options.signal;
  const onOuter = (): void => runAbort.abort(new AbortedError('the run was stopped'));
  outer?.addEventListener('abort', onOuter, { once: true });
  // Every stream session of the run borrows from this budget; allowances the profile leaves out
  // are found before the first check, while no check holds a connection.
  const connections = new ConnectionBudget(profile);
  if (profile.ws && !stalled && checks.some((c) => c.needs.includes('ws'))) {
    const client = createStream({
      url: profile.ws,
      primaryKey: profile.keys.primary.key,
      record: () => undefined,
      redact,
      signal: runAbort.signal,
      maxPayload: settings.maxPayloadBytes,
    });
    await connections.discover(client, runAbort.signal).catch(() => undefined);
  }
  let unreachable: UnreachableError | undefined;
  let bailedBy: string | undefined;
  // Circuit breaker: checks in a row that got no answer at all (timeout or network error, no
  // response, no frame). A target that stops answering mid-run ends the run in seconds.
  const breakAfter = Math.max(BREAKER_MIN, settings.concurrency + 2);
  let silentStreak = 0;
  let stoppedAnswering: string | undefined;
  let next = 0;
  let done = 0;

  const runOne = async (check: Check): Promise<CheckResult> => {
    const result = blankResult(check);
    const missing = check.needs.filter((n) => !profileHas(profile, n));
    if (missing.length > 0) {
      result.outcome = 'skip';
      result.reason = `profile has no ${missing.join(', ')}`;
      return result;
    }
    if (stalled) {
      result.outcome = 'error';
      result.errorCode = 'CONFORM_TIMEOUT';
      result.reason = stalled.reason;
      result.evidence = [...stalled.evidence];
      return result;
    }
    const limit = timeoutOf(check, profile, settings.timeoutMs);
    const checkAbort = new AbortController();
    const onRun = (): void => checkAbort.abort(runAbort.signal.reason);
    runAbort.signal.addEventListener('abort', onRun, { once: true });
    let expire: (err: Error) => void = () => undefined;
    const clock = timeLimit(limit, () => {
      const err = new TimeoutError(`${check.id} did not finish within ${limit} ms`);
      checkAbort.abort(err);
      expire(err);
    });
    const handle = createContext(check, {
      profile,
      validator: options.validator ?? defaultValidator,
      redact,
      signal: checkAbort.signal,
      requestTimeoutMs: Math.min(limit, settings.timeoutMs),
      createStream,
      maxBodyBytes: settings.maxBodyBytes,
      maxPayloadBytes: settings.maxPayloadBytes,
      budget,
      // Time spent waiting for another check to give a connection slot back is not the check's own.
      connections,
      onSlotWait: (waiting) => (waiting ? clock.pause() : clock.resume()),
    });
    const started = performance.now();
    try {
      const body = check.run(handle.ctx);
      body.catch(() => undefined); // a timed-out body may still reject later
      await Promise.race([
        body,
        new Promise<never>((_, reject) => {
          expire = reject;
        }),
      ]);
      result.outcome = handle.violations.length > 0 ? 'fail' : 'pass';
    } catch (err) {
      if (handle.violations.length > 0) result.outcome = 'fail';
      else if (err instanceof CheckFailed) result.outcome = check.severity === 'observe' ? 'pass' : 'fail';
      else if (err instanceof CheckSkipped) {
        result.outcome = 'skip';
        result.reason = err.message;
        if (err.nothingToJudge) result.nothingToJudge = err.nothingToJudge;
      } else {
        result.outcome = 'error';
        result.errorCode = errorCode(err);
        result.reason = oneLine(redact(err instanceof Error ? err.message : String(err)));
        if (err instanceof NetworkError && err.errno && UNREACHABLE_ERRNO.has(err.errno)) {
          unreachable ??= new UnreachableError(`target ${profile.rest} unreachable during ${check.id}: ${err.errno}`);
          runAbort.abort(unreachable);
        }
      }
    } finally {
      clock.clear();
      runAbort.signal.removeEventListener('abort', onRun);
      await handle.cleanup();
      // Cancels every wait the check left armed (a pause that lost a race), so none outlives it.
      if (!checkAbort.signal.aborted) checkAbort.abort(new AbortedError('the check has ended'));
    }
    result.violations = handle.violations;
    result.observations = handle.observations;
    result.evidence = handle.evidence;
    result.durationMs = Math.round(performance.now() - started);
    const slotWaitMs = Math.round(clock.pausedMs());
    if (slotWaitMs > 0) result.slotWaitMs = slotWaitMs;
    return result;
  };

  // Slow checks are idle waits on a keep-alive window: each gets its own lane from the start, so
  // they overlap the rest and the concurrency bound applies to the others. Results keep registry order.
  const slow = checks.map((_, i) => i).filter((i) => checks[i]!.tags.includes('slow'));
  const order = checks.map((_, i) => i).filter((i) => !checks[i]!.tags.includes('slow'));
  const runIndex = async (index: number): Promise<void> => {
    const check = checks[index]!;
    await emit({ type: 'check-start', check });
    const result = await runOne(check);
    if (unreachable) return;
    if (stoppedAnswering && result.outcome === 'error' && result.errorCode === 'CONFORM_ABORTED') {
      result.errorCode = 'CONFORM_TIMEOUT';
      result.reason = stoppedAnswering;
    }
    results[index] = result;
    done++;
    await emit({ type: 'check-end', result, done, total: checks.length });
    if (settings.bail && (result.outcome === 'fail' || result.outcome === 'error')) bailedBy ??= check.id;
    if (gotNoAnswer(result)) {
      if (++silentStreak >= breakAfter && !stoppedAnswering) {
        stoppedAnswering =
          `not run: the target stopped answering (${silentStreak} checks in a row got no ` +
          `answer; the last, ${check.id}: ${result.reason ?? result.errorCode})`;
        runAbort.abort(new AbortedError(stoppedAnswering));
      }
    } else if (result.outcome !== 'skip') silentStreak = 0;
  };
  const worker = async (): Promise<void> => {
    while (next < order.length && !runAbort.signal.aborted && !bailedBy) await runIndex(order[next++]!);
  };
  const width = Math.max(1, Math.min(settings.concurrency, order.length));
  await Promise.all([...slow.map(runIndex), ...Array.from({ length: width }, worker)]);
  outer?.removeEventListener('abort', onOuter);
  if (unreachable) throw unreachable;

  // Checks never started (bail, stop) are reported as skips with the reason, not silently dropped.
  const finished = checks.map((check, i) => {
    const r = results[i];
    if (r) return r;
    const skipped = blankResult(check);
    const missing = check.needs.filter((n) => !profileHas(profile, n));
    if (missing.length > 0) {
      skipped.outcome = 'skip';
      skipped.reason = `profile has no ${missing.join(', ')}`;
      return skipped;
    }
    if (stoppedAnswering) {
      skipped.outcome = 'error';
      skipped.errorCode = 'CONFORM_TIMEOUT';
      skipped.reason = stoppedAnswering;
      return skipped;
    }
    skipped.outcome = 'skip';
    skipped.reason = bailedBy ? `not run: --bail after ${bailedBy}` : 'not run: the run was stopped';
    return skipped;
  });
  const summary = summarize(finished, Math.round(performance.now() - t0), settings.minCoverage);
  const changes = options.compare?.(finished);
  await emit({
    type: 'run-end',
    results: finished,
    summary,
    startedAt,
    finishedAt: new Date().toISOString(),
    target,
    changes,
  });
  return { results: finished, summary, changes };
}

export { ConformError };
