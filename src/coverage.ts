/**
 * Honest coverage of a run: how many `must` checks ran (rather than skipped), the skip reasons
 * grouped, and whether the target gave the harness anything to judge at all. A run where most
 * checks skipped is not a green run: every report states these figures, and a minimum turns low
 * coverage into a failed verdict. Pure: results in, figures out.
 */
import type { CheckResult } from './check.ts';

/**
 * What a target can leave the harness without: checks that skip for one of these say so
 * (`ctx.skip(reason, NOTHING_TO_JUDGE.…)`), and reports show it prominently.
 */
export const NOTHING_TO_JUDGE = {
  pricedPair: 'no priced pair',
  livePair: 'no live pair',
} as const;

/** Skipped must checks that share one reason. */
export interface SkipGroup {
  reason: string;
  ids: string[];
}

export interface Coverage {
  /** Must checks selected for the run. */
  mustTotal: number;
  /** Must checks that ran to a verdict (pass, fail or error). */
  mustRan: number;
  mustSkipped: number;
  /** mustRan / mustTotal in percent, rounded down to one decimal (100 when no must check was selected). */
  percent: number;
  /** The skipped must checks by reason, the largest group first. */
  skipped: SkipGroup[];
  /** What the target gave nothing of, with the checks (any severity) that skipped for it. */
  nothingToJudge: { what: string; ids: string[] }[];
  /** The minimum percentage asked for (`--min-coverage`, profile `minCoverage`), when one was. */
  minimum?: number;
  /** Whether the run reached `minimum`; absent without one. */
  met?: boolean;
}

function grouped<T extends string>(items: readonly { key: T; id: string }[]): { key: T; ids: string[] }[] {
  const groups = new Map<T, string[]>();
  for (const { key, id } of items) groups.set(key, [...(groups.get(key) ?? []), id]);
  return [...groups].map(([key, ids]) => ({ key, ids })).sort((a, b) => b.ids.length - a.ids.length);
}

/** The coverage of a run's results, judged against `minimum` (a percentage) when given. */
export function coverage(results: readonly CheckResult[], minimum?: number): Coverage {
  const must = results.filter((r) => r.severity === 'must');
  const skipped = must.filter((r) => r.outcome === 'skip');
  const mustRan = must.length - skipped.length;
  const c: Coverage = {
    mustTotal: must.length,
    mustRan,
    mustSkipped: skipped.length,
    percent: must.length === 0 ? 100 : Math.floor((mustRan * 1000) / must.length) / 10,
    skipped: grouped(skipped.map((r) => ({ key: r.reason ?? 'no reason given', id: r.id }))).map((g) => ({
      reason: g.key,
      ids: g.ids,
    })),
    nothingToJudge: grouped(
      results.flatMap((r) => (r.outcome === 'skip' && r.nothingToJudge ? [{ key: r.nothingToJudge, id: r.id }] : [])),
    ).map((g) => ({ what: g.key, ids: g.ids })),
  };
  if (minimum !== undefined) {
    c.minimum = minimum;
    // Compared exactly, not on the rounded percentage.
    c.met = must.length === 0 || mustRan * 100 >= minimum * must.length;
  }
  return c;
}
