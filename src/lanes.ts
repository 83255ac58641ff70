/** The order and concurrency checks of a run start in. */
import type { Check } from './check.ts';

/**
 * Calls `run` with each check's index. Slow checks are idle waits on a keep-alive window: each gets
 * its own lane from the start, so they overlap the rest and the concurrency bound applies to the
 * others, which start in registry order, `concurrency` at a time, while `more()` holds.
 */
export async function inLanes(
  checks: readonly Check[],
  concurrency: number,
  more: () => boolean,
  run: (index: number) => Promise<void>,
): Promise<void> {
  const slow = checks.map((_, i) => i).filter((i) => checks[i]!.tags.includes('slow'));
  const order = checks.map((_, i) => i).filter((i) => !checks[i]!.tags.includes('slow'));
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < order.length && more()) await run(order[next++]!);
  };
  const width = Math.max(1, Math.min(concurrency, order.length));
  await Promise.all([...slow.map(run), ...Array.from({ length: width }, lane)]);
}
