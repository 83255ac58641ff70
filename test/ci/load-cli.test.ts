import { MAX_CLIENTS_PER_HOST, MAX_SHARDS } from '../../load/options.ts';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as hdr from 'hdr-histogram-js';
import { parseLoadArgs } from '../../load/invocation.ts';
import { LoadUsageError, ThresholdError } from '../../src/errors.ts';
import { startKnownDelayServer } from '../helpers/known-delay-server.ts';
import { loadCli as cli } from '../helpers/load-cli.ts';
import { conform } from '../helpers/conform-cli.ts';
import { validate } from 'ctrf';

/** A calibration run small enough for a test: 4 clients on 2 pairs for 1.5 s. */
const SMALL_CALIBRATION = ['load', 'calibrate', '--clients', '4', '--pairs', '2', '--duration', '1500ms'];

describe('conform load: options', () => {
  it('turns argv into library options with units parsed', () => {
    const inv = parseLoadArgs({
      mode: 'fanout',
      clients: 1000,
      pairs: 10,
      duration: '20s',
      'ramp-rate': '3000/s',
      workers: 'auto',
      threshold: ['latency.p99<50'],
      report: ['json,html'],
    });
    expect(inv.fanout).toMatchObject({
      clients: 1000,
      pairs: 10,
      durationMs: 20_000,
      rampRate: 3000,
      workers: 'auto',
      thresholds: ['latency.p99<50'],
    });
    expect(inv.reports).toEqual(['json', 'html']);
    expect(inv.target.target).toBeUndefined();
  });

  it('takes the key from the environment variable named by --key-env, never requiring it on the command line', () => {
    const inv = parseLoadArgs(
      { mode: 'rest', target: 'https://api.example.com', 'key-env': 'MY_KEY' },
      { MY_KEY: 'k-123' },
    );
    expect(inv.target.key).toBe('k-123');
    expect(() => parseLoadArgs({ mode: 'rest', target: 'https://api.example.com' }, {})).toThrow(
      /--target needs a key/,
    );
  });

  it('rejects bad values naming the option', () => {
    expect(() => parseLoadArgs({ mode: 'fanout', clients: 0 })).toThrow(/--clients 0/);
    expect(() => parseLoadArgs({ mode: 'fanout', duration: 'forever' })).toThrow(LoadUsageError);
    expect(() => parseLoadArgs({ mode: 'fanout', report: ['pdf'] })).toThrow(/--report pdf/);
    expect(() => parseLoadArgs({ mode: 'fanout', threshold: ['latency.p42<1'] })).toThrow(ThresholdError);
    expect(() => parseLoadArgs({ mode: 'rest', threshold: ['skew.p99<1'] })).toThrow(
      /unknown metric "skew.p99" for load rest/,
    );
    expect(() => parseLoadArgs({ mode: 'rest', arrival: 'bursty' })).toThrow(
      /--arrival bursty: use uniform or poisson/,
    );
    expect(() => parseLoadArgs({ mode: 'rest', rate: 'fast' })).toThrow(/--rate "fast"/);
  });

  it('reads --rate max as the closed model and --arrival poisson with its seed as the open one', () => {
    expect(parseLoadArgs({ mode: 'rest', rate: 'max' }).rest.rate).toBe('max');
    expect(parseLoadArgs({ mode: 'rest', rate: '250/s', arrival: 'poisson', seed: 9 }).rest).toMatchObject({
      rate: 250,
      arrival: 'poisson',
      seed: 9,
    });
  });

  it('reads --pipelining and --workers (a number or auto) for load rest, and names a bad one', () => {
    expect(parseLoadArgs({ mode: 'rest', pipelining: 4, workers: '2' }).rest).toMatchObject({
      pipelining: 4,
      workers: 2,
    });
    expect(parseLoadArgs({ mode: 'rest', workers: 'auto' }).rest.workers).toBe('auto');
    expect(() => parseLoadArgs({ mode: 'rest', workers: 'many' })).toThrow(/--workers/);
    expect(() => parseLoadArgs({ mode: 'rest', pipelining: 0 })).toThrow(/--pipelining/);
  });
});

describe('conform load: exit codes', () => {
  it('exits 2 with one line naming an unknown threshold metric, before any load starts', async () => {
    const r = await cli(['load', 'fanout', '--threshold', 'latncy.p99<50']);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/^conform: .*unknown metric "latncy.p99"/);
    expect(r.out).toBe('');
  });

  it('exits 2 with one line for an option yargs rejects: bad input, not an internal error', async () => {
    const r = await cli(['load', 'fanout', '--bogus-option', '1']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^conform: Unknown arguments?: .*bogus-option.*\n$/);
    expect(r.err).not.toContain('internal error');
    expect(r.out).toBe('');
  });

  it('exits 2 with one line naming the unknown mode, what was given and the modes there are', async () => {
    const r = await cli(['load', 'bogus']);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      'conform: Invalid values: Argument: mode, Given: "bogus", ' +
        'Choices: "fanout", "rest", "calibrate", "merge", "trend", "capacity"\n',
    );
    expect(r.out).toBe('');
  });

  it('exits 2 saying a count is not a number rather than quoting what yargs made of it', async () => {
    const r = await cli(['load', 'fanout', '--clients', 'abc']);
    expect(r.code).toBe(2);
    const most = MAX_CLIENTS_PER_HOST * MAX_SHARDS;
    expect(r.err).toBe(`conform: --clients: must be a whole number from 1 to ${most} (got something not a number)\n`);
  });

  it('exits 2 naming the target when not one client can connect', async () => {
    const r = await cli([
      'load',
      'fanout',
      '--target',
      'http://127.0.0.1:1',
      '--ws',
      'ws://127.0.0.1:1/ws',
      '--key',
      'k',
      '--pair',
      'Crypto:ALL:BTC/USD',
      '--clients',
      '2',
      '--duration',
      '1s',
      '--no-progress',
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^conform: no client could connect to ws:\/\/127\.0\.0\.1:1\/ws: ECONNREFUSED ×2\n$/);
  });

  it('exits 2 naming the transport when the profile streams over Socket.IO, before any client connects', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'conform-load-'));
    const file = join(dir, 'profile.json');
    await writeFile(
      file,
      JSON.stringify({
        rest: 'http://127.0.0.1:1',
        ws: 'ws://127.0.0.1:1/',
        transport: 'socketio',
        event: 'price',
        keys: { primary: { key: 'k' } },
      }),
    );
    const r = await cli([
      'load',
      'fanout',
      '--profile',
      file,
      '--pair',
      'Crypto:ALL:BTC/USD',
      '--clients',
      '2',
      '--duration',
      '1s',
      '--no-progress',
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /^conform: load fanout drives the raw WebSocket stream; the profile's transport is socketio.*\n$/,
    );
  });

  it('writes CTRF, an annotation per crossed threshold and a job summary for CI', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'conform-load-ci-'));
    const stepSummary = join(dir, 'step-summary.md');
    await writeFile(stepSummary, '');
    const r = await conform(
      [
        ...SMALL_CALIBRATION,
        '--out',
        dir,
        '--no-progress',
        '--report',
        'console,ctrf,github',
        '--threshold',
        'errors==0',
        '--threshold',
        'latency.p99<0',
      ],
      { GITHUB_STEP_SUMMARY: stepSummary, GITHUB_SERVER_URL: '', GITHUB_RUN_ID: '' },
    );
    expect(r.code, r.stderr).toBe(1);
    const annotations = r.stdout.split('\n').filter((l) => l.startsWith('::'));
    expect(annotations).toHaveLength(1);
    expect(annotations[0]).toMatch(
      /^::error title=load fanout%3A threshold latency\.p99<0 crossed::measured latency\.p99 = /,
    );
    const ctrf = JSON.parse(await readFile(join(dir, 'load-fanout-ctrf.json'), 'utf8'));
    expect(validate(ctrf)).toEqual({ valid: true, errors: [] });
    expect(ctrf.results.summary).toMatchObject({ tests: 2, passed: 1, failed: 1 });
    const summary = await readFile(stepSummary, 'utf8');
    expect(summary).toMatch(/^## conform load fanout: FAIL, 1 of 2 thresholds crossed\n/);
    expect(summary).toContain('| `latency.p99<0` |');
  });

  it('shows elapsed time against the planned ramp, warm-up and measured phase on its progress line', async () => {
    const r = await cli([...SMALL_CALIBRATION, '--warmup', '0', '--report', 'console', '--progress']);
    expect(r.code, r.err).toBe(0);
    // 4 clients at the default 1000/s ramp, no warm-up, 1.5 s measured: about 2 s planned.
    expect(r.err).toMatch(/\d+\.\d s of ~2 s {2}conn \d+\/4/);
  });

  it('exits 0 when every threshold holds and 1 when one is crossed, and writes JSON and HTML', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'conform-load-'));
    const base = [...SMALL_CALIBRATION, '--out', dir, '--no-progress'];
    const held = await cli([...base, '--threshold', 'latency.p99<60000', '--threshold', 'errors==0']);
    expect(held.code).toBe(0);
    expect(held.out).toContain('conform load calibrate');
    expect(held.out).toContain('✓ errors==0');
    const json = JSON.parse(await readFile(join(dir, 'load-fanout.json'), 'utf8')) as Record<string, unknown>;
    for (const field of [
      'clients',
      'framesReceived',
      'framesPerSecond',
      'latencyMs',
      'serverLatencyMs',
      'skewMs',
      'lost',
      'errors',
      'generator',
      'thresholds',
    ])
      expect(json).toHaveProperty(field);
    expect(json.clients).toBe(4);
    const html = await readFile(join(dir, 'load-fanout.html'), 'utf8');
    expect(html).toContain('<svg');
    expect(html).not.toMatch(/<script|<link|\ssrc=|href="http/);

    const crossed = await cli([...base, '--report', 'console', '--threshold', 'latency.p99<0']);
    expect(crossed.code).toBe(1);
    expect(crossed.out).toContain('✗ latency.p99<0');
  });

  it('runs load rest against a --target without a stream URL, the latency histogram (µs) in the JSON', async () => {
    const server = await startKnownDelayServer({ delayMs: 5 });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'conform-load-'));
      const r = await cli([
        'load',
        'rest',
        '--target',
        server.url,
        '--key',
        'k-secret-1',
        '--pair',
        'Crypto:ALL:BTC/USD',
        '--rate',
        '50',
        '--duration',
        '1s',
        '--warmup',
        '0',
        '--report',
        'json',
        '--out',
        dir,
        '--no-progress',
        '--threshold',
        'latency.p50>=5',
      ]);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      const text = await readFile(join(dir, 'load-rest.json'), 'utf8');
      expect(text).not.toContain('k-secret-1');
      const json = JSON.parse(text) as { model: string; requests: number; histograms: { latency: string } };
      expect(json.model).toBe('open');
      const h = hdr.decodeFromCompressedBase64(json.histograms.latency, 32, false);
      expect(h.totalCount).toBe(json.requests);
      // µs: a 5 ms server reads 5,000 or more.
      expect(h.getValueAtPercentile(50)).toBeGreaterThanOrEqual(5000);
      expect(server.arrivals.length).toBe(50);
    } finally {
      await server.close();
    }
  });

  it('starts the embedded reference service in a process of its own when no target is given', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'conform-load-'));
    const r = await cli([
      'load',
      'fanout',
      '--clients',
      '5',
      '--pairs',
      '2',
      '--duration',
      '1s',
      '--report',
      'json',
      '--out',
      dir,
      '--no-progress',
    ]);
    expect(r.code).toBe(0);
    const json = JSON.parse(await readFile(join(dir, 'load-fanout.json'), 'utf8')) as {
      target: { embedded: boolean; ws: string };
      connected: number;
      framesReceived: number;
      clock: { status: string; offsetMs: number };
    };
    expect(json.target.embedded).toBe(true);
    expect(json.connected).toBe(5);
    expect(json.framesReceived).toBeGreaterThan(0);
    // Estimated, not assumed: the reference runs on this machine's clock.
    expect(json.clock).toMatchObject({ status: 'same-clock', offsetMs: 0 });
    // The reference's keys never reach the report.
    expect(await readFile(join(dir, 'load-fanout.json'), 'utf8')).not.toMatch(/ref-[a-z-]+-[0-9a-f]{6}/);
  });
});
