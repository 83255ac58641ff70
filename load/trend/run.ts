/**
 * `conform load trend --history FILE` as a library: reads the history, judges it (judge.ts) and
 * writes the trend reports; exit 0 when the newest runs did not regress, 1 when a metric's newest
 * segment is a regression. A history that cannot be read is bad input (HistoryError, exit 2).
 */
import type { GithubEnvironment } from '../../src/conform.ts';
import { HistoryError, LoadUsageError } from '../../src/errors.ts';
import { githubEnvironment } from '../../reports/github.ts';
import { list, str } from '../invocation.ts';
import { thresholdNames } from '../metrics.ts';
import { FANOUT_DEFAULTS } from '../options.ts';
import { parseLoadReports, writeSideReports } from '../report/index.ts';
import type { TrendReport } from '../report/trend.ts';
import { readHistory } from './history.ts';
import { judgeHistory, type TrendOptions } from './judge.ts';
import { parseMinEffect } from './options.ts';

export interface TrendInvocation {
  file: string;
  options: Partial<TrendOptions>;
  reports: string[];
  outDir: string;
  github: GithubEnvironment;
}

/** argv of `conform load trend` → its invocation; throws LoadUsageError naming the option. */
export function parseTrendArgs(argv: Record<string, unknown>, env: Readonly<Record<string, string | undefined>> = {}) {
  const file = str(argv.history);
  if (!file) throw new LoadUsageError('conform load trend: give the history with --history FILE');
  const metrics = list(argv.metric);
  const groupBy = str(argv['group-by']);
  const options: Partial<TrendOptions> = {
    ...(argv['min-effect'] !== undefined ? { minEffect: parseMinEffect(str(argv['min-effect'])) } : {}),
    ...(metrics ? { metrics } : {}),
    ...(groupBy !== undefined ? { groupBy } : {}),
  };
  return {
    file,
    options,
    reports: parseLoadReports(list(argv.report), 'trend'),
    outDir: str(argv.out) ?? FANOUT_DEFAULTS.outDir,
    github: githubEnvironment(env),
  } satisfies TrendInvocation;
}

/** Judges the history at `inv.file`, writes the reports, returns the exit code (0 steady, 1 regression). */
export async function runTrend(inv: TrendInvocation, io: { out(text: string): void }): Promise<number> {
  const history = await readHistory(inv.file);
  if (!history.kind) throw new HistoryError(`${inv.file}: no runs yet (append runs with --history ${inv.file})`);
  for (const m of inv.options.metrics ?? [])
    if (!thresholdNames(history.kind).includes(m))
      throw new LoadUsageError(`--metric ${m}: not a metric of ${history.kind} runs`);
  const by = inv.options.groupBy;
  if (by !== undefined && !history.labels.includes(by))
    throw new LoadUsageError(
      `--group-by ${by}: not a label of ${inv.file} (its labels: ${history.labels.join(', ') || 'none'})`,
    );
  const trend = judgeHistory(history, inv.options);
  const newestTrusted = [...history.rows].reverse().find((r) => r.trustworthy);
  const report: TrendReport = {
    ...trend,
    file: inv.file,
    generatedAt: new Date().toISOString(),
    thresholds: newestTrusted?.thresholds ?? [],
  };
  for (const f of await writeSideReports('trend', report, inv.reports, {
    outDir: inv.outDir,
    out: io.out,
    github: inv.github,
  }))
    io.out(`wrote ${f}\n`);
  return trend.regressions.length ? 1 : 0;
}
