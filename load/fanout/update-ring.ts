/**
 * The recent updates of one code in one fan-out worker, oldest first, in a ring of typed arrays:
 * looking up an update is a few comparisons from the newest, with no allocation (a Map keyed by a
 * 13-digit `last_updated` boxes every key). ClientState looks up and adds receipts in place, per
 * frame; what leaves the ring goes to the coordinator as an UpdateRecord.
 */
import type { UpdateRecord } from './protocol.ts';

/** Updates a ring holds; a power of two, so an index wraps with `& (RING - 1)`. */
export const RING = 256;

/** One code's ring: per slot, the update's last_updated, first and last receipt, and receivers. */
export interface UpdateRing {
  lu: Float64Array;
  first: Float64Array;
  last: Float64Array;
  receivers: Int32Array;
  /** The slot the next update goes to; the oldest is `size` slots before it. */
  head: number;
  size: number;
}

/** An empty ring. */
export const newRing = (): UpdateRing => ({
  lu: new Float64Array(RING),
  first: new Float64Array(RING),
  last: new Float64Array(RING),
  receivers: new Int32Array(RING),
  head: 0,
  size: 0,
});

/** The update in slot `j` of the ring of `code`, as the coordinator takes it. */
export const updateRecord = (r: UpdateRing, code: string, j: number): UpdateRecord => [
  code,
  r.lu[j]!,
  r.first[j]!,
  r.last[j]!,
  r.receivers[j]!,
];

/**
 * Moves the updates of `code` first received before `cutoff` (every one, when `all`) out of its
 * ring into `out`, oldest first: entries were added in order of their first receipt here.
 */
export function drainRing(r: UpdateRing, code: string, all: boolean, cutoff: number, out: UpdateRecord[]): void {
  while (r.size > 0) {
    const j = (r.head - r.size) & (RING - 1);
    if (!all && r.first[j]! >= cutoff) break;
    out.push(updateRecord(r, code, j));
    r.size--;
  }
}
