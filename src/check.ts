/**
 * What a check is and what it gets to work with. A check is data plus one async body; the runner
 * (src/runner.ts) gives it a context and turns what it records into a verdict. Checks never open
 * sockets or read the environment themselves: everything comes through the context.
 */
import type { Profile } from './profile.ts';
import type { Validator } from './validator.ts';
import type { SchemaName } from './schema-definitions.ts';
import type { RestClient } from './transports/rest.ts';
import type { StreamClient } from './transports/stream.ts';

/** `must`: the spec states it, a violation fails. `observe`: the spec leaves it "not shown": recorded, never failing. */
export type Severity = 'must' | 'observe';

export const TAGS = ['rest', 'ws', 'auth', 'limits', 'slow', 'disruptive', 'pagination', 'price', 'entitlements', 'handshake', 'session', 'keepalive', 'push', 'consistency'] as const;
export type Tag = (typeof TAGS)[number];

/** The clause of the spec a check enforces: a section heading of the spec and the rule in a few words. */
export interface SpecClause { section: string; rule: string }

export interface Check {
  /** Stable dotted id, e.g. `rest.price.unknown-pair`. */
  readonly id: string;
  readonly clause: SpecClause;
  /** What the check sends. */
  readonly title: string;
  /** What the spec requires of the answer. */
  readonly expectation: string;
  readonly severity: Severity;
  readonly tags: readonly Tag[];
  /** Dotted profile paths the check needs (`keys.cryptoOnly`, `pairs.stale`, `ws`); missing ones skip it. */
  readonly needs: readonly string[];
  /** Overrides the run's per-check timeout (keep-alive checks wait out the ping window). */
  readonly timeoutMs?: number | ((profile: Profile) => number);
  run(ctx: CheckContext): Promise<void>;
}

/** One way the target broke a rule. */
export interface Violation {
  /** What the target did. */
  received: string;
  /** What the spec requires. */
  expected: string;
}

/** What the target did where the spec is silent. */
export interface Observation { name: string; value: unknown; note?: string }

/** One step of the transcript that reproduces a verdict. Keys are redacted before it is stored. */
export type Evidence =
  | { kind: 'http'; request: { method: string; url: string; headers: Record<string, string> }; response?: { status: number; headers: Record<string, string>; body: string }; error?: string; curl: string; atMs: number }
  | { kind: 'ws-open'; url: string; headers: Record<string, string>; localAddress?: string; outcome: string; atMs: number }
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
  /** A stable code for `error` (e.g. `CONFORM_TIMEOUT`, `CONFORM_NETWORK`). */
  errorCode?: string;
  /** A skip because the target offered nothing to judge (`no priced pair`, `no live pair`: src/coverage.ts). */
  nothingToJudge?: string;
  violations: Violation[];
  observations: Observation[];
  evidence: Evidence[];
  durationMs: number;
}

export interface CheckContext {
  readonly profile: Profile;
  readonly rest: RestClient;
  readonly stream: StreamClient;
  readonly validator: Validator;
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
  /** Records undocumented behaviour. */
  observe(name: string, value: unknown, note?: string): void;
  /** Adds a line to the transcript. */
  note(text: string): void;
  /** Validates `value`; every schema error becomes a violation naming `what`. Returns whether it was valid. */
  expectSchema(name: SchemaName, value: unknown, what: string): boolean;
}
