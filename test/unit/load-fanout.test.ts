import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { METHOD, STATUS } from '../../src/spec.ts';
import type { LoadTarget } from '../../load/target.ts';
import { textFrame } from '../../src/ws-frame.ts';
import { startBroadcastServer, type BroadcastServer } from '../../load/calibrate/broadcast-server.ts';
import { runFanout } from '../../load/fanout/run.ts';
import { distributionOf } from '../../load/metrics.ts';
import { formatFanoutSummary } from '../../load/report/console.ts';
import { renderFanoutHtml } from '../../load/report/html.ts';

let server: BroadcastServer | null = null;
let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
  await cleanup?.();
  cleanup = null;
});

const PAIR = 'Crypto:ALL:TST/USD';

/** A fan-out report's fields that the charts do not read, for rendering a timeline of one's own. */
function fanoutReportStub(): Parameters<typeof renderFanoutHtml>[0] {
  const dist = { count: 0, p50: null, p90: null, p99: null, p999: null, max: null, mean: null };
  return {
    kind: 'fanout',
    mode: 'fanout',
    startedAt: '2026-01-01T00:00:00.000Z',
    target: { rest: 'http://127.0.0.1:1', ws: 'ws://127.0.0.1:1', embedded: false },
    options: {
      clients: 10,
      pairs: [PAIR],
      durationMs: 3000,
      rampRate: 10,
      workers: 1,
      keys: 1,
      updateWindowMs: 2000,
      validatePerSecond: 2000,
    },
    clients: 10,
    connected: 10,
    framesReceived: 0,
    framesPerSecond: 0,
    measuredMs: 3000,
    latencyMs: dist,
    serverLatencyMs: dist,
    skewMs: { count: 0, p50: null, p90: null, p99: null, max: null },
    updates: 0,
    lost: 0,
    lostUpdates: 0,
    lossRate: 0,
    lateReceipts: 0,
    duplicates: 0,
    outOfOrder: 0,
    errors: 0,
    validated: 0,
    violationSamples: [],
    refusals: {},
    connectErrors: {},
    noticeErrors: {},
    disconnects: {},
    pongs: 0,
    sentAtUnit: 'ms',
    maxSentMinusReceivedMs: 0,
    windowFrames: 0,
    receiptsBeforeSentAt: 0,
    framesWithoutSentAt: 0,
    latencyBelowZeroAfterCorrection: 0,
    workers: [],
    timeline: [],
    latencyCurve: [],
    skewHistogram: [],
    histograms: { server_latency: '', skew: '' },
    rampMs: 1000,
    achievedRampRate: 10,
    measuredPhase: { fromS: 0, toS: 0 },
    clock: {
      status: 'same-clock',
      offsetMs: 0,
      lowMs: 0,
      highMs: 0,
      boundMs: 0,
      toleranceMs: 0.5,
      samples: 8,
      narrowedByFrames: false,
      reason: null,
      tsUnit: 'ms',
      sentAtUnit: 'ms',
      latencyBoundMs: 1,
    },
    generator: {
      eventLoopDelayP99Ms: 0,
      cpuPercent: 0,
      saturated: false,
      reasons: [],
      workers: [],
      processCpuPercent: 0,
      cpuMicrosPerFrame: null,
      rssBytes: 0,
      memoryPerConnectionBytes: null,
    },
    trustworthy: true,
    thresholds: [],
    observations: [],
  } as Parameters<typeof renderFanoutHtml>[0];
}
const DELAY_MS = 60;
const FLOOD_MS = 4000;

/**
 * "Floods": answers subscribe, then writes push frames without `last_updated` or `sent_at` (legal:
 * the spec requires neither) as fast as the socket drains, until the client closes or FLOOD_MS.
 * Its REST side answers 404, so the run's clock is unknown: nothing here depends on it.
 */
async function startFloodServer(): Promise<{
  target: LoadTarget;
  bytesWritten: () => number;
  close: () => Promise<void>;
}> {
  const frame = textFrame(JSON.stringify({ code: PAIR, ask: '100.01', bid: '99.99', price: '100.00' }));
  const chunk = Buffer.concat(Array.from({ length: Math.floor(65536 / frame.length) }, () => frame));
  let written = 0;
  const http = createServer((_req, res) => {
    res.statusCode = 404;
    res.end();
  });
  const wss = new WebSocketServer({ server: http, perMessageDeflate: false });
  wss.on('connection', (ws, req) => {
    const socket = req.socket;
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { id?: string; method?: string };
      if (msg.method !== METHOD.subscribe) return;
      ws.send(JSON.stringify({ method: METHOD.subscribe, code: STATUS.OK, id: msg.id, data: null }));
      const until = Date.now() + FLOOD_MS;
      // Whole unmasked frames written beside ws's own sends, as a fan-out server writes them.
      const pump = (): void => {
        while (ws.readyState === ws.OPEN && Date.now() < until) {
          written += chunk.length;
          if (!socket.write(chunk)) {
            socket.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  const rest = `http://127.0.0.1:${port}`;
  const ws = `ws://127.0.0.1:${port}/`;
  const key = 'flood-any-key';
  return {
    target: {
      rest,
      ws,
      keys: [{ key }],
      profile: { rest, ws, keys: { primary: { key } } },
      embedded: false,
      close: async () => {},
    },
    bytesWritten: () => written,
    async close() {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}

describe('load fanout against a scripted server', () => {
  it('measures the skew of a client delayed on purpose and counts the one frame dropped for another', async () => {
    // Named faults of the scripted server: client 0 gets every frame DELAY_MS late; client 1
    // misses exactly one update, a few ticks after the generator reports its measured phase.
    let steadyAtTick = 0;
    let droppedTick = 0;
    server = await startBroadcastServer({
      tickMs: 100,
      plan: (client, _code, tick) => {
        if (client === 0) return { delayMs: DELAY_MS };
        if (client === 1 && steadyAtTick && droppedTick === 0 && tick >= steadyAtTick + 3) {
          droppedTick = tick;
          return 'drop';
        }
        return 'send';
      },
    });
    const report = await runFanout(server.target, {
      clients: 3,
      pair: [PAIR],
      workers: 2,
      durationMs: 4000,
      rampRate: 100,
      warmupMs: 0,
      tickMs: 250,
      updateWindowMs: 1500,
      settleMs: 200,
      thresholds: ['lost==0', 'skew.p50<1000'],
      onProgress: (p) => {
        if (p.phase === 'steady' && !steadyAtTick) steadyAtTick = server!.ticks;
      },
    });
    expect(droppedTick).toBeGreaterThan(0);
    expect(report.connected).toBe(3);
    expect(report.updates).toBeGreaterThan(10);
    // Every judged update reached the delayed client about DELAY_MS after the first one.
    expect(report.skewMs.p50).toBeGreaterThanOrEqual(DELAY_MS * 0.75);
    expect(report.skewMs.p50).toBeLessThan(DELAY_MS + 500);
    expect(report.latencyMs.max).toBeGreaterThanOrEqual(DELAY_MS * 0.9);
    expect(report.lost).toBe(1);
    expect(report.lostUpdates).toBe(1);
    expect(report.lossRate).toBeCloseTo(1 / (3 * report.updates), 6);
    expect(report.errors).toBe(0);
    expect(report.validated).toBeGreaterThan(0);
    expect(report.thresholds.map((t) => [t.expr, t.ok])).toEqual([
      ['lost==0', false],
      ['skew.p50<1000', true],
    ]);
  });

  it('reuses the fields of a chunk equal to the last; re-reads a chunk of the same length that differs', async () => {
    // One worker, four clients, one pair: each tick the first chunk read is scanned, the other three
    // are equal to it; the next tick's chunk has the same length but new times. A chunk reused when
    // it should not be would repeat the last update (duplicates) and miss the new one (lost).
    // Validation off: a frame picked for validation is parsed, never scanned or reused.
    server = await startBroadcastServer({ tickMs: 50 });
    const report = await runFanout(server.target, {
      clients: 4,
      pair: [PAIR],
      workers: 1,
      durationMs: 2500,
      warmupMs: 0,
      rampRate: 100,
      tickMs: 250,
      updateWindowMs: 500,
      settleMs: 200,
      validatePerSecond: 0,
    });
    expect(report.connected).toBe(4);
    expect(report.updates).toBeGreaterThan(20);
    expect(report.duplicates).toBe(0);
    expect(report.lost).toBe(0);
    // Every frame timed once: a latency, or one still below zero after the clock correction (a frame
    // stamped as it is written can read as received a fraction of a millisecond before it).
    expect(report.latencyMs.count + (report.latencyBelowZeroAfterCorrection ?? 0)).toBe(report.framesReceived);
  });

  it('marks a generator that cannot keep up with its target untrustworthy in the data, summary and HTML', async () => {
    // Named fault: a flooding target writes push frames as fast as the socket drains, for at most
    // FLOOD_MS. Writing a frame costs it a share of a memory copy; reading one costs the worker a
    // parse (these frames carry no times, so the scanner hands them to JSON.parse): the worker
    // falls behind on any machine and stays busy for the whole measured phase.
    const flood = await startFloodServer();
    cleanup = flood.close;
    const report = await runFanout(flood.target, {
      clients: 1,
      pair: [PAIR],
      workers: 1,
      durationMs: 1500,
      warmupMs: 0,
      tickMs: 250,
    });
    expect(flood.bytesWritten()).toBeGreaterThan(0);
    expect(report.framesReceived).toBeGreaterThan(1000);
    expect(report.generator.saturated).toBe(true);
    expect(report.trustworthy).toBe(false);
    expect(report.generator.reasons.join(' ')).toMatch(/worker 0: (event-loop delay p99|busy)/);
    expect(formatFanoutSummary(report)).toContain('UNTRUSTWORTHY');
    expect(renderFanoutHtml(report)).toContain('Untrustworthy');
  });

  it('validates frames under load and counts the ones that break the push-frame schema or UTF-8', async () => {
    // Named fault: every 4th tick the price is a JSON number; every 7th the frame is not UTF-8.
    server = await startBroadcastServer({
      tickMs: 50,
      frame: (_code, tick, normal) => {
        if (tick % 7 === 0)
          return Buffer.concat([
            Buffer.from(JSON.stringify(normal).slice(0, -1)),
            Buffer.from(',"note":"\xff"}', 'latin1'),
          ]);
        if (tick % 4 === 0) return JSON.stringify({ ...normal, price: 100 });
        return undefined;
      },
    });
    const report = await runFanout(server.target, {
      clients: 2,
      pair: [PAIR],
      workers: 1,
      durationMs: 2000,
      warmupMs: 0,
      tickMs: 250,
      thresholds: ['errors==0'],
    });
    expect(report.validated).toBeGreaterThan(20);
    expect(report.errors).toBeGreaterThan(2);
    expect(report.errors).toBeLessThan(report.validated);
    expect(report.violationSamples.some((v) => v.includes('/price'))).toBe(true);
    expect(report.violationSamples.some((v) => v.includes('UTF-8'))).toBe(true);
    expect(report.thresholds[0]).toMatchObject({ expr: 'errors==0', ok: false });
  });

  it('with --subscribe-after-ramp connects every client before the first subscribe', async () => {
    server = await startBroadcastServer({ tickMs: 50 });
    const report = await runFanout(server.target, {
      clients: 6,
      pair: [PAIR],
      workers: 2,
      durationMs: 1000,
      warmupMs: 0,
      rampRate: 20,
      tickMs: 250,
      subscribeAfterRamp: true,
      thresholds: ['connect_time.p50>0', 'connect_time.p99<1'],
    });
    expect(server.openAtSubscribe).toHaveLength(6);
    expect(server.openAtSubscribe.every((n) => n === 6)).toBe(true);
    expect(report.connected).toBe(6);
    expect(report.framesReceived).toBeGreaterThan(0);
    // Connect time runs from the handshake's start to the subscribe notice: the first client
    // opened at 0 and was subscribed only after the last opened, 250 ms into the ramp.
    const connectTime = distributionOf('fanout', report, 'connect_time')!;
    expect(connectTime.count).toBe(6);
    expect(connectTime.max).toBeGreaterThanOrEqual(250);
    expect(connectTime.p50).toBeGreaterThanOrEqual(distributionOf('fanout', report, 'subscribe')!.p50!);
    expect(report.histograms.connect_time).toBeTruthy();
    expect(report.thresholds.map((t) => [t.expr, t.ok, t.actual])).toEqual([
      ['connect_time.p50>0', true, connectTime.p50],
      ['connect_time.p99<1', false, expect.any(Number)],
    ]);
    expect(formatFanoutSummary(report)).toMatch(/connect time \(handshake → subscribed\)\s+\d/);
    expect(renderFanoutHtml(report)).toMatch(/connect time \(handshake → subscribed\)\s+\d/);
  });
});

describe('load fanout: the report says which seconds its figures come from', () => {
  it('states the ramp as the span its rate is measured over, and the measured phase apart', async () => {
    server = await startBroadcastServer({ tickMs: 50 });
    const report = await runFanout(server.target, {
      clients: 21,
      pair: [PAIR],
      workers: 2,
      durationMs: 1000,
      warmupMs: 500,
      rampRate: 20,
      tickMs: 250,
    });
    expect(report.connected).toBe(21);
    // 21 clients at 20/s: the first opens at 0, the last at 1 s; the rate is over that same span.
    expect(report.rampMs).toBeGreaterThan(800);
    expect(report.rampMs).toBeLessThan(1400);
    expect((report.achievedRampRate * report.rampMs) / 1000).toBeGreaterThan(17);
    expect((report.achievedRampRate * report.rampMs) / 1000).toBeLessThan(23);
    // The measured phase began after the ramp and the warm-up, and lasted the duration. Each end
    // is rounded to the millisecond on its own, so their difference may read 0.999 s in decimals.
    expect(report.measuredPhase.fromS).toBeGreaterThanOrEqual(1.5);
    expect(report.measuredPhase.toS - report.measuredPhase.fromS).toBeGreaterThan(0.998);
    expect(formatFanoutSummary(report)).toMatch(
      /ramp [\d.]+ s at \d+ conn\/s \(first to last connection\); measured [\d.]+ s, from [\d.]+ s to [\d.]+ s after/,
    );
  });

  it('shades the measured phase on the time charts and draws the ramp and close seconds apart', () => {
    const point = (t: number, p99: number) => ({
      t,
      framesPerSecond: 100,
      connections: 10,
      latencyP50Ms: p99 / 2,
      latencyP99Ms: p99,
      steady: t > 2 && t <= 5,
      missingWorkers: [],
    });
    // The ramp's and the close's seconds had a p99 of 95 ms, the measured phase's 40 ms.
    const timeline = [point(1, 95), point(2, 95), point(3, 40), point(4, 40), point(5, 40), point(6, 78)];
    const html = renderFanoutHtml({ ...fanoutReportStub(), timeline, measuredPhase: { fromS: 2, toS: 5 } });
    const latency = html.slice(html.indexOf('Latency over time'), html.indexOf('Frames per second'));
    expect(latency).toMatch(/<rect class="band" [^>]*><title>measured phase<\/title><\/rect>/);
    // Solid p99 only over the measured phase; the 95 and 78 ms seconds are the dashed series.
    const solid = /<path d="([^"]*)" fill="none" stroke="#c0392b" stroke-width="2"><title>p99 ms<\/title>/.exec(
      latency,
    );
    expect(solid![1]!.match(/[ML]/g)).toHaveLength(3);
    expect(latency).toContain('<title>p99 outside</title>');
    expect(html).toContain('the shaded band is the measured phase (2 s to 5 s)');
    expect(html.match(/<rect class="band"/g)).toHaveLength(3);
  });
});

describe("load fanout: the target's clock is estimated, never assumed", () => {
  const DELIVERY_MS = 30;
  /** "Stamps sent_at on a clock `offsetMs` off ours and delivers every frame DELIVERY_MS later." */
  const skewed = (offsetMs: number, extra: Parameters<typeof startBroadcastServer>[0] = {}): Promise<BroadcastServer> =>
    startBroadcastServer({ tickMs: 100, clockOffsetMs: offsetMs, plan: () => ({ delayMs: DELIVERY_MS }), ...extra });
  const run = (s: BroadcastServer, thresholds: string[] = []) =>
    runFanout(s.target, {
      clients: 2,
      pair: [PAIR],
      workers: 1,
      durationMs: 1500,
      warmupMs: 0,
      rampRate: 100,
      tickMs: 250,
      updateWindowMs: 500,
      settleMs: 100,
      thresholds,
    });
  /** The server's own delivery delays, median (its timers fire late on a loaded machine). */
  const truthP50 = (s: BroadcastServer): number =>
    [...s.delivered].sort((a, b) => a - b)[Math.floor(s.delivered.length / 2)]!;

  for (const offsetMs of [5000, -5000]) {
    it(`reads ${DELIVERY_MS} ms from a clock 5 s ${offsetMs > 0 ? 'ahead' : 'behind'}, within the bound`, async () => {
      server = await skewed(offsetMs);
      const report = await run(server, ['latency.p50<1000']);
      const c = report.clock;
      expect(c.status).toBe('corrected');
      // The server's skew is exact against Date.now(); ours maps the monotonic clock to the wall
      // clock, which Date.now() gives to the millisecond: half of one more on the truth's side.
      expect(Math.abs(c.offsetMs! - offsetMs)).toBeLessThanOrEqual(c.boundMs! + 0.5);
      expect(c.latencyBoundMs).toBeLessThan(5);
      const truth = truthP50(server);
      expect(truth).toBeGreaterThanOrEqual(DELIVERY_MS);
      // Receipt follows the server's send by loopback and one event-loop turn.
      expect(report.latencyMs.p50).toBeGreaterThanOrEqual(truth - c.latencyBoundMs!);
      expect(report.latencyMs.p50).toBeLessThanOrEqual(truth + c.latencyBoundMs! + 3);
      expect(report.thresholds[0]).toMatchObject({ ok: true });
      expect(report.observations.join('\n')).toMatch(
        new RegExp(`clock runs ${offsetMs > 0 ? 'ahead of' : 'behind'} ours by`),
      );
    });
  }

  it('with whole-second stamps, reads the 5 s skew and states the wide bound that latency then carries', async () => {
    server = await skewed(5000, { stampUnit: 's' });
    const report = await run(server);
    const c = report.clock;
    expect(c).toMatchObject({ status: 'corrected', tsUnit: 's', sentAtUnit: 's' });
    // A stamp in whole seconds bounds the offset to about a second and latency to that plus a second.
    expect(c.latencyBoundMs).toBeGreaterThan(500);
    expect(c.latencyBoundMs).toBeLessThan(2100);
    expect(Math.abs(report.latencyMs.p50! - truthP50(server))).toBeLessThanOrEqual(c.latencyBoundMs!);
  });

  it('reports latency unknown (not 0 ms) and why when REST replies carry no ts; latency thresholds fail', async () => {
    server = await skewed(5000, { restTs: false });
    const report = await run(server, ['latency.p99<1000']);
    expect(report.framesReceived).toBeGreaterThan(0);
    expect(report.clock).toMatchObject({
      status: 'unknown',
      offsetMs: null,
      reason: expect.stringMatching(/no REST reply carried a numeric `ts`/),
    });
    expect(report.latencyMs).toMatchObject({ count: 0, p50: null, p99: null });
    expect(report.thresholds[0]).toMatchObject({ actual: null, ok: false });
    expect(formatFanoutSummary(report)).toMatch(
      /clock: UNKNOWN — latency not measured: no REST reply carried a numeric `ts`/,
    );
  });

  it('takes frames without sent_at (only in the example) as conforming and says why latency is unknown', async () => {
    server = await skewed(0, { frame: (_code, _tick, normal) => JSON.stringify({ ...normal, sent_at: undefined }) });
    const report = await run(server);
    expect(report.framesReceived).toBeGreaterThan(0);
    expect(report.errors).toBe(0);
    expect(report.clock).toMatchObject({ status: 'unknown', reason: 'push frames carry no sent_at' });
    expect(report.latencyMs.p50).toBeNull();
  });

  it('finds our own clock on loopback within a bound of a few ms and corrects nothing', async () => {
    server = await skewed(0);
    const report = await run(server);
    expect(report.clock).toMatchObject({ status: 'same-clock', offsetMs: 0, samples: 8 });
    // Our scale's tolerance is measured: Date.now()'s tick is read, so it is microseconds, not
    // half of its millisecond. The bound spans 0 without it: nothing was rounded to zero to pass.
    expect(report.clock.toleranceMs).toBeLessThan(0.1);
    expect(report.clock.lowMs!).toBeLessThanOrEqual(0);
    expect(report.clock.highMs!).toBeGreaterThanOrEqual(0);
    expect(report.clock.boundMs).toBeGreaterThanOrEqual(Math.max(-report.clock.lowMs!, report.clock.highMs!));
    expect(report.clock.latencyBoundMs).toBeLessThan(5);
    expect(report.latencyMs.p50).toBeGreaterThanOrEqual(truthP50(server) - report.clock.latencyBoundMs!);
  });
});
