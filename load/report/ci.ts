/**
 * The CI-native reports of a load run, the same formats as a conformance run's: a CTRF document
 * with one test per threshold, and for GitHub Actions an `::error` annotation per crossed threshold
 * and a Markdown job summary.
 */
import { appendFile } from 'node:fs/promises';
import { CTRF_SPEC_VERSION } from '../../reports/ctrf.ts';
import { commandData, commandProperty } from '../../reports/github.ts';
import { writeReportFile } from '../../reports/write.ts';
import type { GithubEnvironment } from '../../src/conform.ts';
import type { ThresholdResult } from '../thresholds.ts';

/** What the CI reports need of a load run. */
export interface LoadRunFacts {
  kind: 'fanout' | 'rest';
  startedAt: string;
  thresholds: readonly ThresholdResult[];
}

const actualText = (t: ThresholdResult): string => (t.actual === null ? 'no value measured' : String(t.actual));

/** The CTRF document: one test per threshold, passed when it held. */
export function loadCtrf(r: LoadRunFacts, nowMs: number): Record<string, unknown> {
  const tests = r.thresholds.map((t) => ({
    name: `load ${r.kind}: ${t.expr}`,
    status: t.ok ? 'passed' : 'failed',
    duration: 0,
    suite: ['load', r.kind],
    message: `measured ${t.metric} = ${actualText(t)}`,
  }));
  const failed = tests.filter((t) => t.status === 'failed').length;
  return {
    reportFormat: 'CTRF',
    specVersion: CTRF_SPEC_VERSION,
    generatedBy: 'conform load',
    results: {
      tool: { name: 'conform load' },
      summary: {
        tests: tests.length,
        passed: tests.length - failed,
        failed,
        skipped: 0,
        pending: 0,
        other: 0,
        start: Date.parse(r.startedAt),
        stop: nowMs,
      },
      tests,
    },
  };
}

/** An `::error` workflow command per crossed threshold. */
export const loadAnnotations = (r: LoadRunFacts): string[] =>
  r.thresholds
    .filter((t) => !t.ok)
    .map(
      (t) =>
        `::error title=${commandProperty(`load ${r.kind}: threshold ${t.expr} crossed`)}::` +
        commandData(`measured ${t.metric} = ${actualText(t)}; the threshold asks ${t.expr}`),
    );

/** The Markdown job summary: the verdict and every threshold with what was measured. */
export function loadSummary(r: LoadRunFacts, consoleText: string, env: GithubEnvironment): string {
  const crossed = r.thresholds.filter((t) => !t.ok).length;
  const lines = [
    `## conform load ${r.kind}: ${crossed ? `FAIL, ${crossed} of ${r.thresholds.length} thresholds crossed` : 'PASS'}`,
    '',
  ];
  if (r.thresholds.length) {
    lines.push('| Threshold | Measured | Held |', '|---|---|---|');
    for (const t of r.thresholds)
      lines.push(`| \`${t.expr.replace(/\|/g, '\\|')}\` | ${actualText(t)} | ${t.ok ? 'yes' : '**no**'} |`);
    lines.push('');
  } else lines.push('No threshold was given (`--threshold`): nothing to hold the run to.', '');
  lines.push('```', consoleText.trimEnd().replace(/```/g, "'''"), '```');
  if (env.runUrl) lines.push('', `The run's artifacts: ${env.runUrl}#artifacts`);
  return `${lines.join('\n')}\n`;
}

/** Writes the CTRF document, scrubbed, into `outDir`; returns its path. */
export async function writeLoadCtrf(r: LoadRunFacts, outDir: string, scrub: (text: string) => string): Promise<string> {
  return writeReportFile(
    outDir,
    `load-${r.kind}-ctrf.json`,
    scrub(`${JSON.stringify(loadCtrf(r, Date.now()), null, 2)}\n`),
  );
}

/**
 * Writes the job summary, scrubbed: appended to `$GITHUB_STEP_SUMMARY` inside GitHub Actions, else
 * beside the other reports. Returns the file written into `outDir`, if any.
 */
export async function writeLoadSummary(
  r: LoadRunFacts,
  consoleText: string,
  env: GithubEnvironment,
  outDir: string,
  scrub: (text: string) => string,
): Promise<string[]> {
  return writeMarkdownSummary(scrub(loadSummary(r, consoleText, env)), env, outDir, `load-${r.kind}-summary.md`);
}

/** A Markdown job summary: appended to `$GITHUB_STEP_SUMMARY` inside GitHub Actions, else `name` in `outDir`. */
export async function writeMarkdownSummary(
  text: string,
  env: GithubEnvironment,
  outDir: string,
  name: string,
): Promise<string[]> {
  if (env.stepSummary) {
    await appendFile(env.stepSummary, text);
    return [];
  }
  return [await writeReportFile(outDir, name, text)];
}
