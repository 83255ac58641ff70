/**
 * Distributions of a k6 run in two forms: a Trend (exact percentiles for k6's own thresholds and
 * summary) and one Counter per fixed log bucket (load/log-buckets.ts), which handleSummary turns
 * into counts that `conform load merge` adds across machines.
 *
 * Every k6 metric sample goes through k6's metrics engine, which at 100,000s of frames per second
 * becomes the generator's bottleneck; so bucket counts (and `tally` counters) are kept in the VU
 * and added to their Counters in one sample per bucket when `flushMetrics` runs (each second and
 * when the VU's last client closes), not once per frame.
 */
import { Counter, Trend } from 'k6/metrics';
import { BUCKET_COUNT, bucketIndex, bucketMetric } from '../../log-buckets.ts';

export interface Distribution {
  name: string;
  add(ms: number): void;
}

const flushers: (() => void)[] = [];

/** Adds what the VU has counted since the last flush to the k6 Counters. */
export function flushMetrics(): void {
  for (const f of flushers) f();
}

/** A Trend named `name` (in ms) and its bucket counters; create in the init context. */
export function distribution(name: string): Distribution {
  const trend = new Trend(name, true);
  const buckets: Counter[] = [];
  for (let i = 0; i < BUCKET_COUNT; i++) buckets.push(new Counter(bucketMetric(name, i)));
  const pending = new Map<number, number>();
  flushers.push(() => {
    for (const [i, n] of pending) buckets[i]!.add(n);
    pending.clear();
  });
  return {
    name,
    add(ms: number): void {
      trend.add(ms);
      const i = bucketIndex(ms * 1000);
      pending.set(i, (pending.get(i) ?? 0) + 1);
    },
  };
}

/** A Counter whose increments are kept in the VU until flushMetrics; create in the init context. */
export function tally(name: string): { add(n: number): void } {
  const counter = new Counter(name);
  let pending = 0;
  flushers.push(() => {
    // An empty sample too: a metric that stays empty still appears, and its thresholds are evaluated.
    counter.add(pending);
    pending = 0;
  });
  return {
    add: (n: number) => {
      pending += n;
    },
  };
}

/** Counters per code, made up front (k6 creates metrics only in the init context). */
export function countersByCode(prefix: string, codes: readonly string[]): { add(code: string): void } {
  const byCode = new Map<string, Counter>();
  for (const c of codes) byCode.set(c, new Counter(`${prefix}_${c}`));
  const other = new Counter(`${prefix}_other`);
  return { add: (code: string) => (byCode.get(code) ?? other).add(1) };
}

/**
 * The VU's largest value since the last flush, added to a Trend named `name` as one sample per
 * flush (only when something was seen): the Trend's max is the run's max; create in the init context.
 */
export function peak(name: string): { add(v: number): void } {
  const trend = new Trend(name);
  let max = Number.NEGATIVE_INFINITY;
  flushers.push(() => {
    if (max === Number.NEGATIVE_INFINITY) return;
    trend.add(max);
    max = Number.NEGATIVE_INFINITY;
  });
  return {
    add: (v: number) => {
      if (v > max) max = v;
    },
  };
}
