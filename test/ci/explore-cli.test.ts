import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseArgs } from '../../bin/commands/conform.ts';
import { REPLAY_FILE, REPLAY_FORMAT, REPLAY_VERSION } from '../../src/explore/replay-file.ts';
import { conform } from '../helpers/conform-cli.ts';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.ts';

const BTC = 'Crypto:ALL:BTC/USD';
const ETH = 'Crypto:ALL:ETH/USD';
const XAU = 'Metal:ALL:XAU/USD';

/** Three subscribes on one connection: a service whose third subscribe extends keeps pushing ETH. */
const THIRD_SUBSCRIBE = {
  format: REPLAY_FORMAT,
  version: REPLAY_VERSION,
  seed: 1,
  sequence: 0,
  target: { rest: 'http://127.0.0.1:1' },
  steps: [
    { op: 'open', conn: 'c1', key: 'primary', silent: false },
    { op: 'subscribe', conn: 'c1', pairs: [BTC], id: 'x1' },
    { op: 'subscribe', conn: 'c1', pairs: [ETH], id: 'x2' },
    { op: 'subscribe', conn: 'c1', pairs: [XAU], id: 'x3' },
  ],
  failure: { step: 3, transition: 'subscribe replaces the subscription', rule: 'r', expected: 'e', received: 'x' },
  transcript: [],
};

/** Sixty pairs of a catalogue of synthetic Crypto pairs, counting down from SYN`from`. */
const synthetic = (from: number, n: number): string[] =>
  Array.from({ length: n }, (_, i) => `Crypto:ALL:SYN${String(from - i).padStart(3, '0')}/USD`);
const FIRST_TEN = [
  BTC,
  'Equity:NASDAQ:MSTR/USD',
  'Forex:ALL:EUR/USD',
  'Commodity:ALL:Crude Oil/USD',
  XAU,
  ETH,
  ...['SOL', 'XRP', 'ADA', 'DOGE'].map((b) => `Crypto:ALL:${b}/USD`),
];

/**
 * A ping between two subscribes of sixty pairs each, under a dialect that pushes every 10 ms in
 * indented JSON: some 4 MB a second, past the characters a session keeps within a second or two.
 */
const FAST_STREAM = {
  ...THIRD_SUBSCRIBE,
  seed: 7,
  steps: [
    { op: 'open', conn: 'c6', key: 'primary', silent: false },
    { op: 'subscribe', conn: 'c6', pairs: [...FIRST_TEN, ...synthetic(146, 50)], id: 'x1' },
    { op: 'ping', conn: 'c6', id: 'x2' },
    { op: 'subscribe', conn: 'c6', pairs: [...synthetic(96, 44), ...FIRST_TEN, ...synthetic(146, 6)], id: 'x2' },
  ],
  failure: { step: 3, transition: 'ping answered with Pong!', rule: 'rule:ping:reply', expected: 'e', received: 'x' },
};

describe('--explore and --seed', () => {
  const options = (argv: string[]) => {
    const r = parseArgs(argv);
    if (r.kind !== 'run') throw new Error(JSON.stringify(r));
    return r.options;
  };

  it('takes the budget as typed and the seed as a number', () => {
    expect(options(['--explore', '60s', '--seed', '7'])).toMatchObject({ explore: '60s', seed: 7 });
    expect(options([]).explore).toBeUndefined();
  });
});

describe('conform explore and conform replay, as processes', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'conform-explore-'));
  const file = path.join(dir, 'replay.json');
  let faulty: ServeProcess;

  beforeAll(async () => {
    writeFileSync(file, JSON.stringify(THIRD_SUBSCRIBE));
    faulty = await startServeProcess(mkdtempSync(path.join(tmpdir(), 'conform-explore-serve-')), [
      '--fault',
      'subscribe-third-extends',
    ]);
  });
  afterAll(async () => {
    await faulty?.stop();
  });

  it('explores the embedded reference from the seed given, reports seed and transitions, and passes', async () => {
    const r = await conform(['explore', '--budget', '4s', '--seed', '5', '--out', dir, '--report', 'console,json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^PASS \(partial\): .* 1 passed, 0 failed/m);
    expect(r.stdout).toContain('Exploration: seed 5, 4 s budget');
    expect(r.stdout).toContain('open within the allowance:');
    const report = JSON.parse(readFileSync(path.join(dir, 'conform-report.json'), 'utf8'));
    const result = report.results.find((x: { id: string }) => x.id === 'ws.explore');
    expect(result.exploration.seed).toBe(5);
    expect(result.exploration.transitions.length).toBeGreaterThan(0);
    // Coverage credits what a step judged: a subset of what the explorer could enforce.
    expect(result.enforces.length).toBeGreaterThan(0);
  });

  it('replays a sequence against a service that breaks it: the failure reproduces, exit 1', async () => {
    const r = await conform(['replay', file, '--profile', faulty.profileFile]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('Replay: 4 steps run again; the failure reproduced');
    expect(r.stdout).toContain(`pushes for ${ETH} stop`);
  });

  it('replays it against the embedded reference: no failure, exit 0', async () => {
    const r = await conform(['replay', file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('the failure did not reproduce');
  });

  it('counts every Pong! on a stream faster than a session keeps: no failure, exit 0', async () => {
    const fast = await startServeProcess(mkdtempSync(path.join(tmpdir(), 'conform-explore-fast-')), [
      '--dialect',
      'random',
      '--seed',
      '109435198',
    ]);
    try {
      const fastFile = path.join(dir, 'fast-replay.json');
      writeFileSync(fastFile, JSON.stringify(FAST_STREAM));
      const r = await conform(['replay', fastFile, '--profile', fast.profileFile]);
      expect(r.stdout).toContain('the failure did not reproduce');
      expect(r.code).toBe(0);
    } finally {
      await fast.stop();
    }
  });

  it('names a replay file it cannot read, and a budget that is not one, in one line with exit 2', async () => {
    const missing = await conform(['replay', path.join(dir, 'none.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^conform: .*none\.json: cannot be read: ENOENT\n$/);
    const soon = await conform(['explore', '--budget', 'soon']);
    expect(soon.code).toBe(2);
    expect(soon.stderr).toBe('conform: --explore: "soon" is not a duration (write it as 60s, 500ms or 2m)\n');
    expect(REPLAY_FILE).toBe('conform-explore-replay.json');
  });
});
