/**
 * The CheckContext a check runs with: its transports (recording evidence, keys redacted), the
 * validator, and the verbs that turn what it sees into a verdict. One context per check run.
 */
import { performance } from 'node:perf_hooks';
import type {
  AlsoSeen,
  Channel,
  Check,
  CheckContext,
  CheckResult,
  Evidence,
  JudgedViolation,
  Observation,
  Partly,
  Violation,
} from './check.ts';
import type { StatementKey } from './statements.ts';
import { channelOf, keep as keepRouted, ownRule } from './ownership.ts';
import { NOTHING_TO_JUDGE } from './coverage.ts';
import { schemaErrorRule } from './schema-rules.ts';
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
import { retryingStream } from './transports/network-retry.ts';
import { ConnectionBudget } from './connection-budget.ts';
import type { CheckLoans } from './check-loans.ts';
import { PairLedger } from './pair-ledger.ts';
import { RunTiming } from './timing/index.ts';
import { caOf, type TrustedCa } from './transports/tls-trust.ts';

/** What builds a stream client for a check (src/transports/ws-session.ts's createStreamClient). */
export type StreamFactory = (options: {
  url: string;
  /** CA certificates a wss: URL's certificate is verified against beside Node's own. */
  ca?: TrustedCa;
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
  /** Hears how long each REST answer of the check took, ms. */
  onRestAnswer?: (ms: number) => void;
  /** Who owns each statement in the run; without it every violation a check meets is its own. */
  judging?: Judging;
  /** What the run asks of the explorer, when it asks. */
  explore?: ExploreSettings;
}

/** A running check's context plus what the runner reads back from it. */
export interface ContextHandle {
  ctx: CheckContext;
  /** Violations of the rules the check owns, its own and those other checks met. */
  violations: JudgedViolation[];
  /** Violations of rules other checks own that this one met. */
  alsoSeen: AlsoSeen[];
  /** A violation another check met of a rule this one owns. */
  receive(v: JudgedViolation): void;
  observations: Observation[];
  evidence: Evidence[];
  /** What the check said it judged only in part (`ctx.partly`). */
  partly?: Partly;
  /** What the check said it did not judge at all (`ctx.notJudged`). */
  unjudged?: Required<Partly>;
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
  /** Violations of the rules the check owns: its verdict. */
  violations: JudgedViolation[];
  /** Violations of rules other checks own, cited. */
  alsoSeen: AlsoSeen[];
  observations: Observation[];
  evidence: Evidence[];
  record(e: Evidence): void;
  /**
   * Keeps a violation once, up to MAX_VIOLATIONS: the check's own (an observation, for an
   * observe-severity check), or cited and routed to the check that owns its statement. Returns the
   * owner when another check owns it.
   */
  addViolation(v: Violation): string | undefined;
  /** A violation another check met of a rule this one owns. */
  receive(v: JudgedViolation): void;
  /** Counts `n` violations that were not kept. */
  drop(n: number): void;
  /** Adds one closing line for the violations not kept. */
  closeDropped(): void;
}

/** Who owns what in the run, and where a violation of another check's rule goes. */
export interface Judging {
  /** The check that owns a statement on a channel in this run; undefined when none does. */
  ownerOf(rule: StatementKey, channel: Channel): string | undefined;
  /** Delivers a violation to the check that owns it. */
  route(owner: string, v: JudgedViolation): void;
}

/** The records of one check. Observe-severity checks never fail: their violations become observations. */
function records(check: Check, redact: Redact, judging?: Judging): Records {
  const violations: JudgedViolation[] = [];
  const alsoSeen: AlsoSeen[] = [];
  const observations: Observation[] = [];
  const evidence: Evidence[] = [];
  const observeOnly = check.severity === 'observe';
  const own = ownRule(check);
  const channel = channelOf(check);
  let dropped = 0;
  // A frame judged both by the engine's push inspection and by a push check reads as one violation.
  const seen = new Set<string>();
  const full = (): boolean =>
    violations.filter((v) => v.seenBy === undefined).length >= MAX_VIOLATIONS ||
    (observeOnly && observations.length >= MAX_VIOLATIONS);
  const keepOwn = (v: JudgedViolation): void => {
    const id = `${v.rule}\n${v.received}\n${v.expected}`;
    if (seen.has(id)) return;
    seen.add(id);
    if (full()) {
      dropped++;
      return;
    }
    if (observeOnly) observations.push({ name: 'unexpected', value: v.received, note: v.expected });
    else violations.push(v);
  };
  return {
    violations,
    alsoSeen,
    observations,
    evidence,
    record(e) {
      evidence.push(redactDeep(e, redact));
    },
    addViolation(v) {
      const rule = v.rule ?? own;
      const clean: JudgedViolation = {
        received: cap(oneLine(redact(v.received))),
        expected: cap(oneLine(redact(v.expected))),
        ...(rule ? { rule } : {}),
      };
      if (v.channel) clean.channel = v.channel;
      const owner = v.rule === undefined ? undefined : judging?.ownerOf(v.rule, v.channel ?? channel);
      if (owner === undefined || owner === check.id) {
        keepOwn(clean);
        return undefined;
      }
      if (alsoSeen.length < MAX_VIOLATIONS && !alsoSeen.some((x) => x.received === clean.received))
        alsoSeen.push({ ...clean, owner });
      judging?.route(owner, { ...clean, seenBy: check.id });
      return owner;
    },
    receive(v) {
      // Kept apart from the check's own: they never crowd its own violations out.
      if (!observeOnly) keepRouted(violations, v);
    },
    drop(n) {
      dropped += n;
    },
    closeDropped() {
      if (dropped === 0) return;
      const line: JudgedViolation = {
        received: `… and ${dropped} more violations of the same check, not kept`,
        expected: 'see the violations above',
        ...(own ? { rule: own } : {}),
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
    ca: caOf(options.profile),
    record: rec.record,
    redact: options.redact,
    timeoutMs: options.requestTimeoutMs,
    maxBodyBytes: options.maxBodyBytes,
    signal: options.signal,
    budget: options.budget,
    ...(options.onRateWait ? { onRateWait: options.onRateWait } : {}),
    ...(options.onRestAnswer ? { onAnswer: options.onRestAnswer } : {}),
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
  const note = (text: string): void => rec.record({ kind: 'note', text, atMs: performance.now() });
  return loans.stream(
    retryingStream(
      factory({
        url: profile.ws,
        ca: caOf(profile),
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
      note,
      options.signal,
    ),
  );
}

/** `ctx.expectSchema`: a value held to a schema, each error (the first few) a violation of the field's statement. */
function schemaExpectation(
  options: ContextOptions,
  rec: ReturnType<typeof records>,
): (name: SchemaName, value: unknown, what: string) => boolean {
  return (name, value, what) => {
    // Validated redacted: the validator quotes values cut short, and a cut key would escape the redactor.
    const result = options.validator.validate(name, redactDeep(value, options.redact));
    for (const line of result.errors.slice(0, MAX_SCHEMA_ERRORS))
      rec.addViolation({
        received: `${what}: ${line}`,
        expected: `${what} matches the ${name} schema`,
        ...schemaErrorRule(name, line),
      });
    if (result.errors.length > MAX_SCHEMA_ERRORS) rec.drop(result.errors.length - MAX_SCHEMA_ERRORS);
    return result.ok;
  };
}

/** Builds the context of one check. */
export function createContext(check: Check, options: ContextOptions): ContextHandle {
  const { profile, redact } = options;
  const rec = records(check, redact, options.judging);
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
    slotKept: (v) => addViolation(v),
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
    violation(v: Violation): void {
      addViolation(v);
    },
    fail(v: Violation): never {
      const owner = addViolation(v);
      // What the check needed broke another check's rule: that check fails on it, this one cannot judge.
      if (owner !== undefined)
        skip(`not judged: ${v.received}, which breaks ${v.rule} (judged by ${owner})`, NOTHING_TO_JUDGE.brokenAnswer);
      throw new CheckFailed(v.received);
    },
    skip,
    partly(reason: string, statements?: Partly['statements']): void {
      handle.partly = { reason: oneLine(redact(reason)), ...(statements ? { statements: [...statements] } : {}) };
    },
    notJudged(reason: string, statements: readonly StatementKey[]): void {
      const before = handle.unjudged;
      handle.unjudged = {
        reason: [before?.reason, oneLine(redact(reason))].filter(Boolean).join('; '),
        statements: [...new Set([...(before?.statements ?? []), ...statements])],
      };
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
    expectSchema: schemaExpectation(options, rec),
  };

  const handle: ContextHandle = {
    ctx,
    violations: rec.violations,
    alsoSeen: rec.alsoSeen,
    receive: rec.receive,
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
