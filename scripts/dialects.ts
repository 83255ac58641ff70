/**
 * The zero-false-failure property: every conforming dialect of the reference service passes the
 * whole default catalogue (no check fails, none errors), as a conforming service that is not ours
 * must. A dialect is drawn from a seed (reference/dialect.ts), so a failing seed is a replayable
 * counterexample, printed with the commands that reproduce it (fast-check prints its `seed`,
 * Hypothesis its `@reproduce_failure`).
 *
 *   npm run dialects                      the covering seeds (every value of every option at least once)
 *   npm run dialects -- --runs 200        200 random seeds
 *   npm run dialects -- --seed 17,42      those seeds
 *
 * Exit 0 when no seed fails, 1 when one does, 2 on bad arguments. test/dialects.test.ts runs the
 * covering seeds and a few random ones with the same code.
 */
import { randomInt } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { coveringSeeds, drawDialect, replayCommand, type Dialect } from '../reference/index.ts';
import type { CheckResult } from '../src/check.ts';
import { UsageError } from '../src/errors.ts';
import { cleanProblems, MUTATION_DEFAULTS, pool, runCatalogue, type MutationSettings } from './mutation.ts';

/** Settings of a dialect run: those of a mutation catalogue run, plus how many servers run at once. */
export interface DialectSettings extends Omit<MutationSettings, 'dialect' | 'faultConcurrency'> {
  /** Dialects (servers) in flight at once. */
  dialectConcurrency: number;
}

/**
 * Defaults: the mutation suite's short ping window and per-check budget; fewer servers at once than
 * the mutation suite, since a dialect's slow cadences and late-freed slots keep each run longer and
 * its waits must not be starved of CPU.
 */
export const DIALECT_DEFAULTS: Readonly<DialectSettings> = Object.freeze({
  pingTimeoutMs: MUTATION_DEFAULTS.pingTimeoutMs,
  pingGraceMs: MUTATION_DEFAULTS.pingGraceMs,
  tickMs: MUTATION_DEFAULTS.tickMs,
  checkConcurrency: MUTATION_DEFAULTS.checkConcurrency,
  checkTimeoutMs: MUTATION_DEFAULTS.checkTimeoutMs,
  transport: MUTATION_DEFAULTS.transport,
  dialectConcurrency: 3,
});

/** What one dialect did to the catalogue. */
export interface DialectOutcome {
  seed: number;
  dialect: Dialect;
  /** One line per check that failed or errored (empty: the dialect passes). */
  problems: string[];
  counts: Record<CheckResult['outcome'], number>;
  durationMs: number;
  results: CheckResult[];
}

/** The command that replays one seed's run exactly, and the one that serves its dialect by hand. */
export const reproduceCommands = (seed: number, transport: MutationSettings['transport'] = 'ws'): string[] => [
  `npm run dialects -- --seed ${seed}${transport === 'ws' ? '' : ` --${transport}`}`,
  `npx ${replayCommand(seed)}${transport === 'ws' ? '' : ` --transport ${transport}`}`,
];

/**
 * Runs the default catalogue against the dialect drawn from `seed`. With `fault`, the dialect
 * carries that fault too: a run that must fail, which shows that a failing seed is reported.
 */
export async function runDialect(
  seed: number,
  settings: Partial<DialectSettings> = {},
  fault?: string,
): Promise<DialectOutcome> {
  const { dialectConcurrency: _n, ...s } = { ...DIALECT_DEFAULTS, ...settings };
  const dialect = drawDialect(seed);
  const t0 = performance.now();
  const results = await runCatalogue(fault, { ...s, dialect });
  const counts = { pass: 0, fail: 0, skip: 0, error: 0 };
  for (const r of results) counts[r.outcome]++;
  return {
    seed,
    dialect,
    problems: cleanProblems(results),
    counts,
    durationMs: Math.round(performance.now() - t0),
    results,
  };
}

/** Runs every seed, at most `dialectConcurrency` at once; results in seed order. */
export async function runDialects(
  seeds: readonly number[],
  settings: Partial<DialectSettings> = {},
  onDone?: (o: DialectOutcome) => void,
): Promise<DialectOutcome[]> {
  const limit = settings.dialectConcurrency ?? DIALECT_DEFAULTS.dialectConcurrency;
  return pool(seeds, limit, async (seed) => {
    const outcome = await runDialect(seed, settings);
    onDone?.(outcome);
    return outcome;
  });
}

/** `n` seeds drawn at random (positive 31-bit integers, distinct). */
export function randomSeeds(n: number): number[] {
  const seeds = new Set<number>();
  while (seeds.size < n) seeds.add(randomInt(1, 2 ** 31 - 1));
  return [...seeds];
}

/** One line per finished seed. */
export function outcomeLine(o: DialectOutcome): string {
  const tally = `${o.counts.pass} pass, ${o.counts.skip} skip, ${o.counts.fail} fail, ${o.counts.error} error`;
  return (
    `${o.problems.length === 0 ? 'pass' : 'FAIL'}  seed ${o.seed} ` +
    `(${(o.durationMs / 1000).toFixed(1)} s): ${tally}`
  );
}

/**
 * Whether a problem is a 50009 refusal of a connection conform opened: the harness exceeded the
 * key's allowance (or a slot the target had not released yet), which is conform's fault, not the
 * dialect's. Told apart in the report because its cause and its fix differ.
 */
export const overAllowance = (problem: string): boolean => /status_number"\s*:\s*"50009"/.test(problem);

/**
 * The closing report: the figure, then each failing seed with its dialect, what failed and the
 * commands that reproduce it.
 */
export function formatReport(
  outcomes: readonly DialectOutcome[],
  transport: MutationSettings['transport'] = 'ws',
): string {
  const failing = outcomes.filter((o) => o.problems.length > 0);
  const lines = [`dialects: ${outcomes.length} run, ${failing.length} failing seed(s)`];
  const onlyAllowance = failing.filter((o) => o.problems.every(overAllowance)).length;
  if (onlyAllowance > 0)
    lines.push(
      `  ${onlyAllowance} of them fail only on 50009 refusals of connections conform ` +
        `opened (more than the key allows, or a slot not yet released)`,
    );
  for (const o of failing) {
    lines.push('', `failing seed ${o.seed}`, `  dialect: ${JSON.stringify(o.dialect)}`);
    for (const p of o.problems) lines.push(`  ${p.replace(/\s+/g, ' ').slice(0, 400)}`);
    for (const c of reproduceCommands(o.seed, transport)) lines.push(`  reproduce: ${c}`);
  }
  return lines.join('\n');
}

/** Parsed command line of `npm run dialects`. */
export interface DialectArgs {
  seeds: number[];
  source: 'covering' | 'random' | 'given';
  transport: MutationSettings['transport'];
  concurrency?: number;
}

/** Reads `--runs N`, `--seed a,b`, `--socketio`, `--concurrency N`; throws a one-line Error for bad input. */
export function parseDialectArgs(argv: readonly string[], covering: () => number[] = coveringSeeds): DialectArgs {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      runs: { type: 'string' },
      seed: { type: 'string' },
      socketio: { type: 'boolean' },
      concurrency: { type: 'string' },
    },
  });
  const positive = (flag: string, text: string): number => {
    const n = Number(text);
    if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1 || n > 2 ** 31 - 1)
      throw new UsageError(`--${flag}: ${JSON.stringify(text)} is not a positive integer`);
    return n;
  };
  if (values.runs !== undefined && values.seed !== undefined)
    throw new UsageError('--runs and --seed: give one of them');
  const transport = values.socketio ? 'socketio' : 'ws';
  const base = {
    transport,
    ...(values.concurrency !== undefined ? { concurrency: positive('concurrency', values.concurrency) } : {}),
  } as const;
  if (values.seed !== undefined)
    return { ...base, source: 'given', seeds: values.seed.split(',').map((x) => positive('seed', x.trim())) };
  if (values.runs !== undefined)
    return { ...base, source: 'random', seeds: randomSeeds(positive('runs', values.runs)) };
  return { ...base, source: 'covering', seeds: covering() };
}

async function main(): Promise<number> {
  let args: DialectArgs;
  try {
    args = parseDialectArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`dialects: ${(err as Error).message.split('\n')[0]}\n`);
    return 2;
  }
  const t0 = performance.now();
  process.stdout.write(
    `dialects: ${args.seeds.length} ${args.source} seed(s) over ${args.transport}: ${args.seeds.join(', ')}\n`,
  );
  const outcomes = await runDialects(
    args.seeds,
    { transport: args.transport, ...(args.concurrency ? { dialectConcurrency: args.concurrency } : {}) },
    (o) => process.stdout.write(`${outcomeLine(o)}\n`),
  );
  process.stdout.write(
    `\n${formatReport(outcomes, args.transport)}\nin ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
  );
  return outcomes.every((o) => o.problems.length === 0) ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
