/**
 * The load report formats, one registry from a format's name to its writers: of a run's report
 * (`conform load fanout | rest | calibrate`) and of the merged report (`conform load merge`). The
 * options' check, their default and the help take the names from here, so a new format is one
 * entry of LOAD_REPORT_FORMATS and nothing else changes.
 */
import { writeReportFile } from '../../reports/write.ts';
import type { GithubEnvironment } from '../../src/conform.ts';
import { LoadUsageError } from '../../src/errors.ts';
import { maskKeys } from '../../src/redact.ts';
import type { MergedReport } from '../merge.ts';
import { commandData, commandProperty } from '../../reports/github.ts';
import type { CapacityReport } from '../capacity/run.ts';
import { formatCapacitySummary, renderCapacityHtml } from './capacity.ts';
import { loadAnnotations, writeLoadCtrf, writeLoadSummary, writeMarkdownSummary } from './ci.ts';
import { renderTrendHtml, trendSummaryMarkdown, type TrendReport } from './trend.ts';
import { formatTrendSummary } from './trend-console.ts';
import { formatMergedSummary, mergedHtml, mergedJunit } from './merge.ts';
import { reportHtml, reportJson, resultLine, summary, type LoadReport } from './write.ts';

export type { LoadReport };

/** What a run's writers get. */
export interface RunReportContext {
  /** The report folder (`--out`). */
  outDir: string;
  /** Standard output: the console summary, the result line, GitHub's annotations. */
  out(text: string): void;
  /** Every key the run used: scrubbed from everything written, files and lines alike. */
  secrets: readonly string[];
  /** GitHub Actions' step summary file and run page. */
  github: GithubEnvironment;
}

/** What the writers of a merged report get. */
export interface MergeReportContext {
  outDir: string;
  out(text: string): void;
}

/** What the writers of a trend or a capacity search get. */
export interface SideReportContext {
  outDir: string;
  out(text: string): void;
  github: GithubEnvironment;
}

/**
 * One load report format: its writer for a run's report, a merged one, a history's trend and a
 * capacity search; each returns the files it wrote.
 */
export interface LoadReportFormat {
  /** Written for a run, a trend or a capacity search when `--report` names no format. */
  byDefault?: true;
  /** What the help says of it beside its name. */
  note?: string;
  run?(report: LoadReport, ctx: RunReportContext): Promise<string[]>;
  merge?(report: MergedReport, ctx: MergeReportContext): Promise<string[]>;
  trend?(report: TrendReport, ctx: SideReportContext): Promise<string[]>;
  capacity?(report: CapacityReport, ctx: SideReportContext): Promise<string[]>;
}

// Matched as the conformance reports match keys: a short key only standing alone, never inside a word.
const scrubbing = (ctx: RunReportContext): ((text: string) => string) => maskKeys(ctx.secrets, '[redacted]');

/** Every load report format by name, in the order they write: what goes to stdout first, then the files. */
export const LOAD_REPORT_FORMATS = {
  console: {
    byDefault: true,
    run: async (r, c) => {
      c.out(`${summary(r)}\n`);
      return [];
    },
    merge: async (r, c) => {
      c.out(`${formatMergedSummary(r)}\n`);
      return [];
    },
    trend: async (r, c) => {
      c.out(`${formatTrendSummary(r, r.file)}\n`);
      return [];
    },
    capacity: async (r, c) => {
      c.out(`${formatCapacitySummary(r)}\n`);
      return [];
    },
  },
  // The JSON report on stdout: a pod's log is then a result file `conform load merge` reads.
  result: {
    note: 'one conform-result line on stdout',
    run: async (r, c) => {
      c.out(resultLine(r, c.secrets));
      return [];
    },
  },
  json: {
    byDefault: true,
    run: async (r, c) => [await writeReportFile(c.outDir, `load-${r.kind}.json`, scrubbing(c)(reportJson(r)))],
    merge: async (r, c) => [
      await writeReportFile(c.outDir, `load-merge-${r.kind}.json`, `${JSON.stringify(r, null, 2)}\n`),
    ],
    trend: async (r, c) => [await writeReportFile(c.outDir, `load-trend-${r.kind}.json`, json(r))],
    capacity: async (r, c) => [await writeReportFile(c.outDir, `load-capacity-${r.kind}.json`, json(r))],
  },
  html: {
    byDefault: true,
    run: async (r, c) => [await writeReportFile(c.outDir, `load-${r.kind}.html`, scrubbing(c)(reportHtml(r)))],
    merge: async (r, c) => [await writeReportFile(c.outDir, `load-merge-${r.kind}.html`, mergedHtml(r))],
    trend: async (r, c) => [await writeReportFile(c.outDir, `load-trend-${r.kind}.html`, renderTrendHtml(r))],
    capacity: async (r, c) => [await writeReportFile(c.outDir, `load-capacity-${r.kind}.html`, renderCapacityHtml(r))],
  },
  junit: {
    merge: async (r, c) => [await writeReportFile(c.outDir, `load-merge-${r.kind}.junit.xml`, mergedJunit(r))],
  },
  ctrf: { run: async (r, c) => [await writeLoadCtrf(r, c.outDir, scrubbing(c))] },
  // An `::error` annotation per crossed threshold on stdout, and the job summary.
  github: {
    run: async (r, c) => {
      const scrub = scrubbing(c);
      for (const a of loadAnnotations(r)) c.out(`${scrub(a)}\n`);
      return writeLoadSummary(r, summary(r), c.github, c.outDir, scrub);
    },
    // The verdict in the job summary: what the nightly workflow shows.
    trend: async (r, c) => {
      for (const m of r.regressions)
        c.out(`::error title=${commandProperty(`load trend: ${m} regressed`)}::${commandData(m)}\n`);
      return writeMarkdownSummary(
        trendSummaryMarkdown(r, c.github),
        c.github,
        c.outDir,
        `load-trend-${r.kind}-summary.md`,
      );
    },
  },
} satisfies Record<string, LoadReportFormat>;

type Side = 'run' | 'merge' | 'trend' | 'capacity';
const json = (r: unknown): string => `${JSON.stringify(r, null, 2)}\n`;
const FORMATS: [string, LoadReportFormat][] = Object.entries(LOAD_REPORT_FORMATS);

/** The names of the formats a run (`run`) or `conform load merge` (`merge`) writes, in registry order. */
export const loadReportNames = (side: Side): string[] => FORMATS.filter(([, f]) => f[side]).map(([n]) => n);

/**
 * What a run, a trend or a capacity search writes when `--report` names no format; merge writes
 * every format it has.
 */
export const defaultLoadReports = (side: Side): string[] =>
  side === 'merge' ? loadReportNames('merge') : FORMATS.filter(([, f]) => f.byDefault && f[side]).map(([n]) => n);

/** The names for `--help`, then what the notes say of some. */
export const loadReportHelp = (side: Side): string =>
  [
    loadReportNames(side).join(','),
    ...FORMATS.filter(([, f]) => f[side] && f.note).map(([n, f]) => `${n}: ${f.note}`),
  ].join('; ');

/**
 * Parses `--report` (names repeated or comma-separated); none given is the default. An unknown
 * name is a usage error naming the formats there are.
 */
export function parseLoadReports(value: readonly string[] | string | undefined, side: Side): string[] {
  if (value === undefined) return defaultLoadReports(side);
  const names = loadReportNames(side);
  const chosen = (Array.isArray(value) ? value : [value])
    .flatMap((v) => String(v).split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  for (const r of chosen)
    if (!names.includes(r)) throw new LoadUsageError(`--report ${r}: unknown format; use ${names.join(', ')}`);
  return chosen;
}

/** Writes a run's report in the chosen formats, in registry order; returns the files written. */
export async function writeReports(
  report: LoadReport,
  formats: readonly string[],
  ctx: RunReportContext,
): Promise<string[]> {
  const written: string[] = [];
  for (const [name, format] of FORMATS)
    if (format.run && formats.includes(name)) written.push(...(await format.run(report, ctx)));
  return written;
}

/** Writes a trend or a capacity report in the chosen formats, in registry order; returns the files written. */
export async function writeSideReports<S extends 'trend' | 'capacity'>(
  side: S,
  report: S extends 'trend' ? TrendReport : CapacityReport,
  formats: readonly string[],
  ctx: SideReportContext,
): Promise<string[]> {
  const written: string[] = [];
  for (const [name, format] of FORMATS) {
    const write = format[side] as ((r: typeof report, c: SideReportContext) => Promise<string[]>) | undefined;
    if (write && formats.includes(name)) written.push(...(await write(report, ctx)));
  }
  return written;
}

/** Writes a merged report in the chosen formats, in registry order; returns the files written. */
export async function writeMergedReports(
  report: MergedReport,
  formats: readonly string[],
  ctx: MergeReportContext,
): Promise<string[]> {
  const written: string[] = [];
  for (const [name, format] of FORMATS)
    if (format.merge && formats.includes(name)) written.push(...(await format.merge(report, ctx)));
  return written;
}
