/**
 * Skew and loss of the fan-out run: every distinct update (code, last_updated) the workers saw,
 * judged once its window has passed, over every client eligible for it. Pure, fed by the
 * aggregator with the workers' update records and the clients' subscriptions and closes.
 */
import { createHistogram, recordMs } from '../histogram.ts';
import type { AggregatorOptions } from './measurements.ts';
import type { UpdateRecord } from './protocol.ts';

interface UpdateState {
  code: string;
  lastUpdated: number;
  first: number;
  last: number;
  receivers: number;
}

const SKEW_VALUES_CAP = 200_000;

/** The updates of a run, followed until judged, and the clients eligible for them. */
export class UpdateJudge {
  /** Skews of the judged updates (last − first receipt), ms; the first values also kept for the histogram chart. */
  readonly skew = createHistogram();
  readonly skewValues: number[] = [];
  /** Updates judged, deliveries lost, updates with a loss, deliveries expected, receipts after the window. */
  updates = 0;
  lost = 0;
  lostUpdates = 0;
  expected = 0;
  late = 0;
  private readonly pending = new Map<string, UpdateState>();
  private readonly judged = new Map<string, number>();
  private readonly subscribedAt = new Map<number, number>();
  private subscribedSorted: number[] = [];
  private subscribedDirty = false;
  private readonly closedClients: { subscribedAt: number; closedAt: number }[] = [];

  constructor(private readonly opts: AggregatorOptions) {}

  get subscribedCount(): number {
    return this.subscribedAt.size;
  }

  /** Client `index` got its subscribe notice at `atMs`. */
  subscribed(index: number, atMs: number): void {
    this.subscribedAt.set(index, atMs);
    this.subscribedDirty = true;
  }

  /** Client `index` closed at `atMs`; false when it had never subscribed. */
  closed(index: number, atMs: number): boolean {
    const s = this.subscribedAt.get(index);
    if (s === undefined) return false;
    this.closedClients.push({ subscribedAt: s, closedAt: atMs });
    return true;
  }

  /** One worker's records of the updates it saw; a receipt of an update already judged is late. */
  add(updates: readonly UpdateRecord[]): void {
    for (const [code, lu, first, last, receivers] of updates) {
      const key = `${code}\u0000${lu}`;
      const judged = this.judged.get(key);
      if (judged !== undefined) {
        if (judged > 0) this.late += receivers;
        continue;
      }
      const u = this.pending.get(key);
      if (!u) this.pending.set(key, { code, lastUpdated: lu, first, last, receivers });
      else {
        if (first < u.first) u.first = first;
        if (last > u.last) u.last = last;
        u.receivers += receivers;
      }
    }
  }

  /**
   * Judges updates whose window has passed (every one, when `all`): skew = last − first receipt
   * over all clients; every eligible client that did not receive it is one lost delivery. Only
   * updates first received in the measured phase [steadyAt, stopAt), with a full window before
   * the stop, are judged. `latestMs` is the latest tick's time.
   */
  judge(all: boolean, latestMs: number, steadyAt: number, stopAt: number): void {
    // Other workers' ticks for the same update may still be on their way: wait one more tick.
    const cutoff = all ? Number.POSITIVE_INFINITY : latestMs - this.opts.updateWindowMs - 2 * this.opts.tickMs;
    for (const [key, u] of this.pending) {
      if (u.first >= cutoff) continue;
      this.pending.delete(key);
      const counted = u.first >= steadyAt && u.first <= stopAt - this.opts.updateWindowMs;
      // Positive: judged in the measured phase (later receipts are late); negative: not judged.
      this.judged.set(key, counted ? u.first + 1 : -(u.first + 1));
      if (!counted) continue;
      this.updates++;
      const skew = u.last - u.first;
      recordMs(this.skew, skew);
      if (this.skewValues.length < SKEW_VALUES_CAP) this.skewValues.push(skew);
      const eligible = this.eligibleAt(u.first);
      this.expected += Math.max(eligible, u.receivers);
      const missing = eligible - u.receivers;
      if (missing > 0) {
        this.lost += missing;
        this.lostUpdates++;
      }
    }
    // Forget judged keys after a while; a receipt that late is already counted lost.
    if (this.judged.size > 50_000) {
      const old = latestMs - 10 * this.opts.updateWindowMs;
      for (const [k, first] of this.judged) if (Math.abs(first) < old) this.judged.delete(k);
    }
  }

  /** Clients subscribed `settleMs` before `firstMs` and still open through the update's window. */
  private eligibleAt(firstMs: number): number {
    if (this.subscribedDirty) {
      this.subscribedSorted = [...this.subscribedAt.values()].sort((a, b) => a - b);
      this.subscribedDirty = false;
    }
    const cut = firstMs - this.opts.settleMs;
    let lo = 0;
    let hi = this.subscribedSorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.subscribedSorted[mid]! <= cut) lo = mid + 1;
      else hi = mid;
    }
    let n = lo;
    for (const c of this.closedClients)
      if (c.subscribedAt <= cut && c.closedAt < firstMs + this.opts.updateWindowMs) n--;
    return n;
  }
}
