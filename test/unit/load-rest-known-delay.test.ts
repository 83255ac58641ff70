/**
 * The REST load generator against servers whose answer time is known (test doubles in
 * test/helpers/known-delay-server.ts): its percentiles must read the truth, one sample per
 * request, a stall must show as every request scheduled behind it, and the arrivals the server
 * sees must be spaced as asked. Every run also reports the generator's own send lag, printed
 * here so a miss on a loaded machine shows whose lateness it was.
 */
import * as hdr from 'hdr-histogram-js';
import { afterEach, describe, expect, it } from 'vitest';
import { runRest, type RestOptions, type RestReport } from '../../load/rest/run.ts';
import type { LoadTarget } from '../../load/target.ts';
import { minimalProfile } from '../../src/profile.ts';
import { startKnownDelayServer, type KnownDelayOptions, type KnownDelayServer } from '../helpers/known-delay-server.ts';

let server: KnownDelayServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const PAIR = 'Crypto:ALL:BTC/USD';

async function run(
  delay: KnownDelayOptions,
  options: RestOptions,
): Promise<{ report: RestReport; server: KnownDelayServer }> {
  server = await startKnownDelayServer(delay);
  const target: LoadTarget = {
    rest: server.url,
    ws: '',
    profile: minimalProfile({ target: server.url, key: 'k' }),
    keys: [{ key: 'k' }],
    embedded: false,
    close: async () => {},
  };
  const report = await runRest(target, { pair: [PAIR], ...options });
  const lag = report.sendLagMs;
  const held = heldPercentiles(server);
  console.log(
    `known delay ${delay.delayMs} ms at ${String(options.rate)}/s: latency p50 ${report.latencyMs.p50} ` +
      `p99 ${report.latencyMs.p99} max ${report.latencyMs.max} ms; server held p50 ${held.p50.toFixed(3)} ` +
      `p99 ${held.p99.toFixed(3)} ms; send lag p50 ${lag?.p50} p99 ${lag?.p99} max ${lag?.max} ms; ` +
      `late ${report.late}/${report.scheduled}; event-loop p99 ${report.generator.eventLoopDelayP99Ms} ms`,
  );
  return { report, server };
}

/** The hold times the server has recorded (an answer may not be written yet). */
const heldValues = (s: KnownDelayServer): number[] => s.held.filter((x) => x !== undefined);

/**
 * The server's own hold times (arrival to the answer written), p50 and p99, ms, of the requests
 * the generator recorded: the warm-up's come first and are not in its figures (a cold start holds
 * longer, which would read as the generator under-reporting).
 */
function heldPercentiles(s: KnownDelayServer, recorded?: number): { p50: number; p99: number } {
  const all = heldValues(s);
  const sorted = all.slice(recorded === undefined ? 0 : Math.max(0, all.length - recorded)).sort((a, b) => a - b);
  const at = (p: number): number =>
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
  return { p50: at(50), p99: at(99) };
}

/** Requests the histogram holds at or above `ms`. */
function countAtOrAbove(report: RestReport, ms: number): number {
  const h = hdr.decodeFromCompressedBase64(report.histograms.latency, 32, false);
  let n = 0;
  const j = h as unknown as {
    countsArrayLength: number;
    getCountAtIndex(i: number): number;
    valueFromIndex(i: number): number;
  };
  for (let i = 0; i < j.countsArrayLength; i++) if (j.valueFromIndex(i) >= ms * 1000) n += j.getCountAtIndex(i);
  return n;
}

describe('load rest, open model, against known answer times', () => {
  // The truth is what the server did: its own hold times (on a loaded machine its timers fire
  // late too). The generator's figures may exceed the server's only by loopback, the send lag it
  // reports and its own event-loop delay (a response read late), which it reports too; when it
  // calls itself trustworthy the send lag is small, and 5 ms covers loopback.
  const expectTruth = (report: RestReport, s: KnownDelayServer, delayMs: number): void => {
    const held = heldPercentiles(s, report.latencyMs.count);
    const loop = report.generator.eventLoopDelayP99Ms;
    expect(report.latencyMs.p50).toBeGreaterThanOrEqual(delayMs);
    expect(report.latencyMs.p50).toBeLessThanOrEqual(held.p50 + 5 + report.sendLagMs!.p50! + loop);
    expect(report.latencyMs.p99).toBeGreaterThanOrEqual(held.p99 - 1);
    expect(report.latencyMs.p99).toBeLessThanOrEqual(held.p99 + 5 + report.sendLagMs!.p99! + loop);
    if (report.trustworthy) expect(report.latencyMs.p99).toBeLessThanOrEqual(held.p99 + 5 + loop);
  };

  it("reads a 50 ms server at 100 requests/s as p50 50–55 ms, p99 the server's own, one sample a request", async () => {
    const { report, server: s } = await run(
      { delayMs: 50 },
      { rate: 100, durationMs: 3000, warmupMs: 500, connections: 20 },
    );
    expect(report.latencyFrom).toBe('intended send time');
    expectTruth(report, s, 50);
    // 3 s at 100/s: 300 intended times, each answered once and recorded once.
    expect(report.scheduled).toBe(300);
    expect(report.requests).toBe(300);
    expect(report.latencyMs.count).toBe(300);
    expect(report.errors).toBe(0);
    // Warm-up requests were sent but not recorded.
    expect(s.arrivals.length).toBe(350);
  });

  it("reads a 20 ms server at 100 requests/s as p50 20–25 ms and p99 at the server's own", async () => {
    const { report, server: s } = await run(
      { delayMs: 20 },
      { rate: 100, durationMs: 3000, warmupMs: 500, connections: 20 },
    );
    expectTruth(report, s, 20);
    expect(report.latencyMs.count).toBe(report.scheduled);
  });

  it('shows a one-second stall as every request scheduled behind it, not as one slow sample', async () => {
    // Request 151 (1 s into the measured phase) freezes the server for 1 s: the ~100 requests
    // scheduled in that second wait until it ends, the first ~50 of them 500 ms or more (as many
    // as fit 10 ms apart in the stall's actual length, less 500 ms: its timer may end it late).
    const { report, server: s } = await run(
      { delayMs: 20, stall: { atRequest: 151, ms: 1000 } },
      { rate: 100, durationMs: 3000, warmupMs: 500, connections: 150 },
    );
    expect(report.latencyMs.count).toBe(300);
    expect(report.latencyMs.max).toBeGreaterThanOrEqual(1000);
    // The stall's own length, the send lag, and the generator's event-loop delay in reading the answer.
    expect(report.latencyMs.max).toBeLessThanOrEqual(
      Math.max(...heldValues(s)) + 5 + report.sendLagMs!.max! + report.generator.eventLoopDelayP99Ms,
    );
    expect(report.latencyMs.p99).toBeGreaterThanOrEqual(950);
    const stalled = s.held[150]!;
    expect(stalled).toBeGreaterThanOrEqual(1000);
    const expected = (stalled - 500) / 10;
    const slow = countAtOrAbove(report, 500);
    expect(slow).toBeGreaterThanOrEqual(expected - 5);
    expect(slow).toBeLessThanOrEqual(expected + 6);
    // The other two seconds still read the server's 20 ms (plus what the generator's own lag adds on
    // a loaded machine, which it reports); a stall that leaked into them would read 500 ms and more.
    expect(report.latencyMs.p50).toBeGreaterThanOrEqual(20);
    expect(report.latencyMs.p50).toBeLessThanOrEqual(
      heldPercentiles(s).p50 + 5 + report.sendLagMs!.p90! + report.generator.eventLoopDelayP99Ms,
    );
    expect(report.waitedForConnection).toBe(0);
  });

  it('spaces arrivals evenly at the asked rate, off their slots by no more than the send lag it reports', async () => {
    const { server: s, report } = await run(
      { delayMs: 20 },
      { rate: 100, durationMs: 2000, warmupMs: 0, connections: 20 },
    );
    const a = s.arrivals;
    expect(a.length).toBe(200);
    // Slots 10 ms apart, aligned on the earliest arrival relative to its slot (the least late one).
    const origin = Math.min(...a.map((t, i) => t - i * 10));
    const drift = a.map((t, i) => t - origin - i * 10).sort((x, y) => x - y);
    const at = (p: number): number => drift[Math.ceil(p * drift.length) - 1]!;
    // Off by the send lag the generator reports, as every bound here: a loaded machine delays the timers.
    expect(at(0.5)).toBeLessThan(2 + report.sendLagMs!.p50!);
    expect(at(0.9)).toBeLessThanOrEqual(2 + report.sendLagMs!.p90!);
    expect(Math.abs(a[a.length - 1]! - a[0]! - 1990)).toBeLessThan(5 + report.sendLagMs!.max!);
  });

  it('draws Poisson arrivals: the mean gap asked, exponentially spread (coefficient of variation near 1)', async () => {
    const { server: s, report } = await run(
      { delayMs: 20 },
      { rate: 100, durationMs: 3000, warmupMs: 0, connections: 50, arrival: 'poisson', seed: 7 },
    );
    expect(report.options.seed).toBe(7);
    const gaps = s.arrivals.slice(1).map((t, i) => t - s.arrivals[i]!);
    const mean = gaps.reduce((x, y) => x + y, 0) / gaps.length;
    const sd = Math.sqrt(gaps.reduce((x, y) => x + (y - mean) ** 2, 0) / gaps.length);
    expect(mean).toBeGreaterThan(8);
    expect(mean).toBeLessThan(12.5);
    expect(sd / mean).toBeGreaterThan(0.8);
    expect(sd / mean).toBeLessThan(1.25);
  });

  it('counts requests a stalled event loop sent late, lag in their latency; the run is untrustworthy', async () => {
    const blocker = setTimeout(() => {
      const until = performance.now() + 300;
      while (performance.now() < until) {
        /* the generator's own stall */
      }
    }, 1500);
    const { report } = await run({ delayMs: 20 }, { rate: 100, durationMs: 2500, warmupMs: 500, connections: 20 });
    clearTimeout(blocker);
    expect(report.late).toBeGreaterThanOrEqual(25);
    expect(report.sendLagMs!.max).toBeGreaterThanOrEqual(250);
    expect(report.latencyMs.max).toBeGreaterThanOrEqual(270);
    expect(report.trustworthy).toBe(false);
    expect(report.generator.reasons.join('; ')).toMatch(/requests sent more than 5 ms after their intended time/);
  });

  it('drops and counts what one connection cannot carry, no unbounded queue; figures untrustworthy', async () => {
    // One connection to a 50 ms server carries 20 requests/s; 100/s are asked.
    const { report } = await run({ delayMs: 50 }, { rate: 100, durationMs: 2500, warmupMs: 0, connections: 1 });
    expect(report.waitedForConnection).toBeGreaterThan(100);
    expect(report.dropped).toBeGreaterThan(0);
    expect(report.requests + report.dropped + report.timeouts).toBeLessThanOrEqual(report.scheduled);
    expect(report.trustworthy).toBe(false);
    expect(report.generator.reasons.join('; ')).toMatch(/dropped/);
  });
});

describe('load rest, closed model (--rate max)', () => {
  it('reads the most a 20 ms server serves over 4 connections, latency from the actual send', async () => {
    const { report, server: s } = await run(
      { delayMs: 20 },
      { rate: 'max', durationMs: 2000, warmupMs: 0, connections: 4 },
    );
    expect(report.model).toBe('closed');
    expect(report.latencyFrom).toBe('actual send time');
    // Four connections back to back: 4 × 1000 / the server's mean hold, never more than 200/s.
    const held = heldValues(s);
    const meanHeld = held.reduce((a, b) => a + b, 0) / held.length;
    expect(report.rps).toBeLessThanOrEqual(200);
    expect(report.rps).toBeGreaterThan(0.85 * (4000 / meanHeld));
    expect(report.latencyMs.p50).toBeGreaterThanOrEqual(20);
    expect(report.latencyMs.p50).toBeLessThanOrEqual(heldPercentiles(s).p50 + 5);
    expect(report.latencyMs.count).toBe(report.requests);
  });
});
