/**
 * Distributions of a k6 run in two forms: a Trend (exact percentiles for k6's own thresholds and
 * summary) and one Counter per fixed log bucket (load/log-buckets.ts), which handleSummary turns
 * into counts that `conform load merge` adds across machines.
 *
 * Every k6 metric sample goes through k6's metrics engine, which at 100,000s of frames per second
 * becomes the generator's bottleneck; so bucket counts (and `tally` counters) are kept in the VU
 * and added to their Counters in one sample per bucket when `flushMetrics` runs (each second and
 * when the VU's last client closes), not once per frame.
 *
 * k6's metric classes come in as an argument (the scripts pass `k6/metrics`), so this code runs
 * under Node in the unit tests with any classes of the same shape.
 */
import { BUCKET_COUNT, bucketIndex, bucketMetric } from '../../log-buckets.ts';

/** The part of k6/metrics these helpers use: `new Counter(name)`, `new Trend(name, isTime)`. */
export interface K6MetricClasses {
  Counter: new (name: string) => { add(value: number): void };
  Trend: new (name: string, isTime?: boolean) => { add(value: number): void };
}

export interface Distribution {
  name: string;
  add(ms: number): void;
}

export interface K6Metrics {
  /** Adds what the VU has counted since the last flush to the k6 Counters. */
  flushMetrics(): void;
  /** A Trend named `name` (in ms) and its bucket counters; create in the init context. */
  distribution(name: string): Distribution;
  /** A Counter whose increments are kept in the VU until flushMetrics; create in the init context. */
  tally(name: string): { add(n: number): void };
  /** Counters per code, made up front (k6 creates metrics only in the init context). */
  countersByCode(prefix: string, codes: readonly string[]): { add(code: string): void };
  /**
   * The VU's largest value since the last flush, added to a Trend named `name` as one sample per
   * flush (only when something was seen): the Trend's max is the run's max; create in the init context.
   */
  peak(name: string): { add(v: number): void };
}

/** The metric helpers of one script over k6's metric classes. */
export function k6Metrics({ Counter, Trend }: K6MetricClasses): K6Metrics {
  const flushers: (() => void)[] = [];
  return {
    flushMetrics(): void {
      for (const f of flushers) f();
    },
    distribution(name: string): Distribution {
      const trend = new Trend(name, true);
      const buckets: { add(value: number): void }[] = [];
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
    },
    tally(name: string): { add(n: number): void } {
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
    },
    countersByCode(prefix: string, codes: readonly string[]): { add(code: string): void } {
      const byCode = new Map<string, { add(value: number): void }>();
      for (const c of codes) byCode.set(c, new Counter(`${prefix}_${c}`));
      const other = new Counter(`${prefix}_other`);
      return { add: (code: string) => (byCode.get(code) ?? other).add(1) };
    },
    peak(name: string): { add(v: number): void } {
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
    },
  };
}
