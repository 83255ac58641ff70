/**
 * The runner: joins checks to transports. Runs the selected checks with bounded concurrency and a
 * timeout each, turns each into one verdict (pass / fail / skip / error) and emits one event
 * stream that every report writer listens to.
 */
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Check, CheckResult, Evidence, Outcome, Tag } from './check.ts';
import { TAGS } from './check.ts';
import type { Profile } from './profile.ts';
import { CHECK_TIMEOUT_MS, PREFLIGHT_TIMEOUT_MS, RunTiming, waitStretch, type Waits } from './timing/index.ts';
import type { Validator } from './validator.ts';
import { validator as defaultValidator } from './validator.ts';
import type { Redact } from './redact.ts';
import { redactorFor } from './redact.ts';
import { blankResult, createContext, type StreamFactory } from './context.ts';
import { streamFactoryFor } from './transports/stream-factory.ts';
import { ConnectionBudget } from './connection-budget.ts';
import { PairLedger } from './pair-ledger.ts';
import { declaredRates, RequestBudget } from './request-budget.ts';
import { summarize, type RunSummary } from './summary.ts';
import { AbortedError, ConformError, NetworkError, TimeoutError, UnreachableError } from './errors.ts';
import { assertOpen, keyedPreflight } from './preflight.ts';
import { CircuitBreaker } from './circuit-breaker.ts';
import { timeLimit } from './time-limit.ts';
import { answerTime, slowAnswersOf } from './answer-time.ts';
import { type Ending, type NotRunReason, notRun, verdictOf } from './verdict.ts';
import type { TargetInfo } from './target.ts';
import { RuleLedger, RuleOwners } from './ownership.ts';
import { inLanes } from './lanes.ts';
import type { ExploreSettings } from './explore/index.ts';

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
  /**
   * Percentage of the stated rules that need no operator state which have to be checked, else the
   * verdict is fail; none by default.
   */
  minCoverage?: number;
  /** Bound on the run's time spent waiting on the REST rate limit, ms; default PACING.maxRunWaitMs. */
  maxRateWaitMs?: number;
  /** What the run asks of the explorer (ws.explore), when it asks. */
  explore?: ExploreSettings;
}

/**
 * Defaults of the runner: 4 checks at once, 15 s each, no bail, 1 MiB REST bodies, 1 MiB WebSocket
 * messages (the protocol's frames are under 1 KiB).
 */
export const RUN_DEFAULTS: Readonly<RunSettings> = Object.freeze({
  concurrency: 4,
  timeoutMs: CHECK_TIMEOUT_MS,
  bail: false,
  maxBodyBytes: 1024 * 1024,
  maxPayloadBytes: 1024 * 1024,
});

export type { TargetInfo } from './target.ts';

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
  | {
      type: 'check-start';
      check: Check;
      /** The check's time limit, ms: the longest it can still take once started (progress shows it). */
      limitMs: number;
    }
  | { type: 'check-end'; result: CheckResult; done: number; total: number }
  /**
   * A check that already ended fails after all: another check met a violation of a rule it owns
   * (src/ownership.ts). `result` is the check's result, now failed; `was` its outcome before.
   */
  | { type: 'check-amend'; result: CheckResult; was: Outcome }
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
 * selector names them (by id, prefix or tag): they load the target; `explore` ones only with
 * `explore` or when named by id or tag.
 */
export function selectChecks(
  checks: readonly Check[],
  select: { only?: readonly string[]; skip?: readonly string[]; explore?: boolean } = {},
): Check[] {
  const only = select.only ?? [];
  const skip = select.skip ?? [];
  return checks.filter((c) => {
    if (skip.some((s) => matches(c, s))) return false;
    // The explorer runs for its budget: with `explore`, or named by its id or tag, never by a prefix such as `ws`.
    const explorer = c.tags.includes('explore');
    if (explorer && select.explore !== true && !only.some((s) => s === c.id || s === 'explore')) return false;
    if (only.length > 0) return only.some((s) => matches(c, s));
    return !c.tags.includes('disruptive');
  });
}

/** Selectors that match no check: a typo in --only / --skip is a usage error, not an empty run. */
export function unknownSelectors(checks: readonly Check[], selectors: readonly string[]): string[] {
  return selectors.filter((s) => !checks.some((c) => matches(c, s)));
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
  /** A budget whose allowances were already looked for (by discovery): the run borrows from it. */
  connections?: ConnectionBudget;
  /**
   * The timing `connections` was made with, which holds what its search measured; without it the
   * run makes its own from the profile.
   */
  timing?: RunTiming;
  /** Skip the reachability probe (tests of synthetic checks with no target). */
  skipPreflight?: boolean;
}

export interface RunOutcome {
  results: CheckResult[];
  summary: RunSummary;
  changes?: Change[];
}

function timeoutOf(check: Check, profile: Profile, waits: Waits, fallback: number): number {
  const t = typeof check.timeoutMs === 'function' ? check.timeoutMs(profile, waits) : check.timeoutMs;
  return t && t > 0 ? t : Math.ceil(fallback * waitStretch(waits));
}

/** What every check of a run shares; the run's progress is not in it. */
interface RunEnv {
  profile: Profile;
  settings: RunSettings;
  redact: Redact;
  validator: Validator;
  createStream: StreamFactory;
  /** The run's REST request pace. */
  requests: RequestBudget;
  /** The run's timing: what the profile states and what the run measured. */
  timing: RunTiming;
  /** The run's per-key WebSocket connection budget. */
  connections: ConnectionBudget;
  /** What the run's stream sessions have seen of pairs: one ledger for the run, like the slots. */
  pairLedger: PairLedger;
  /** Aborted when the run stops: every check in flight stops with it. */
  signal: AbortSignal;
  /** Told when a check finds the target gone: the run stops at once. */
  wentAway(err: UnreachableError): void;
  /** Who owns each statement in the run, and the violations met by checks that do not own them. */
  ledger: RuleLedger;
}

/** Why a check does not run, if it does not: the profile lacks what it needs, or the target fell `silent`. */
function whyNotRun(
  check: Check,
  run: Pick<RunOptions, 'profile' | 'target'>,
  silent?: { reason: string; evidence?: readonly Evidence[] },
): NotRunReason | undefined {
  const missing = check.needs.filter((n) => !profileHas(run.profile, n));
  if (missing.length > 0) return { kind: 'missing', fields: missing, source: run.target?.source };
  return silent ? { kind: 'silent', ...silent } : undefined;
}

/** Runs a check's body until it settles or `expired` rejects; what the body does later is ignored. */
async function settle(run: () => Promise<void>, expired: Promise<never>): Promise<Ending> {
  try {
    const body = run();
    body.catch(() => undefined); // a timed-out body may still reject later
    await Promise.race([body, expired]);
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Runs one check: its context, its time limit, then its verdict and what it recorded. */
async function runCheck(check: Check, env: RunEnv): Promise<CheckResult> {
  const { profile, settings, redact } = env;
  const limit = timeoutOf(check, profile, env.timing.waits, settings.timeoutMs);
  const checkAbort = new AbortController();
  const onRun = (): void => checkAbort.abort(env.signal.reason);
  env.signal.addEventListener('abort', onRun, { once: true });
  let expire: (err: Error) => void = () => undefined;
  const expired = new Promise<never>((_, reject) => {
    expire = reject;
  });
  const clock = timeLimit(limit, () => {
    const grown = Math.round(answers.lengthenedMs());
    const slow = grown > 0 ? ` (and ${grown} ms more for the target's slow REST answers)` : '';
    const err = new TimeoutError(`${check.id} did not finish within ${limit} ms${slow}`);
    checkAbort.abort(err);
    expire(err);
  });
  const answers = answerTime(limit, (ms) => clock.extend(ms));
  const handle = createContext(check, {
    profile,
    validator: env.validator,
    redact,
    signal: checkAbort.signal,
    requestTimeoutMs: Math.min(limit, settings.timeoutMs),
    createStream: env.createStream,
    maxBodyBytes: settings.maxBodyBytes,
    maxPayloadBytes: settings.maxPayloadBytes,
    budget: env.requests,
    timing: env.timing,
    pairLedger: env.pairLedger,
    // Time spent waiting for another check to give a connection slot back is not the check's own,
    // nor is time spent waiting for the key's turn under the rate limit.
    connections: env.connections,
    onSlotWait: (waiting) => (waiting ? clock.pause() : clock.resume()),
    onRateWait: (waiting) => (waiting ? clock.pause() : clock.resume()),
    extendTimeLimit: (ms) => clock.extend(ms),
    onRestAnswer: (ms) => {
      answers.answered(ms);
      env.timing.observeRestAnswer(ms);
    },
    judging: {
      ownerOf: (rule, channel) => env.ledger.owners.ownerOf(rule, channel),
      route: (owner, v) => env.ledger.route(owner, v),
    },
    ...(settings.explore ? { explore: settings.explore } : {}),
  });
  for (const v of env.ledger.open(check.id, (v) => handle.receive(v))) handle.receive(v);
  const started = performance.now();
  const ending = await settle(() => check.run(handle.ctx), expired);
  env.ledger.close(check.id);
  // Judged as the body ends, before its sessions close.
  const verdict = verdictOf(check.severity, handle.violations.length, ending, redact);
  if (verdict.outcome === 'error' && !ending.ok) {
    const err = ending.error;
    if (err instanceof NetworkError && err.errno && UNREACHABLE_ERRNO.has(err.errno))
      env.wentAway(new UnreachableError(`target ${profile.rest} unreachable during ${check.id}: ${err.errno}`));
  }
  clock.clear();
  env.signal.removeEventListener('abort', onRun);
  await handle.cleanup();
  // Cancels every wait the check left armed (a pause that lost a race), so none outlives it.
  if (!checkAbort.signal.aborted) checkAbort.abort(new AbortedError('the check has ended'));

  const result: CheckResult = Object.assign(blankResult(check), verdict);
  result.violations = handle.violations;
  if (handle.alsoSeen.length > 0) result.alsoSeen = handle.alsoSeen;
  result.observations = handle.observations;
  result.evidence = handle.evidence;
  if (handle.unjudged) result.unjudged = handle.unjudged;
  Object.assign(result, handle.fields());
  result.durationMs = Math.round(performance.now() - started);
  const slotWaitMs = Math.round(clock.pausedMs());
  if (slotWaitMs > 0) result.slotWaitMs = slotWaitMs;
  const slowAnswerMs = Math.round(answers.lengthenedMs());
  // Told where it mattered: the check ran past the limit it started with.
  if (slowAnswerMs > 0 && result.durationMs - slotWaitMs > limit) result.slowAnswerMs = slowAnswerMs;
  env.ledger.settle(result);
  return result;
}

/**
 * The run's connection budget, which every stream session of the run borrows from. Allowances the
 * profile leaves out are looked for only when a check streams and the target answers with a key.
 */
function connectionBudget(
  profile: Profile,
  timing: RunTiming,
  checks: readonly Check[],
  answers: boolean,
  createStream: StreamFactory,
  options: { redact: Redact; signal: AbortSignal; maxPayload: number },
): Promise<ConnectionBudget> {
  const search =
    profile.ws && answers && checks.some((c) => c.needs.includes('ws'))
      ? createStream({
          url: profile.ws,
          primaryKey: profile.keys.primary.key,
          record: () => undefined,
          ...options,
        })
      : undefined;
  return ConnectionBudget.forRun(profile, timing, search, options.signal);
}

/**
 * The run's ledger of violations met by checks that do not own them, over the checks that run;
 * `amended` resolves once every amendment it told (after its check's check-end) was handled.
 */
function runLedger(
  checks: readonly Check[],
  profile: Profile,
  emit: (e: RunEvent) => Promise<void>,
): { ledger: RuleLedger; amended(): Promise<void> } {
  let amendments = Promise.resolve();
  const ledger = new RuleLedger(
    new RuleOwners(checks.filter((c) => whyNotRun(c, { profile }) === undefined)),
    (result, was) => {
      amendments = amendments.then(() => emit({ type: 'check-amend', result, was }));
    },
  );
  return { ledger, amended: () => amendments };
}

/** The run's own abort, which follows the `outer` signal (Ctrl-C) until `release` is called. */
function runAbortFollowing(outer: AbortSignal | undefined): { controller: AbortController; release(): void } {
  const controller = new AbortController();
  const onOuter = (): void => controller.abort(new AbortedError('the run was stopped'));
  outer?.addEventListener('abort', onOuter, { once: true });
  return { controller, release: () => outer?.removeEventListener('abort', onOuter) };
}

/** Why every check is not run: the target answered nothing with the key. */
type Stalled = { reason: string; evidence: Evidence[] } | undefined;
/**
 * The preflights, unless skipped: a target that takes no connection stops the run (UnreachableError);
 * one that answers nothing with the key makes every check not run, with the reason returned.
 */
async function preflights(options: RunOptions, redact: Redact, checkTimeoutMs: number): Promise<Stalled> {
  if (options.skipPreflight) return undefined;
  const preflightMs = Math.min(PREFLIGHT_TIMEOUT_MS, checkTimeoutMs);
  await assertOpen(options.profile, preflightMs);
  return keyedPreflight(options.profile, redact, preflightMs);
}

/**
 * Every check's result in registry order: checks never started (bail, stop, the target's silence)
 * are reported with the reason, not silently dropped.
 */
function withUnstarted(
  checks: readonly Check[],
  results: readonly (CheckResult | undefined)[],
  run: Pick<RunOptions, 'profile' | 'target'>,
  tripped: string | undefined,
  bailedBy: string | undefined,
): CheckResult[] {
  const silent = tripped ? { reason: tripped } : undefined;
  const stop: NotRunReason = bailedBy ? { kind: 'bail', after: bailedBy } : { kind: 'stopped' };
  return checks.map((check, i) => results[i] ?? notRun(check, whyNotRun(check, run, silent) ?? stop));
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
  const requests = new RequestBudget(declaredRates(profile.keys), { maxWaitMs: settings.maxRateWaitMs });

  const stalled = await preflights(options, redact, settings.timeoutMs);
  await emit({ type: 'run-start', target, checks, startedAt, settings });

  const { controller: runAbort, release } = runAbortFollowing(options.signal);
  // A listener per running check, lanes beside them (over Node's 10); bounded so a real leak warns.
  setMaxListeners(checks.length + 1, runAbort.signal);
  const timing = options.timing ?? new RunTiming(profile);
  const connections =
    options.connections ??
    (await connectionBudget(profile, timing, checks, stalled === undefined, createStream, {
      redact,
      signal: runAbort.signal,
      maxPayload: settings.maxPayloadBytes,
    }));

  let unreachable: UnreachableError | undefined;
  const { ledger, amended } = runLedger(checks, profile, emit);
  const env: RunEnv = {
    ledger,
    profile,
    settings,
    redact,
    validator: options.validator ?? defaultValidator,
    createStream,
    requests,
    timing,
    connections,
    pairLedger: new PairLedger(),
    signal: runAbort.signal,
    wentAway(err) {
      unreachable ??= err;
      runAbort.abort(unreachable);
    },
  };
  const breaker = CircuitBreaker.forConcurrency(settings.concurrency);
  const results: (CheckResult | undefined)[] = new Array(checks.length);
  let bailedBy: string | undefined;
  let done = 0;
  const runIndex = async (index: number): Promise<void> => {
    const check = checks[index]!;
    await emit({
      type: 'check-start',
      check,
      limitMs: timeoutOf(check, profile, timing.waits, settings.timeoutMs),
    });
    const why = whyNotRun(check, options, stalled);
    const result = why ? ledger.unstarted(notRun(check, why)) : await runCheck(check, env);
    if (unreachable) return;
    breaker.attribute(result);
    results[index] = result;
    done++;
    await emit({ type: 'check-end', result, done, total: checks.length });
    ledger.told(result);
    if (settings.bail && (result.outcome === 'fail' || result.outcome === 'error')) bailedBy ??= check.id;
    const tripped = breaker.record(result);
    if (tripped) runAbort.abort(new AbortedError(tripped));
  };
  await inLanes(checks, settings.concurrency, () => !runAbort.signal.aborted && !bailedBy, runIndex);
  release();
  if (unreachable) throw unreachable;
  await amended();

  const finished = withUnstarted(checks, results, options, breaker.tripped, bailedBy).map((r) => ledger.unstarted(r));
  const summary = summarize(finished, Math.round(performance.now() - t0), settings.minCoverage);
  const rateWaitMs = Math.round(requests.waited());
  if (rateWaitMs > 0) summary.rateWaitMs = rateWaitMs;
  const slowAnswers = slowAnswersOf(finished, timing.slowestRestAnswerMs);
  if (slowAnswers) summary.slowAnswers = slowAnswers;
  const changes = options.compare?.(finished);
  const finishedAt = new Date().toISOString();
  await emit({ type: 'run-end', results: finished, summary, startedAt, finishedAt, target, changes });
  return { results: finished, summary, changes };
}

export { ConformError, summarize, type RunSummary };
