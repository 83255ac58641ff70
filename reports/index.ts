/** Report formats by name; each is a handler of the runner's event stream. */
import type { ReportOptions } from '../src/conform.ts';
import type { RunHandler } from '../src/runner.ts';
import { consoleHandler } from './console.ts';
import { CTRF_REPORT_FILE, ctrfHandler } from './ctrf.ts';
import { githubHandler } from './github.ts';
import { HTML_REPORT_FILE, htmlHandler } from './html.ts';
import { JSON_REPORT_FILE, jsonHandler } from './json.ts';
import { JUNIT_REPORT_FILE, junitHandler } from './junit.ts';

export type { ReportOptions };
export { githubEnvironment } from './github.ts';

/** The file each format writes into the report directory. */
const FILE_OF = {
  json: JSON_REPORT_FILE,
  junit: JUNIT_REPORT_FILE,
  html: HTML_REPORT_FILE,
  ctrf: CTRF_REPORT_FILE,
} as const;

/** The handlers of the chosen formats, in a fixed order. */
export function reportHandlers(o: ReportOptions): RunHandler[] {
  const handlers: RunHandler[] = [];
  const written = o.written ?? (() => {});
  if (o.formats.includes('console')) handlers.push(consoleHandler({ write: o.write, tty: o.tty, color: o.color }));
  if (o.formats.includes('json')) handlers.push(jsonHandler(o.outDir, o.version, written));
  if (o.formats.includes('junit')) handlers.push(junitHandler(o.outDir, written));
  if (o.formats.includes('html')) handlers.push(htmlHandler(o.outDir, written));
  if (o.formats.includes('ctrf')) handlers.push(ctrfHandler(o.outDir, o.version, written));
  // Last, so the summary it writes lists the files written before it.
  if (o.formats.includes('github')) {
    const reports = (Object.keys(FILE_OF) as (keyof typeof FILE_OF)[])
      .filter((f) => o.formats.includes(f))
      .map((f) => FILE_OF[f]);
    handlers.push(githubHandler({ outDir: o.outDir, write: o.write, env: o.github ?? {}, reports, written }));
  }
  return handlers;
}
