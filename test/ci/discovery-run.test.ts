/**
 * `conform --target URL` with one key and no --ws, and `conform init`, in-process against the
 * reference on loopback: discovery feeds the run, a wrong set-up stops it, init writes a profile
 * without the key.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { drawDialect } from '../../reference/dialect.ts';
import { conform, type ConformIO } from '../../src/conform.ts';
import { OPTION_DEFAULTS, type ConformOptions } from '../../src/options.ts';
import type { CheckResult } from '../../src/check.ts';
import type { RunEvent } from '../../src/runner.ts';
import { CHECKS } from '../../suites/index.ts';
import { REPORTS } from '../../reports/index.ts';
import { runInit } from '../../src/init.ts';
import { loadProfile, minimalProfile, parseProfile } from '../../src/profile.ts';
import { ProfileError } from '../../src/errors.ts';
import { unlocks } from '../../src/unlock.ts';

let dir: string;
const closers: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'conform-discovery-'));
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function reference(options: Parameters<typeof startReferenceServer>[0]): Promise<ReferenceServer> {
  const ref = await startReferenceServer(options);
  closers.push(() => ref.close());
  return ref;
}

interface Ran {
  code: number;
  out: string;
  err: string;
  results: CheckResult[];
}

async function oneKey(ref: ReferenceServer, extra: Partial<ConformOptions> = {}, key?: string): Promise<Ran> {
  let out = '';
  let err = '';
  let results: CheckResult[] = [];
  const io: ConformIO = {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    tty: false,
    version: 'test',
    reports: REPORTS,
    env: {},
    handlers: [
      {
        handle(e: RunEvent) {
          if (e.type === 'run-end') results = e.results;
        },
      },
    ],
  };
  const code = await conform(
    { ...OPTION_DEFAULTS, target: ref.restUrl, key: key ?? ref.profile.keys.primary.key, ...extra } as ConformOptions,
    CHECKS,
    io,
  );
  return { code, out, err, results };
}

const outcome = (r: Ran, id: string): string | undefined => r.results.find((x) => x.id === id)?.outcome;

describe('conform --target URL with one key', () => {
  it('finds the stream without --ws and runs the stream checks', async () => {
    const ref = await reference({ dialect: drawDialect(2) });
    const r = await oneKey(ref, { only: ['ws.subscribe.notice', 'rest.probe.50104', 'rest.probe.50005'] });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`stream: ${ref.wsUrl} (ws)`);
    expect(outcome(r, 'ws.subscribe.notice')).toBe('pass');
    expect(outcome(r, 'rest.probe.50104')).toBe('pass');
    expect(outcome(r, 'rest.probe.50005')).toBe('pass');
    const found = r.results.find((x) => x.id === 'discovery')!;
    expect(found.observations.map((o) => o.name)).toEqual(
      expect.arrayContaining(['discovery.stream.url', 'discovery.stream.candidates', 'discovery.rest.asset-types']),
    );
    expect(r.out).not.toContain(ref.profile.keys.primary.key);
  });

  it('exits 1 naming the stream check that a fault breaks', async () => {
    const ref = await reference({ fault: 'subscribe-empty-internal-error' });
    const r = await oneKey(ref, { only: ['ws.subscribe.invalid.empty-list'] });
    expect(r.code).toBe(1);
    expect(outcome(r, 'ws.subscribe.invalid.empty-list')).toBe('fail');
    expect(r.out).toContain('ws.subscribe.invalid.empty-list');
  });

  it('says in one line that the stream is elsewhere and counts the stream checks as not run', async () => {
    const ref = await reference({ dialect: { stream: { port: 'separate' } } });
    const r = await oneKey(ref, { only: ['ws.subscribe.notice'] });
    expect(r.code).toBe(0);
    expect(r.out.split('\n').filter((l) => l.startsWith('stream: none on '))).toHaveLength(1);
    expect(outcome(r, 'ws.subscribe.notice')).toBe('skip');
  });

  it('stops with exit 2 and one line when the key is refused, before any check', async () => {
    const ref = await reference({});
    const r = await oneKey(ref, {}, 'wrong-key-0123456789');
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/^conform: the target refuses the primary key .*--key or CONFORM_API_KEY/);
    expect(r.err).not.toContain('wrong-key-0123456789');
    expect(r.out).not.toMatch(/FAIL/);
  });

  it('skips discovery when the target answers nothing with the key, and the run says why', async () => {
    // Answers a request without a key at once and never one with a key: a gateway whose backend hangs.
    const server = http.createServer((req, res) => {
      if (req.headers['x-api-key'] !== undefined) return;
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"status_number":"50005","ts":1700000000000,"data":null,"message":"missing API key"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(
      () =>
        new Promise((r) => {
          server.closeAllConnections();
          server.close(r);
        }),
    );
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const started = Date.now();
    const r = await oneKey(
      { restUrl: url } as ReferenceServer,
      { timeout: 1000, only: ['rest.pairs'] },
      'k-silent-123456',
    );
    expect(r.out).toContain(`discovery: skipped, ${url} answered no request with the key`);
    expect(r.code).toBe(1);
    expect(
      r.results.every((x) => x.outcome === 'error' && /answered no request with the primary key/.test(x.reason!)),
    ).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('stops with exit 2 when --target is not the base URL', async () => {
    const ref = await reference({});
    const r = await oneKey({ ...ref, restUrl: `${ref.restUrl}/v1` } as ReferenceServer);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/does not look like the service's base URL.*drop the trailing \/v1/);
  });
});

describe('conform init', () => {
  const KEY_ENV = 'CONFORM_TEST_KEY';

  async function init(ref: ReferenceServer, writeKeys: boolean, env: Record<string, string>) {
    let out = '';
    let err = '';
    const file = path.join(dir, `profile-${writeKeys}-${Math.random().toString(36).slice(2)}.json`);
    const code = await runInit(
      { target: ref.restUrl, out: file, keyEnv: KEY_ENV, writeKeys, timeout: 15_000 },
      CHECKS,
      {
        out: (t) => {
          out += t;
        },
        err: (t) => {
          err += t;
        },
        env,
      },
    );
    return { code, out, err, file };
  }

  it('writes a valid profile with the key as a keyEnv reference, never in the file or the output', async () => {
    const ref = await reference({ dialect: drawDialect(3) });
    const key = ref.profile.keys.primary.key;
    const r = await init(ref, false, { [KEY_ENV]: key });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const text = await readFile(r.file, 'utf8');
    expect(text).not.toContain(key);
    expect(r.out).not.toContain(key);
    const written = JSON.parse(text) as { keys: { primary: Record<string, unknown> }; ws?: string };
    expect(written.keys.primary).toEqual({ keyEnv: KEY_ENV });
    expect(written.ws).toBe(ref.wsUrl);
    const loaded = await loadProfile(r.file, { [KEY_ENV]: key });
    expect(loaded.keys.primary.key).toBe(key);
    expect(r.out).toMatch(/^ {2}keys\.cryptoOnly → \d+ rules?: /m);
    expect(r.out).toMatch(
      /^ {2}a probe of status 50001 \(API maintenance\.\) → 1 rule: status:50001 \(rest\.probe\.50001\)$/m,
    );
  });

  it('writes the key itself only with --write-keys', async () => {
    const ref = await reference({});
    const key = ref.profile.keys.primary.key;
    const r = await init(ref, true, { [KEY_ENV]: key });
    expect(r.code).toBe(0);
    expect(JSON.parse(await readFile(r.file, 'utf8')).keys.primary.key).toBe(key);
    expect(r.out).not.toContain(key);
  });

  it('stops with one line when the key is not in the environment', async () => {
    const ref = await reference({});
    const r = await init(ref, false, {});
    expect(r.code).toBe(2);
    expect(r.err).toBe(`conform: init: set ${KEY_ENV} to the key (it is read from the environment only)\n`);
  });
});

describe('keys given as the name of an environment variable', () => {
  it('resolves keyEnv from the environment it is given', async () => {
    const file = path.join(dir, 'key-env.json');
    await writeFile(file, JSON.stringify({ rest: 'http://127.0.0.1:1', keys: { primary: { keyEnv: 'MY_KEY' } } }));
    expect((await loadProfile(file, { MY_KEY: 'k-abcdefgh' })).keys.primary.key).toBe('k-abcdefgh');
    await expect(loadProfile(file, {})).rejects.toThrow(ProfileError);
    await expect(loadProfile(file, {})).rejects.toThrow(
      /\/keys\/primary\/keyEnv: the environment variable MY_KEY is not set/,
    );
  });

  it('refuses an entry with both a key and a keyEnv, or neither', () => {
    expect(() => parseProfile({ rest: 'http://h', keys: { primary: { key: 'a', keyEnv: 'B' } } })).toThrow(
      ProfileError,
    );
    expect(() => parseProfile({ rest: 'http://h', keys: { primary: {} } })).toThrow(ProfileError);
  });
});

describe('what would unlock the remaining rules', () => {
  it('is derived from the checks: missing profile fields and probes of statuses one key cannot provoke', () => {
    const list = unlocks(CHECKS, minimalProfile({ target: 'http://h', key: 'k-12345678', ws: 'ws://h/ws' }));
    const crypto = list.find((u) => u.needs === 'keys.cryptoOnly')!;
    expect(crypto.rules).toContain('status:50109');
    expect(crypto.checks.every((id) => CHECKS.find((c) => c.id === id)!.needs.includes('keys.cryptoOnly'))).toBe(true);
    expect(list.find((u) => u.needs.startsWith('a probe of status 50001'))?.checks).toEqual(['rest.probe.50001']);
    expect(list.some((u) => u.needs === 'ws')).toBe(false);
  });
});
