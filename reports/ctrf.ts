/**
 * CTRF (Common Test Report Format, https://ctrf.io): one JSON test per check, the run's counts and
 * coverage, for the CI viewers that read it. Valid against the schema of the reference `ctrf`
 * package (checked by the tests, which validate a real run's file with it).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CheckResult } from '../src/check.ts';
import type { RunEvent, RunHandler } from '../src/runner.ts';
import { clauseText, coverageLine, failureLines, ruleLine, verdictWord } from './format.ts';

export const CTRF_REPORT_FILE = 'conform-ctrf.json';
/** The CTRF specification version this document follows. */
export const CTRF_SPEC_VERSION = '0.0.0';

type CtrfStatus = 'passed' | 'failed' | 'skipped' | 'pending' | 'other';

/**
 * An error (the target or the harness broke the check off) fails the run as a failure does;
 * `rawStatus` tells them apart.
 */
const STATUS: Record<CheckResult['outcome'], CtrfStatus> = {
  pass: 'passed',
  fail: 'failed',
  error: 'failed',
  skip: 'skipped',
};

function ctrfTest(r: CheckResult): Record<string, unknown> {
  const test: Record<string, unknown> = {
    name: `${r.id}: ${r.title}`,
    status: STATUS[r.outcome],
    duration: Math.round(r.durationMs),
    rawStatus: r.outcome,
    suite: r.id.split('.').slice(0, 2),
    tags: [...r.tags],
    labels: { id: r.id, severity: r.severity, spec: clauseText(r) },
  };
  const message = r.outcome === 'fail' ? r.violations[0]?.received : r.reason;
  if (message !== undefined) test.message = message;
  if (r.outcome === 'fail' || r.outcome === 'error') test.trace = failureLines(r).join('\n');
  // The explorer's seed, counts and transitions, beside the outcome: CTRF keeps a test's own data in `extra`.
  if (r.exploration)
    test.extra = {
      exploration: {
        ...r.exploration,
        failure: r.exploration.failure && { ...r.exploration.failure, replay: undefined },
      },
    };
  return test;
}

/** The CTRF document of a finished run. */
export function ctrfReport(e: Extract<RunEvent, { type: 'run-end' }>, version: string): Record<string, unknown> {
  const count = (status: CtrfStatus): number => e.results.filter((r) => STATUS[r.outcome] === status).length;
  const s = e.summary;
  return {
    reportFormat: 'CTRF',
    specVersion: CTRF_SPEC_VERSION,
    reportId: randomUUID(),
    timestamp: e.finishedAt,
    generatedBy: 'conform',
    results: {
      tool: { name: 'conform', version },
      summary: {
        tests: e.results.length,
        passed: count('passed'),
        failed: count('failed'),
        skipped: count('skipped'),
        pending: 0,
        other: 0,
        start: Date.parse(e.startedAt),
        stop: Date.parse(e.finishedAt),
        duration: Math.round(s.durationMs),
      },
      tests: e.results.map(ctrfTest),
      environment: { appName: e.target.name ?? e.target.rest },
      extra: {
        verdict: s.verdict,
        verdictText: verdictWord(s),
        rules: ruleLine(s.coverage),
        coverage: coverageLine(s.coverage),
        target: e.target,
      },
    },
  };
}

/** Writes `conform-ctrf.json` into `outDir` when the run ends. */
export function ctrfHandler(outDir: string, version: string, written: (file: string) => void = () => {}): RunHandler {
  return {
    async handle(e) {
      if (e.type !== 'run-end') return;
      await mkdir(outDir, { recursive: true });
      const file = path.join(outDir, CTRF_REPORT_FILE);
      await writeFile(file, `${JSON.stringify(ctrfReport(e, version), null, 2)}\n`);
      written(file);
    },
  };
}
