import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseProfile } from '../../src/profile.ts';
import { FAULT_NAMES } from '../../reference/faults/index.ts';
import { DEFAULT_CONFIG, drawDialect, startReferenceServer } from '../../reference/index.ts';
import { PATHS, STATUS } from '../../src/spec.ts';
import { getRaw } from '../helpers/reference.ts';
import { BIN, ROOT } from '../helpers/conform-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'conform-serve-'));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

function run(args: string[]): { child: ChildProcess; out: () => string; err: () => string; exit: Promise<number> } {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    cwd: ROOT,
    env: { ...process.env, FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exit = once(child, 'exit').then(([code]) => code as number);
  return { child, out: () => out, err: () => err, exit };
}

async function waitFor(pred: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `conform serve …` as a user runs it: the real bin/conform.js in a child process. */
describe('conform serve', () => {
  it('prints its REST and WebSocket URLs, writes a valid profile, serves it, stops cleanly on SIGTERM', async () => {
    const file = join(dir, 'profile.json');
    const p = run(['--port', '0', '--profile-out', file]);
    await waitFor(() => p.out().includes('WebSocket'));
    const rest = /REST\s+(http:\/\/\S+)/.exec(p.out())![1]!;
    expect(p.out()).toMatch(/WebSocket\s+ws:\/\/127\.0\.0\.1:\d+\/v1\/ws/);
    const profile = parseProfile(JSON.parse(readFileSync(file, 'utf8')));
    expect(profile.rest).toBe(rest);
    for (const entry of Object.values(profile.keys)) expect(p.out()).not.toContain(entry!.key);
    const r = await getRaw(rest + PATHS.pairs, { 'X-API-Key': profile.keys.primary.key });
    expect(r.body.status_number).toBe(STATUS.OK);
    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
    expect(p.out()).toContain('stopped');
  });

  for (const signal of ['SIGINT', 'SIGHUP'] as const)
    it(`stops cleanly on ${signal}`, async () => {
      const p = run(['--port', '0']);
      await waitFor(() => p.out().includes('WebSocket'));
      p.child.kill(signal);
      expect(await p.exit).toBe(0);
      expect(p.out()).toContain('stopped');
    });

  // npm forwards SIGTERM only to the shell it ran (and dies of SIGHUP), never to the service under it.
  for (const signal of ['SIGTERM', 'SIGHUP'] as const)
    it(`stops when the npx that launched it in the background is sent ${signal}`, async () => {
      const npx = spawn('npx', ['--offline', 'conform', 'serve', '--port', '0'], {
        cwd: ROOT,
        env: { ...process.env, FORCE_COLOR: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(npx);
      let out = '';
      npx.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
      // The service writes to the same pipe: it closes when the last of npx, its shell and the service is gone.
      const closed = once(npx.stdout!, 'close');
      await waitFor(() => out.includes('WebSocket'), 60_000);
      const rest = /REST\s+(http:\/\/\S+)/.exec(out)![1]!;
      npx.kill(signal);
      await closed;
      expect(out).toContain('conform reference service stopped');
      await expect(getRaw(rest + PATHS.pairs, {})).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    }, 90_000);

  it('switches on the named fault', async () => {
    const file = join(dir, 'profile-fault.json');
    const p = run(['--port', '0', '--fault', 'envelope-ts-string', '--profile-out', file]);
    await waitFor(() => p.out().includes('WebSocket'));
    expect(p.out()).toContain('envelope-ts-string');
    const profile = parseProfile(JSON.parse(readFileSync(file, 'utf8')));
    const r = await getRaw(profile.rest + PATHS.pairs, { 'X-API-Key': profile.keys.primary.key });
    expect(typeof r.body.ts).toBe('string');
    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
  });

  it('lists every fault with its rule and the checks that catch it', async () => {
    const p = run(['--list-faults']);
    expect(await p.exit).toBe(0);
    for (const name of FAULT_NAMES) expect(p.out()).toContain(name);
    expect(p.out()).toContain('caught by');
  });

  const bad: [string, () => string[], RegExp][] = [
    [
      'a config without keys.primary',
      () => {
        const f = join(dir, 'no-primary.json');
        writeFileSync(f, JSON.stringify({ keys: { other: { key: 'k' } } }));
        return ['--config', f];
      },
      /keys\.primary/,
    ],
    [
      'a config with a bad pair precision',
      () => {
        const f = join(dir, 'bad-precision.json');
        writeFileSync(
          f,
          JSON.stringify({ pairs: [{ code: 'Crypto:ALL:BTC/USD', name: 'Bitcoin', precision: -1, price: '1' }] }),
        );
        return ['--config', f];
      },
      /pairs\[0\]\.precision/,
    ],
    [
      'a config that is not JSON',
      () => {
        const f = join(dir, 'broken.json');
        writeFileSync(f, '{ keys: ');
        return ['--config', f];
      },
      /not valid JSON/,
    ],
    ['a config file that does not exist', () => ['--config', join(dir, 'missing.json')], /cannot read/],
    ['an unknown fault', () => ['--fault', 'nope'], /unknown fault "nope"/],
    ['a port out of range', () => ['--port', '70000'], /--port/],
    [
      'a dialect with an unknown field',
      () => {
        const f = join(dir, 'dialect-unknown.json');
        writeFileSync(f, JSON.stringify({ rest: { tsUnit: 's', colour: 'red' } }));
        return ['--dialect', f];
      },
      /--dialect: .*dialect-unknown\.json: \/rest\/colour: is not a dialect field/,
    ],
    [
      'a dialect value outside its options',
      () => {
        const f = join(dir, 'dialect-bad.json');
        writeFileSync(f, JSON.stringify({ rest: { pastEnd: 'wrap' } }));
        return ['--dialect', f];
      },
      /--dialect: .*\/rest\/pastEnd: must be one of "empty", "error"/,
    ],
    [
      'a dialect that is not JSON',
      () => {
        const f = join(dir, 'dialect-broken.json');
        writeFileSync(f, '{ rest: ');
        return ['--dialect', f];
      },
      /--dialect: .* is not valid JSON/,
    ],
    ['a seed without --dialect random', () => ['--seed', '3'], /--seed: only with --dialect random/],
    ['a negative seed', () => ['--dialect', 'random', '--seed', '-1'], /--seed: must be an integer >= 0/],
  ];
  for (const [what, args, line] of bad) {
    it(`exits 2 with one line naming the problem for ${what}`, async () => {
      const p = run(args());
      expect(await p.exit).toBe(2);
      expect(p.out()).toBe('');
      const lines = p.err().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^conform: /);
      expect(lines[0]).toMatch(line);
    });
  }

  it('draws the same dialect from the same seed, prints it with the command that replays it, serves it', async () => {
    const lines: string[] = [];
    for (const attempt of [1, 2]) {
      const file = join(dir, `profile-seed-${attempt}.json`);
      const p = run(['--port', '0', '--dialect', 'random', '--seed', '12', '--profile-out', file]);
      await waitFor(() => p.out().includes('replay'));
      const dialectLine = /^dialect\s+(\{.*\})$/m.exec(p.out())![1]!;
      expect(p.out()).toMatch(/^replay\s+conform serve --dialect random --seed 12$/m);
      expect(JSON.parse(dialectLine)).toEqual(drawDialect(12));
      lines.push(dialectLine);
      // The service answers in the drawn dialect: ts in its unit.
      const profile = parseProfile(JSON.parse(readFileSync(file, 'utf8')));
      const r = await getRaw(profile.rest + PATHS.pairs, { 'X-API-Key': profile.keys.primary.key });
      const ts = r.body.ts as number;
      expect(drawDialect(12).rest.tsUnit === 's' ? ts < 1e11 : ts > 1e11).toBe(true);
      p.child.kill('SIGTERM');
      expect(await p.exit).toBe(0);
    }
    expect(lines[0]).toBe(lines[1]);
  });

  it('serves a dialect file and writes a profile that leaves the allowances out when the dialect says so', async () => {
    const dialectFile = join(dir, 'dialect-unstated.json');
    writeFileSync(dialectFile, JSON.stringify({ keys: { primary: 1, stated: false } }));
    const file = join(dir, 'profile-unstated.json');
    const p = run(['--port', '0', '--dialect', dialectFile, '--profile-out', file]);
    await waitFor(() => p.out().includes('dialect'));
    const profile = parseProfile(JSON.parse(readFileSync(file, 'utf8')));
    expect(profile.keys.primary.connections).toBeUndefined();
    // The limited key stays (the limit checks find it), its allowance left out like the primary's.
    expect(profile.keys.limited).toBeDefined();
    expect(profile.keys.limited!.connections).toBeUndefined();
    expect(p.out()).not.toContain('replay');
    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
  });

  it('exits 2 naming the port when it is taken', async () => {
    const taken = await startReferenceServer({ config: { keys: DEFAULT_CONFIG.keys } });
    try {
      const port = new URL(taken.restUrl).port;
      const p = run(['--port', port]);
      expect(await p.exit).toBe(2);
      expect(p.err()).toMatch(/cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\)/);
    } finally {
      await taken.close();
    }
  });
});
