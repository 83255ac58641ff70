/**
 * The report formats, one registry from a format's name to the factory of its handler of the
 * runner's event stream. Every factory takes the same context. The CLI's option checks and help
 * take the names from here, so a new format is one entry of REPORT_FORMATS and nothing outside
 * reports/ changes.
 */
import path from 'node:path';
import type { ReportOptions, Reports } from '../src/conform.ts';
import type { RunHandler } from '../src/runner.ts';
import { checkListText } from './check-list.ts';
import { consoleHandler } from './console.ts';
import { CTRF_REPORT_FILE, ctrfHandler } from './ctrf.ts';
import { githubHandler } from './github.ts';
import { HTML_REPORT_FILE, htmlHandler } from './html.ts';
import { JSON_REPORT_FILE, jsonHandler } from './json.ts';
import { JUNIT_REPORT_FILE, junitHandler } from './junit.ts';
import { formatMatrix } from './matrix.ts';
import { replayFileHandler } from './explore-replay.ts';

export type { ReportOptions };
export { githubEnvironment } from './github.ts';

/** What every format's factory gets: the run's report options, plus the files the other chosen formats write. */
export interface ReportContext extends Required<Pick<ReportOptions, 'outDir' | 'version' | 'write' | 'tty'>> {
  color?: boolean;
  /** Told the path of each file written. */
  written: (file: string) => void;
  github: NonNullable<ReportOptions['github']>;
  /** With --list-unchecked: the console lists every rule not checked in full. */
  listUnchecked: boolean;
  /** The files the chosen formats before this one write into `outDir`, by name. */
  files: readonly string[];
  /** The paths of every file the chosen formats write, where the console points for the detail. */
  reportFiles: readonly string[];
  /** The console's whole detail (`--verbose`). */
  verbose: boolean;
  /** Columns a console line takes at most: the terminal's, else 120. */
  width?: number;
}

/** One report format: the file it writes into the report directory, if any, and its handler. */
export interface ReportFormat {
  file?: string;
  create(ctx: ReportContext): RunHandler;
}

/** Every report format by name, in the order their handlers run. */
export const REPORT_FORMATS = {
  console: {
    create: (c) =>
      consoleHandler({
        write: c.write,
        tty: c.tty,
        color: c.color,
        listUnchecked: c.listUnchecked,
        verbose: c.verbose,
        reportFiles: c.reportFiles,
        ...(c.width ? { width: c.width } : {}),
      }),
  },
  json: { file: JSON_REPORT_FILE, create: (c) => jsonHandler(c.outDir, c.version, c.written) },
  junit: { file: JUNIT_REPORT_FILE, create: (c) => junitHandler(c.outDir, c.written) },
  html: { file: HTML_REPORT_FILE, create: (c) => htmlHandler(c.outDir, c.written) },
  ctrf: { file: CTRF_REPORT_FILE, create: (c) => ctrfHandler(c.outDir, c.version, c.written) },
  // Last, so the summary it writes lists the files written before it.
  github: {
    create: (c) =>
      githubHandler({ outDir: c.outDir, write: c.write, env: c.github, reports: c.files, written: c.written }),
  },
} satisfies Record<string, ReportFormat>;

/** The names of the report formats, in registry order. */
export const REPORT_FORMAT_NAMES: readonly string[] = Object.keys(REPORT_FORMATS);

/** The handlers of the chosen formats, in registry order. An unknown name is a usage error found before. */
export function reportHandlers(o: ReportOptions): RunHandler[] {
  const formats: [string, ReportFormat][] = Object.entries(REPORT_FORMATS);
  const chosen = formats.filter(([name]) => o.formats.includes(name));
  const reportFiles = chosen.flatMap(([, f]) => (f.file ? [path.join(o.outDir, f.file)] : []));
  const handlers = chosen.map(([, format], i) =>
    format.create({
      outDir: o.outDir,
      version: o.version,
      write: o.write,
      tty: o.tty,
      ...(o.color === undefined ? {} : { color: o.color }),
      written: o.written ?? (() => {}),
      github: o.github ?? {},
      listUnchecked: o.listUnchecked ?? false,
      files: chosen.slice(0, i).flatMap(([, f]) => (f.file ? [f.file] : [])),
      reportFiles,
      verbose: o.verbose ?? false,
      ...(o.width ? { width: o.width } : {}),
    }),
  );
  // Not a format: a failure the explorer found is always written where conform replay can read it.
  return [...handlers, replayFileHandler(o.outDir, o.written)];
}

/** What the CLI hands the library: the formats' names and handlers, and the listings' text. */
export const REPORTS: Reports = {
  formats: REPORT_FORMAT_NAMES,
  handlers: reportHandlers,
  checkList: checkListText,
  matrix: formatMatrix,
};
