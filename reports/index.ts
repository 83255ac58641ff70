/** Report formats by name; each is a handler of the runner's event stream. */
import type { ReportOptions } from '../src/conform.ts';
import type { RunHandler } from '../src/runner.ts';
import { consoleHandler } from './console.ts';
import { htmlHandler } from './html.ts';
import { jsonHandler } from './json.ts';
import { junitHandler } from './junit.ts';

export type { ReportOptions };

/** The handlers of the chosen formats, in a fixed order. */
export function reportHandlers(o: ReportOptions): RunHandler[] {
  const handlers: RunHandler[] = [];
  const written = o.written ?? (() => {});
  if (o.formats.includes('console')) handlers.push(consoleHandler({ write: o.write, tty: o.tty, color: o.color }));
  if (o.formats.includes('json')) handlers.push(jsonHandler(o.outDir, o.version, written));
  if (o.formats.includes('junit')) handlers.push(junitHandler(o.outDir, written));
  if (o.formats.includes('html')) handlers.push(htmlHandler(o.outDir, written));
  return handlers;
}
