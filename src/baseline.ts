/**
 * Earlier JSON reports as input: `--rerun-failed` (ids that failed or errored) and `--baseline`
 * (verdicts and observations that changed since).
 */
import { readFile } from 'node:fs/promises';
import type { CheckResult } from './check.ts';
import type { Change } from './runner.ts';
import { UsageError } from './errors.ts';

/** What is read from an earlier report: only what comparison needs. */
export interface PastReport {
  results: Pick<CheckResult, 'id' | 'outcome' | 'observations'>[];
}

/** Reads a JSON report written by `--report json`; a bad file is a usage error naming it. */
export async function readPastReport(file: string, option: string): Promise<PastReport> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`${option}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${option}: ${file} is not JSON`);
  }
  const v = value as { schema?: unknown; results?: unknown };
  if (v?.schema !== 'conform-report' || !Array.isArray(v.results))
    throw new UsageError(`${option}: ${file} is not a conform JSON report (no schema "conform-report" with results)`);
  for (const r of v.results as unknown[]) {
    const x = r as { id?: unknown; outcome?: unknown; observations?: unknown };
    if (typeof x?.id !== 'string' || typeof x.outcome !== 'string')
      throw new UsageError(`${option}: ${file} has a result without id or outcome`);
    if (!Array.isArray(x.observations)) x.observations = [];
  }
  return value as PastReport;
}

/** Ids that failed or errored in a past run. */
export const failedIds = (past: PastReport): string[] =>
  past.results.filter((r) => r.outcome === 'fail' || r.outcome === 'error').map((r) => r.id);

const stable = (v: unknown): string => JSON.stringify(v);

/**
 * Changes against a baseline: checks whose verdict changed, observations whose value changed,
 * checks new in this run. Checks absent from this run (filtered out) are not changes.
 */
export function compareWithBaseline(base: PastReport, results: readonly CheckResult[]): Change[] {
  const before = new Map(base.results.map((r) => [r.id, r]));
  const changes: Change[] = [];
  for (const r of results) {
    const b = before.get(r.id);
    if (!b) {
      changes.push({ id: r.id, kind: 'new', before: null, after: r.outcome });
      continue;
    }
    if (b.outcome !== r.outcome) changes.push({ id: r.id, kind: 'verdict', before: b.outcome, after: r.outcome });
    const oldObs = new Map(b.observations.map((o) => [o.name, o.value]));
    for (const o of r.observations) {
      if (!oldObs.has(o.name)) {
        if (b.outcome !== 'skip')
          changes.push({ id: r.id, kind: 'observation', name: o.name, before: null, after: o.value });
        continue;
      }
      if (stable(oldObs.get(o.name)) !== stable(o.value))
        changes.push({ id: r.id, kind: 'observation', name: o.name, before: oldObs.get(o.name), after: o.value });
    }
  }
  return changes;
}
