/**
 * `npm run dialects`: the zero-false-failure property, from the command line. Every conforming
 * dialect of the reference service passes the whole default suite (no check fails, none
 * errors); a failing seed is printed with the commands that reproduce it. The runs go through the
 * sweep (test/helpers/sweep.ts), as many at once as the machine holds.
 *
 *   npm run dialects                      the covering seeds (every value of every option at least once)
 *   npm run dialects -- --runs 200        200 random seeds
 *   npm run dialects -- --seed 17,42      those seeds
 *   … --unstated-timing                   profiles that state nothing of the service's timing
 *
 * Exit 0 when no seed fails, 1 when one does, 2 on bad arguments.
 */
import { pathToFileURL } from 'node:url';
import {
  formatReport,
  outcomeLine,
  parseDialectArgs,
  type DialectArgs,
  type DialectOutcome,
  dialectOutcome,
} from '../test/helpers/dialect-runs.ts';
import { sweep, sweepCapacity, sweepLine, type SweepResult } from '../test/helpers/sweep.ts';

const outcomeOf = (r: SweepResult): DialectOutcome => dialectOutcome(r.job.seed!, r.results, r.durationMs);

async function main(): Promise<number> {
  let args: DialectArgs;
  try {
    args = parseDialectArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`dialects: ${(err as Error).message.split('\n')[0]}\n`);
    return 2;
  }
  process.stdout.write(
    `dialects: ${args.seeds.length} ${args.source} seed(s) over ${args.transport}: ${args.seeds.join(', ')}\n`,
  );
  const capacity = args.concurrency ? sweepCapacity(undefined, undefined, String(args.concurrency)) : sweepCapacity();
  const run = await sweep(
    args.seeds.map((seed) => ({
      seed,
      transport: args.transport,
      ...(args.unstatedTiming ? { unstatedTiming: true } : {}),
    })),
    (r) => process.stdout.write(`${outcomeLine(outcomeOf(r))}\n`),
    capacity,
  );
  const outcomes = run.results.map(outcomeOf);
  process.stdout.write(`\n${formatReport(outcomes, args.transport)}\n${sweepLine(run)}\n`);
  return outcomes.every((o) => o.problems.length === 0) ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
