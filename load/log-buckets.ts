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

/** Reads `name_bNNNN` back into its distribution and bucket index, or null. */
export function parseBucketMetric(metric: string): { name: string; index: number } | null {
  const m = /^([a-z_]+)_b(\d{4})$/.exec(metric);
  return m ? { name: m[1]!, index: Number(m[2]) } : null;
}
