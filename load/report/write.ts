/** Present: writes the chosen report formats for a load run; returns what it wrote. */
import { writeReportFile } from '../../reports/write.ts';
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
 * The report as one `conform-result {…}` line (`--report result`): on stdout, a pod's log is then
 * a result file `conform load merge` reads. Every given secret is scrubbed, as in the files.
 */
export function resultLine(report: LoadReport, secrets: readonly string[] = []): string {
  return `${RESULT_LINE_PREFIX}${maskKeys(secrets, '[redacted]')(JSON.stringify(report))}\n`;
}

/**
 * Writes `load-<kind>.json` and `load-<kind>.html` into `outDir` as `formats` asks, scrubbing
 * every given secret first (keys never reach a report). Returns the paths written.
 */
export async function writeReports(
  report: LoadReport,
  formats: readonly string[],
  outDir: string,
  secrets: readonly string[] = [],
): Promise<string[]> {
  const written: string[] = [];
  // Matched as the conformance reports match keys: a short key only standing alone, never inside a word.
  const scrub = maskKeys(secrets, '[redacted]');
  if (formats.includes('json'))
    written.push(
      await writeReportFile(outDir, `load-${report.kind}.json`, scrub(`${JSON.stringify(report, null, 2)}\n`)),
    );
  if (formats.includes('html'))
    written.push(
      await writeReportFile(
        outDir,
        `load-${report.kind}.html`,
        scrub(report.kind === 'fanout' ? renderFanoutHtml(report) : renderRestHtml(report)),
      ),
    );
  return written;
}
