/** The order and concurrency checks of a run start in. */
import type { Check } from './check.ts';

/**
 * Calls `run` with each check's index. A check that waits on the target's pace (`slow`: the keep-alive
 * window; `push`: the push cadence) gets its own lane from the start, still within the connection and
 * request budgets; the others start in registry order, `concurrency` at a time, while `more()` holds.
 */
export async function inLanes(
  checks: readonly Check[],
  concurrency: number,
  more: () => boolean,
  run: (index: number) => Promise<void>,
): Promise<void> {
  const own = checks.map((_, i) => i).filter((i) => checks[i]!.tags.some((t) => t === 'slow' || t === 'push'));
  const order = checks.map((_, i) => i).filter((i) => !own.includes(i));
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < order.length && more()) await run(order[next++]!);
  };
  const width = Math.max(1, Math.min(concurrency, order.length));
  await Promise.all([...own.map(run), ...Array.from({ length: width }, lane)]);
}
