/**
 * Runs of the explorer (ws.explore) alone against the reference: a fault, a seed, a budget, a ping
 * window, a dialect; a replay of what it found on a fresh server; and the table of a sweep of them
 * (caught in how many seeds, the steps to the catch, the shrunk length). The explorer's ci sweep
 * (test/ci/sweeps/explore.test.ts) and `npm run explore-sweep` share it.
 */
import { performance } from 'node:perf_hooks';
import { drawDialect } from '../../reference/index.ts';
import type { CheckResult } from '../../src/check.ts';
import type { ExploreSettings } from '../../src/explore/index.ts';
import { CHECKS } from '../../suites/index.ts';
import { MUTATION_DEFAULTS, runSuite, type MutationSettings } from './mutation.ts';

/** The explorer's check. */
export const EXPLORER = CHECKS.find((c) => c.id === 'ws.explore')!;

/** Faults of the sequence area: each shows only after steps in a certain order. */
export const SEQUENCE_FAULTS = [
  'subscribe-replace-drops-kept',
  'unsubscribe-stops-all',
  'pong-stops-when-subscribed',
  'refused-attempt-holds-slot',
  'subscribe-third-extends',
  'resubscribe-after-unsubscribe-silent',
  'unsubscribe-restores-replaced',
  'limit-counts-earlier-pairs',
] as const;

/** One run of the explorer: what it says, and what replaying its failure on a fresh server said. */
export interface ExploreRun {
  fault?: string;
  seed: number;
  dialectSeed?: number;
  result: CheckResult;
  durationMs: number;
  /** The replay of the failure on a fresh server: whether it failed again (undefined: nothing to replay). */
  replayed?: boolean;
}

/** What a run of the explorer is given. */
export interface ExploreRunSettings {
  budgetMs: number;
  pingTimeoutMs?: number;
  dialectSeed?: number;
  transport?: MutationSettings['transport'];
  shrinkMs?: number;
  /** Replay the failure found on a fresh server with the same fault. */
  replay?: boolean;
}

/** Runs the explorer once (and its failure's replay, when asked). */
export async function exploreRun(fault: string | undefined, seed: number, s: ExploreRunSettings): Promise<ExploreRun> {
  const base: Partial<MutationSettings> = {
    pingTimeoutMs: s.pingTimeoutMs ?? MUTATION_DEFAULTS.pingTimeoutMs,
    ...(s.transport ? { transport: s.transport } : {}),
    ...(s.dialectSeed === undefined ? {} : { dialect: drawDialect(s.dialectSeed) }),
  };
  const explore: ExploreSettings = {
    budgetMs: s.budgetMs,
    seed,
    ...(s.shrinkMs === undefined ? {} : { shrinkMs: s.shrinkMs }),
  };
  const t0 = performance.now();
  const [result] = await runSuite(fault, { ...base, explore }, [EXPLORER]);
  const durationMs = Math.round(performance.now() - t0);
  const replay = result!.exploration?.failure?.replay;
  let replayed: boolean | undefined;
  if (s.replay && replay) {
    const [again] = await runSuite(fault, { ...base, explore: { ...explore, replay } }, [EXPLORER]);
    replayed = again!.outcome === 'fail';
  }
  return {
    ...(fault ? { fault } : {}),
    seed,
    ...(s.dialectSeed === undefined ? {} : { dialectSeed: s.dialectSeed }),
    result: result!,
    durationMs,
    ...(replayed === undefined ? {} : { replayed }),
  };
}

/**
 * Whether the run failed on the connection budget's finding of a slot kept past the release wait
 * (src/check-loans.ts): whichever check meets it, the run fails on the allowance rule and the
 * explorer stops there, with no sequence of its own to shrink or replay.
 */
export const slotKept = (r: ExploreRun): boolean =>
  r.result.violations.some(
    (v) => v.rule === 'limit:connections-per-key' && /for the whole release wait/.test(v.received),
  );

/** Runs `work` over `items`, `concurrency` at a time, results in the order of `items`. */
export async function pooled<T, R>(items: readonly T[], concurrency: number, work: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
  return out;
}

const median = (xs: readonly number[]): number | undefined => {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** One row of a sweep's table: a fault over its seeds. */
export interface FaultRow {
  fault: string;
  runs: number;
  /** Runs the explorer failed: with a failure of its own, or on the budget's finding of a kept slot. */
  caught: number;
  /** Of them, on the budget's finding (no transcript). */
  slotKept: number;
  medianStepsToCatch?: number;
  maxShrunk?: number;
  confirmed: number;
  replayed: number;
  missedSeeds: number[];
}

/**
 * The table of a sweep: per fault, caught in how many seeds, the median steps to the catch, the
 * longest shrunk transcript.
 */
export function faultTable(runs: readonly ExploreRun[]): FaultRow[] {
  const faults = [...new Set(runs.map((r) => r.fault ?? 'clean'))];
  return faults.map((fault) => {
    const of = runs.filter((r) => (r.fault ?? 'clean') === fault);
    const caught = of.filter((r) => r.result.exploration?.failure);
    const kept = of.filter((r) => !r.result.exploration?.failure && slotKept(r));
    const shrunk = caught.map((r) => r.result.exploration!.failure!.shrunkSteps);
    return {
      fault,
      runs: of.length,
      caught: caught.length + kept.length,
      slotKept: kept.length,
      ...(caught.length
        ? { medianStepsToCatch: median(caught.map((r) => r.result.exploration!.failure!.stepsToCatch)) }
        : {}),
      ...(shrunk.length ? { maxShrunk: Math.max(...shrunk) } : {}),
      confirmed: caught.filter((r) => r.result.exploration!.failure!.confirmed).length,
      replayed: of.filter((r) => r.replayed === true).length,
      missedSeeds: of.filter((r) => !r.result.exploration?.failure && !slotKept(r)).map((r) => r.seed),
    };
  });
}

/** The table as Markdown. */
export function tableMarkdown(rows: readonly FaultRow[]): string {
  const lines = [
    '| fault | caught | of them, a slot kept (budget) | median steps to the catch | longest shrunk transcript | ' +
      'confirmed | replayed | seeds missed |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows)
    lines.push(
      `| ${r.fault} | ${r.caught}/${r.runs} | ${r.slotKept} | ${r.medianStepsToCatch ?? '-'} | ` +
        `${r.maxShrunk ?? '-'} | ${r.confirmed} | ${r.replayed} | ${r.missedSeeds.join(', ') || '-'} |`,
    );
  return lines.join('\n');
}
