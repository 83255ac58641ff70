/**
 * The types of the model (model.ts): what it knows of the keys and pairs, its connections, what a
 * request expects, what broke; and the view of the model its request handling (requests.ts) and its
 * judge of frames (frames.ts) work on.
 */
import type { StatementKey } from '../statements.ts';
import type { TransitionName, TransitionTally } from './transitions.ts';

/** A key of the profile as the model knows it. */
export interface KeyFacts {
  /** Its name in the profile (`primary`, `limited`…). */
  name: string;
  /** Its allowance, when the profile states it or the run found it; unknown: never exceeded. */
  allowance?: number;
  /** Pool pairs the key may subscribe to. */
  pairs: readonly string[];
  /** Pairs the key may not read (outside its whitelist or asset types): refused on subscribe. */
  refused: readonly string[];
}

/** What the model knows of the target before the first step. */
export interface ModelSetup {
  keys: readonly KeyFacts[];
  /** A well-formed pair code no catalogue carries. */
  unknownPair: string;
  /** Exactly the pair limit of pairs the primary key may subscribe to, when the catalogue has them. */
  atLimit?: readonly string[];
  /** Pairs seen accepted: a 50104 for one of them is no "inactive or suspended" pair. */
  accepted: ReadonlySet<string>;
  /** Ms of a long idle (past the keep-alive window) and of a short one. */
  idleMs: { short: number; long: number };
}

/** A step the target's answer broke the model at. */
export interface ModelViolation {
  transition: TransitionName;
  /** The step whose expectation the answer broke (its index in the sequence). */
  at: number;
  /**
   * The step running when the break showed: later than `at` when a later step made it show (a pair
   * stopped by one request and pushed again after another), so a replay keeps every step up to it.
   */
  seen: number;
  /** The statement the answer breaks. */
  rule: StatementKey;
  received: string;
  expected: string;
}

/** Why a push of a pair is allowed on a connection from `from` until `until` (open: still allowed). */
export interface PushInterval {
  from: number;
  until?: number;
  /** The transition that started it: its rule is the one a missing push breaks. */
  by: TransitionName;
  /** Pushes must show: the subscription is exactly known (false after a failed request). */
  due: boolean;
  /** When the request that started it was answered (pushes are expected from then on). */
  answeredAt?: number;
  /** The step that started it (or kept it, last); the step that stopped it. */
  step: number;
  stopStep?: number;
}

/** One connection of a sequence. */
export interface ConnModel {
  name: string;
  key: string;
  silent: boolean;
  open: boolean;
  openedAt: number;
  /** When its handshake began: the earliest the target can have started its keep-alive window. */
  startedAt: number;
  /** The step that opened it; the last step that opened or subscribed it, or unsubscribed it. */
  openStep: number;
  changeStep: number;
  /** Pings sent, when (stream clock, ms), and during which step. */
  pings: number[];
  pingSteps: number[];
  /** The subscription, exactly; undefined once a failed request left it not stated. */
  subs: Set<string> | undefined;
  /**
   * The set the last successful subscribe replaced, and the pairs successful unsubscribes stopped:
   * the sets later subscribes and unsubscribes draw from, since what a service keeps of a
   * connection's past shows only when a request names them again.
   */
  replaced: readonly string[];
  unsubscribed: Set<string>;
  /** Per pair, the intervals during which its pushes are allowed. */
  intervals: Map<string, PushInterval[]>;
  /** Why the stream clock time a pair was last stopped: its rule when a push comes after. */
  stoppedBy: Map<string, TransitionName>;
  closedAt?: number;
  /** Closed by the explorer (a step), not by the target. */
  clientClosed?: boolean;
}

/** The requests' answers as the model expects them. */
export type NoticeExpectation =
  | { kind: 'success'; method: string; message: string }
  | { kind: 'error'; codes: readonly string[]; message?: string }
  | { kind: 'either'; method: string; message: string; codes?: readonly string[] };

/** What a request step expects and which transition it takes. */
export interface RequestPlan {
  transition: TransitionName;
  expect: NoticeExpectation;
}

/** What requests.ts and frames.ts need of the model. */
export interface ModelView {
  readonly setup: ModelSetup;
  readonly tally: TransitionTally;
  readonly observed: { name: string; value: unknown; note: string }[];
  /** The index of the step running now. */
  step: number;
  conn(name: string): ConnModel;
  key(name: string): KeyFacts;
  violate(transition: TransitionName, received: string, expected: string, rule?: StatementKey, at?: number): void;
}
