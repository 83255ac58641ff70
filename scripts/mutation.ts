/**
 * `npm run mutation`: the reference service's faults are the harness's own test. The clean service
 * three runs in a row per transport, every fault over the raw WebSocket, the stream faults again
 * over Socket.IO, and every fault under two dialects that leave its rule breakable, all through the
 * sweep (test/helpers/sweep.ts). Prints each run, the disagreements, the scores, and the sweep's
 * wall and CPU time; `mutation score: CAUGHT/TOTAL faults caught` is the last line.
 *
 *   npm run mutation -- --faults a,b     those faults only
 *   npm run mutation -- --explain        why each disagreeing check ended as it did
 *   npm run mutation -- --markdown F     the disagreements as Markdown
 *   npm run mutation -- --report F       every fault's outcome as JSON
 *
 * The judge is audited over the same runs: every violation of every failing check names a stated
 * rule of the spec (src/judgements.ts `failableStatement`), counted on the `judgements:` line.
 *
 * Exit 0 when the clean runs pass, every fault is exact, every fault under a dialect is caught
 * with nothing beyond its catches and every failing verdict names a stated rule; 1 otherwise; 2 on
 * bad arguments.
 */
import { writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { failableStatement } from '../src/judgements.ts';
import {
  cleanProblems,
  dialectDisagreementLines,
  dialectOk,
  disagreementLines,
  disagreementMarkdown,
  explainLines,
  FAULTS,
  defaultDialectRuns,
  faultDialectRuns,
  judgeRun,
  formatDialectScore,
  formatScore,
  formatTransportScore,
  type DialectFaultOutcome,
  type FaultOutcome,
  type PlannedRun,
} from '../test/helpers/mutation.ts';
import { sweep, sweepLine, type SweepResult } from '../test/helpers/sweep.ts';

const label = (j: PlannedRun): string =>
  `${j.transport === 'ws' ? '' : `${j.transport} `}${j.seed === undefined ? '' : `dialect ${j.seed} `}`;

/** Every failing verdict of the runs, and those of its violations that name no stated rule of the spec. */
function audit(results: readonly SweepResult[]): { text: string; unstated: string[] } {
  const failing = results.flatMap((r) =>
    r.results.filter((x) => x.outcome === 'fail').map((check) => ({ job: r.job as PlannedRun, check })),
  );
  const unstated = failing.flatMap(({ job, check }) =>
    check.violations
      .filter((v) => !failableStatement(v.rule))
      .map((v) => `${label(job)}${job.fault ?? 'clean'} ${check.id}: ${String(v.rule)}: ${v.received}`),
  );
  const text =
    `\njudgements: ${failing.length} failing verdicts over ${results.length} runs, ` +
    `${unstated.length} naming no stated rule of the spec\n${unstated.map((l) => `  ${l}\n`).join('')}`;
  return { text, unstated };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      faults: { type: 'string' },
      explain: { type: 'boolean' },
      markdown: { type: 'string' },
      report: { type: 'string' },
    },
  });
  const names = values.faults
    ?.split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  const unknown = names?.filter((n) => !FAULTS.some((f) => f.name === n)) ?? [];
  if (unknown.length) {
    process.stderr.write(`mutation: unknown fault ${unknown[0]}\n`);
    return 2;
  }
  const faults = names ? FAULTS.filter((f) => names.includes(f.name)) : FAULTS;
  // The long runs under dialects first, as the sweeps plan them.
  const runs: PlannedRun[] = [...faultDialectRuns(faults), ...defaultDialectRuns(faults)];
  const judge = (r: SweepResult): FaultOutcome => judgeRun(r.job, r.results, r.durationMs);
  const done = await sweep(runs, (r) => {
    const job = r.job as PlannedRun;
    if (job.role === 'clean') {
      const problems = cleanProblems(r.results);
      process.stdout.write(`clean run (${job.transport}): ${problems.length} fail or error\n`);
      for (const p of problems) process.stdout.write(`  ${p}\n`);
      return;
    }
    const o = judge(r);
    const ok = job.role === 'fault-dialect' ? dialectOk(o) : o.exact;
    process.stdout.write(
      `${ok ? 'exact ' : o.caught ? 'caught' : 'MISSED'}  ${label(job)}${o.fault.name} (${o.durationMs} ms)\n`,
    );
  });
  const of = (role: PlannedRun['role'], transport?: string): SweepResult[] =>
    done.results.filter((r) => {
      const j = r.job as PlannedRun;
      return j.role === role && (transport === undefined || j.transport === transport);
    });
  const cleanOk = of('clean').every((r) => cleanProblems(r.results).length === 0);
  const outcomes = of('fault', 'ws').map(judge);
  const overSocketIo = of('fault', 'socketio').map(judge);
  const underDialects: DialectFaultOutcome[] = of('fault-dialect').map((r) => ({ ...judge(r), seed: r.job.seed! }));
  const lines = [
    ...disagreementLines(outcomes),
    ...disagreementLines(overSocketIo).map((l) => `(socketio) ${l}`),
    ...dialectDisagreementLines(underDialects).map((l) => `(dialects) ${l}`),
  ];
  if (lines.length)
    process.stdout.write(
      `\ndisagreements (fault: expected catches, actually failing):\n${lines.map((l) => `  ${l}`).join('\n')}\n`,
    );
  if (values.explain)
    process.stdout.write(`\nwhy:\n${[...explainLines(outcomes), ...explainLines(overSocketIo)].join('\n')}\n`);
  if (values.markdown) await writeFile(values.markdown, `${disagreementMarkdown(outcomes)}\n`);
  if (values.report)
    await writeFile(
      values.report,
      `${JSON.stringify(
        outcomes.map(({ results: _r, ...o }) => ({ ...o, fault: o.fault.name })),
        null,
        2,
      )}\n`,
    );
  const audited = audit(done.results);
  process.stdout.write(audited.text);
  process.stdout.write(
    `\n${faults.length} faults (+ ${overSocketIo.length} over socketio) (+ ${underDialects.length} runs under ` +
      `dialects): ${sweepLine(done)}\n${formatTransportScore(overSocketIo, 'socketio')}\n` +
      `${formatDialectScore(underDialects)}\n${formatScore(outcomes)}\n`,
  );
  const exact = [...outcomes, ...overSocketIo].every((o) => o.exact) && underDialects.every(dialectOk);
  return cleanOk && exact && audited.unstated.length === 0 ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.exitCode = await main().catch((err: unknown) => {
    process.stderr.write(`mutation: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}\n`);
    return 2;
  });
