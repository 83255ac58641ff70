/**
 * Runs against dialects of the reference service: one suite run under the dialect drawn from a seed,
 * what it found, and the report of failing seeds with the commands that replay them (fast-check
 * prints its `seed`, Hypothesis its `@reproduce_failure`). `npm run dialects` and the sweep
 * (test/ci/sweeps/suite-runs.test.ts) use it.
 */
import { randomInt } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { coveringSeeds, drawDialect, replayCommand, type Dialect } from '../../reference/index.ts';
import type { CheckResult } from '../../src/check.ts';
import { UsageError } from '../../src/errors.ts';
import { cleanProblems, runSuite, type MutationSettings } from './mutation.ts';

/** What one dialect did to the suite. */
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
 * Runs the default suite against the dialect drawn from `seed`. With `fault`, the dialect
 * carries that fault too: a run that must fail, which shows that a failing seed is reported.
 */
export async function runDialect(
  seed: number,
  settings: Partial<Omit<MutationSettings, 'dialect'>> = {},
  fault?: string,
): Promise<DialectOutcome> {
  const t0 = performance.now();
  const results = await runSuite(fault, { ...settings, dialect: drawDialect(seed) });
  return dialectOutcome(seed, results, Math.round(performance.now() - t0));
}

/** What a run under the dialect drawn from `seed` found. */
export function dialectOutcome(seed: number, results: CheckResult[], durationMs: number): DialectOutcome {
  const counts = { pass: 0, fail: 0, skip: 0, error: 0 };
  for (const r of results) counts[r.outcome]++;
  return { seed, dialect: drawDialect(seed), problems: cleanProblems(results), counts, durationMs, results };
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
  /** Profiles state nothing of the reference's timing. */
  unstatedTiming?: boolean;
}

/**
 * Reads `--runs N`, `--seed a,b`, `--socketio`, `--concurrency N`, `--unstated-timing`; throws a
 * one-line Error for bad input.
 */
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
      'unstated-timing': { type: 'boolean' },
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
    ...(values['unstated-timing'] ? { unstatedTiming: true } : {}),
  } as const;
  if (values.seed !== undefined)
    return { ...base, source: 'given', seeds: values.seed.split(',').map((x) => positive('seed', x.trim())) };
  if (values.runs !== undefined)
    return { ...base, source: 'random', seeds: randomSeeds(positive('runs', values.runs)) };
  return { ...base, source: 'covering', seeds: covering() };
}
