/**
 * Synthetic load histories for the trend judgement's tests: nightly runs whose metrics carry a
 * given noise (a coefficient of variation per metric, as measured on this machine) and, when
 * asked, a persistent shift from a given night on. Seeded (src/random.ts), so a failure replays.
 */
import { writeFile } from 'node:fs/promises';
import { stringify } from 'csv-stringify/sync';
import { historyColumns, type History, type HistoryRow } from '../../load/trend/history.ts';
import type { LoadKind } from '../../load/metrics.ts';
import { mulberry32 } from '../../src/random.ts';

/** A normal draw from two uniform ones (Box–Muller). */
export function normal(random: () => number): number {
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** One metric's nightly noise and where it starts. */
export interface SeriesSpec {
  mean: number;
  cv: number;
  /** From this night on, the mean is multiplied by `factor`. */
  shift?: { from: number; factor: number };
  /**
   * `normal` (default): mean × (1 + cv·N(0,1)), never below 0. `log-normal`: the same mean and CV,
   * skewed to the right as latencies are, and never 0.
   */
  shape?: 'normal' | 'log-normal';
}

/** One night's value of a metric whose level is `level`. */
export function draw(level: number, cv: number, shape: SeriesSpec['shape'], random: () => number): number {
  if (shape !== 'log-normal') return Math.max(0, level * (1 + cv * normal(random)));
  const s2 = Math.log(1 + cv * cv);
  return level * Math.exp(Math.sqrt(s2) * normal(random) - s2 / 2);
}

/** `nights` values of one metric with the spec's noise, shifted as asked. */
export function series(spec: SeriesSpec, nights: number, random: () => number): number[] {
  return Array.from({ length: nights }, (_, i) => {
    const level = spec.shift && i >= spec.shift.from ? spec.mean * spec.shift.factor : spec.mean;
    return draw(level, spec.cv, spec.shape, random);
  });
}

/** A history of `nights` trusted runs of `kind`, one a day, with the metrics' values given by name. */
export function historyOf(kind: LoadKind, values: Record<string, number[]>, start = Date.UTC(2026, 0, 1)): History {
  const nights = Math.max(0, ...Object.values(values).map((v) => v.length));
  const rows = Array.from({ length: nights }, (_, i) => ({
    line: i + 2,
    time: new Date(start + i * 86_400_000).toISOString(),
    kind,
    target: 'embedded',
    trustworthy: true,
    reasons: '',
    loadAverage: 1,
    thresholds: [],
    labels: { night: String(i + 1) },
    metrics: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v[i] ?? null])),
  }));
  return { kind, columns: historyColumns(kind, ['night']), labels: ['night'], rows };
}

/** A history of `values`, one run a day, in nights of `perNight` runs each labelled `night` by its night. */
export function historyOfNights(kind: LoadKind, values: Record<string, number[]>, perNight: number): History {
  const h = historyOf(kind, values);
  for (const [i, r] of h.rows.entries()) r.labels = { night: String(Math.floor(i / perNight) + 1) };
  return h;
}

/** Writes a history as the CSV `--history` writes. */
export async function writeHistoryCsv(file: string, h: History): Promise<void> {
  const columns = historyColumns(h.kind!, h.labels);
  const cell = (r: HistoryRow, c: string): string => {
    const fixed: Record<string, string> = {
      time: r.time,
      kind: r.kind,
      target: r.target,
      trustworthy: String(r.trustworthy),
      untrustworthy_reasons: r.reasons,
      load_average: String(r.loadAverage ?? ''),
      thresholds: r.thresholds.join(';'),
    };
    return fixed[c] ?? r.labels[c] ?? (r.metrics[c] === null || r.metrics[c] === undefined ? '' : String(r.metrics[c]));
  };
  await writeFile(
    file,
    stringify([columns, ...h.rows.map((r) => columns.map((c) => cell(r, c)))], { record_delimiter: '\n' }),
  );
}

export { mulberry32 };
