/** The JSON report: every result with its evidence, under a schema version. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CheckResult } from '../src/check.ts';
import { type Cause, causesOf } from './causes.ts';
import type { Change, RunEvent, RunHandler, RunSummary, TargetInfo } from '../src/runner.ts';

/** Bumped on any incompatible change of the report's shape. */
export const REPORT_SCHEMA_VERSION = 3;
export const JSON_REPORT_FILE = 'conform-report.json';

export interface JsonReport {
  schema: 'conform-report';
  schemaVersion: typeof REPORT_SCHEMA_VERSION;
  tool: { name: 'conform'; version: string };
  target: TargetInfo;
  startedAt: string;
  finishedAt: string;
  summary: RunSummary;
  changes?: Change[];
  /** The rules the target broke, each once, with the checks that failed on it and those citing it; absent when none. */
  causes?: Cause[];
  results: CheckResult[];
}

/** Builds the report object of a finished run. */
export function jsonReport(e: Extract<RunEvent, { type: 'run-end' }>, version: string): JsonReport {
  const causes = causesOf(e.results);
  // Causes before the results, so a reader of the file meets them first.
  return {
    schema: 'conform-report',
    schemaVersion: REPORT_SCHEMA_VERSION,
    tool: { name: 'conform', version },
    target: e.target,
    startedAt: e.startedAt,
    finishedAt: e.finishedAt,
    summary: e.summary,
    ...(e.changes ? { changes: e.changes } : {}),
    ...(causes.length ? { causes } : {}),
    results: e.results,
  };
}

/** Writes `conform-report.json` into `outDir` when the run ends. */
export function jsonHandler(outDir: string, version: string, written: (file: string) => void = () => {}): RunHandler {
  return {
    async handle(e) {
      if (e.type !== 'run-end') return;
      await mkdir(outDir, { recursive: true });
      const file = path.join(outDir, JSON_REPORT_FILE);
      await writeFile(file, `${JSON.stringify(jsonReport(e, version), null, 2)}\n`);
      written(file);
    },
  };
}
