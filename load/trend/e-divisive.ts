/**
 * Change points of one series by E-divisive means (Matteson and James, "A Nonparametric Approach
 * for Multiple Change Point Analysis of Multivariate Data") with the practical changes of Fleming
 * et al., "Hunter: Using Change Point Detection to Hunt for Performance Regressions", as Apache
 * Otava runs it: overlapping windows, a t-test instead of permutations, weak change points found
 * at a relaxed p-value and then merged away until every one left is significant and large enough.
 * Written here from the papers and Otava's documentation (no library in TypeScript does it), with
 * the same parameters and defaults, so the same CSV gives the same change points in both.
 * Pure: numbers in, indexes out.
 */
import { pooledTTest, summarize, type Summary } from './significance.ts';

/** A change point: the index of the first value of the new segment, and the test of the two around it. */
export interface ChangePoint {
  index: number;
  /** Two-sided p-value of the t-test between the segments on either side. */
  p: number;
  before: Summary;
  after: Summary;
}

export interface EDivisiveOptions {
  /** Values in one window of the split step (Otava: 50). */
  windowLength: number;
  /** Significance of a final change point (Otava: 0.001); weak ones are found at 10× this. */
  maxPValue: number;
  /** Smallest relative change a change point must exceed to be kept (Otava: 0). */
  minMagnitude: number;
}

/** Otava's defaults. */
export const E_DIVISIVE_DEFAULTS: EDivisiveOptions = { windowLength: 50, maxPValue: 0.001, minMagnitude: 0 };

/** A candidate split of `[start, end)`: τ, and the divergence Q̂ it maximises. */
interface Candidate {
  index: number;
  q: number;
}

/**
 * The best split of `xs[start, end)`: the τ (start < τ < κ ≤ end) maximising
 * Q̂ = n·m/(n+m) · Ê(X, Y) with X = xs[start, τ), Y = xs[τ, κ), where Ê is twice the mean distance
 * between X and Y less the mean distances within each (α = 1). `within[a][b]` is the sum of
 * |xᵢ − xⱼ| over a ≤ i < j < b.
 */
function bestSplit(within: (a: number, b: number) => number, start: number, end: number): Candidate | undefined {
  let best: Candidate | undefined;
  for (let tau = start + 1; tau < end; tau++) {
    const n = tau - start;
    const wx = within(start, tau);
    for (let kappa = tau + 1; kappa <= end; kappa++) {
      const m = kappa - tau;
      const wy = within(tau, kappa);
      const cross = within(start, kappa) - wx - wy;
      // A one-value side has no distances within it: its mean term is 0.
      const q =
        (2 / (n + m)) * cross -
        (n > 1 ? ((2 * m) / ((n + m) * (n - 1))) * wx : 0) -
        (m > 1 ? ((2 * n) / ((n + m) * (m - 1))) * wy : 0);
      if (!best || q > best.q) best = { index: tau, q };
    }
  }
  // Otava takes the largest entry of a matrix whose cells outside start < τ < κ are 0: when every
  // split diverges less than 0, it picks the first of those, τ = start + 2. Doing the same keeps
  // the two in step on short segments.
  if (best && best.q < 0 && end - start >= 3) return { index: start + 2, q: 0 };
  return best;
}

/** Sums of pairwise distances within every sub-range of `xs`, as a function `(a, b)`. */
function withinSums(xs: readonly number[]): (a: number, b: number) => number {
  const n = xs.length;
  // rows[a][b - a] = Σ |xᵢ − xⱼ| over a ≤ i < j < b, built by adding one value at a time.
  const rows: Float64Array[] = [];
  for (let a = 0; a < n; a++) {
    const row = new Float64Array(n - a + 1);
    for (let b = a + 1; b < n; b++) {
      let add = 0;
      for (let i = a; i < b; i++) add += Math.abs(xs[i]! - xs[b]!);
      row[b + 1 - a] = row[b - a]! + add;
    }
    rows.push(row);
  }
  return (a, b) => (a >= n ? 0 : rows[a]![b - a]!);
}

/** The segments `[from, to)` between sorted change point indexes over `n` values. */
function segments(indexes: readonly number[], n: number): [number, number][] {
  const cuts = [0, ...indexes, n];
  const out: [number, number][] = [];
  for (let i = 0; i + 1 < cuts.length; i++) if (cuts[i]! < cuts[i + 1]!) out.push([cuts[i]!, cuts[i + 1]!]);
  return out;
}

/** The test of the change at `index` between the segment it ends and the one it begins. */
function testAt(xs: readonly number[], index: number, from: number, to: number): ChangePoint {
  const before = summarize(xs.slice(from, index));
  const after = summarize(xs.slice(index, to));
  return { index, p: pooledTTest(before, after), before, after };
}

/** Each change point tested against its neighbours' segments (indexes sorted). */
function retest(xs: readonly number[], indexes: readonly number[]): ChangePoint[] {
  return indexes.map((index, i) => testAt(xs, index, i === 0 ? 0 : indexes[i - 1]!, indexes[i + 1] ?? xs.length));
}

/**
 * E-divisive on one window `xs[start, end)`: split the segment whose best split diverges most,
 * while that split's t-test (over the whole segment on either side) is significant.
 */
function divideWindow(xs: readonly number[], start: number, end: number, maxP: number): number[] {
  const window = xs.slice(start, end);
  const within = withinSums(window);
  const found: number[] = [];
  for (;;) {
    let best: (Candidate & { from: number; to: number }) | undefined;
    for (const [from, to] of segments(found, window.length)) {
      if (to - from < 2) continue;
      const c = bestSplit(within, from, to);
      if (c && (!best || c.q > best.q)) best = { ...c, from, to };
    }
    if (!best) break;
    const p = testAt(window, best.index, best.from, best.to).p;
    if (!(p <= maxP)) break;
    found.push(best.index);
    found.sort((a, b) => a - b);
  }
  return found.map((i) => i + start);
}

/** Relative size of a change: the larger of after/before − 1 and before/after − 1, in magnitude. */
export function magnitude(cp: ChangePoint): number {
  const fwd = cp.before.mean === 0 ? 0 : cp.after.mean / cp.before.mean - 1;
  const back = cp.after.mean === 0 ? 0 : cp.before.mean / cp.after.mean - 1;
  return Math.max(Math.abs(fwd), Math.abs(back));
}

/**
 * The weak change points: E-divisive over windows of `windowLength` that overlap by half, each
 * window starting at the later of the last change point found and half a window on.
 */
function split(xs: readonly number[], windowLength: number, weakP: number): number[] {
  const step = Math.floor(windowLength / 2);
  const found = new Set<number>();
  let start = 0;
  while (start < xs.length) {
    const end = Math.min(start + windowLength, xs.length);
    const cps = divideWindow(xs, start, end, weakP);
    for (const i of cps) found.add(i);
    start = Math.max(cps.at(-1) ?? 0, start + step);
  }
  return [...found].sort((a, b) => a - b);
}

/**
 * The merge: drops the weakest change point (the largest p-value over `maxP`, else the smallest
 * change at most `minMagnitude`) and retests its neighbours, until every one left is significant
 * and larger than the minimum.
 */
function merge(xs: readonly number[], weak: ChangePoint[], maxP: number, minMagnitude: number): ChangePoint[] {
  const cps = [...weak];
  while (cps.length) {
    let weakest = cps.reduce((a, b) => (b.p > a.p ? b : a));
    if (weakest.p < maxP) {
      weakest = cps.reduce((a, b) => (magnitude(b) < magnitude(a) ? b : a));
      if (magnitude(weakest) > minMagnitude) return cps;
    }
    const at = cps.indexOf(weakest);
    cps.splice(at, 1);
    const indexes = cps.map((c) => c.index);
    for (const i of [at, at + 1])
      if (i < cps.length) cps[i] = testAt(xs, indexes[i]!, i === 0 ? 0 : indexes[i - 1]!, indexes[i + 1] ?? xs.length);
  }
  return cps;
}

/** The change points of `xs`, oldest first, with the options (default Otava's). */
export function changePoints(xs: readonly number[], options: Partial<EDivisiveOptions> = {}): ChangePoint[] {
  const o = { ...E_DIVISIVE_DEFAULTS, ...options };
  if (xs.length < 2) return [];
  // The weak change points' relaxed significance, as the Hunter paper and Otava set it.
  const weakP = o.maxPValue < 0.05 ? o.maxPValue * 10 : o.maxPValue < 0.5 ? o.maxPValue * 2 : o.maxPValue;
  const weak = retest(xs, split(xs, o.windowLength, weakP));
  return merge(xs, weak, o.maxPValue, o.minMagnitude);
}
