import { describe, expect, it } from 'vitest';
import { searchCapacity, type SearchOptions, type StepOutcome } from '../../load/capacity/search.ts';
import { parseCapacityArgs } from '../../load/capacity/invocation.ts';
import { parseThresholds } from '../../load/thresholds.ts';
import { resolveConfig, startReferenceServer } from '../../reference/index.ts';
import { API_KEY_HEADER } from '../../src/spec.ts';

/** A service whose latency p99 is 5 ms up to `knee` and grows past it; the generator's own limit at `genLimit`. */
function service(knee: number, genLimit = Number.POSITIVE_INFINITY) {
  const loads: number[] = [];
  const run = async (load: number): Promise<StepOutcome> => {
    loads.push(load);
    const p99 = load <= knee ? 5 : 5 + (load - knee) * 10;
    return {
      metrics: { 'latency.p99': p99, errors: 0 },
      generatorLimits: load >= genLimit ? [`busy 97% > 90%`] : [],
      latencyP50Ms: 1,
      latencyP99Ms: p99,
      achieved: load,
    };
  };
  return { run, loads };
}

const options = (o: Partial<SearchOptions> = {}): SearchOptions => ({
  slos: parseThresholds(['latency.p99<50'], 'rest'),
  start: 50,
  max: 5000,
  maxSteps: 20,
  maxTimeMs: 60_000,
  resolution: 0.05,
  integer: false,
  ...o,
});

describe('the capacity search', () => {
  it('doubles, then bisects to the highest load at which every SLO held, within the resolution', async () => {
    const s = service(400);
    const r = await searchCapacity(s.run, options());
    expect(r.outcome).toBe('knee');
    expect(s.loads.slice(0, 5)).toEqual([50, 100, 200, 400, 800]);
    expect(r.steps.slice(0, 5).every((x) => x.phase === 'doubling')).toBe(true);
    expect(r.steps.slice(5).every((x) => x.phase === 'bisecting')).toBe(true);
    // The knee is where an extra 4.5 load units cross 50 ms: 404.5.
    expect(r.capacity!).toBeGreaterThanOrEqual(400 * 0.95);
    expect(r.capacity!).toBeLessThanOrEqual(404.5);
    expect(r.failedAt! - r.capacity!).toBeLessThanOrEqual(0.05 * r.capacity!);
  });

  it('stops where the generator is the limit and reports no knee, only what held below it', async () => {
    const s = service(400, 200);
    const r = await searchCapacity(s.run, options());
    expect(r.outcome).toBe('generator-limit');
    expect(r.capacity).toBeNull();
    expect(r.heldBelowGeneratorLimit).toBe(100);
    expect(s.loads).toEqual([50, 100, 200]);
    expect(r.reason).toMatch(/the generator, not the service, was the limit at 200: busy 97% > 90%/);
  });

  it('counts a step that held with the generator lagging as held, one that failed with it as its', async () => {
    const lagging = service(400);
    const run = async (load: number): Promise<StepOutcome> => ({
      ...(await lagging.run(load)),
      ...(load >= 100 ? { generatorLag: ['4 of 150 requests sent more than 5 ms late'] } : {}),
    });
    const r = await searchCapacity(run, options());
    expect(r.steps.slice(0, 4).map((s) => s.held)).toEqual([true, true, true, true]);
    expect(r.outcome).toBe('generator-limit');
    expect(r.steps.at(-1)!.load).toBe(800);
    expect(r.reason).toMatch(/4 of 150 requests sent more than 5 ms late, and an SLO failed with that lag/);
    expect(r.heldBelowGeneratorLimit).toBe(400);
  });

  it('says every SLO held up to the maximum, and stops there', async () => {
    const r = await searchCapacity(service(10_000).run, options({ max: 300 }));
    expect(r.outcome).toBe('max-held');
    expect(r.capacity).toBe(300);
    expect(r.steps.map((x) => x.load)).toEqual([50, 100, 200, 300]);
  });

  it('bisects below the first load when it already fails, and whole clients for fan-out', async () => {
    const r = await searchCapacity(service(13).run, options({ integer: true, resolution: 0 }));
    expect(r.outcome).toBe('knee');
    expect(r.capacity).toBe(17);
    expect(r.steps.every((x) => Number.isInteger(x.load))).toBe(true);
  });

  it('is bounded in steps and in time', async () => {
    const steps = await searchCapacity(service(400).run, options({ maxSteps: 6 }));
    expect(steps.outcome).toBe('budget');
    expect(steps.steps).toHaveLength(6);
    let now = 0;
    const slow = service(400);
    const timed = await searchCapacity(
      async (l) => {
        now += 10_000;
        return slow.run(l);
      },
      options({ maxTimeMs: 35_000 }),
      () => now,
    );
    expect(timed.outcome).toBe('budget');
    expect(timed.steps).toHaveLength(3);
  });
});

describe('the reference at a fixed service rate', () => {
  it('answers REST one request each 1/rate s in arrival order, so past the rate requests queue', async () => {
    const server = await startReferenceServer({ config: { restServiceRate: 50 } });
    try {
      const key = server.profile.keys.primary.key;
      const t0 = performance.now();
      // Ten at once against 50 a second: the last answered 10 × 20 ms after they arrived.
      const done = await Promise.all(
        Array.from({ length: 10 }, () =>
          fetch(`${server.restUrl}/v1/pairs`, { headers: { [API_KEY_HEADER]: key } }).then(async (r) => {
            await r.text();
            return performance.now() - t0;
          }),
        ),
      );
      expect(Math.max(...done)).toBeGreaterThanOrEqual(190);
      expect(Math.min(...done)).toBeGreaterThanOrEqual(19);
    } finally {
      await server.close();
    }
    expect(() => resolveConfig({ restServiceRate: -1 })).toThrow(
      /restServiceRate: must be a number of requests per second/,
    );
  });
});

describe('conform load capacity: options', () => {
  it('takes the bound of its mode and the SLOs, refusing the other bound', () => {
    const inv = parseCapacityArgs({
      kind: 'rest',
      slo: ['latency.p99<50'],
      'max-rate': '2000/s',
      'service-rate': '400/s',
    });
    expect(inv.options.search).toMatchObject({ start: 50, max: 2000 });
    expect(inv.target.reference.restServiceRate).toBe(400);
    expect(() => parseCapacityArgs({ kind: 'rest', slo: ['latency.p99<50'], 'max-clients': 10 })).toThrow(
      /--max-clients: capacity rest searches by --max-rate/,
    );
    expect(() => parseCapacityArgs({ kind: 'fanout', 'max-clients': 10 })).toThrow(/give at least one --slo/);
    expect(() => parseCapacityArgs({ kind: 'fanout', slo: ['rps>1'], 'max-clients': 10 })).toThrow(/unknown metric/);
  });
});
