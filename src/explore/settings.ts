/**
 * The explorer's options as a run takes them: the budget as typed (`60s`, `500ms`, `2m`, a bare
 * number of seconds), the seed, the replay file, each checked with a message that names the option.
 * The grammar is three units of one regular expression: a duration library would add a dependency
 * for less than it reads.
 */
import { randomInt } from 'node:crypto';
import { UsageError } from '../errors.ts';
import { EXPLORE_BUDGET_MS, EXPLORE_MAX_BUDGET_MS, EXPLORE_MIN_BUDGET_MS } from '../timing/index.ts';
import type { ExploreSettings } from './index.ts';
import { readReplay } from './replay-file.ts';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000 } as const;

/** A budget as typed, in ms; throws UsageError naming `option`. */
export function parseBudget(text: string, option: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(text);
  if (!m) throw new UsageError(`${option}: ${JSON.stringify(text)} is not a duration (write it as 60s, 500ms or 2m)`);
  const ms = Math.round(Number(m[1]) * UNIT_MS[(m[2] ?? 's') as keyof typeof UNIT_MS]);
  if (ms < EXPLORE_MIN_BUDGET_MS || ms > EXPLORE_MAX_BUDGET_MS)
    throw new UsageError(
      `${option}: ${JSON.stringify(text)} is out of range (${EXPLORE_MIN_BUDGET_MS / 1000} s to ` +
        `${EXPLORE_MAX_BUDGET_MS / 3_600_000} h)`,
    );
  return ms;
}

/** Largest seed: fast-check takes a 32-bit integer. */
const MAX_SEED = 2 ** 31 - 1;

/** Checks a seed; throws UsageError naming `--seed`. */
export function checkSeed(seed: number): number {
  if (!Number.isInteger(seed) || seed < 0 || seed > MAX_SEED)
    throw new UsageError(`--seed: must be an integer from 0 to ${MAX_SEED} (got ${seed})`);
  return seed;
}

/** A seed drawn for a run that names none (reported, so the run can be replayed). */
export const drawSeed = (): number => randomInt(0, MAX_SEED);

/** What the options ask of the explorer: a budget, a seed, a replay file; undefined when they ask nothing. */
export async function exploreSettings(o: {
  explore?: string;
  seed?: number;
  replay?: string;
}): Promise<ExploreSettings | undefined> {
  if (o.explore === undefined && o.replay === undefined) return undefined;
  const budgetMs = o.explore === undefined ? EXPLORE_BUDGET_MS : parseBudget(o.explore, '--explore');
  const seed = o.seed === undefined ? drawSeed() : checkSeed(o.seed);
  return { budgetMs, seed, ...(o.replay === undefined ? {} : { replay: await readReplay(o.replay) }) };
}
