/**
 * What every test file of CLI runs against hostile targets does: start each case's target, run
 * the CLI against it (several at once: most of a run is waiting), close the target, then one test
 * per case that judges the run. The files differ only in their cases, how they call the CLI and
 * what else they ask of a run.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, expect, it } from 'vitest';
import { judge, runLine, type JudgeOptions } from './judge.ts';
import { pool, type CliRun } from './run-cli.ts';
import type { HostileDefinition, HostileTarget } from './targets.ts';

export interface HostileCase {
  /** Unique among the file's cases (a target may appear in several, given its key differently). */
  name: string;
  def: HostileDefinition;
}

export interface HostileOutcome<C extends HostileCase> {
  case: C;
  /** Closed by the time tests run; its stats stay readable. */
  target: HostileTarget;
  /** The key made for this case. */
  key: string;
  /** Every key the run was given (the key, or a profile's keys); none may appear in any output. */
  keys: string[];
  run: CliRun;
}

export interface HostileRunOptions<C extends HostileCase> {
  /** Runs at once. */
  concurrency: number;
  /** For all the runs together. */
  timeoutMs: number;
  /** Makes each case's key; default `hk_` and 24 hex digits. */
  makeKey?: () => string;
  /** Runs the CLI against the started target with `key`; `keys` when the run was given more keys than `key`. */
  run(c: C, target: HostileTarget, key: string): Promise<{ run: CliRun; keys?: string[] }>;
  /** The profile the CLI built and which results faced the hostile part of the target. */
  judging(o: HostileOutcome<C>): Omit<JudgeOptions, 'keys'>;
  /** What else each case's run must show, asserted in its test. */
  alsoExpect?(o: HostileOutcome<C>): void;
}

/**
 * Registers the runs (a beforeAll) and one judging test per case in the current describe block;
 * returns the outcomes by case name for the block's other tests.
 */
export function judgeHostileRuns<C extends HostileCase>(
  cases: readonly C[],
  options: HostileRunOptions<C>,
): ReadonlyMap<string, HostileOutcome<C>> {
  const outcomes = new Map<string, HostileOutcome<C>>();
  beforeAll(async () => {
    await pool(cases, options.concurrency, async (c) => {
      const target = await c.def.start();
      const key = options.makeKey?.() ?? `hk_${randomBytes(12).toString('hex')}`;
      try {
        const { run, keys } = await options.run(c, target, key);
        console.log(runLine(c.name, run));
        outcomes.set(c.name, { case: c, target, key, keys: keys ?? [key], run });
      } finally {
        await target.close();
      }
    });
  }, options.timeoutMs);

  for (const c of cases) {
    it(`ends against ${c.name} (${c.def.breaks}): verdicts, exit ${c.def.exit[0]}, no stack trace, no key`, () => {
      const o = outcomes.get(c.name)!;
      expect(judge(c.def, o.run, { keys: o.keys, ...options.judging(o) })).toEqual([]);
      options.alsoExpect?.(o);
    });
  }
  return outcomes;
}
