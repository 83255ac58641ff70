/**
 * The CheckContext a check runs with: its transports (recording evidence, keys redacted), the
 * validator, and the verbs that turn what it sees into a verdict. One context per check run.
 */
import { performance } from 'node:perf_hooks';
import type { Check, CheckContext, CheckResult, Evidence, Observation, Partly, Violation } from './check.ts';
import type { ExploreSettings } from './explore/index.ts';
import type { Profile } from './profile.ts';
import type { Validator } from './validator.ts';
import type { SchemaName } from './schema-definitions.ts';
import type { Redact } from './redact.ts';
import { oneLine, redactDeep } from './redact.ts';
import { NoStreamError } from './errors.ts';
import { createRestClient } from './transports/rest-client.ts';
import type { RequestBudget } from './request-budget.ts';
import type { RestClient } from './transports/rest.ts';
import type { Push, StreamClient } from './transports/stream.ts';
import { pushInspector } from './push-inspection.ts';
import { createStreamClient } from './transports/ws-session.ts';
import { ConnectionBudget } from './connection-budget.ts';
import type { CheckLoans } from './check-loans.ts';
import { PairLedger } from './pair-ledger.ts';
import { RunTiming } from './timing/index.ts';

/** What builds a stream client for a check (src/transports/ws-session.ts's createStreamClient). */
export type StreamFactory = (options: {
  url: string;
  primaryKey: string;
  record: (e: Evidence) => void;
  redact?: (s: string) => string;
  signal?: AbortSignal;
  maxPayload?: number;
  onPush?: (push: Push) => void;
}) => StreamClient;

/**
 * Violations kept per check; the rest are counted in one closing line (a 12,000-record page must
 * not take the heap).
 */
export const MAX_VIOLATIONS = 50;
/** Schema errors taken from one validation. */
export const MAX_SCHEMA_ERRORS = 20;

/** Longest violation text kept (after redaction, so a cut never splits a key). */
export const MAX_VIOLATION_CHARS = 1000;
const cap = (s: string): string => (s.length > MAX_VIOLATION_CHARS ? `${s.slice(0, MAX_VIOLATION_CHARS - 1)}…` : s);

// CheckFailed and CheckSkipped are verdicts, not errors: they stay outside the error classes
// (src/errors.ts), so nothing can mistake a broken target for a broken harness.

/** Thrown by `ctx.fail`: ends the check as a failure. */
export class CheckFailed extends Error {
  override name = 'CheckFailed';
}
/** Thrown by `ctx.skip`: ends the check as a skip with its reason. */
export class CheckSkipped extends Error {
  override name = 'CheckSkipped';
  constructor(
    message: string,
    readonly nothingToJudge?: string,
  ) {
    super(message);
  }
}

export interface ContextOptions {
  profile: Profile;
  validator: Validator;
  redact: Redact;
  signal: AbortSignal;
  /** Per-request timeout of the REST client. */
  requestTimeoutMs: number;
  /** Default: the WebSocket session of src/transports/ws-session.ts. */
  createStream?: StreamFactory;
  /** Largest REST body read; default the REST client's. */
  maxBodyBytes?: number;
  /** Largest WebSocket message accepted; default the stream client's. */
  maxPayloadBytes?: number;
  /** The run's REST request pace, shared by every check. */
  budget?: RequestBudget;
  /** The run's timing (src/timing/): the check reads its waits as it starts; default the profile's alone. */
  timing?: RunTiming;
  /** The run's per-key WebSocket connection budget; default one of this check's own. */
  connections?: ConnectionBudget;
  /** What the run has seen of pairs on the stream; default a ledger of this check's own. */
  pairLedger?: PairLedger;
  /** Hears when the check starts (true) and stops (false) waiting for a connection slot. */
  onSlotWait?: (waiting: boolean) => void;
  /** Hears when a request of the check starts (true) and stops (false) waiting on the rate limit. */
  onRateWait?: (waiting: boolean) => void;
  /** Lengthens the check's time limit (see CheckContext.extendTimeLimit). */
  extendTimeLimit?: (ms: number) => void;
  /** What the run asks of the explorer, when it asks. */
  explore?: ExploreSettings;
}

/** A running check's context plus what the runner reads back from it. */
export interface ContextHandle {
  ctx: CheckContext;
  violations: Violation[];
  observations: Observation[];
  evidence: Evidence[];
  /** What the check said it judged only in part (`ctx.partly`). */
  partly?: Partly;
  /** What the result takes from the check beside its verdict: what it judged in part, what it explored. */
  fields(): Pick<CheckResult, 'partly' | 'exploration' | 'enforces'>;
  /** Closes every stream session the check left open. */
  cleanup(): Promise<void>;
}

const noStream = (why: string): StreamClient => ({
  open: () => Promise.reject(new NoStreamError(why)),
  now: () => performance.now(),
  closeAll: () => Promise.resolve(),
});

/** What a check records: evidence, observations, and violations deduplicated and capped. */
interface Records {
  violations: Violation[];
  observations: Observation[];
  evidence: Evidence[];
  record(e: Evidence): void;
  /** Keeps a violation (an observation, for an observe-severity check) once, up to MAX_VIOLATIONS. */
  addViolation(v: Violation): void;
  /** Counts `n` violations that were not kept. */
  drop(n: number): void;
  /** Adds one closing line for the violations not kept. */
  closeDropped(): void;
}

/** The records of one check. Observe-severity checks never fail: their violations become observations. */
function records(check: Check, redact: Redact): Records {
  const violations: Violation[] = [];
  const observations: Observation[] = [];
  const evidence: Evidence[] = [];
  const observeOnly = check.severity === 'observe';
  let dropped = 0;
  // A frame judged both by the engine's push inspection and by a push check reads as one violation.
  const seen = new Set<string>();
  return {
    violations,
    observations,
    evidence,
    record(e) {
      evidence.push(redactDeep(e, redact));
    },
    addViolation(v) {
      const clean = { received: cap(oneLine(redact(v.received))), expected: cap(oneLine(redact(v.expected))) };
      const id = `${clean.received}\n${clean.expected}`;
      if (seen.has(id)) return;
      seen.add(id);
      if (violations.length >= MAX_VIOLATIONS || (observeOnly && observations.length >= MAX_VIOLATIONS)) {
        dropped++;
        return;
      }
      if (observeOnly) observations.push({ name: 'unexpected', value: clean.received, note: clean.expected });
      else violations.push(clean);
    },
    drop(n) {
      dropped += n;
    },
    closeDropped() {
      if (dropped === 0) return;
      const line = {
        received: `… and ${dropped} more violations of the same check, not kept`,
        expected: 'see the violations above',
      };
      if (observeOnly) observations.push({ name: 'unexpected', value: line.received });
      else violations.push(line);
      dropped = 0;
    },
  };
}

/** The check's REST client: recording into its evidence, paced by the run's request budget. */
function checkRest(options: ContextOptions, rec: Records): RestClient {
  return createRestClient({
    baseUrl: options.profile.rest,
    primaryKey: options.profile.keys.primary.key,
    record: rec.record,
    redact: options.redact,
    timeoutMs: options.requestTimeoutMs,
    maxBodyBytes: options.maxBodyBytes,
    signal: options.signal,
    budget: options.budget,
    ...(options.onRateWait ? { onRateWait: options.onRateWait } : {}),
  });
}

/**
 * The check's stream client: the profile's transport, each open borrowing a slot of the run's
 * budget, each push held to the push rules and entered in the run's pair ledger.
 */
function checkStream(
  options: ContextOptions,
  rec: Records,
  loans: CheckLoans,
  pushes: ReturnType<typeof pushInspector>,
  pairLedger: PairLedger,
): StreamClient {
  const { profile, redact } = options;
  if (!profile.ws) return noStream('the profile has no ws URL');
  const factory = options.createStream ?? createStreamClient;
  return loans.stream(
    factory({
      url: profile.ws,
      primaryKey: profile.keys.primary.key,
      record: rec.record,
      redact,
      signal: options.signal,
      onPush: (push) => {
        pushes.inspect(push);
        pairLedger.pushed(push.value);
      },
      ...(options.maxPayloadBytes ? { maxPayload: options.maxPayloadBytes } : {}),
    }),
  );
}

/** Builds the context of one check. */
export function createContext(check: Check, options: ContextOptions): ContextHandle {
  const { profile, redact } = options;
  const rec = records(check, redact);
  const { addViolation, observations } = rec;
  const rest = checkRest(options, rec);
  const skip = (reason: string, nothingToJudge?: string): never => {
    throw new CheckSkipped(oneLine(redact(reason)), nothingToJudge);
  };
  const note = (text: string): void => rec.record({ kind: 'note', text, atMs: performance.now() });
  const timing = options.timing ?? new RunTiming(profile);
  const connections = options.connections ?? new ConnectionBudget(profile, timing);
  const pairLedger = options.pairLedger ?? new PairLedger();
  const loans = connections.forCheck({
    primaryKey: profile.keys.primary.key,
    signal: options.signal,
    note,
    skip,
    ...(options.onSlotWait ? { onWait: options.onSlotWait } : {}),
  });
  const pushes = pushInspector(options.validator, addViolation, (v) => redactDeep(v, redact));
  let explored: Pick<CheckResult, 'exploration' | 'enforces'> = {};
  const stream = checkStream(options, rec, loans, pushes, pairLedger);

  const ctx: CheckContext = {
    profile,
    rest,
    stream,
    connections: loans,
    validator: options.validator,
    // Read as the check starts: what the run measured before it counts.
    waits: timing.waits,
    pairLedger,
    signal: options.signal,
    violation: addViolation,
    fail(v: Violation): never {
      addViolation(v);
      throw new CheckFailed(v.received);
    },
    skip,
    partly(reason: string, statements?: Partly['statements']): void {
      handle.partly = { reason: oneLine(redact(reason)), ...(statements ? { statements: [...statements] } : {}) };
    },
    extendTimeLimit(ms: number): void {
      options.extendTimeLimit?.(ms);
    },
    observe(name: string, value: unknown, note?: string): void {
      const o: Observation = { name, value: redactDeep(value, redact) };
      if (note !== undefined) o.note = oneLine(redact(note));
      observations.push(o);
    },
    note,
    ...(options.explore ? { explore: options.explore } : {}),
    explored(e, judged, evidenceFromMs) {
      // Coverage credits the statements a step judged, not every one the check could enforce.
      explored = { exploration: e, enforces: check.enforces.filter((k) => judged.includes(k)) };
      if (evidenceFromMs === undefined) return;
      const keep = rec.evidence.filter((ev) => ev.atMs >= evidenceFromMs);
      rec.evidence.splice(0, rec.evidence.length, ...keep);
    },
    expectSchema(name: SchemaName, value: unknown, what: string): boolean {
      // Validated redacted: the validator quotes values cut short, and a cut key would escape the redactor.
      const result = options.validator.validate(name, redactDeep(value, redact));
      for (const line of result.errors.slice(0, MAX_SCHEMA_ERRORS))
        addViolation({ received: `${what}: ${line}`, expected: `${what} matches the ${name} schema` });
      if (result.errors.length > MAX_SCHEMA_ERRORS) rec.drop(result.errors.length - MAX_SCHEMA_ERRORS);
      return result.ok;
    },
  };

  const handle: ContextHandle = {
    ctx,
    violations: rec.violations,
    observations,
    evidence: rec.evidence,
    fields: () => ({ ...(handle.partly ? { partly: handle.partly } : {}), ...explored }),
    async cleanup() {
      // Inspection ends with the check's verdict: frames that arrive while its sessions close are not judged.
      pushes.finish();
      await stream.closeAll().catch(() => undefined);
      rec.closeDropped();
      loans.dispose();
    },
  };
  return handle;
}

/** An empty result for a check, filled in by the runner. */
export function blankResult(check: Check): CheckResult {
  return {
    id: check.id,
    title: check.title,
    expectation: check.expectation,
    clause: check.clause,
    severity: check.severity,
    tags: check.tags,
    enforces: check.enforces,
    outcome: 'pass',
    violations: [],
    observations: [],
    evidence: [],
    durationMs: 0,
  };
}
