/**
 * The shape of a fault of the reference: its record, the areas of the spec a fault may break (each
 * counted in an area of the mutation score), and `f`, which writes one record.
 */
import type { StatementKey } from '../../src/statements.ts';
import type { Dialect } from '../dialect.ts';
import type { Deviation } from '../seams.ts';

/** Each area of the spec a fault may break, with the area of the mutation score it counts in. */
export const FAULT_AREAS = {
  'rest-envelope': 'REST envelope',
  'status-numbers': 'REST envelope',
  auth: 'auth',
  entitlements: 'auth',
  pagination: 'pagination',
  filters: 'pagination',
  'pair-record': 'pagination',
  'price-record': 'price',
  market: 'price',
  'price-status': 'price',
  handshake: 'handshake',
  'connection-limit': 'limits',
  subscription: 'session',
  notice: 'session',
  ping: 'keep-alive',
  keepalive: 'keep-alive',
  push: 'push',
  sequence: 'sequence',
} as const;

export type FaultArea = keyof typeof FAULT_AREAS;
export type ScoreArea = (typeof FAULT_AREAS)[FaultArea];

/** How the dialects of the reference bear on a fault: each answer is a reason, or undefined when a dialect does not. */
export interface FaultDialects {
  /** Why a dialect leaves the rule unbreakable or unseen: the fault is not run under it. */
  readonly maskedBy?: (d: Readonly<Dialect>) => string | undefined;
  /**
   * Why a dialect carries the broken frame where more checks look (the fault still breaks its one
   * rule): those checks name the fault in their `catchesUnderDialects`.
   */
  readonly widenedBy?: (d: Readonly<Dialect>) => string | undefined;
}

/** A fault's record. */
export interface Fault<N extends string = string> extends FaultDialects {
  readonly name: N;
  readonly area: FaultArea;
  /** The rule it breaks, in the spec's words where possible. */
  readonly rule: string;
  /** The statements of the spec (src/matrix.ts keys) the fault breaks. */
  readonly breaks: readonly StatementKey[];
  /** What it does to the service: its transformations at the seams. */
  readonly effect: Deviation;
}

/** A fault's record, from its fields in the order every record lists them. */
export const f = <N extends string>(
  name: N,
  area: FaultArea,
  rule: string,
  breaks: readonly StatementKey[],
  effect: Deviation,
  dialects: FaultDialects = {},
): Fault<N> => ({ name, area, rule, breaks, effect, ...dialects });
