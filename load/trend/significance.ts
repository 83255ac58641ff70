/**
 * Student's two-sample t-test and its interval, from the summaries of two samples, and two rank
 * tests that hold whatever the noise's shape. The t and normal distributions come from jStat (MIT):
 * an incomplete-beta implementation is not something to write by hand. Upper tails are read as the
 * lower tail of the mirrored statistic: 1 − P(T ≤ t) rounds to 0 near p = 1e-16, where the tail
 * itself is exact far below.
 */
import jStat from 'jstat';

/** Mean and standard deviation (population, ddof 0) of a sample. */
export interface Summary {
  n: number;
  mean: number;
  /** Population standard deviation (divided by n), as NumPy's `std` gives it. */
  std: number;
}

/** Mean and population standard deviation of `xs` (an empty sample has mean NaN). */
export function summarize(xs: readonly number[]): Summary {
  const n = xs.length;
  if (n === 0) return { n, mean: Number.NaN, std: 0 };
  let sum = 0;
  for (const x of xs) sum += x;
  const mean = sum / n;
  let sq = 0;
  for (const x of xs) sq += (x - mean) ** 2;
  return { n, mean, std: n >= 2 ? Math.sqrt(sq / n) : 0 };
}

/** The t distribution's lower tail P(T ≤ t) with `df` degrees of freedom. */
export const tCdf = (t: number, df: number): number => jStat.studentt.cdf(t, df) as number;
/** The t distribution's quantile: the t with P(T ≤ t) = p. */
export const tQuantile = (p: number, df: number): number => jStat.studentt.inv(p, df) as number;

/**
 * Two-sided p-value of Student's pooled-variance t-test of `a` against `b` given as summaries. The
 * standard deviations are taken as given (Apache Otava passes NumPy's population `std` to SciPy's
 * `ttest_ind_from_stats`, which reads them as sample ones): doing the same keeps a change point
 * significant here exactly when Otava finds it so on the same data. Two points in all: 1 (no test).
 */
export function pooledTTest(a: Summary, b: Summary): number {
  const df = a.n + b.n - 2;
  if (a.n === 0 || b.n === 0 || df <= 0) return 1;
  const pooled = ((a.n - 1) * a.std ** 2 + (b.n - 1) * b.std ** 2) / df;
  const se = Math.sqrt(pooled * (1 / a.n + 1 / b.n));
  const diff = a.mean - b.mean;
  if (se === 0) return diff === 0 ? Number.NaN : 0;
  return 2 * tCdf(-Math.abs(diff / se), df);
}

/** Sample variance (n − 1) from a population-std summary. */
export const sampleVar = (s: Summary): number => (s.n >= 2 ? (s.std ** 2 * s.n) / (s.n - 1) : 0);

/**
 * The variance a shift is tested with, and its degrees of freedom: `pooled`, both segments' sample
 * variances pooled (n₁ + n₂ − 2); `before`, the segment before's alone (n₁ − 1). The test and the
 * interval of a shift read it here, so that they cannot disagree.
 */
function testedSpread(before: Summary, after: Summary, spread: 'pooled' | 'before'): { variance: number; df: number } {
  if (spread === 'before') return { variance: sampleVar(before), df: before.n - 1 };
  const df = before.n + after.n - 2;
  // n·std² is (n − 1) times the sample variance.
  return { variance: df > 0 ? (before.n * before.std ** 2 + after.n * after.std ** 2) / df : 0, df };
}

/**
 * Student's one-sided test of whether `after` is larger (`up`) or smaller (`down`) than `before`,
 * pooled variance from the sample variances: the two segments around a shift are taken to vary
 * alike, which keeps its degrees of freedom (n₁ + n₂ − 2) when the newer one has two or three runs.
 */
export function studentOneSided(before: Summary, after: Summary, direction: 'up' | 'down'): number {
  const { variance, df } = testedSpread(before, after, 'pooled');
  if (before.n === 0 || after.n === 0 || df <= 0) return 1;
  const diff = after.mean - before.mean;
  const se = Math.sqrt(variance * (1 / before.n + 1 / after.n));
  const worse = direction === 'up' ? diff > 0 : diff < 0;
  if (se === 0) return worse ? 0 : 1;
  const t = diff / se;
  return tCdf(direction === 'up' ? -t : t, df);
}

/**
 * Student's two-sided `confidence` interval of `after`'s mean less `before`'s, from the spread the
 * shift was tested with, so that a shift significant at a level beyond the interval's never shows
 * an interval reaching 0:
 * - `pooled`: both segments' (n₁ + n₂ − 2 degrees of freedom), as `studentOneSided` tests a change point;
 * - `before`: the segment before's alone (n₁ − 1), as the newest runs' mean is tested against it.
 */
export function studentInterval(
  before: Summary,
  after: Summary,
  spread: 'pooled' | 'before',
  confidence: number,
): { diff: number; low: number; high: number } {
  const diff = after.mean - before.mean;
  const { variance, df } = testedSpread(before, after, spread);
  if (after.n === 0 || df <= 0) return { diff, low: diff, high: diff };
  const se = Math.sqrt(variance * (1 / before.n + 1 / after.n));
  const half = se > 0 ? tQuantile(1 - (1 - confidence) / 2, df) * se : 0;
  return { diff, low: diff - half, high: diff + half };
}

/**
 * The chance that the k newest runs, were they drawn as the `before` runs were, would all lie at
 * least as far out in the direction they moved as the least of them does: C(m + k, k) / C(n + k, k),
 * m of the n runs before lying that far out. It holds whatever the noise's shape: on a metric whose
 * slow nights come in a lump (a latency read in whole milliseconds, two or three in ten nights a
 * step up), two such nights in a row are as common as the lump says, where a t-test from its mean
 * and spread would call them a shift.
 */
export function beyondLeast(before: readonly number[], newest: readonly number[], up: boolean): number {
  const least = up ? Math.min(...newest) : Math.max(...newest);
  const m = before.filter((v) => (up ? v >= least : v <= least)).length;
  let p = 1;
  for (let i = 1; i <= newest.length; i++) p *= (m + i) / (before.length + i);
  return p;
}

/**
 * Wilcoxon's rank-sum (Mann–Whitney) test of whether the runs `after` lie above (`up`) or below
 * the runs `before`: its one-sided p-value, from the normal approximation with mid-ranks for ties
 * and the variance corrected for them. Written here because jStat has no rank test, and this one
 * is a sort and two sums.
 */
export function rankSum(before: readonly number[], after: readonly number[], up: boolean): number {
  const n1 = before.length;
  const n2 = after.length;
  const all = [...before.map((v) => ({ v, after: false })), ...after.map((v) => ({ v, after: true }))].sort((a, b) =>
    a.v < b.v ? -1 : a.v > b.v ? 1 : 0,
  );
  const n = n1 + n2;
  let rankAfter = 0;
  let ties = 0;
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && all[j + 1]!.v === all[i]!.v) j++;
    const mid = (i + j + 2) / 2;
    for (let k = i; k <= j; k++) if (all[k]!.after) rankAfter += mid;
    const t = j - i + 1;
    ties += t ** 3 - t;
    i = j + 1;
  }
  const u = rankAfter - (n2 * (n2 + 1)) / 2;
  const mean = (n1 * n2) / 2;
  const variance = ((n1 * n2) / 12) * (n + 1 - ties / (n * (n - 1)));
  if (!(variance > 0)) return 1;
  const z = (up ? u - mean : mean - u) / Math.sqrt(variance);
  return jStat.normal.cdf(-z, 0, 1) as number;
}
