/**
 * How well the trend judgement does on synthetic nightly series with a given noise: the false
 * alarms it raises over nights where nothing changed (every judged metric at once, as the nightly
 * job's exit code sees them), and how soon it flags a persistent shift of one metric. Seeded, so
 * every figure replays. scripts/trend-power.ts prints them; test/ci/load-trend-power.test.ts holds
 * the judgement to them.
 */
import { judgedMetrics, judgeHistory, type TrendOptions } from '../../load/trend/judge.ts';
import type { LoadKind } from '../../load/metrics.ts';
import { historyOfNights, mulberry32, series } from './trend-series.ts';

export type NoiseTable = Record<string, { mean: number; cv: number }>;

/**
 * How the nights of a false-alarm trial are drawn: each metric from its mean and CV (`normal`,
 * `log-normal`), or each night one of the measured runs whole (`resampled`: the noise's own shape,
 * lumps and outliers included, and the metrics of one run together, as they move together).
 */
export type NightDraw = 'normal' | 'log-normal' | 'resampled';

/**
 * Nights of every judged metric with its noise and no change, judged night after night from the
 * first night there are `from` runs: how many nights ended in a regression (the job failing), and
 * how many of those began a run of failing nights (the alarms an SRE is woken by).
 */
export function falseAlarms(o: {
  kind: LoadKind;
  noise: NoiseTable;
  nights: number;
  trials: number;
  seed: number;
  from?: number;
  /** Default `normal`; `resampled` needs `runs`. */
  draw?: NightDraw;
  /** The measured runs' metrics, for `resampled`. */
  runs?: Record<string, number | null>[];
  /** Resampled nights of this many runs each, judged by their means (`groupBy`); default 1. */
  runsPerNight?: number;
  options?: Partial<TrendOptions>;
}) {
  const random = mulberry32(o.seed);
  const metrics = judgedMetrics(o.kind).filter((m) => o.noise[m]);
  const from = o.from ?? 10;
  let judged = 0;
  let failing = 0;
  let alarms = 0;
  const byMetric: Record<string, number> = {};
  const runs = o.runs ?? [];
  if (o.draw === 'resampled' && runs.length === 0) throw new Error('resampled nights need the measured runs');
  for (let t = 0; t < o.trials; t++) {
    let values: Record<string, number[]>;
    const k = o.draw === 'resampled' ? (o.runsPerNight ?? 1) : 1;
    if (o.draw === 'resampled') {
      const drawn = Array.from({ length: o.nights * k }, () => runs[Math.floor(random() * runs.length)]!);
      values = Object.fromEntries(metrics.map((m) => [m, drawn.map((r) => r[m]!)]));
    } else {
      const shape = o.draw ?? 'normal';
      values = Object.fromEntries(metrics.map((m) => [m, series({ ...o.noise[m]!, shape }, o.nights, random)]));
    }
    let before = false;
    // One history of every night; each night is judged on the runs up to it.
    const all = historyOfNights(o.kind, values, k);
    for (let n = from; n <= o.nights; n++) {
      const h = { ...all, rows: all.rows.slice(0, n * k) };
      const r = judgeHistory(h, { ...o.options, metrics, ...(k > 1 ? { groupBy: 'night' } : {}) });
      judged++;
      const now = r.regressions.length > 0;
      if (now) failing++;
      if (now && !before) {
        alarms++;
        for (const m of r.regressions) byMetric[m] = (byMetric[m] ?? 0) + 1;
      }
      before = now;
    }
  }
  return { judged, failing, alarms, perHundredNights: (alarms * 100) / judged, byMetric };
}

/**
 * A persistent shift of `shift` (0.1: 10 % worse) in one metric from a night drawn between
 * `baseline` bounds on: in how many trials the judgement flagged it as a regression on one of the
 * first `within` nights after it began, and on which.
 */
export function detection(o: {
  kind: LoadKind;
  metric: string;
  /** One run a night, drawn from this mean and CV (normal), unless `measured` gives the runs. */
  mean?: number;
  cv?: number;
  shift: number;
  within: number;
  trials: number;
  seed: number;
  baseline?: [number, number];
  /**
   * Nights of `perNight` runs each drawn whole from `values` (the measured runs' values of the
   * metric), judged by their means; without it, one run a night drawn from `mean` and `cv`.
   */
  measured?: { values: readonly number[]; perNight: number };
  options?: Partial<TrendOptions>;
}) {
  const random = mulberry32(o.seed);
  const [lo, hi] = o.baseline ?? [20, 60];
  const onNight = Array.from({ length: o.within }, () => 0);
  const k = o.measured?.perNight ?? 1;
  if (!o.measured && (o.mean === undefined || o.cv === undefined)) throw new Error('give mean and cv, or measured');
  for (let t = 0; t < o.trials; t++) {
    const start = lo + Math.floor(random() * (hi - lo + 1));
    const xs = o.measured
      ? Array.from({ length: (start + o.within) * k }, (_, i) => {
          const v = o.measured!.values[Math.floor(random() * o.measured!.values.length)]!;
          return i >= start * k ? v * (1 + o.shift) : v;
        })
      : series({ mean: o.mean!, cv: o.cv!, shift: { from: start, factor: 1 + o.shift } }, start + o.within, random);
    const all = historyOfNights(o.kind, { [o.metric]: xs }, k);
    for (let night = 1; night <= o.within; night++) {
      // Every metric judged, as the nightly job judges them (the verdict's level is shared among them).
      const r = judgeHistory(
        { ...all, rows: all.rows.slice(0, (start + night) * k) },
        {
          ...o.options,
          metrics: judgedMetrics(o.kind),
          ...(k > 1 ? { groupBy: 'night' } : {}),
        },
      );
      if (r.regressions.includes(o.metric)) {
        onNight[night - 1]!++;
        break;
      }
    }
  }
  const detected = onNight.reduce((a, b) => a + b, 0);
  return { trials: o.trials, detected, share: detected / o.trials, onNight };
}
