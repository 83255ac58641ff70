import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCapacity, stepRunner, type CapacityOptions } from '../../load/capacity/run.ts';
import { startReferenceProcess } from '../../load/target.ts';
import { loadCli } from '../helpers/load-cli.ts';

/** The reference's known knee: it answers REST at this many requests per second, one at a time. */
const KNEE = 400;

describe('conform load capacity', () => {
  it('finds the knee of a service with a known capacity within 10 %, with the steps and the curve', async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'conform-capacity-'));
    const r = await loadCli([
      'load',
      'capacity',
      'rest',
      '--service-rate',
      `${KNEE}/s`,
      '--slo',
      'latency.p99<50',
      '--start',
      '100',
      '--max-rate',
      '1600',
      '--step-duration',
      '4s',
      '--step-warmup',
      '1s',
      '--report',
      'console,json,html',
      '--out',
      out,
    ]);
    expect(r.code, r.out + r.err).toBe(0);
    const report = JSON.parse(await readFile(path.join(out, 'load-capacity-rest.json'), 'utf8'));
    expect(report.outcome).toBe('knee');
    expect(Math.abs(report.capacity - KNEE) / KNEE).toBeLessThanOrEqual(0.1);
    expect(report.steps.every((s: { generatorLimits: string[] }) => s.generatorLimits.length === 0)).toBe(true);
    expect(r.out).toMatch(/verdict: KNEE FOUND/);
    const html = await readFile(path.join(out, 'load-capacity-rest.html'), 'utf8');
    expect(html).toContain('Latency against load');
    expect(html).toMatch(/<line class="hline"[^>]*><title>SLO latency\.p99&lt;50<\/title>/);
    expect(html).toMatch(/<line class="vline"[^>]*><title>capacity \d/);
  });

  it('refuses to report a knee when the generator is the limit', async () => {
    const target = await startReferenceProcess({ restServiceRate: KNEE });
    const options: CapacityOptions = {
      kind: 'rest',
      slos: ['latency.p99<50'],
      search: { start: 50, max: 1600, maxSteps: 10, maxTimeMs: 120_000, resolution: 0.05 },
      stepMs: 3000,
      warmupMs: 1000,
      fanout: {},
      rest: {},
    };
    const real = stepRunner(target, options);
    // From 200 requests/s on, the generator's own event loop is held 40 ms out of every 50: its
    // sends fall behind whatever the service does, which the step's generator check must see.
    let blocker: NodeJS.Timeout | undefined;
    try {
      const report = await runCapacity(target, options, async (load) => {
        if (load >= 200 && !blocker)
          blocker = setInterval(() => {
            for (const until = Date.now() + 40; Date.now() < until; );
          }, 50);
        return real(load);
      });
      expect(report.outcome).toBe('generator-limit');
      expect(report.capacity).toBeNull();
      // It stops at the first step whose generator is the limit: 200 at the latest.
      expect(report.steps.at(-1)!.load).toBeLessThanOrEqual(200);
      expect(report.steps.at(-1)!.generatorLimits.join('; ')).toMatch(
        /event-loop delay p99|late with a connection free/,
      );
      expect(report.reason).toMatch(/No knee is reported/);
    } finally {
      clearInterval(blocker);
      await target.close();
    }
  });
});
