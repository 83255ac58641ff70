import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimateClock, guessTimeUnit, resolutionMs } from '../../load/clock.ts';
import { FanoutAggregator } from '../../load/fanout/aggregate.ts';
import { codeOf, hashBytes, scanPushFrame, scannedFrame } from '../../load/fanout/frame-scan.ts';
import type { Tick } from '../../load/fanout/protocol.ts';
import { createHistogram, encode, FastRecorder, HIGHEST_US, recordMs, summarize } from '../../load/histogram.ts';
import { LoadUsageError, ThresholdError } from '../../src/errors.ts';
import { mappingTolerance, monoNow, wallMapping } from '../../load/mono-clock.ts';
import { parseDuration, parseRate } from '../../load/options.ts';
import { arrivalClock } from '../../load/rest/schedule.ts';
import { lineChart } from '../../load/report/svg.ts';
import { assignKeys, readKeysFile } from '../../load/target.ts';
import { evaluateThresholds, parseThreshold, parseThresholds, toK6Thresholds } from '../../load/thresholds.ts';
import { writeReports, type LoadReport } from '../../load/report/index.ts';

describe('frame scan reads push frames straight from the wire bytes', () => {
  const scan = (text: string): { code: string; lastUpdated: number; sentAt: number } | null => {
    const buf = Buffer.from(text);
    const out = scannedFrame();
    if (!scanPushFrame(buf, out)) return null;
    expect(out.codeHash).toBe(hashBytes(buf, out.codeStart, out.codeEnd));
    return { code: codeOf(buf, out), lastUpdated: out.lastUpdated, sentAt: out.sentAt };
  };

  it('reads the common layout: code first, the two times last, in either order', () => {
    expect(
      scan(
        '{"code":"Crypto:ALL:BTC/USD","ask":"1.5","bid":"1.4","price":"1.45",' +
          '"last_updated":1732300000000,"sent_at":1732300000002}',
      ),
    ).toEqual({ code: 'Crypto:ALL:BTC/USD', lastUpdated: 1732300000000, sentAt: 1732300000002 });
    expect(scan('{"code":"A:B:C/D","price":"1","sent_at":9, "last_updated" : 8 }\n')).toEqual({
      code: 'A:B:C/D',
      lastUpdated: 8,
      sentAt: 9,
    });
  });

  it('reads any other key order and whitespace', () => {
    expect(scan('{ "sent_at" : 7 ,\n "price":"1", "last_updated":\t5, "code" : "Forex:ALL:EUR/USD" }')).toEqual({
      code: 'Forex:ALL:EUR/USD',
      lastUpdated: 5,
      sentAt: 7,
    });
    expect(scan('{"code":"A:B:C/D","last_updated":1,"sent_at":2,"extra":"x"}')).toEqual({
      code: 'A:B:C/D',
      lastUpdated: 1,
      sentAt: 2,
    });
  });

  it('is not fooled by a key name inside a string value', () => {
    expect(scan('{"note":"\\"code\\":\\"X\\"","code":"A:B:C/D","last_updated":1,"sent_at":2}')).toEqual({
      code: 'A:B:C/D',
      lastUpdated: 1,
      sentAt: 2,
    });
  });

  it('declines frames JSON.parse must judge: escapes, fractions, strings for numbers, missing fields', () => {
    expect(scan('{"code":"A:B:C\\/D","last_updated":1,"sent_at":2}')).toBeNull();
    expect(scan('{"code":"A:B:C/D","last_updated":1.5,"sent_at":2}')).toBeNull();
    expect(scan('{"code":"A:B:C/D","last_updated":1,"sent_at":-2}')).toBeNull();
    expect(scan('{"code":"A:B:C/D","last_updated":"1","sent_at":2}')).toBeNull();
    expect(scan('{"code":"A:B:C/D","sent_at":2}')).toBeNull();
    expect(scan('{"method":"subscribe","message":"Success","code":"200"}')).toBeNull();
  });

  it('reads a frame in place inside a larger chunk and never past its range', () => {
    const frames = [
      '{"code":"A:B:C/D","price":"1","last_updated":17,"sent_at":18}',
      '{"sent_at":5,"code":"X:Y:Z/W","last_updated":4}',
    ];
    // Neighbours that would complete a cut-off frame if the scan read past its end, or before its start.
    const before = Buffer.from('{"code":"Q:Q:Q/Q","last_updated":99,"sent_at":');
    const after = Buffer.from('1,"sent_at":3}');
    for (const text of frames) {
      const chunk = Buffer.concat([before, Buffer.from(text), after]);
      const out = scannedFrame();
      expect(scanPushFrame(chunk, out, before.length, before.length + text.length)).toBe(true);
      expect([codeOf(chunk, out), out.lastUpdated, out.sentAt]).toEqual(
        text.startsWith('{"code"') ? ['A:B:C/D', 17, 18] : ['X:Y:Z/W', 4, 5],
      );
      const cut = text.slice(0, text.lastIndexOf(':') + 1);
      expect(scanPushFrame(chunk, out, before.length, before.length + cut.length)).toBe(false);
    }
  });
});

describe('FastRecorder fronts an HDR histogram on the per-frame path', () => {
  it('drains into exactly the histogram direct recording builds: every bucket, the percentiles, the max', () => {
    // Bucket edges, zero, negatives, values past the top, and a spread over every power of two.
    const edges = [
      0,
      -3,
      0.0004,
      0.0005,
      1.023,
      1.024,
      2.047,
      2.048,
      2.049,
      4.095,
      4.096,
      65.535,
      65.536,
      1234.567,
      HIGHEST_US / 1000,
      HIGHEST_US / 1000 + 5,
      1e9,
    ];
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const spread = Array.from({ length: 20_000 }, () => 2 ** (random() * 26) / 1000);
    for (const values of [edges, spread, [5, 5, 5], [70_000.123]]) {
      const direct = createHistogram();
      const drained = createHistogram();
      const front = new FastRecorder();
      for (const ms of values) {
        recordMs(direct, ms);
        front.recordMs(ms);
      }
      front.drainInto(drained);
      expect(encode(drained)).toBe(encode(direct));
      expect(summarize(drained)).toEqual(summarize(direct));
      expect(drained.maxValue).toBe(direct.maxValue);
    }
  });

  it('starts empty after a drain, and draining it again adds nothing', () => {
    const front = new FastRecorder();
    const h = createHistogram();
    front.recordMs(12.5);
    front.drainInto(h);
    front.drainInto(h);
    expect(h.totalCount).toBe(1);
    front.recordMs(3);
    const next = createHistogram();
    front.drainInto(next);
    expect(summarize(next)).toMatchObject({ count: 1, max: 3 });
  });
});

describe('clock', () => {
  it('guesses the unit of an epoch timestamp from its magnitude', () => {
    const now = 1_763_800_000_000;
    expect(guessTimeUnit(now, now)).toBe('ms');
    expect(guessTimeUnit(now / 1000, now)).toBe('s');
    expect(guessTimeUnit(now * 1000, now)).toBe('us');
    expect(guessTimeUnit(now * 1e6, now)).toBe('ns');
    expect(guessTimeUnit(12345, now)).toBeNull();
  });

  it('bounds the offset from REST round trips (NTP-style, intersected); corrects only when they exclude zero', () => {
    // Server clock 100 ms ahead; round trips of 10 ms and 4 ms; ms stamps.
    const ahead = estimateClock(
      [
        { sentMs: 0, receivedMs: 10, serverMs: 105 },
        { sentMs: 20, receivedMs: 24, serverMs: 122 },
      ],
      1,
    );
    expect(ahead).toMatchObject({
      status: 'corrected',
      lowMs: 98,
      highMs: 103,
      offsetMs: 100.5,
      boundMs: 2.5,
      samples: 2,
      reason: null,
    });
    // One clock: the bounds hold zero, so nothing is moved.
    const same = estimateClock([{ sentMs: 0, receivedMs: 2, serverMs: 1 }], 1);
    expect(same).toMatchObject({ status: 'same-clock', offsetMs: 0, lowMs: -1, highMs: 2, boundMs: 2 });
  });

  it("does not correct an offset that misses zero by less than our own time scale's tolerance", () => {
    // Bounds [0.3, 0.8] ms: a target on our clock, seen through a scale mapped to it within 0.6 ms.
    const samples = [
      { sentMs: 99.5, receivedMs: 99.7, serverMs: 100 },
      { sentMs: 200.2, receivedMs: 200.5, serverMs: 200 },
    ];
    expect(estimateClock(samples, 1, Number.NEGATIVE_INFINITY, 0.6)).toMatchObject({
      status: 'same-clock',
      offsetMs: 0,
      lowMs: 0.3,
      highMs: 0.8,
      boundMs: 0.8,
      toleranceMs: 0.6,
    });
    // A tolerance narrower than the miss leaves it a correction, as does none at all.
    expect(estimateClock(samples, 1, Number.NEGATIVE_INFINITY, 0.2)).toMatchObject({
      status: 'corrected',
      offsetMs: 0.55,
    });
    expect(estimateClock(samples, 1).status).toBe('corrected');
  });

  it('maps the monotonic clock to the wall clock to within microseconds, not to half of its millisecond', () => {
    const m = wallMapping();
    expect(m.uncertaintyMs).toBeLessThan(0.05);
    // Every reading of the wall clock is the millisecond the mapping puts it in, within its uncertainty.
    let wrong = 0;
    for (let i = 0; i < 50_000; i++) {
      const a = monoNow();
      const wall = Date.now();
      const b = monoNow();
      if (wall < Math.floor(a + m.offsetMs - m.uncertaintyMs) || wall > Math.floor(b + m.offsetMs + m.uncertaintyMs))
        wrong++;
    }
    expect(wrong).toBe(0);
    // Node's own high-resolution reading of the wall clock at the thread's start agrees with it.
    expect(Math.abs(performance.timeOrigin - monoNow() + performance.now() - m.offsetMs)).toBeLessThan(0.1);
  });

  it("takes our time scale's tolerance from its readings: the first's uncertainty, plus drift beyond both", () => {
    const start = { offsetMs: 1000, uncertaintyMs: 0.5 };
    // 0.7 ms apart is within what two readings known to 0.5 ms each can differ by: no drift.
    expect(mappingTolerance(start, { offsetMs: 1000.7, uncertaintyMs: 0.5 })).toBe(0.5);
    // 3 ms apart: 2 ms of it is drift, which the tolerance carries.
    expect(mappingTolerance(start, { offsetMs: 997, uncertaintyMs: 0.5 })).toBe(2.5);
  });

  it('raises the lower bound with frames (none arrives before it was sent); corrects when it excludes zero', () => {
    const t = estimateClock([{ sentMs: 0, receivedMs: 20, serverMs: 10 }], 1, 6);
    expect(t).toMatchObject({ status: 'corrected', lowMs: 6, highMs: 11, offsetMs: 8.5, narrowedByFrames: true });
    expect(estimateClock([{ sentMs: 0, receivedMs: 20, serverMs: 10 }], 1, -50).narrowedByFrames).toBe(false);
  });

  it('says latency is unknown, and why, when no estimate holds', () => {
    expect(estimateClock([], 1)).toMatchObject({
      status: 'unknown',
      offsetMs: null,
      reason: expect.stringMatching(/no REST reply carried a numeric `ts`/),
    });
    expect(
      estimateClock(
        [
          { sentMs: 0, receivedMs: 1, serverMs: 0 },
          { sentMs: 10, receivedMs: 11, serverMs: 500 },
        ],
        1,
      ).reason,
    ).toMatch(/REST round trips disagree/);
    // A frame 50 ms "early" against a REST bound of [−1, 2]: sent_at and ts cannot both be right.
    expect(estimateClock([{ sentMs: 0, receivedMs: 2, serverMs: 1 }], 1, 50)).toMatchObject({
      status: 'unknown',
      reason: expect.stringMatching(/frames arrived up to 48 ms before their sent_at/),
    });
  });

  it('is a module the k6 scripts can bundle: no imports, no Node API', async () => {
    const source = await readFile(new URL('../../load/clock.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/^import /m);
    expect(source).not.toMatch(/\b(process|performance|require|Buffer)\b[.(]/);
  });

  it('widens the bound by the stamp resolution (a ts in whole seconds covers a second)', () => {
    const s = estimateClock([{ sentMs: 0, receivedMs: 1, serverMs: 5000 }], resolutionMs('s'));
    expect(s).toMatchObject({ lowMs: 4999, highMs: 6000 });
  });
});

describe('intended send times', () => {
  it('spaces uniform arrivals exactly 1000 / rate apart', () => {
    const next = arrivalClock(400, 'uniform');
    expect([next(), next(), next(), next()]).toEqual([0, 2.5, 5, 7.5]);
  });

  it('draws Poisson gaps of the asked mean, exponentially spread, the same for the same seed', () => {
    const draw = (seed: number): number[] => {
      const next = arrivalClock(100, 'poisson', seed);
      return Array.from({ length: 20_001 }, () => next());
    };
    const times = draw(3);
    expect(draw(3)).toEqual(times);
    expect(draw(4)).not.toEqual(times);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    const sd = Math.sqrt(gaps.reduce((a, b) => a + (b - mean) ** 2, 0) / gaps.length);
    expect(mean).toBeCloseTo(10, 0);
    expect(sd / mean).toBeGreaterThan(0.97);
    expect(sd / mean).toBeLessThan(1.03);
    // Exponential: e^-1 of the gaps are longer than the mean.
    expect(gaps.filter((g) => g > 10).length / gaps.length).toBeCloseTo(Math.exp(-1), 1);
  });
});

describe('thresholds', () => {
  it('parses k6-style expressions', () => {
    expect(parseThreshold('latency.p99<50', 'fanout')).toEqual({
      expr: 'latency.p99<50',
      metric: 'latency.p99',
      op: '<',
      value: 50,
    });
    expect(parseThresholds(['lost==0,errors==0', ' skew.p99 <= 20 '], 'fanout').map((t) => t.metric)).toEqual([
      'lost',
      'errors',
      'skew.p99',
    ]);
  });

  it('rejects an unknown metric by name instead of ignoring it', () => {
    expect(() => parseThreshold('latency.p98<50', 'fanout')).toThrow(ThresholdError);
    expect(() => parseThreshold('latency.p98<50', 'fanout')).toThrow(/unknown metric "latency.p98"/);
    expect(() => parseThreshold('skew.p99<1', 'rest')).toThrow(/unknown metric/);
    expect(() => parseThreshold('latency.p99 < fast', 'fanout')).toThrow(/expected METRIC OP NUMBER/);
  });

  it('crosses a threshold whose metric the run did not produce', () => {
    const [held, crossed, missing] = evaluateThresholds(
      parseThresholds(['lost==0', 'latency.p99<0', 'skew.p99<20'], 'fanout'),
      { lost: 0, 'latency.p99': 3.2, 'skew.p99': null },
    );
    expect(held!.ok).toBe(true);
    expect(crossed).toMatchObject({ ok: false, actual: 3.2 });
    expect(missing).toMatchObject({ ok: false, actual: null });
  });

  it('translates to k6 threshold syntax under the same metric names, as the metrics table maps them', () => {
    const fanout = ['latency.p99<50', 'latency.p999<80', 'errors==0', 'frames_per_second>10', 'connect_time.p99<500'];
    expect(toK6Thresholds(parseThresholds(fanout, 'fanout'), 'fanout')).toEqual({
      latency: ['p(99)<50', 'p(99.9)<80'],
      errors: ['count==0'],
      frames: ['rate>10'],
      connect_time: ['p(99)<500'],
    });
    expect(toK6Thresholds(parseThresholds(['rps>100', 'dropped==0'], 'rest'), 'rest')).toEqual({
      http_reqs: ['rate>100'],
      dropped_iterations: ['count==0'],
    });
    expect(() => toK6Thresholds(parseThresholds(['skew.max<100'], 'fanout'), 'fanout')).toThrow(
      /k6 does not measure skew.max/,
    );
  });
});

describe('options and keys', () => {
  it('parses durations and rates, and names the option in errors', () => {
    expect(parseDuration('20s', '--duration')).toBe(20_000);
    expect(parseDuration('500ms', '--duration')).toBe(500);
    expect(parseDuration('2m', '--duration')).toBe(120_000);
    expect(parseRate('3000/s', '--ramp-rate')).toBe(3000);
    expect(() => parseDuration('soon', '--duration')).toThrow(/--duration "soon"/);
    expect(() => parseRate('-5', '--ramp-rate')).toThrow(LoadUsageError);
  });

  it('spreads clients over keys up to each allowance, and refuses when they cannot hold them all', () => {
    expect(
      assignKeys(5, [
        { key: 'a', connections: 2 },
        { key: 'b', connections: 3 },
      ]),
    ).toEqual(['a', 'a', 'b', 'b', 'b']);
    expect(assignKeys(3, [{ key: 'a', connections: 1 }, { key: 'u' }])).toEqual(['a', 'u', 'u']);
    expect(() => assignKeys(10, [{ key: 'a', connections: 3 }])).toThrow(/allow only 3 connections/);
  });

  it('reads --keys-from as JSON or as KEY,CONNECTIONS lines', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'conform-keys-'));
    await writeFile(join(dir, 'k.json'), JSON.stringify([{ key: 'k1', connections: 5 }, 'k2']));
    await writeFile(join(dir, 'k.txt'), '# keys\nk1,5\nk2\n');
    await writeFile(join(dir, 'bad.txt'), 'k1,zero\n');
    expect(await readKeysFile(join(dir, 'k.json'))).toEqual([{ key: 'k1', connections: 5 }, { key: 'k2' }]);
    expect(await readKeysFile(join(dir, 'k.txt'))).toEqual([{ key: 'k1', connections: 5 }, { key: 'k2' }]);
    await expect(readKeysFile(join(dir, 'bad.txt'))).rejects.toThrow(/line 1 must be KEY or KEY,CONNECTIONS/);
    await expect(readKeysFile(join(dir, 'none.txt'))).rejects.toThrow(/cannot read/);
  });
});

describe('aggregation of worker ticks', () => {
  const empty = encode(createHistogram());
  const tick = (workerIndex: number, atMs: number, updates: Tick['updates'], extra: Partial<Tick> = {}): Tick => ({
    type: 'tick',
    workerIndex,
    atMs,
    steady: true,
    frames: updates.length,
    duplicates: 0,
    outOfOrder: 0,
    notices: 0,
    pongs: 0,
    counts: {},
    latency: empty,
    latencyBelowZero: null,
    framesWithoutSentAt: 0,
    serverLatency: empty,
    openedAt: [],
    clientTimes: {},
    subscribed: [],
    closed: [],
    subscribeFailed: 0,
    refusals: {},
    connectErrors: {},
    noticeErrors: {},
    updates,
    validated: 0,
    violations: 0,
    violationSamples: [],
    open: 2,
    eventLoopDelayP99Ms: 1,
    steadyEventLoopDelayP99Ms: 1,
    utilization: 0.1,
    maxSentMinusReceivedMs: -1,
    windowFrames: 0,
    sentAtUnit: 'ms',
    heapUsedBytes: 1,
    ...extra,
  });

  it("shows a second without a worker's sample as unknown, and its late sample over the time it covers", () => {
    const agg = new FanoutAggregator({ clients: 10, updateWindowMs: 100, settleMs: 0, tickMs: 1000 });
    agg.start(0);
    agg.markSteady(0);
    const at = (w: number, atMs: number, frames: number) =>
      agg.addTick(tick(w, atMs, [], { frames, open: 5, latency: empty }));
    // Worker 1's tick for the third second fires 5 ms late, in the fourth, beside its own.
    for (const [w, atMs] of [
      [0, 1000],
      [1, 1000],
      [0, 2000],
      [1, 2000],
      [0, 3000],
      [1, 3005],
      [0, 4000],
      [1, 3995],
      [0, 5000],
      [1, 5000],
    ] as const)
      at(w, atMs, 100);
    agg.markStop(5000);
    const points = agg.finish(0).timeline.map((p) => [p.t, p.framesPerSecond, p.connections, p.missingWorkers]);
    expect(points).toEqual([
      [1, 200, 10, []],
      [2, 200, 10, []],
      [3, null, null, [1]],
      [4, 200, 10, []],
      [5, 200, 10, []],
    ]);
  });

  it('leaves a gap in a line chart where a point is unknown, instead of drawing it at zero', () => {
    const svg = lineChart('frames', [{ name: 'f', color: '#000', points: [1, null, 3].map((y, x) => ({ x, y })) }], {
      xLabel: 's',
      yLabel: 'frames/s',
    });
    const d = /<path d="([^"]+)"/.exec(svg)![1]!;
    expect(d.match(/M/g)).toHaveLength(2);
    expect(d).not.toContain('L');
  });

  it('takes skew across workers and counts a delivery missing from an eligible client as lost', () => {
    const agg = new FanoutAggregator({ clients: 4, updateWindowMs: 100, settleMs: 10, tickMs: 50 });
    agg.start(0);
    agg.addTick(
      tick(0, 50, [], {
        steady: false,
        subscribed: [
          [0, 10],
          [2, 12],
        ],
      }),
    );
    agg.addTick(
      tick(1, 50, [], {
        steady: false,
        subscribed: [
          [1, 11],
          [3, 13],
        ],
      }),
    );
    agg.markSteady(60);
    // Update U1 reached both clients of worker 0 (1000, 1004) and both of worker 1 (1002, 1030).
    agg.addTick(tick(0, 1100, [['P', 1, 1000, 1004, 2]]));
    agg.addTick(tick(1, 1100, [['P', 1, 1002, 1030, 2]]));
    // Update U2 reached three clients only.
    agg.addTick(tick(0, 1200, [['P', 2, 1100, 1101, 2]]));
    agg.addTick(tick(1, 1200, [['P', 2, 1105, 1105, 1]]));
    agg.markStop(5000);
    const m = agg.finish();
    expect(m.updates).toBe(2);
    expect(m.skewMs.max).toBeCloseTo(30, 1);
    expect(m.skewMs.p50).toBeCloseTo(5, 1);
    expect(m.lost).toBe(1);
    expect(m.lostUpdates).toBe(1);
    expect(m.lossRate).toBeCloseTo(1 / 8, 6);
  });

  it('does not expect an update from a client that had closed or had not yet subscribed', () => {
    const agg = new FanoutAggregator({ clients: 3, updateWindowMs: 100, settleMs: 10, tickMs: 50 });
    agg.start(0);
    agg.addTick(
      tick(0, 50, [], {
        steady: false,
        subscribed: [
          [0, 10],
          [1, 11],
        ],
      }),
    );
    agg.markSteady(60);
    agg.addTick(tick(0, 900, [], { closed: [[1, 900, 1006]] }));
    // Client 2 subscribes after the update was first received: not eligible for it.
    agg.addTick(tick(0, 1100, [['P', 1, 1000, 1000, 1]], { subscribed: [[2, 1050]] }));
    agg.markStop(5000);
    const m = agg.finish();
    expect(m.updates).toBe(1);
    expect(m.lost).toBe(0);
    expect(m.disconnects).toEqual({ 1006: 1 });
  });

  it('moves latency to the final clock correction, receipts before sent_at too; none when no estimate holds', () => {
    const rec = (values: number[]): string => {
      const f = new FastRecorder();
      for (const v of values) f.recordMs(v);
      return f.takeEncoded();
    };
    const agg = () => {
      const a = new FanoutAggregator({ clients: 1, updateWindowMs: 100, settleMs: 0, tickMs: 50 });
      a.start(0);
      a.markSteady(0);
      // Recorded with a pre-run correction 10 ms short: 20 ms and 25 ms read 10 and 15, and a
      // frame of true latency 4 ms read −6 ms (kept as a magnitude, not clamped).
      a.addTick(tick(0, 50, [], { latency: rec([10, 15]), latencyBelowZero: rec([6]), maxSentMinusReceivedMs: 6 }));
      return a;
    };
    const a = agg();
    expect(a.maxSentMinusReceivedMs).toBe(6);
    const m = a.finish(10);
    expect(m.receiptsBeforeSentAt).toBe(1);
    expect(m.latencyBelowZeroAfterCorrection).toBe(0);
    expect(m.latencyMs.count).toBe(3);
    // Moved buckets keep 3 significant digits.
    expect(m.latencyMs.max).toBeCloseTo(25, 1);
    expect(m.latencyMs.p50).toBeCloseTo(20, 1);
    expect(m.latencyCurve[0]!.ms).toBeCloseTo(4, 1);
    expect(m.timeline[0]!.latencyP50Ms).toBeCloseTo(20, 1);
    const unknown = agg().finish(null);
    expect(unknown.latencyMs).toMatchObject({ count: 0, p50: null, p99: null, max: null });
    expect(unknown.latencyCurve).toEqual([]);
  });
});

describe('load report scrubbing', () => {
  it('masks a long key wherever it appears and a short one only where it stands alone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'conform-load-scrub-'));
    const report = {
      kind: 'rest',
      note: 'key=sk_live_0123456789abcdef; xx-sk_live_0123456789abcdefyy; k9 in nuk9x k9',
    };
    const [file] = await writeReports(report as unknown as LoadReport, ['json'], {
      outDir: dir,
      out: () => {},
      secrets: ['sk_live_0123456789abcdef', 'k9'],
      github: {},
    });
    const text = await readFile(file!, 'utf8');
    expect(JSON.parse(text).note).toBe('key=[redacted]; xx-[redacted]yy; [redacted] in nuk9x [redacted]');
    await rm(dir, { recursive: true, force: true });
  });
});
