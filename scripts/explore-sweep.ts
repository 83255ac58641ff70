/**
 * `npm run explore-sweep`: the explorer's measurements from the command line. Each fault of the
 * sequence area (or those named) is explored from each seed, and its failure replayed on a fresh
 * server; random dialects are explored clean. Prints one line per run, then the table: caught in
 * how many seeds, the median steps to the catch, the longest shrunk transcript, replays that
 * failed again.
 *
 *   npm run explore-sweep -- --seeds 1-20 --budget 20s                 every sequence fault, 20 seeds
 *   npm run explore-sweep -- --window 30000 --budget 60s --seeds 1     at the spec's ping window
 *   npm run explore-sweep -- --dialects 50 --budget 20s                50 random dialects, clean
 *   … --faults a,b   --concurrency 2
 *
 * Exit 0 when every fault is caught in every seed and no dialect fails, 1 otherwise, 2 on bad arguments.
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { randomSeeds } from '../test/helpers/dialect-runs.ts';
import {
  exploreRun,
  faultTable,
  pooled,
  SEQUENCE_FAULTS,
  tableMarkdown,
  type ExploreRun,
} from '../test/helpers/explore-runs.ts';
import { parseBudget } from '../src/explore/settings.ts';

/** `1-20` or `1,5,9`. */
function seeds(text: string): number[] {
  const range = /^(\d+)-(\d+)$/.exec(text);
  if (range) return Array.from({ length: Number(range[2]) - Number(range[1]) + 1 }, (_, i) => Number(range[1]) + i);
  return text.split(',').map((s) => {
    if (!/^\d+$/.test(s.trim())) throw new Error(`--seeds: ${JSON.stringify(s)} is not a seed`);
    return Number(s);
  });
}

function line(r: ExploreRun): string {
  const f = r.result.exploration?.failure;
  const what = r.fault ?? `clean dialect ${r.dialectSeed ?? 'default'}`;
  return (
    `${r.result.outcome.toUpperCase().padEnd(5)} ${what} seed ${r.seed} (${(r.durationMs / 1000).toFixed(1)} s)` +
    (f
      ? `: after ${f.stepsToCatch} steps, shrunk ${f.foundSteps} -> ${f.shrunkSteps}` +
        `${f.confirmed ? '' : ' (not confirmed)'}` +
        `${r.replayed === undefined ? '' : r.replayed ? ', replay fails again' : ', REPLAY PASSES'}; ${f.rule}`
      : r.result.outcome === 'fail' || r.result.outcome === 'error'
        ? `: ${r.result.violations[0]?.received ?? r.result.reason ?? ''}`
        : '')
  );
}

/** The command line, as node's parser reads it. */
const parseOptions = () =>
  parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      faults: { type: 'string' },
      seeds: { type: 'string', default: '1' },
      budget: { type: 'string', default: '20s' },
      window: { type: 'string' },
      dialects: { type: 'string' },
      concurrency: { type: 'string', default: '2' },
    },
  }).values;

async function main(): Promise<number> {
  let values: ReturnType<typeof parseOptions>;
  try {
    values = parseOptions();
  } catch (err) {
    process.stderr.write(`explore-sweep: ${(err as Error).message.split('\n')[0]}\n`);
    return 2;
  }
  const budgetMs = parseBudget(values.budget, '--budget');
  const settings = { budgetMs, replay: true, ...(values.window ? { pingTimeoutMs: Number(values.window) } : {}) };
  const dialects = values.dialects ? randomSeeds(Number(values.dialects)) : [];
  const faults = values.faults ? values.faults.split(',') : dialects.length ? [] : [...SEQUENCE_FAULTS];
  const jobs = [
    ...faults.flatMap((fault) =>
      seeds(values.seeds).map((seed) => ({ fault, seed, dialectSeed: undefined as number | undefined })),
    ),
    ...dialects.map((dialectSeed, i) => ({ fault: undefined, seed: i + 1, dialectSeed })),
  ];
  process.stdout.write(
    `explore-sweep: ${jobs.length} runs, budget ${budgetMs} ms` +
      `${dialects.length ? `, dialect seeds ${dialects.join(', ')}` : ''}\n`,
  );
  const runs = await pooled(jobs, Number(values.concurrency), async (j) => {
    const r = await exploreRun(j.fault, j.seed, {
      ...settings,
      ...(j.dialectSeed === undefined ? {} : { dialectSeed: j.dialectSeed }),
    });
    process.stdout.write(`${line(r)}\n`);
    return r;
  });
  process.stdout.write(`\n${tableMarkdown(faultTable(runs))}\n`);
  const ok = runs.every((r) =>
    r.fault ? r.result.outcome === 'fail' : r.result.outcome !== 'fail' && r.result.outcome !== 'error',
  );
  return ok ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
