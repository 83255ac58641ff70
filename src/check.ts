/**
 * What a check is and what it gets to work with. A check is data plus one async body; the runner
 * (src/runner.ts) gives it a context and turns what it records into a verdict. Checks never open
 * sockets or read the environment themselves: everything comes through the context.
 */
import type { PairLedger } from './pair-ledger.ts';
import type { FaultList } from './fault-name.ts';
import type { StatementKey } from './statements.ts';
import type { Profile } from './profile.ts';
import type { Validator } from './validator.ts';
import type { Waits } from './timing/index.ts';
import type { SchemaName } from './schema-definitions.ts';
import type { Exploration, ExploreSettings } from './explore/index.ts';
import type { RestClient } from './transports/rest.ts';
import type { StreamClient } from './transports/stream.ts';

/**
 * `must`: the spec states it, a violation fails. `observe`: the spec leaves it "not shown":
 * recorded, never failing.
 */
export type Severity = 'must' | 'observe';

export const TAGS = [
  'rest',
  'ws',
  'auth',
  'limits',
  'slow',
  'disruptive',
  'pagination',
  'price',
  'entitlements',
  'handshake',
  'session',
  'keepalive',
  'push',
  'consistency',
  'explore',
] as const;
export type Tag = (typeof TAGS)[number];

/** The clause of the spec a check enforces: a section heading of the spec and the rule in a few words. */
export interface SpecClause {
  section: string;
  rule: string;
}

export interface Check {
  /** Stable dotted id, e.g. `rest.price.unknown-pair`. */
  readonly id: string;
  readonly clause: SpecClause;
  /** The statements of the traceability matrix (src/matrix.ts) the check enforces: its rows there. */
  readonly enforces: readonly StatementKey[];
  /**
   * Faults of the reference service (reference/faults/, by name) under which the check must fail:
   * the mutation suite's expectation of each fault is the checks naming it.
   */
  readonly catches?: FaultList;
  /**
   * Faults the check may also fail under when a conforming dialect carries the broken frame to it
   * (the fault's record, `widenedBy`, says which dialects and why); never expected on the default
   * dialect. The probe of a pair denial is widened only where the dialect answers refused pairs
   * with that denial.
   */
  readonly catchesUnderDialects?: FaultList;
  /** What the check sends. */
  readonly title: string;
  /** What the spec requires of the answer. */
  readonly expectation: string;
  readonly severity: Severity;
  readonly tags: readonly Tag[];
  /** Dotted profile paths the check needs (`keys.cryptoOnly`, `pairs.stale`, `ws`); missing ones skip it. */
  readonly needs: readonly string[];
  /**
   * Overrides the run's per-check timeout (keep-alive checks wait out the ping window); a function
   * reads the target's profile and the run's waits (src/timing/).
   */
  readonly timeoutMs?: number | ((profile: Profile, waits: Waits) => number);
  run(ctx: CheckContext): Promise<void>;
}

/** The two channels of the service: a rule broken on each is one verdict per channel. */
export type Channel = 'rest' | 'stream';

/** One way the target broke a rule. */
export interface Violation {
  /** What the target did. */
  received: string;
  /** What the spec requires. */
  expected: string;
  /**
   * The statement broken (src/statements.ts). Absent: the check's own rule, the first statement of
   * its `enforces`. A statement the check does not own in the run is evidence for the check that
   * does (src/ownership.ts): it fails that check, and this one only cites it.
   */
  rule?: StatementKey;
  /** Where it was seen, when not the check's own channel (a REST read inside a stream check). */
  channel?: Channel;
}

/** A violation as a result keeps it: its statement resolved (absent for a check enforcing none), and who saw it. */
export interface JudgedViolation extends Violation {
  /** The check whose exchange showed it, when not the check this violation fails. */
  seenBy?: string;
}

/** A violation a check met of a rule another check owns: cited, never failed on. */
export interface AlsoSeen extends JudgedViolation {
  /** The check that owns the rule in this run, which fails on it. */
  owner: string;
}

/** What the target did where the spec is silent. */
export interface Observation {
  name: string;
  value: unknown;
  note?: string;
}

/** One step of the transcript that reproduces a verdict. Keys are redacted before it is stored. */
export type Evidence =
  | {
      kind: 'http';
      request: { method: string; url: string; headers: Record<string, string> };
      response?: { status: number; headers: Record<string, string>; body: string };
      error?: string;
      curl: string;
      atMs: number;
    }
  | {
      kind: 'ws-open';
      url: string;
      headers: Record<string, string>;
      localAddress?: string;
      outcome: string;
      atMs: number;
    }
  | { kind: 'frame'; direction: 'in' | 'out'; data: string; atMs: number }
  | { kind: 'close'; code: number; reason: string; by: 'server' | 'client'; atMs: number }
  | { kind: 'note'; text: string; atMs: number };

export type Outcome = 'pass' | 'fail' | 'skip' | 'error';

export interface CheckResult {
  id: string;
  title: string;
  expectation: string;
  clause: SpecClause;
  severity: Severity;
  tags: readonly Tag[];
  outcome: Outcome;
  /** Why it skipped or errored, one line. */
  reason?: string;
  /** For `error`: the stable code of the error class (src/errors.ts) that ended the check. */
  errorCode?: string;
  /** A skip because the target offered nothing to judge (`no priced pair`, `no live pair`: src/coverage.ts). */
  nothingToJudge?: string;
  /** The statements the check enforces (its `enforces`): what the rule coverage counts it toward. */
  enforces?: readonly StatementKey[];
  /** What the check judged only in part (`ctx.partly`): those statements count as partly checked. */
  partly?: Partly;
  /** Statements the check enforces but did not judge at all this run (`ctx.notJudged`): it credits none of them. */
  unjudged?: Required<Partly>;
  /** For a skip because the profile lacks what the check needs: the missing profile paths. */
  missing?: readonly string[];
  violations: JudgedViolation[];
  /** Violations of rules other checks own, met on the way: evidence for their verdicts, not this one's. */
  alsoSeen?: AlsoSeen[];
  observations: Observation[];
  evidence: Evidence[];
  durationMs: number;
  /** What the explorer ran, judged and found (ws.explore only). */
  exploration?: Exploration;
  /**
   * Of `durationMs`, the time spent waiting for another check to give a connection slot back, or
   * for the key's turn under the rate limit (not counted against the check's timeout).
   */
  slotWaitMs?: number;
  /**
   * How much the check's time limit grew because the target's REST answers came slowly (each past
   * what a limit allows an answer: src/answer-time.ts), when the check ran past the limit it
   * started with.
   */
  slowAnswerMs?: number;
}

/** A part of a check's statements it could not judge, and why. */
export interface Partly {
  reason: string;
  /** The statements judged only in part; absent: every statement the check enforces. */
  statements?: readonly StatementKey[];
}

/** A key's WebSocket connection allowance as the run knows it (src/connection-budget.ts). */
export interface Allowance {
  /** Connections of the key the engine lends at once. */
  lent: number;
  /** The allowance: stated, found, or (source `at-least`) a lower bound; absent when unknown. */
  connections?: number;
  /**
   * `profile`: stated there; `found`: a 50009 after `connections` accepted; `at-least`: none
   * refused up to the search's cap; `unknown`: not stated, not found.
   */
  source: 'profile' | 'found' | 'at-least' | 'unknown';
  /** How the search went, one line per connection it opened. */
  steps: string[];
  /** Why the allowance is what it is, one line. */
  note?: string;
}

/** A limit check's hold on a key: no other check opens a connection of the key until the release. */
export interface KeyLease {
  /** Connections of the key that other checks of this run hold open right now. */
  heldByOthers(): number;
  /** How many connections of the key have closed since the lease began (the count moved under us). */
  closedSince(): number;
  /** Resolves once connections closed before now have had the time this target takes to free their slots. */
  settled(): Promise<void>;
  release(): void;
}

/**
 * The run's per-key connection budget as a check sees it. `ctx.stream.open()` already borrows one
 * slot per session and gives it back on close; these are for checks that need more.
 */
export interface ConnectionBudgetView {
  /** What the run knows of a key's allowance (key value; default the primary key). */
  allowance(key?: string): Allowance;
  /**
   * Holds `count` connections of a key at once; opens of that key draw from it until `release()`
   * (call it after closing them). Skips the check, with the reason, when the key is lent fewer.
   */
  borrow(count: number, key?: string): Promise<{ release(): void }>;
  /** For limit checks: holds the key's count still; opens meanwhile bypass the queue, even beyond the allowance. */
  freeze(key?: string): Promise<KeyLease>;
}

export interface CheckContext {
  readonly profile: Profile;
  readonly rest: RestClient;
  /** Opens stream sessions; each open of a profile key waits for a slot of its allowance. */
  readonly stream: StreamClient;
  /** The key allowances behind `stream` (see ConnectionBudgetView). */
  readonly connections: ConnectionBudgetView;
  readonly validator: Validator;
  /** How long to wait for the target (src/timing/): stated in the profile, measured, or the defaults. */
  readonly waits: Waits;
  /** What the run has seen of pairs on the stream: accepted, refused, moving (src/pair-ledger.ts). */
  readonly pairLedger: PairLedger;
  /** Aborted when the check times out or the run stops; pass it on to waits. */
  readonly signal: AbortSignal;
  /** Records a violation and carries on, so one run shows all that is wrong. */
  violation(v: Violation): void;
  /** Records a violation and ends the check. */
  fail(v: Violation): never;
  /**
   * Ends the check as a skip: it does not apply, and says why. `nothingToJudge` marks a skip
   * because the target offered nothing to judge (a NOTHING_TO_JUDGE value), which reports show prominently.
   */
  skip(reason: string, nothingToJudge?: string): never;
  /**
   * Says the check judges its statements (or the `statements` named) only in part, and why (one
   * source address where the rule is about any address): the rule coverage counts them partly
   * checked. The check goes on to its verdict.
   */
  partly(reason: string, statements?: readonly StatementKey[]): void;
  /**
   * Says the check did not judge `statements` of its `enforces` at all this run, and why (it never
   * provoked what they describe): the rule coverage credits it with none of them, and names the
   * reason. Calls add up. The check goes on to its verdict on the rest.
   */
  notJudged?(reason: string, statements: readonly StatementKey[]): void;
  /** Records undocumented behaviour. */
  observe(name: string, value: unknown, note?: string): void;
  /** What the run asks of the explorer (`--explore`, `conform explore`, `conform replay`); absent otherwise. */
  readonly explore?: ExploreSettings;
  /**
   * The explorer's report: it goes into the result, and the rule coverage credits only the
   * statements of the transitions a step judged (`judged`), not every one the check enforces. The
   * transcript keeps only what was recorded from `evidenceFromMs` on (the last run: a long exploration
   * records more frames than a report should hold).
   */
  explored?(e: Exploration, judged: readonly StatementKey[], evidenceFromMs?: number): void;
  /** Adds a line to the transcript. */
  note(text: string): void;
  /** Validates `value`; every schema error becomes a violation naming `what`. Returns whether it was valid. */
  expectSchema(name: SchemaName, value: unknown, what: string): boolean;
  /**
   * Lengthens the check's time limit by `ms`: a check whose work grows with the target (a walk of
   * the whole catalogue) asks for time as it learns how much there is.
   */
  extendTimeLimit?(ms: number): void;
}
