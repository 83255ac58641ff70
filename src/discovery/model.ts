/**
 * What discovery is given, what it finds and how long it waits: the types and settings every
 * step of discovery shares, below all of them.
 */
import type { Allowance, Observation } from '../check.ts';
import type { ConnectionBudget } from '../connection-budget.ts';
import type { Profile } from '../profile.ts';
import type { Redact } from '../redact.ts';
import type { RestStatus } from '../spec.ts';
import type { Transport } from '../transports/stream.ts';
import type { RunTiming } from '../timing/index.ts';
import type { TrustedCa } from '../transports/tls-trust.ts';

/** Records one observation of discovery (its name is prefixed with `discovery.`). */
export type Observe = (name: string, value: unknown, note?: string) => void;

export interface StreamCandidate {
  url: string;
  transport: Transport;
}

/** One candidate tried, and what it answered. */
export interface CandidateOutcome extends StreamCandidate {
  stream: boolean;
  why: string;
  event?: string;
  namespace?: string;
}

export interface FoundStream {
  url: string;
  transport: Transport;
  event?: string;
  namespace?: string;
  /** Given with --ws, not looked for. */
  given: boolean;
  how: string;
}

export interface DiscoveryOptions {
  rest: string;
  key: string;
  /** CA certificates the target's TLS is verified against beside Node's own. */
  ca?: TrustedCa;
  /** The stream URL when the user gave one: then it is not looked for. */
  ws?: string;
  transport?: Transport;
  event?: string;
  namespace?: string;
  redact: Redact;
  signal?: AbortSignal;
  /** Per request or handshake, ms. */
  timeoutMs?: number;
  /** Told each line of progress as it happens (the console). */
  progress?: (line: string) => void;
  /**
   * Whether checks will stream (default true): without any, the stream is still looked for, but
   * not watched and its allowance not searched, which would open connections nothing uses.
   */
  streamChecks?: boolean;
}

export interface Discovery {
  rest: string;
  stream?: FoundStream;
  candidates: CandidateOutcome[];
  /** One line when no stream was found (a coverage gap, never a failure). */
  streamGap?: string;
  allowance?: Allowance;
  /** The budget whose allowance search ran: the run borrows from it instead of searching again. */
  budget?: ConnectionBudget;
  /** The timing the budget was made with, holding the release time its search measured. */
  timing?: RunTiming;
  /** Status numbers discovery can provoke with one key: they run as the derived profile's probes. */
  provoked: RestStatus[];
  observations: Observation[];
  profile: Profile;
  /** Stream connections opened in all, and most open at once (the allowance search's included). */
  connections: { opened: number; mostAtOnce: number };
  durationMs: number;
}
