/**
 * The load history: one CSV row per run, appended by `--history FILE`, read by `conform load trend`
 * and, as it is, by Apache Otava (a time column, attribute columns, metric columns) or a
 * spreadsheet. Every metric of load/metrics.ts is a column, by its threshold name; an unknown
 * value is an empty cell.
 *
 * Appends hold a lock (proper-lockfile: a directory made atomically beside the file, refreshed
 * while held, taken over when stale): an append is read, check, then write, and two runs that
 * finish together must not both write a header, nor one rewrite the file (when this version has a
 * column the file lacks) while the other appends. O_APPEND alone makes only the write atomic.
 * The file is only ever added to, or replaced whole by a rename, so no earlier row is lost.
 */
import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import lockfile from 'proper-lockfile';
import { HistoryError, LoadUsageError } from '../../src/errors.ts';
import { flatMetrics, thresholdNames, type LoadKind } from '../metrics.ts';
import { HISTORY_LOCK } from '../options.ts';
import type { LoadReport } from '../report/write.ts';

/** The columns every history file has, before the labels and the metrics. */
export const FIXED_COLUMNS = [
  'time',
  'kind',
  'target',
  'trustworthy',
  'untrustworthy_reasons',
  'load_average',
  'thresholds',
] as const;

/** One run in the history. */
export interface HistoryRow {
  /** When the run started (ISO 8601, UTC): Otava's time column. */
  time: string;
  kind: LoadKind;
  /** The REST base URL, or `embedded` for the reference service the run started. */
  target: string;
  /** False when the generator was saturated: recorded, flagged, never judged. */
  trustworthy: boolean;
  /** Why it was not trustworthy (the generator's reasons), `; `-separated. */
  reasons: string;
  /** The machine's 1-minute load average when the run ended. */
  loadAverage: number | null;
  /** The run's thresholds, as given, `;`-separated. */
  thresholds: string[];
  /** `--label NAME=VALUE`, each its own column (`version`, `commit`). */
  labels: Record<string, string>;
  /** Every metric by its threshold name; null when the run produced none. */
  metrics: Record<string, number | null>;
}

/** A history file read: its rows in file order, each with the line it starts on. */
export interface History {
  kind: LoadKind | null;
  columns: string[];
  labels: string[];
  rows: (HistoryRow & { line: number })[];
}

const LABEL = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;

/** Parses `--label NAME=VALUE` options; a name may not be a column the history already has. */
export function parseLabels(values: readonly string[] | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  const reserved = new Set<string>([...FIXED_COLUMNS, ...thresholdNames('fanout'), ...thresholdNames('rest')]);
  for (const v of values ?? []) {
    const m = LABEL.exec(v);
    if (!m) throw new LoadUsageError(`--label ${JSON.stringify(v)}: must be NAME=VALUE, e.g. version=1.4.2`);
    if (reserved.has(m[1]!)) throw new LoadUsageError(`--label ${m[1]}: is a column of the history already`);
    labels[m[1]!] = m[2]!;
  }
  return labels;
}

/** The history row of a finished run. */
export function historyRow(
  report: LoadReport,
  o: { labels: Record<string, string>; loadAverage: number | null },
): HistoryRow {
  const reasons = report.generator.reasons;
  return {
    time: new Date(report.startedAt).toISOString(),
    kind: report.kind,
    target: report.target.embedded ? 'embedded' : report.target.rest,
    trustworthy: report.trustworthy,
    reasons: reasons.join('; '),
    loadAverage: o.loadAverage,
    thresholds: report.thresholds.map((t) => t.expr),
    labels: o.labels,
    metrics: flatMetrics(report.kind, report as unknown as Record<string, unknown>),
  };
}

/** The columns a new file of `kind` gets: fixed, labels in name order, metrics in table order. */
export function historyColumns(kind: LoadKind, labels: readonly string[]): string[] {
  return [...FIXED_COLUMNS, ...[...labels].sort(), ...thresholdNames(kind)];
}

/** A row's cells under `columns`. */
function cells(row: HistoryRow, columns: readonly string[]): string[] {
  const fixed: Record<string, string> = {
    time: row.time,
    kind: row.kind,
    target: row.target,
    trustworthy: String(row.trustworthy),
    untrustworthy_reasons: row.reasons,
    load_average: row.loadAverage === null ? '' : String(row.loadAverage),
    thresholds: row.thresholds.join(';'),
  };
  return columns.map((c) => {
    if (c in fixed) return fixed[c]!;
    if (c in row.labels) return row.labels[c]!;
    const v = row.metrics[c];
    return v === null || v === undefined ? '' : String(v);
  });
}

const csvLine = (values: readonly string[]): string => stringify([values], { record_delimiter: '\n' });

/** The kind of run a header holds, from the metric columns only one kind has. */
function kindOfColumns(columns: readonly string[]): LoadKind | null {
  const has = (k: LoadKind): boolean => thresholdNames(k).every((n) => columns.includes(n));
  return has('fanout') ? 'fanout' : has('rest') ? 'rest' : null;
}

/** Reads one record into a row, or throws naming the file and the line. */
function readRecord(file: string, columns: readonly string[], kind: LoadKind, values: string[], line: number) {
  const bad = (why: string): HistoryError => new HistoryError(`${file} line ${line}: ${why} (a damaged line)`);
  if (values.length !== columns.length) throw bad(`${values.length} fields where the header has ${columns.length}`);
  const at = (c: string): string => values[columns.indexOf(c)] ?? '';
  const time = at('time');
  if (!Number.isFinite(Date.parse(time))) throw bad(`time ${JSON.stringify(time)} is not a date`);
  if (at('kind') !== kind) throw bad(`kind ${JSON.stringify(at('kind'))} in a history of ${kind} runs`);
  const trust = at('trustworthy');
  if (trust !== 'true' && trust !== 'false') throw bad(`trustworthy ${JSON.stringify(trust)} is not true or false`);
  const number = (c: string): number | null => {
    const text = at(c);
    if (text === '') return null;
    const v = Number(text);
    if (!Number.isFinite(v)) throw bad(`${c} ${JSON.stringify(text)} is not a number`);
    return v;
  };
  const metricNames = new Set(thresholdNames(kind));
  const fixed = new Set<string>(FIXED_COLUMNS);
  const row: HistoryRow & { line: number } = {
    line,
    time,
    kind,
    target: at('target'),
    trustworthy: trust === 'true',
    reasons: at('untrustworthy_reasons'),
    loadAverage: number('load_average'),
    thresholds: at('thresholds') ? at('thresholds').split(';') : [],
    labels: Object.fromEntries(columns.filter((c) => !fixed.has(c) && !metricNames.has(c)).map((c) => [c, at(c)])),
    metrics: Object.fromEntries([...metricNames].map((c) => [c, columns.includes(c) ? number(c) : null])),
  };
  return row;
}

/** Parses a history file's text; throws HistoryError naming the line of the first damage. */
export function parseHistory(text: string, file: string): History {
  if (text.length && !text.endsWith('\n')) {
    const line = text.split('\n').length;
    throw new HistoryError(`${file} line ${line}: the line does not end (a damaged line: a write cut short?)`);
  }
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parse(text, { info: true, relax_column_count: true, skip_empty_lines: true }) as never;
  } catch (err) {
    const line = (err as { lines?: number }).lines;
    throw new HistoryError(`${file} line ${line ?? '?'}: ${(err as Error).message} (a damaged line)`);
  }
  if (!records.length) return { kind: null, columns: [], labels: [], rows: [] };
  const columns = records[0]!.record;
  for (const c of FIXED_COLUMNS)
    if (!columns.includes(c)) throw new HistoryError(`${file} line 1: the header has no ${c} column`);
  const kind = kindOfColumns(columns);
  if (!kind) throw new HistoryError(`${file} line 1: the header has the metric columns of neither fanout nor rest`);
  const metricNames = new Set(thresholdNames(kind));
  const labels = columns.filter((c) => !(FIXED_COLUMNS as readonly string[]).includes(c) && !metricNames.has(c));
  // A record's line is the one it ends on: no value written here spans lines (labels are one line).
  const rows = records.slice(1).map(({ record, info }) => readRecord(file, columns, kind, record, info.lines));
  return { kind, columns, labels, rows };
}

/** Reads a history file (a missing one is empty). */
export async function readHistory(file: string): Promise<History> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: null, columns: [], labels: [], rows: [] };
    throw new HistoryError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return parseHistory(text, file);
}

/** Holds the file's lock while `fn` runs. */
async function locked<T>(file: string, fn: () => Promise<T>): Promise<T> {
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(file, {
      realpath: false,
      stale: HISTORY_LOCK.staleMs,
      retries: {
        retries: HISTORY_LOCK.retries,
        minTimeout: HISTORY_LOCK.minRetryMs,
        maxTimeout: HISTORY_LOCK.maxRetryMs,
      },
    });
  } catch (err) {
    throw new HistoryError(`${file}: cannot take the history's lock (${(err as Error).message})`);
  }
  try {
    return await fn();
  } finally {
    await release().catch(() => {});
  }
}

/**
 * Appends a run to the history at `file`, creating it with its header. A file of another kind of
 * run, or with a damaged line, is left as it is and named in the error. A file that lacks a column
 * of this row (a label first given now, a metric of a newer version) is rewritten whole, old rows
 * with empty cells there, through a temporary file renamed over it.
 */
export async function appendHistory(file: string, row: HistoryRow): Promise<void> {
  try {
    await mkdir(path.dirname(file), { recursive: true });
  } catch (err) {
    throw new HistoryError(`${file}: cannot make its folder (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  await locked(file, async () => {
    const history = await readHistory(file);
    if (history.kind && history.kind !== row.kind)
      throw new HistoryError(`${file}: holds ${history.kind} runs, not ${row.kind}; give each kind its own history`);
    if (!history.columns.length) {
      const columns = historyColumns(row.kind, Object.keys(row.labels));
      await writeFile(file, csvLine(columns) + csvLine(cells(row, columns)));
      return;
    }
    const wanted = historyColumns(row.kind, Object.keys(row.labels));
    const missing = wanted.filter((c) => !history.columns.includes(c));
    if (!missing.length) {
      await appendFile(file, csvLine(cells(row, history.columns)));
      return;
    }
    const columns = [...history.columns, ...missing];
    const text = [columns, ...history.rows.map((r) => cells(r, columns)), cells(row, columns)].map(csvLine).join('');
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, text);
    await rename(temp, file);
  });
}
