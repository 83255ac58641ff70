/**
 * The pure parts of the k6 scripts under Node: what they would read from k6's globals (`__ENV`,
 * `k6/metrics`, the execution segment, the end-of-test summary data) is passed in as plain values.
 */
import { describe, expect, it } from 'vitest';
import { K6ConfigError } from '../../src/errors.ts';
import {
  checkAllowance,
  fanoutConfig,
  reportConfig,
  restConfig,
  runtimeKeys,
  thresholdExprs,
  thresholdsFromEnv,
} from '../../load/k6/lib/config.ts';
import { k6Metrics } from '../../load/k6/lib/metrics.ts';
import { pushFrameProblems } from '../../load/k6/lib/push-frame.ts';
import { k6Result, segmentOf, summaryOutputs, type SummaryData } from '../../load/k6/lib/summary.ts';
import { BUCKET_COUNT, bucketIndex, bucketMetric } from '../../load/log-buckets.ts';
import { mergeResults, parseResultText } from '../../load/merge.ts';
import { CLOSE_GRACE_MS, fanoutSchedule, SETTLE_MS } from '../../load/schedule.ts';

describe('k6 config from the environment it is given', () => {
  const base = { TARGET_WS: 'ws://127.0.0.1:1/v1/ws', PAIRS: 'Crypto:ALL:BTC/USD, Crypto:ALL:ETH/USD' };

  it('reads the fan-out settings with their defaults', () => {
    expect(fanoutConfig(base)).toMatchObject({
      wsUrl: base.TARGET_WS,
      restUrl: '',
      pairs: ['Crypto:ALL:BTC/USD', 'Crypto:ALL:ETH/USD'],
      clients: 100,
      connectionsPerVU: 10,
      rampRate: 100,
      warmupMs: 1000,
      durationS: 30,
      startAtMs: null,
    });
    const c = fanoutConfig({ ...base, TARGET_REST: 'http://127.0.0.1:1///', CLIENTS: '12', WARMUP: '0.5' });
    expect(c).toMatchObject({ restUrl: 'http://127.0.0.1:1', clients: 12, warmupMs: 500 });
  });

  it('reads START_AT as epoch ms or an ISO date and rejects anything else', () => {
    expect(fanoutConfig({ ...base, START_AT: '1700000000000' }).startAtMs).toBe(1_700_000_000_000);
    expect(fanoutConfig({ ...base, START_AT: '2026-12-01T22:00:00Z' }).startAtMs).toBe(
      Date.parse('2026-12-01T22:00:00Z'),
    );
    expect(() => fanoutConfig({ ...base, START_AT: 'soon' })).toThrow(/START_AT must be epoch milliseconds/);
  });

  it('names a missing or bad variable in a K6ConfigError', () => {
    expect(() => fanoutConfig({ PAIRS: 'x' })).toThrow(K6ConfigError);
    expect(() => fanoutConfig({ PAIRS: 'x' })).toThrow(/TARGET_WS is required/);
    expect(() => fanoutConfig({ ...base, CLIENTS: '1.5' })).toThrow(/CLIENTS must be a whole number/);
    expect(() => fanoutConfig({ ...base, RAMP_RATE: '-1' })).toThrow(/RAMP_RATE must be a positive number/);
    expect(() => restConfig({})).toThrow(/TARGET_REST is required/);
    expect(restConfig({ TARGET_REST: 'http://h/' })).toMatchObject({
      restUrl: 'http://h',
      rate: 200,
      endpoint: 'price',
    });
  });

  it("turns THRESHOLDS into k6's form plus a checks threshold, refusing what only conform measures", () => {
    const e = { THRESHOLDS: 'latency.p99<50,errors==0,frames_per_second>10' };
    expect(thresholdExprs(e, 'fanout')).toEqual(['latency.p99<50', 'errors==0', 'frames_per_second>10']);
    expect(thresholdsFromEnv(e, 'fanout')).toEqual({
      latency: ['p(99)<50'],
      errors: ['count==0'],
      frames: ['rate>10'],
      checks: ['rate==1'],
    });
    expect(() => thresholdExprs({ THRESHOLDS: 'skew.p99<20' }, 'fanout')).toThrow(/run it with conform load fanout/);
    expect(() => thresholdExprs({ THRESHOLDS: 'timeouts==0' }, 'rest')).toThrow(/exists only in conform load rest/);
    expect(thresholdExprs({}, 'rest')).toEqual([]);
  });

  it('reads keys at run time from API_KEYS lines or API_KEY, and checks their allowance', () => {
    expect(runtimeKeys({ API_KEYS: 'a,3\n# comment\nb', API_KEY: 'ignored' })).toEqual([
      { key: 'a', connections: 3 },
      { key: 'b' },
    ]);
    expect(runtimeKeys({ API_KEY: 'k' })).toEqual([{ key: 'k' }]);
    expect(() => runtimeKeys({ API_KEYS: 'a,zero' })).toThrow(/API_KEYS line 1/);
    expect(() => runtimeKeys({})).toThrow(/give the key at run time/);
    expect(() => checkAllowance([{ key: 'a', connections: 3 }], 4)).toThrow(/CLIENTS=4 but the keys allow only 3/);
    expect(() => checkAllowance([{ key: 'a', connections: 3 }, { key: 'b' }], 4)).not.toThrow();
  });

  it('reports to files by default, to stdout as one result line with RESULT=stdout', () => {
    expect(reportConfig({}, 'fanout')).toEqual({ resultOnStdout: false, dir: '.', name: 'load-fanout-k6', host: '' });
    expect(reportConfig({ RESULT: 'stdout', REPORT_DIR: 'out/', HOST: 'pod-1' }, 'rest')).toEqual({
      resultOnStdout: true,
      dir: 'out',
      name: 'load-rest-k6',
      host: 'pod-1',
    });
  });
});

/** Classes of k6/metrics' shape that keep every sample they are given, by metric name. */
function recordingMetrics() {
  const samples = new Map<string, number[]>();
  const kinds = new Map<string, string>();
  const make = (kind: string) =>
    class {
      constructor(readonly name: string) {
        kinds.set(name, kind);
        samples.set(name, []);
      }
      add(v: number): void {
        samples.get(this.name)!.push(v);
      }
    };
  return { classes: { Counter: make('counter'), Trend: make('trend') }, samples, kinds };
}

describe('k6 metrics over the metric classes they are given', () => {
  it('a distribution samples its Trend at once and its bucket counters only when flushed', () => {
    const { classes, samples, kinds } = recordingMetrics();
    const m = k6Metrics(classes);
    const d = m.distribution('latency');
    expect(kinds.get('latency')).toBe('trend');
    expect([...kinds.keys()].filter((k) => k.startsWith('latency_b'))).toHaveLength(BUCKET_COUNT);
    d.add(12.5);
    d.add(12.5);
    d.add(0.01);
    expect(samples.get('latency')).toEqual([12.5, 12.5, 0.01]);
    const b = bucketMetric('latency', bucketIndex(12_500));
    expect(samples.get(b)).toEqual([]);
    m.flushMetrics();
    expect(samples.get(b)).toEqual([2]);
    expect(samples.get(bucketMetric('latency', bucketIndex(10)))).toEqual([1]);
    m.flushMetrics();
    expect(samples.get(b)).toEqual([2]);
  });

  it('a tally adds its pending count per flush, zero included; a peak adds only the largest seen', () => {
    const { classes, samples } = recordingMetrics();
    const m = k6Metrics(classes);
    const frames = m.tally('frames');
    const lead = m.peak('lead');
    frames.add(3);
    frames.add(4);
    lead.add(-2);
    lead.add(5);
    lead.add(1);
    m.flushMetrics();
    m.flushMetrics();
    expect(samples.get('frames')).toEqual([7, 0]);
    expect(samples.get('lead')).toEqual([5]);
  });

  it('counters by code send an unknown code to the other counter', () => {
    const { classes, samples } = recordingMetrics();
    const by = k6Metrics(classes).countersByCode('refused', ['50009']);
    by.add('50009');
    by.add('99999');
    expect(samples.get('refused_50009')).toEqual([1]);
    expect(samples.get('refused_other')).toEqual([1]);
  });

  it('two scripts keep their flushes apart', () => {
    const a = recordingMetrics();
    const b = recordingMetrics();
    const ta = k6Metrics(a.classes).tally('n');
    const mb = k6Metrics(b.classes);
    mb.tally('n');
    ta.add(1);
    mb.flushMetrics();
    expect(a.samples.get('n')).toEqual([]);
    expect(b.samples.get('n')).toEqual([0]);
  });
});

describe('push-frame rules without ajv', () => {
  it('accepts a well-formed frame and names each problem of a bad one', () => {
    const ok = { code: 'Crypto:ALL:BTC/USD', ask: '1.5', bid: '1.4', price: '1.45', sent_at: 1, last_updated: 2 };
    expect(pushFrameProblems(ok)).toEqual([]);
    expect(pushFrameProblems({ ...ok, code: 1, ask: 1.5, sent_at: 1.5 })).toEqual([
      'code must be a string',
      'ask must be a decimal string',
      'sent_at must be an integer',
    ]);
    expect(pushFrameProblems({ ...ok, bid: '+1.4' })).toEqual(['bid must be a decimal string']);
    // Exponent notation is a decimal string: a decimal type reads it exactly.
    expect(pushFrameProblems({ ...ok, bid: '1.4E+0' })).toEqual([]);
  });
});

describe('the shared fan-out schedule', () => {
  it('opens client g at g/rate, the window after the ramp, settling and warm-up, and closes after a grace', () => {
    const s = fanoutSchedule({ clients: 11, rampRate: 5, warmupMs: 500, durationS: 2, startAtMs: null });
    expect(s.openAtMs(0)).toBe(0);
    expect(s.openAtMs(10)).toBe(2000);
    expect(s.windowStartMs).toBe(2000 + SETTLE_MS + 500);
    expect(s.windowEndMs).toBe(s.windowStartMs + 2000);
    expect(s.closeAtMs).toBe(s.windowEndMs + CLOSE_GRACE_MS);
    expect(s.maxDurationMs).toBe(s.closeAtMs + 30_000);
  });

  it('adds a future START_AT wait to the bound on the scenario, never a past one', () => {
    const o = { clients: 1, rampRate: 1, warmupMs: 0, durationS: 1 };
    const past = fanoutSchedule({ ...o, startAtMs: 0 });
    const future = fanoutSchedule({ ...o, startAtMs: Date.now() + 60_000 });
    expect(past.maxDurationMs).toBe(past.closeAtMs + 30_000);
    expect(future.maxDurationMs).toBeGreaterThan(past.maxDurationMs + 55_000);
  });
});

/** k6's end-of-test data for a small fan-out run: 2 clients, 40 frames at 10 ms and 30 ms. */
function fanoutSummaryData(): SummaryData {
  const counter = (count: number) => ({ type: 'counter', values: { count } });
  const metrics: SummaryData['metrics'] = {
    clients: counter(2),
    connected: counter(2),
    subscribed: counter(2),
    closed: counter(2),
    frames: counter(40),
    errors: counter(0),
    refused: counter(1),
    refused_50009: counter(1),
    refused_http_4xx: counter(1),
    disconnects: counter(0),
    checks: { type: 'rate', values: { passes: 6, fails: 0 }, thresholds: { 'rate==1': { ok: true } } },
    latency: { type: 'trend', values: { count: 40, med: 10, 'p(90)': 30, 'p(99)': 30, 'p(99.9)': 30, max: 30 } },
    vu_lag: { type: 'trend', values: { 'p(99)': 3 } },
    [bucketMetric('latency', bucketIndex(10_000))]: counter(30),
    [bucketMetric('latency', bucketIndex(30_000))]: counter(10),
    connect_time: { type: 'trend', values: { count: 2, med: 40, 'p(90)': 80, 'p(99)': 80, 'p(99.9)': 80, max: 80 } },
    [bucketMetric('connect_time', bucketIndex(40_000))]: counter(1),
    [bucketMetric('connect_time', bucketIndex(80_000))]: counter(1),
  };
  return { metrics, state: { testRunDurationMs: 5000 } };
}

describe("k6's summary as conform's load result", () => {
  const ctx = {
    kind: 'fanout' as const,
    report: { dir: 'out', name: 'r', host: '', resultOnStdout: true },
    thresholds: ['latency.p99<50', 'refused==0', 'connect_time.p99<50'],
    options: { window: { startMs: 1000, endMs: 3000 } },
    segment: '0:1/2',
  };

  it('reads the segment from the test options it is given', () => {
    expect(segmentOf({ executionSegment: '1/2:1' })).toBe('1/2:1');
    expect(segmentOf({})).toBe('0:1');
    expect(segmentOf(undefined)).toBe('0:1');
  });

  it('maps counters, bucket counts and thresholds into the result conform load merge reads', () => {
    const r = k6Result(fanoutSummaryData(), ctx);
    expect(r).toMatchObject({
      kind: 'fanout',
      generator: 'k6',
      host: 'k6 segment 0:1/2',
      segment: '0:1/2',
      clients: 2,
      connected: 2,
      framesReceived: 40,
      framesPerSecond: 20,
      measuredMs: 2000,
      refusals: { 50009: 1 },
      refusalsHttp: { '4xx': 1 },
      trustworthy: true,
      checks: { passes: 6, fails: 0 },
    });
    expect(r.latencyMs).toMatchObject({ count: 40, p50: 10, p99: 30 });
    expect(r.connectTimeMs).toMatchObject({ count: 2, p50: 40, p99: 80 });
    expect(r.skewMs).toBeUndefined();
    expect((r.thresholds as { expr: string; ok: boolean }[]).map((t) => [t.expr, t.ok])).toEqual([
      ['latency.p99<50', true],
      ['refused==0', false],
      ['connect_time.p99<50', false],
    ]);
    const merged = mergeResults([{ file: 'k6', data: r }]);
    expect(merged.distributions.latency!.count).toBe(40);
    expect(merged.distributions.connect_time!.count).toBe(2);
    expect(merged.totals.frames).toBe(40);
  });

  it('marks the run untrustworthy when bucket counts never left a VU', () => {
    const data = fanoutSummaryData();
    data.metrics[bucketMetric('latency', bucketIndex(30_000))] = { type: 'counter', values: { count: 5 } };
    const r = k6Result(data, ctx);
    expect(r.trustworthy).toBe(false);
    expect((r.reasons as string[]).join()).toMatch(/5 latency samples never reached the bucket counts/);
  });

  it('prints the result as one conform-result line when asked, and writes JSON, HTML and JUnit', () => {
    const out = summaryOutputs(fanoutSummaryData(), ctx);
    expect(Object.keys(out).sort()).toEqual(['out/r.html', 'out/r.json', 'out/r.junit.xml', 'stdout']);
    expect(parseResultText(out.stdout!)).toEqual(JSON.parse(out['out/r.json']!));
    expect(out['out/r.junit.xml']).toMatch(/tests="5" failures="2"/);
    const quiet = summaryOutputs(fanoutSummaryData(), { ...ctx, report: { ...ctx.report, resultOnStdout: false } });
    expect(quiet.stdout).not.toContain('conform-result');
  });
});
