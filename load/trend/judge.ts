/**
 * The regression judgement of a load history: for each metric with a bad direction, the shifts of
 * its trusted runs (E-divisive means, e-divisive.ts, plus a test of the newest runs as a segment
 * of their own), each with its size and interval, and whether the newest segment is a regression.
 * Pure: a History in, plain data out.
 */
import { LOAD_METRICS, thresholdNames, type LoadKind, type LoadMetric } from '../metrics.ts';
import { TREND_DEFAULTS } from '../options.ts';
import { changePoints } from './e-divisive.ts';
import type { History, HistoryRow } from './history.ts';
import {
  beyondLeast,
  pooledTTest,
  rankSum,
  sampleVar,
  studentInterval,
  studentOneSided,
  summarize,
  tCdf,
  type Summary,
} from './significance.ts';

export type TrendOptions = { -readonly [K in keyof typeof TREND_DEFAULTS]: number } & {
  /** Only these metrics (threshold names); default every one with a bad direction. */
  metrics?: string[];
  /**
   * A label of the history (`night`): the trusted runs that share its value are one point, the
   * mean of their values. Default: every run is a point of its own.
   */
  groupBy?: string;
};

/** The run a shift began at, as the history names it. */
export interface RunRef {
  line: number;
  time: string;
  labels: Record<string, string>;
}

/** A persistent shift of one metric. */
export interface Shift {
  /** Index in the metric's points of the first run of the new segment. */
  at: number;
  /** E-divisive over the series, or the test of the newest runs against the segment before them. */
  by: 'e-divisive' | 'newest-runs';
  run: RunRef;
  /** The p-value: E-divisive's two-sided t-test, or the newest runs' test corrected for the lengths tried. */
  p: number;
  before: Summary;
  after: Summary;
  /** after/before − 1 and its interval at the judgement's confidence; null when before is 0. */
  change: number | null;
  low: number | null;
  high: number | null;
  /**
   * `regression` / `improvement`: in the bad / good direction, significant at the verdict's level,
   * and the interval reaches the minimum effect; `within-minimum`: real but shown smaller than it;
   * `not-significant`: a change point not significant enough for an alarm over every metric judged;
   * `change`: a metric with no bad direction.
   */
  kind: 'regression' | 'improvement' | 'within-minimum' | 'not-significant' | 'change';
  /** One-sided p-value of the shift's direction, against the verdict's level (`verdictPValue` / metrics). */
  pDirection: number;
  /**
   * The newest segment's test by ranks alone, against `rankPValue`: for `tailRuns` runs or
   * fewer, the chance that runs drawn as the segment before were all as far out (corrected for
   * the lengths tried); for more, Wilcoxon's rank-sum test. Null for other segments, and when the
   * segment before is too short for any order of the ranks to reach the level.
   */
  pRank: number | null;
}

/** One metric's history judged. */
export interface MetricTrend {
  metric: string;
  unit: string;
  worse: LoadMetric['worse'];
  /**
   * Trusted runs with a value, oldest first; with `groupBy`, one per value of the label, at its
   * first run, with the mean of its runs (`runs` of them).
   */
  points: { line: number; time: string; value: number; labels: Record<string, string>; runs: number }[];
  /** Runs left out: untrustworthy, or without a value of this metric. */
  excluded: number;
  /** The scale its shifts are tested on: `log` for a duration or a rate above 0 (ratios of geometric means). */
  scale: 'log' | 'linear';
  shifts: Shift[];
  /** The newest segment against the one before it. */
  verdict: 'regression' | 'improvement' | 'steady' | 'too-few-runs';
}

export interface TrendResult {
  kind: LoadKind | null;
  runs: number;
  /** The runs judged; the untrustworthy are listed, never judged. */
  trusted: number;
  untrustworthy: { line: number; time: string; reasons: string }[];
  metrics: MetricTrend[];
  /** The metrics whose newest segment is a regression (exit 1). */
  regressions: string[];
  options: TrendOptions;
}

/** The metric row of a threshold name (`latency.p99` → latency). */
function rowOf(kind: LoadKind, name: string): LoadMetric {
  const base = name.includes('.') ? name.slice(0, name.indexOf('.')) : name;
  return LOAD_METRICS[kind].find((m) => m.name === base)!;
}

/** What a shift is, from its size and interval, the metric's bad direction and the minimum effect. */
function kindOf(
  s: Omit<Shift, 'kind'>,
  up: boolean,
  worse: LoadMetric['worse'],
  minEffect: number,
  alpha: number,
): Shift['kind'] {
  if (worse === 'none') return 'change';
  if (!(s.pDirection <= alpha)) return 'not-significant';
  const bad = worse === 'up' ? up : !up;
  // Against a baseline of 0 (no errors, no loss) any significant change is beyond every minimum.
  if (s.low === null || s.high === null) return bad ? 'regression' : 'improvement';
  const reaches = up ? s.high >= minEffect : s.low <= -minEffect;
  if (!reaches) return 'within-minimum';
  return bad ? 'regression' : 'improvement';
}

/**
 * Whether a metric's shifts are tested on the log scale: a duration or a rate whose every value is
 * above 0. Their night-to-night noise is proportional to their level and skewed to the right (a slow
 * night is further above the usual than a fast one is below), as latencies are: on the raw scale two
 * slow nights pass a t-test for a shift far more often than its level says, where their logarithms
 * are about normal. Counts and shares, which are 0 on most nights, stay on their own scale.
 */
function onLogScale(m: LoadMetric, values: readonly number[]): boolean {
  return (m.unit === 'ms' || m.unit.endsWith('/s')) && values.every((v) => v > 0);
}

/**
 * The shift at `at` between `before` and `after`, sized with the interval of the test that found
 * it: a difference of means on the raw scale, a ratio of geometric means on the log one (`tested`
 * holds the values the tests read: the raw values, or their logarithms).
 */
function shiftAt(
  values: readonly number[],
  tested: readonly number[],
  span: { from: number; at: number; to: number },
  o: {
    by: Shift['by'];
    p: number;
    run: RunRef;
    worse: LoadMetric['worse'];
    alpha: number;
    log: boolean;
  } & TrendOptions,
): Shift {
  const before = summarize(values.slice(span.from, span.at));
  const after = summarize(values.slice(span.at, span.to));
  const was = tested.slice(span.from, span.at);
  const now = tested.slice(span.at, span.to);
  const tb = summarize(was);
  const ta = summarize(now);
  const w = studentInterval(tb, ta, o.by === 'e-divisive' ? 'pooled' : 'before', o.confidence);
  const rel = (v: number): number | null => (o.log ? Math.expm1(v) : tb.mean === 0 ? null : v / Math.abs(tb.mean));
  // E-divisive chose where to split among the segment's runs, so the best of that many splits is
  // tested: its p-value is multiplied by them (Bonferroni); the newest runs' test chose among its
  // lengths and is corrected already.
  const positions = o.by === 'e-divisive' ? Math.max(1, span.to - span.from - 1) : 1;
  const up = ta.mean > tb.mean;
  const raw = o.by === 'e-divisive' ? studentOneSided(tb, ta, ta.mean >= tb.mean ? 'up' : 'down') : o.p;
  const pDirection = Math.min(1, raw * positions);
  const newest = span.to === values.length;
  // A segment of a few runs is tested as the newest-runs test chose it, among its lengths. With too
  // few runs before it (a week of nightly history) no order of the ranks reaches the level, and
  // a test that cannot decide has no say: the t-test alone judges.
  const lengths = Math.max(1, o.tailRuns - 1);
  const short = now.length <= o.tailRuns;
  const beyondAll = now.map(() => (up ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY));
  const rank = (xs: readonly number[]): number =>
    short ? Math.min(1, beyondLeast(was, xs, up) * lengths) : rankSum(was, xs, up);
  const pRank = newest && rank(beyondAll) <= o.rankPValue ? rank(now) : null;
  const s = {
    pRank,
    pDirection,
    at: span.at,
    by: o.by,
    run: o.run,
    p: o.p,
    before,
    after,
    change: rel(w.diff),
    low: rel(w.low),
    high: rel(w.high),
  };
  const kind = kindOf(s, up, o.worse, o.minEffect, o.alpha);
  const beyondRanks = pRank === null || pRank <= o.rankPValue;
  return { ...s, kind: (kind === 'regression' || kind === 'improvement') && !beyondRanks ? 'not-significant' : kind };
}

/**
 * The newest runs as a segment of their own: each of the last k runs (2 ≤ k ≤ tailRuns) beyond
 * the segment before them in the bad direction, by two tests that must both pass:
 * - their mean, by Student's t with that segment's spread (n − 1 degrees of freedom), exact for
 *   normal noise;
 * - the least shifted of them, as far out as the chance for one raised to the k says (each
 *   standardised as a new value's prediction interval is): one run that jumped and one that did
 *   not is not a shift. Alone this test alarms more often than it says, nearly twice as often with
 *   10 runs before: the k share the segment's estimated mean and spread.
 * The smallest p-value of the lengths, corrected for them.
 */
function newestRuns(values: readonly number[], from: number, worse: 'up' | 'down', o: TrendOptions, alpha: number) {
  const tried: { at: number; p: number }[] = [];
  const sign = worse === 'up' ? 1 : -1;
  for (let k = 2; k <= o.tailRuns; k++) {
    const at = values.length - k;
    if (at - from < o.minBaseline) break;
    const base = summarize(values.slice(from, at));
    const deviations = values.slice(at).map((v) => sign * (v - base.mean));
    const least = Math.min(...deviations);
    if (least <= 0) continue;
    const mean = deviations.reduce((x, y) => x + y, 0) / k;
    // The spread studentInterval's `before` gives the same shift's interval with.
    const sd = Math.sqrt(sampleVar(base));
    if (!(sd > 0)) {
      tried.push({ at, p: 0 });
      continue;
    }
    const pMean = tCdf(-mean / (sd * Math.sqrt(1 / k + 1 / base.n)), base.n - 1);
    const pLeast = tCdf(-least / (sd * Math.sqrt(1 + 1 / base.n)), base.n - 1) ** k;
    tried.push({ at, p: Math.max(pMean, pLeast) });
  }
  const lengths = Math.max(1, o.tailRuns - 1);
  const best = tried.reduce<{ at: number; p: number } | undefined>((x, y) => (!x || y.p < x.p ? y : x), undefined);
  return best && best.p * lengths <= alpha ? { at: best.at, p: best.p * lengths } : undefined;
}

/**
 * The change points that make persistent shifts: E-divisive's, less those that begin a blip (a
 * segment between two change points shorter than a baseline, whose runs join the segment before
 * it) or the newest run alone (not persistent yet), each retested against its new neighbours and
 * kept while significant; then the newest runs' test.
 */
function persistentShifts(
  values: readonly number[],
  tested: readonly number[],
  worse: LoadMetric['worse'],
  o: TrendOptions,
  alpha: number,
) {
  const cps = changePoints(values, { windowLength: o.windowLength, maxPValue: o.maxPValue, minMagnitude: 0 });
  let at = cps.map((c) => c.index);
  // Two better nights and a return to the usual are no regression: the newest segment is judged
  // against the runs before the blip, as it would be had the blip not happened.
  at = at.filter((x, i) => {
    const next = at[i + 1];
    return next === undefined ? values.length - x >= 2 : next - x >= o.minBaseline;
  });
  const found: { at: number; p: number; by: Shift['by'] }[] = [];
  for (let i = 0; i < at.length; i++) {
    const before = summarize(values.slice(found.at(-1)?.at ?? 0, at[i]!));
    const after = summarize(values.slice(at[i]!, at[i + 1] ?? values.length));
    const p = pooledTTest(before, after);
    if (p <= o.maxPValue) found.push({ at: at[i]!, p, by: 'e-divisive' });
  }
  if (worse !== 'none') {
    // A change point among the newest few runs has paid for every place E-divisive could have put
    // it, which leaves a shift of three nights rarely significant; the newest runs' test is made for
    // a segment that short and tries two lengths, so it judges them, from the change point before.
    const last = found.at(-1);
    const inTail = last !== undefined && values.length - last.at <= o.tailRuns;
    const tail = newestRuns(tested, (inTail ? found.at(-2) : last)?.at ?? 0, worse, o, alpha);
    if (tail && inTail) found.pop();
    if (tail && !found.some((f) => f.at >= tail.at)) found.push({ ...tail, by: 'newest-runs' });
  }
  return found;
}

/**
 * The points a metric is judged on: each trusted run, or with `groupBy` each value of that label
 * (a run without one stands alone), at its first run, valued at the mean of its runs. A night of
 * several runs, each with its own clients, averages away what one run's clients happen to draw
 * (their place in the service's send loop, their threads' cores), which no single long run can.
 * The mean, not the median: a metric read in whole milliseconds gives a median that sits on one
 * value and jumps to the next, which the tests read as a shift; the mean moves smoothly, and needs
 * about a third fewer runs for the same spread. One wild run moves it by a share of the night's
 * runs, and one night is never a shift.
 */
function pointsOf(
  rows: readonly (HistoryRow & { line: number })[],
  name: string,
  groupBy: string | undefined,
): MetricTrend['points'] {
  const point = (g: readonly (HistoryRow & { line: number })[]) => ({
    line: g[0]!.line,
    time: g[0]!.time,
    labels: g[0]!.labels,
    value: g.length === 1 ? g[0]!.metrics[name]! : summarize(g.map((r) => r.metrics[name]!)).mean,
    runs: g.length,
  });
  if (groupBy === undefined) return rows.map((r) => point([r]));
  const groups = new Map<string, (HistoryRow & { line: number })[]>();
  rows.forEach((r, i) => {
    const value = r.labels[groupBy];
    const key = value ? `=${value}` : `#${i}`;
    const group = groups.get(key);
    if (group) group.push(r);
    else groups.set(key, [r]);
  });
  return [...groups.values()].map(point);
}

/** Judges one metric of the history's trusted runs. */
function judgeMetric(history: History, name: string, o: TrendOptions, alpha: number): MetricTrend {
  const kind = history.kind!;
  const m = rowOf(kind, name);
  const rows = history.rows.filter((r) => r.trustworthy && r.metrics[name] !== null && r.metrics[name] !== undefined);
  const points = pointsOf(rows, name, o.groupBy);
  const values = points.map((p) => p.value);
  const log = onLogScale(m, values);
  const base = {
    metric: name,
    unit: m.unit,
    worse: m.worse,
    points,
    excluded: history.rows.length - rows.length,
    scale: log ? ('log' as const) : ('linear' as const),
  };
  if (values.length < o.minBaseline) return { ...base, shifts: [], verdict: 'too-few-runs' };
  const tested = log ? values.map(Math.log) : values;
  const found = persistentShifts(values, tested, m.worse, o, alpha);
  const ref = (r: MetricTrend['points'][number]): RunRef => ({ line: r.line, time: r.time, labels: r.labels });
  const shifts = found.map((f, i) =>
    shiftAt(
      values,
      tested,
      { from: found[i - 1]?.at ?? 0, at: f.at, to: found[i + 1]?.at ?? values.length },
      { ...o, by: f.by, p: f.p, run: ref(points[f.at]!), worse: m.worse, alpha, log },
    ),
  );
  const newest = shifts.at(-1);
  const verdict =
    newest?.kind === 'regression' ? 'regression' : newest?.kind === 'improvement' ? 'improvement' : 'steady';
  return { ...base, shifts, verdict };
}

/** The metrics judged by default: every threshold name of a metric with a bad direction. */
export function judgedMetrics(kind: LoadKind): string[] {
  return thresholdNames(kind).filter((n) => rowOf(kind, n).worse !== 'none');
}

/** Judges every metric of a history (its untrustworthy runs listed, left out of every judgement). */
export function judgeHistory(history: History, options: Partial<TrendOptions> = {}): TrendResult {
  const o: TrendOptions = { ...TREND_DEFAULTS, ...options };
  const untrustworthy = history.rows
    .filter((r) => !r.trustworthy)
    .map((r) => ({ line: r.line, time: r.time, reasons: r.reasons }));
  const names = history.kind ? (o.metrics ?? judgedMetrics(history.kind)) : [];
  // Each metric's share of the verdict's false-alarm chance (Bonferroni over the metrics judged).
  const alpha = o.verdictPValue / Math.max(1, names.length);
  const metrics = names.map((n) => judgeMetric(history, n, o, alpha));
  return {
    kind: history.kind,
    runs: history.rows.length,
    trusted: history.rows.length - untrustworthy.length,
    untrustworthy,
    metrics,
    regressions: metrics.filter((m) => m.verdict === 'regression').map((m) => m.metric),
    options: o,
  };
}
