/**
 * Fixed log-linear buckets of latency in µs, the form in which k6 runs carry distributions: k6
 * VUs share nothing but metrics, and a k6 Trend's summary (avg, percentiles) cannot be merged
 * across machines, so each bucket is a Counter and a merge adds counts. Pure and import-free
 * (k6 is not Node). The layout is HDR's with 32 sub-buckets per power of two: exact below
 * 32 µs, at most 1/16 wide above, up to one minute (larger values land in the last bucket).
 */

const HALF_MAGNITUDE = 4;
const SUB_BUCKETS = 2 << HALF_MAGNITUDE;
/** Highest value kept apart, µs (as load/histogram.ts HIGHEST_US). */
export const BUCKET_HIGHEST_US = 60_000_000;

/** The bucket index of a value in µs (clamped to [0, BUCKET_HIGHEST_US]). */
export function bucketIndex(us: number): number {
  const v = us > 0 ? (us > BUCKET_HIGHEST_US ? BUCKET_HIGHEST_US : Math.floor(us)) : 0;
  const b = v < SUB_BUCKETS ? 0 : 31 - Math.clz32(v) - HALF_MAGNITUDE;
  return (b << HALF_MAGNITUDE) + (v >>> b);
}

/** The lowest value in µs of bucket `i`. */
export function bucketLowUs(i: number): number {
  if (i < SUB_BUCKETS) return i;
  const b = (i >>> HALF_MAGNITUDE) - 1;
  return ((i & ((1 << HALF_MAGNITUDE) - 1)) + (SUB_BUCKETS >>> 1)) * 2 ** b;
}

/** The midpoint in µs of bucket `i`: the value a merge records for its counts. */
export function bucketMidUs(i: number): number {
  const lo = bucketLowUs(i);
  const hi = i + 1 < BUCKET_COUNT ? bucketLowUs(i + 1) : lo + 1;
  return Math.floor((lo + hi - 1) / 2);
}

/** How many buckets the layout has. */
export const BUCKET_COUNT = bucketIndex(BUCKET_HIGHEST_US) + 1;

/** Counter name of bucket `i` of distribution `name` in a k6 run (`latency_b0123`). */
export const bucketMetric = (name: string, i: number): string => `${name}_b${String(i).padStart(4, '0')}`;

/**
 * Counts `[index, count]` moved by `shiftUs`, each at its bucket's midpoint (negated first when
 * `negate`: the counts are then magnitudes of values below zero). A value still below zero is not
 * recorded, never clamped: their number is returned beside the counts.
 */
export function shiftBucketCounts(
  into: Map<number, number>,
  counts: readonly (readonly [number, number])[],
  shiftUs: number,
  negate = false,
): number {
  let below = 0;
  for (const [i, n] of counts) {
    const mid = bucketMidUs(i);
    const moved = (negate ? -mid : mid) + shiftUs;
    if (moved < 0) {
      below += n;
      continue;
    }
    const j = bucketIndex(moved);
    into.set(j, (into.get(j) ?? 0) + n);
  }
  return below;
}

/** The value in µs at percentile `p` of bucket counts (the bucket's midpoint); null when empty. */
export function bucketPercentileUs(counts: readonly (readonly [number, number])[], p: number): number | null {
  const sorted = [...counts].filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((s, [, n]) => s + n, 0);
  if (!total) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (const [i, n] of sorted) {
    seen += n;
    if (seen >= rank) return bucketMidUs(i);
  }
  return bucketMidUs(sorted[sorted.length - 1]![0]);
}
