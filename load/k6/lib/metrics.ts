/**
 * Distributions of a k6 run in two forms: a Trend (exact percentiles for k6's own thresholds and
 * summary) and one Counter per fixed log bucket (load/log-buckets.ts), which handleSummary turns
 * into counts that `conform load merge` adds across machines without loss of the layout.
 */
import { Counter, Trend } from 'k6/metrics';
import { BUCKET_COUNT, bucketIndex, bucketMetric } from '../../log-buckets.ts';

export interface Distribution {
  name: string;
  add(ms: number): void;
}

/** A Trend named `name` (in ms) and its bucket counters; create in the init context. */
export function distribution(name: string): Distribution {
  const trend = new Trend(name, true);
  const buckets: Counter[] = [];
  for (let i = 0; i < BUCKET_COUNT; i++) buckets.push(new Counter(bucketMetric(name, i)));
  return {
    name,
    add(ms: number): void {
      trend.add(ms);
      buckets[bucketIndex(ms * 1000)]!.add(1);
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
