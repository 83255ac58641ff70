/** Present: the text of a load run's report: the console summary, the result line, the JSON and the HTML. */
import { maskKeys } from '../../src/redact.ts';
import type { FanoutReport } from '../fanout/run.ts';
import type { RestReport } from '../rest/run.ts';
import { formatFanoutSummary, formatRestSummary } from './console.ts';
import { renderFanoutHtml, renderRestHtml } from './html.ts';
import { RESULT_LINE_PREFIX } from '../result-format.ts';

export type LoadReport = FanoutReport | RestReport;

/** Console text of a report. */
export function summary(report: LoadReport): string {
  return report.kind === 'fanout' ? formatFanoutSummary(report) : formatRestSummary(report);
}

/**
 * The report as one `conform-result {…}` line: on stdout, a pod's log is then a result file
 * `conform load merge` reads. Every given secret is scrubbed, as in the files.
 */
export function resultLine(report: LoadReport, secrets: readonly string[] = []): string {
  return `${RESULT_LINE_PREFIX}${maskKeys(secrets, '[redacted]')(JSON.stringify(report))}\n`;
}

/** The report as a JSON document. */
export const reportJson = (report: LoadReport): string => `${JSON.stringify(report, null, 2)}\n`;

/** The report as a self-contained HTML page. */
export const reportHtml = (report: LoadReport): string =>
  report.kind === 'fanout' ? renderFanoutHtml(report) : renderRestHtml(report);
