import { afterEach, describe, expect, it } from 'vitest';
import { availableParallelism } from 'node:os';
import { autoWorkers, runRest } from '../../load/rest/run.ts';
import type { LoadTarget } from '../../load/target.ts';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';

let server: ReferenceServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function target(keyName: string): Promise<LoadTarget> {
  server = await startReferenceServer();
  const key = server.profile.keys[keyName]!.key;
  return {
    rest: server.restUrl,
    ws: server.wsUrl,
    profile: server.profile,
    keys: [{ key }],
    embedded: false,
    close: async () => {},
  };
}

describe('load rest', () => {
  it.each([1, 2])(
    'plots every second of the measured phase, the last partial one too: they add up to every request (%i thread(s))',
    async (workers) => {
      const t = await target('primary');
      // 3.5 s: three whole seconds and a half one at the end.
      const report = await runRest(t, {
        endpoint: 'pairs',
        rate: 300,
        durationMs: 3500,
        warmupMs: 500,
        workers,
        thresholds: [],
      });
      expect(report.requests).toBeGreaterThan(300);
      expect(report.timeline.reduce((a, p) => a + p.requests, 0)).toBe(report.requests);
      // The seconds count from the measured phase's start, and the last one reaches its end.
      expect(report.timeline.at(-1)!.t).toBeGreaterThanOrEqual(3.4);
      expect(report.timeline[0]!.t).toBeGreaterThan(0.9);
      expect(report.timeline[0]!.t).toBeLessThan(2);
    },
  );

  it('--workers auto: a thread per core for the closed loop, for a fixed rate the threads it needs', async () => {
    const t = await target('primary');
    const report = await runRest(t, {
      endpoint: 'pairs',
      rate: 300,
      connections: 2,
      durationMs: 300,
      warmupMs: 0,
      workers: 'auto',
      thresholds: [],
    });
    expect(report.options.workers).toBe(1);
    expect(autoWorkers('max')).toBe(availableParallelism());
    expect(autoWorkers(10_000)).toBe(1);
    expect(autoWorkers(10_001)).toBe(Math.min(2, availableParallelism()));
    expect(autoWorkers(90_000)).toBe(Math.min(9, availableParallelism()));
  });

  it('counts the envelope status_number beside the HTTP status, so throttling (50006) shows', async () => {
    // The reference's `burst` key allows 5 requests a second: most of 40/s are throttled.
    const t = await target('burst');
    const report = await runRest(t, {
      endpoint: 'pairs',
      rate: 40,
      connections: 4,
      durationMs: 2000,
      warmupMs: 0,
      thresholds: ['rate_limited==0', 'latency.p99<60000'],
    });
    expect(report.requests).toBeGreaterThan(20);
    expect(report.statusNumbers['50006']).toBeGreaterThan(0);
    expect(report.statusNumbers['200']).toBeGreaterThan(0);
    expect(Object.values(report.statusNumbers).reduce((a, b) => a + b, 0)).toBe(report.requests);
    expect(report.thresholds.map((r) => [r.expr, r.ok])).toEqual([
      ['rate_limited==0', false],
      ['latency.p99<60000', true],
    ]);
  });

  it('excludes the warm-up from the counts', async () => {
    const t = await target('primary');
    const report = await runRest(t, {
      endpoint: 'price',
      pair: ['Crypto:ALL:BTC/USD'],
      rate: 20,
      connections: 2,
      durationMs: 1000,
      warmupMs: 1000,
    });
    expect(report.statusNumbers).toEqual({ 200: report.requests });
    // 20 intended times in the measured second, not 40 with the warm-up's.
    expect(report.scheduled).toBe(20);
    expect(report.requests).toBe(20);
  });
});
