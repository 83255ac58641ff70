/**
 * Two shards of a fan-out run started on one shared start time: their merge has the clients and the
 * window frames of the unsharded run beside them. In the ci tier: the shared start leaves room for
 * worker start-up on a busy machine, so the test waits some 20 s. A reference process on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFanout } from '../../load/fanout/run.ts';
import { mergeResults } from '../../load/merge.ts';
import { startReferenceProcess, type LoadTarget } from '../../load/target.ts';

describe('load merge: shards of one run', () => {
  let target: LoadTarget;
  beforeAll(async () => {
    target = await startReferenceProcess({});
  });
  afterAll(async () => {
    await target?.close();
  });

  it('two shards on one start merge to the clients and frames of the unsharded run', async () => {
    // Room for worker start-up and the ramp on a busy machine: the window must open after every client subscribed.
    const startAtMs = Date.now() + 15_000;
    const base = {
      clients: 8,
      pair: ['Crypto:ALL:BTC/USD', 'Crypto:ALL:ETH/USD'],
      durationMs: 2000,
      rampRate: 50,
      warmupMs: 3000,
      workers: 1,
      startAtMs,
    };
    const [whole, s1, s2] = await Promise.all([
      runFanout(target, base),
      runFanout(target, { ...base, shard: { index: 1, count: 2 } }),
      runFanout(target, { ...base, shard: { index: 2, count: 2 } }),
    ]);
    for (const r of [whole, s1, s2]) expect(r.observations.join('\n')).not.toMatch(/shared window opened/);
    expect(s1.shard).toEqual({ index: 1, count: 2, clients: 4 });
    expect(s1.window).toEqual(whole.window && { ...whole.window, frames: s1.window!.frames });
    const merged = mergeResults([
      { file: 's1', data: s1 },
      { file: 's2', data: s2 },
    ]);
    expect(merged.totals.clients).toBe(whole.clients);
    expect(merged.totals.connected).toBe(8);
    expect(whole.window!.frames).toBeGreaterThan(0);
    expect(merged.totals.frames).toBe(whole.window!.frames);
    // Every client got every push of both pairs sent inside the window.
    expect(whole.window!.frames % (8 * 2)).toBe(0);
  });
});
