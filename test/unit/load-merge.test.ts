import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseLoadArgs } from '../../load/invocation.ts';
import { runFanout } from '../../load/fanout/run.ts';
import { runRest } from '../../load/rest/run.ts';
import { minimalProfile } from '../../src/profile.ts';
import { startKnownDelayServer } from '../helpers/known-delay-server.ts';
import { addEncoded, createHistogram, encode, recordMs, summarize } from '../../load/histogram.ts';
import {
  BUCKET_COUNT,
  bucketIndex,
  bucketLowUs,
  bucketMidUs,
  bucketPercentileUs,
  shiftBucketCounts,
} from '../../load/log-buckets.ts';
import { mergeResults, parseResultText } from '../../load/merge.ts';
import { MergeInputError } from '../../src/errors.ts';
import { parseShard, parseStartAt } from '../../load/options.ts';
import { startReferenceProcess, type LoadTarget } from '../../load/target.ts';
import { loadCli as cli } from '../helpers/load-cli.ts';

const hdr = (values: number[]): string => {
  const h = createHistogram();
  for (const v of values) recordMs(h, v);
  const s = encode(h);
  h.destroy();
  return s;
};

/** A conform fan-out result with just the fields merge reads. */
const conformResult = (o: {
  clients: number;
  frames: number;
  latency: number[];
  skewP99: number;
  lost: number;
  thresholds?: string[];
  trustworthy?: boolean;
}) => ({
  kind: 'fanout',
  clients: o.clients,
  connected: o.clients,
  framesReceived: o.frames,
  framesPerSecond: o.frames / 2,
  errors: 0,
  refusals: { 50009: 1 },
  noticeErrors: {},
  disconnects: {},
  connectErrors: {},
  lost: o.lost,
  lossRate: 0,
  skewMs: { p50: 1, p90: 2, p99: o.skewP99, max: o.skewP99 },
  latencyMs: { p99: Math.max(...o.latency) },
  trustworthy: o.trustworthy ?? true,
  histograms: {
    latency: hdr(o.latency),
    server_latency: hdr([1]),
    connect: hdr([2]),
    subscribe: hdr([3]),
    first_frame: hdr([4]),
  },
  thresholds: (o.thresholds ?? []).map((expr) => ({ expr })),
});

describe('log buckets (the k6 form of a distribution)', () => {
  it("put every bucket's lowest value and midpoint back in that bucket, in increasing order", () => {
    for (let i = 0; i < BUCKET_COUNT; i++) {
      expect(bucketIndex(bucketLowUs(i))).toBe(i);
      expect(bucketIndex(bucketMidUs(i))).toBe(i);
      if (i) expect(bucketLowUs(i)).toBeGreaterThan(bucketLowUs(i - 1));
    }
    // At most 1/16 wide above 32 µs.
    for (let i = 33; i < BUCKET_COUNT - 1; i++)
      expect((bucketLowUs(i + 1) - bucketLowUs(i)) / bucketLowUs(i)).toBeLessThanOrEqual(1 / 16);
  });
});

describe('log buckets moved to a later clock estimate', () => {
  it('move counts at their midpoints, fold magnitudes below zero back in, and count what stays below zero', () => {
    const counts: [number, number][] = [[bucketIndex(10_000), 3]];
    const below: [number, number][] = [
      [bucketIndex(2_000), 2],
      [bucketIndex(9_000), 1],
    ];
    const moved = new Map<number, number>();
    // +5 ms: 10 ms → 15 ms; −2 ms → 3 ms; −9 ms stays below zero (−4 ms), counted, not clamped.
    const still = shiftBucketCounts(moved, counts, 5_000) + shiftBucketCounts(moved, below, 5_000, true);
    expect(still).toBe(1);
    const sorted = [...moved].sort((a, b) => a[0] - b[0]);
    expect(sorted.reduce((n, [, c]) => n + c, 0)).toBe(5);
    expect(bucketPercentileUs(sorted, 20)! / 1000).toBeCloseTo(3, 0);
    expect(bucketPercentileUs(sorted, 50)! / 1000).toBeCloseTo(15, 0);
    expect(bucketPercentileUs([], 50)).toBeNull();
  });
});

describe('conform load merge', () => {
  it('adds histograms and counts, keeps skew and loss per host, and judges thresholds again on the merged data', () => {
    const a = conformResult({
      clients: 3,
      frames: 100,
      latency: Array(99).fill(5).concat([80]),
      skewP99: 7,
      lost: 1,
      thresholds: ['latency.p99<50'],
    });
    const b = conformResult({
      clients: 2,
      frames: 50,
      latency: Array(50).fill(10),
      skewP99: 12,
      lost: 0,
      thresholds: ['skew.p99<10'],
    });
    const r = mergeResults(
      [
        { file: 'a.json', data: a },
        { file: 'b.json', data: b },
      ],
      ['frames==150', 'lost==0'],
    );
    expect(r.totals).toMatchObject({ clients: 5, connected: 5, frames: 150, lost: 1, refused: 2 });
    expect(r.distributions.latency!.count).toBe(150);
    // Merged, 1 of 150 values is 80 ms: the p99 is 10 ms (to HDR's 3 significant digits).
    const byExpr = Object.fromEntries(r.thresholds.map((t) => [t.expr, [t.ok, t.actual]]));
    expect(byExpr['latency.p99<50']![0]).toBe(true);
    expect(byExpr['latency.p99<50']![1]).toBeCloseTo(10, 1);
    expect(byExpr['frames==150']).toEqual([true, 150]);
    expect(byExpr['lost==0']).toEqual([false, 1]);
    // Skew: the worst host, a lower bound.
    expect(byExpr['skew.p99<10']).toEqual([false, 12]);
    expect(r.hosts.map((h) => h.skewP99Ms)).toEqual([7, 12]);
    expect(r.observations.join('\n')).toMatch(/skew and loss are per host/);
  });

  it('merges k6 bucket counts with conform HDR histograms', () => {
    const a = conformResult({ clients: 1, frames: 3, latency: [1, 2, 3], skewP99: 0, lost: 0 });
    const k6 = {
      kind: 'fanout',
      generator: 'k6',
      clients: 2,
      connected: 2,
      framesReceived: 4,
      errors: 0,
      histograms: { latency: { unit: 'us', layout: 'log-buckets-32', counts: [[bucketIndex(4000), 4]] } },
    };
    const r = mergeResults([
      { file: 'a', data: a },
      { file: 'k6', data: k6 },
    ]);
    expect(r.distributions.latency!.count).toBe(7);
    expect(r.distributions.latency!.max).toBeCloseTo(bucketMidUs(bucketIndex(4000)) / 1000, 0);
    expect(r.totals.frames).toBe(7);
    expect(r.observations.join('\n')).toMatch(/k6 hosts report no skew or loss/);
  });

  it('refuses results of different kinds, a foreign bucket layout and files that are not results', () => {
    const fan = conformResult({ clients: 1, frames: 1, latency: [1], skewP99: 0, lost: 0 });
    expect(() =>
      mergeResults([
        { file: 'f', data: fan },
        { file: 'r.json', data: { kind: 'rest' } },
      ]),
    ).toThrow(/r.json: a rest result cannot merge with fanout results/);
    expect(() => mergeResults([{ file: 'x.json', data: { hello: 1 } }])).toThrow(MergeInputError);
    expect(() =>
      mergeResults([
        { file: 'k', data: { kind: 'fanout', histograms: { latency: { unit: 'ms', layout: 'other', counts: [] } } } },
      ]),
    ).toThrow(/unknown bucket layout/);
  });

  it('reads a runner pod log with a conform-result line', () => {
    expect(parseResultText('time="…" level=info msg="x"\nconform-result {"kind":"fanout"}\n')).toEqual({
      kind: 'fanout',
    });
    expect(parseResultText('no result here')).toBeUndefined();
  });

  it('writes console, JSON, HTML and JUnit, exits 1 on a crossed threshold and 2 on a missing file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'conform-merge-'));
    await writeFile(
      join(dir, 'a.json'),
      JSON.stringify(conformResult({ clients: 2, frames: 10, latency: [3, 4], skewP99: 1, lost: 0 })),
    );
    await writeFile(
      join(dir, 'b.log'),
      `noise\nconform-result ` +
        `${JSON.stringify(conformResult({ clients: 1, frames: 5, latency: [5], skewP99: 1, lost: 0 }))}\n`,
    );
    const out = join(dir, 'out');
    const ok = await cli([
      'load',
      'merge',
      join(dir, 'a.json'),
      join(dir, 'b.log'),
      '--out',
      out,
      '--threshold',
      'frames==15',
    ]);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/conform load merge — fanout, 2 result\(s\)/);
    for (const f of ['load-merge-fanout.json', 'load-merge-fanout.html', 'load-merge-fanout.junit.xml'])
      expect(ok.out).toContain(join(out, f));
    expect(await readFile(join(out, 'load-merge-fanout.junit.xml'), 'utf8')).toMatch(/tests="1" failures="0"/);
    const crossed = await cli([
      'load',
      'merge',
      join(dir, 'a.json'),
      join(dir, 'b.log'),
      '--out',
      out,
      '--threshold',
      'frames>15',
    ]);
    expect(crossed.code).toBe(1);
    const missing = await cli(['load', 'merge', join(dir, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(missing.err.trim().split('\n')).toEqual([
      expect.stringMatching(/^conform: .*nope\.json: cannot read \(ENOENT\)$/),
    ]);
  });
});

/** A REST result with the fields merge reads (`late`/`dropped` omitted when undefined, as k6's omit late). */
const restResult = (o: {
  requests: number;
  latency: number[];
  late?: number;
  dropped?: number;
  thresholds?: string[];
  generator?: 'k6';
}) => ({
  kind: 'rest',
  ...(o.generator
    ? { generator: o.generator, latencyFrom: 'actual send time' }
    : { model: 'open', latencyFrom: 'intended send time' }),
  scheduled: o.requests + (o.dropped ?? 0),
  requests: o.requests,
  rps: o.requests,
  errors: 0,
  timeouts: 0,
  non2xx: 0,
  waitedForConnection: 2,
  ...(o.late === undefined ? {} : { late: o.late }),
  ...(o.dropped === undefined ? {} : { dropped: o.dropped }),
  statusNumbers: { 200: o.requests },
  latencyMs: { p99: Math.max(...o.latency) },
  trustworthy: true,
  histograms: { latency: hdr(o.latency) },
  thresholds: (o.thresholds ?? []).map((expr) => ({ expr })),
});

describe('conform load merge of REST runs', () => {
  it('sums scheduled, late, dropped and waits for a connection, and judges late and dropped on the sums', () => {
    const a = restResult({
      requests: 3,
      latency: [10, 20, 30],
      late: 0,
      dropped: 0,
      thresholds: ['late==0', 'dropped==0', 'latency.p99<100'],
    });
    const b = restResult({ requests: 2, latency: [40, 50], late: 3, dropped: 1 });
    const m = mergeResults([
      { file: 'a.json', data: a },
      { file: 'b.json', data: b },
    ]);
    expect(m.totals).toMatchObject({ requests: 5, scheduled: 6, late: 3, dropped: 1, waited_for_connection: 4 });
    expect(m.distributions.latency!.count).toBe(5);
    expect(m.hosts.map((h) => [h.late, h.dropped])).toEqual([
      [0, 0],
      [3, 1],
    ]);
    // Each host alone held the thresholds it was given; merged, host b's late and dropped cross them.
    // The merged p99 is host b's 50 ms at HDR's 3 significant digits.
    expect(m.distributions.latency!.p99).toBeCloseTo(50, 1);
    expect(m.thresholds.map((t) => [t.expr, t.actual, t.ok])).toEqual([
      ['late==0', 3, false],
      ['dropped==0', 1, false],
      ['latency.p99<100', m.distributions.latency!.p99, true],
    ]);
  });

  it('makes late unknown (a threshold on it fails) when a host cannot say how late its sends were', () => {
    const m = mergeResults([
      {
        file: 'conform.json',
        data: restResult({ requests: 2, latency: [1, 2], late: 0, dropped: 0, thresholds: ['late==0', 'dropped==0'] }),
      },
      { file: 'k6.json', data: restResult({ requests: 2, latency: [3, 4], dropped: 0, generator: 'k6' }) },
    ]);
    expect(m.thresholds.map((t) => [t.expr, t.actual, t.ok])).toEqual([
      ['late==0', null, false],
      ['dropped==0', 0, true],
    ]);
    expect(m.observations.join('\n')).toMatch(/k6\.json report no late requests/);
    expect(m.observations.join('\n')).toMatch(/latency from different starts \(intended send time; actual send time\)/);
  });

  it('adds two real open-model runs against one server to the sums of both', async () => {
    const server = await startKnownDelayServer({ delayMs: 2 });
    try {
      const target = {
        rest: server.url,
        ws: '',
        profile: minimalProfile({ target: server.url, key: 'k' }),
        keys: [{ key: 'k' }],
        embedded: false,
        close: async () => {},
      };
      const opts = {
        pair: ['Crypto:ALL:BTC/USD'],
        rate: 40,
        durationMs: 1000,
        warmupMs: 0,
        thresholds: ['late==0', 'dropped==0'],
      };
      const a = await runRest(target, opts);
      const b = await runRest(target, opts);
      const m = mergeResults([
        { file: 'a.json', data: JSON.parse(JSON.stringify(a)) },
        { file: 'b.json', data: JSON.parse(JSON.stringify(b)) },
      ]);
      expect(a.scheduled).toBeGreaterThan(0);
      expect(m.totals).toMatchObject({
        requests: a.requests + b.requests,
        scheduled: a.scheduled + b.scheduled,
        late: a.late + b.late,
        dropped: a.dropped + b.dropped,
        waited_for_connection: a.waitedForConnection + b.waitedForConnection,
      });
      expect(m.distributions.latency!.count).toBe(a.requests + b.requests);
      expect(m.thresholds.find((t) => t.expr === 'late==0')).toMatchObject({
        actual: a.late + b.late,
        ok: a.late + b.late === 0,
      });
    } finally {
      await server.close();
    }
  });
});

describe("conform load merge and the target's clock", () => {
  it("makes the merged latency unknown when one host had no estimate of the target's clock", () => {
    const known = {
      ...conformResult({
        clients: 2,
        frames: 4,
        latency: [5, 6],
        skewP99: 1,
        lost: 0,
        thresholds: ['latency.p99<100'],
      }),
      clock: { status: 'same-clock', reason: null },
    };
    const { latency: _dropped, ...withoutLatency } = known.histograms;
    const unknown = {
      ...known,
      histograms: withoutLatency,
      clock: { status: 'unknown', reason: 'no REST reply carried a numeric `ts`' },
    };
    const m = mergeResults([
      { file: 'a.json', data: known },
      { file: 'b.json', data: unknown },
    ]);
    expect(m.thresholds).toEqual([expect.objectContaining({ expr: 'latency.p99<100', actual: null, ok: false })]);
    expect(m.observations.join('\n')).toMatch(/latency unknown on b\.json \(no REST reply carried a numeric `ts`\)/);
  });
});

describe('--shard and --start-at', () => {
  it('parse i/n and a time ahead, and name the problem otherwise', () => {
    expect(parseShard('2/3')).toEqual({ index: 2, count: 3 });
    for (const bad of ['0/2', '3/2', '1', 'a/b']) expect(() => parseShard(bad)).toThrow(/--shard/);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseStartAt('2026-01-01T00:00:10Z', now)).toBe(now + 10_000);
    expect(parseStartAt(String(now + 5), now)).toBe(now + 5);
    expect(() => parseStartAt('2025-12-31T23:59:59Z', now)).toThrow(/in the past/);
    expect(() => parseStartAt('soon', now)).toThrow(/ISO date/);
  });

  it('says which shards of a run are missing or given twice', () => {
    const shard = (index: number, count = 4) => ({ kind: 'fanout', clients: 1, shard: { index, count, clients: 1 } });
    const obs = (xs: unknown[]) => mergeResults(xs.map((data, i) => ({ file: `pod-${i}.log`, data }))).observations;
    expect(obs([shard(1), shard(2), shard(3), shard(4)]).join('\n')).not.toMatch(/shard/i);
    expect(obs([shard(1), shard(3)])).toContain(
      'shards 2, 4 of 4 missing: the merged run lacks their clients and frames',
    );
    expect(obs([shard(1), shard(1, 1), shard(2), shard(3), shard(4)]).join('\n')).toMatch(/different shard counts/);
    expect(obs([shard(1), shard(2), shard(2), shard(3), shard(4)])).toContain(
      'shard 2 given more than once: its counts are added twice',
    );
  });

  let target: LoadTarget;
  beforeAll(async () => {
    target = await startReferenceProcess({});
  });
  afterAll(async () => {
    await target?.close();
  });

  it('allows a whole run past one host by shards, each host opening at most 20,000 clients', async () => {
    await expect(runFanout(target, { clients: 20_001 })).rejects.toThrow(
      '--clients 20001: 20001 clients on this host; one host opens at most 20000: spread them over more shards',
    );
    await expect(runFanout(target, { clients: 40_002, shard: { index: 1, count: 2 } })).rejects.toThrow(
      /--clients 40002 --shard 1\/2: 20001 clients on this host/,
    );
    expect(parseLoadArgs({ mode: 'fanout', clients: 100_000, shard: '1/5' }).fanout).toMatchObject({
      clients: 100_000,
      shard: { index: 1, count: 5 },
    });
  });
});

describe('merged distributions match a single histogram', () => {
  it('adding two encoded HDR halves gives the percentiles of the whole, encoded the same way', () => {
    const values = Array.from({ length: 1000 }, (_, i) => ((i * 37) % 200) + 0.5);
    // Encoding keeps HDR's buckets, not the exact max: compare with the whole after the same round trip.
    const whole = createHistogram();
    addEncoded(whole, hdr(values));
    const r = mergeResults([
      { file: 'a', data: { kind: 'rest', requests: 500, histograms: { latency: hdr(values.slice(0, 500)) } } },
      { file: 'b', data: { kind: 'rest', requests: 500, histograms: { latency: hdr(values.slice(500)) } } },
    ]);
    expect(r.distributions.latency).toEqual(summarize(whole));
    expect(r.totals.requests).toBe(1000);
  });
});
