/**
 * A service behind a private CA: the reference served over HTTPS and WSS with a certificate a
 * throw-away CA signs (test/helpers/tls/ca/, made by its make.sh). Without that CA, or with another,
 * every command stops with exit 2 and one line naming the host and the reason; with `--ca FILE` or
 * the profile's `tls.ca`, REST, the stream (raw and Socket.IO) and discovery all verify through it
 * (the load tools: test/ci/load-tls.test.ts). No option, nor NODE_TLS_REJECT_UNAUTHORIZED=0, turns verification off.
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { REPORTS } from '../../reports/index.ts';
import { conform as runConform } from '../../src/conform.ts';
import { OPTION_DEFAULTS, type ConformOptions } from '../../src/options.ts';
import { CHECKS } from '../../suites/index.ts';
import { helpText } from '../../bin/commands/conform.ts';
import { runInit } from '../../src/init.ts';
import { conform, type Run } from '../helpers/conform-cli.ts';

/** A run through the library, as the CLI makes it (in-process: no child per case): its exit code and output. */
async function library(options: Partial<ConformOptions>): Promise<Run> {
  const run: Run = { code: 0, stdout: '', stderr: '' };
  run.code = await runConform({ ...OPTION_DEFAULTS, ...options }, CHECKS, {
    out: (t) => {
      run.stdout += t;
    },
    err: (t) => {
      run.stderr += t;
    },
    tty: false,
    version: '0',
    reports: REPORTS,
  });
  return run;
}

const fixture = (name: string): string => new URL(`../helpers/tls/ca/${name}`, import.meta.url).pathname;
const CA = fixture('ca.pem');
const OTHER_CA = fixture('other-ca.pem');
/** The one line of a certificate that fails verification, with the host the run was pointed at. */
const UNTRUSTED = new RegExp(
  /^conform: TLS: the certificate of 127\.0\.0\.1:\d+ fails verification: [^\n]+ \([A-Z_]+\); /.source +
    /give the CA that signs it with --ca FILE or the profile's tls\.ca\n$/.source,
);

let server: ReferenceServer;
let dir = '';
let plain = '';
beforeAll(async () => {
  server = await startReferenceServer({
    tls: { cert: await readFile(fixture('leaf.pem')), key: await readFile(fixture('leaf-key.pem')) },
    // The keep-alive window the profile states: the stream checks take seconds, not the spec's 30.
    pingTimeoutMs: 2000,
  });
  dir = await mkdtemp(path.join(os.tmpdir(), 'conform-tls-'));
  plain = path.join(dir, 'profile.json');
  await writeFile(plain, JSON.stringify(server.profile));
});
afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const ONLY = ['--only', 'rest.pairs.schema,ws.subscribe.notice,ws.ping'];
const only = ['rest.pairs.schema', 'ws.subscribe.notice', 'ws.ping'];
const oneLine = (r: Run): void => {
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(UNTRUSTED);
  expect(r.stdout).toBe('');
};

describe('a certificate that fails verification', () => {
  it('stops a profile run with exit 2 and one line naming the host and the reason', async () => {
    expect(server.restUrl).toMatch(/^https:\/\//);
    oneLine(await conform(['--profile', plain, ...ONLY]));
  });

  it('stops it the same with the wrong CA given (--ca)', async () => {
    oneLine(await library({ profile: plain, ca: OTHER_CA, only }));
  });

  it('stops a --target run before discovery, and init, each in one line', async () => {
    const key = server.profile.keys.primary.key;
    oneLine(await library({ target: server.restUrl, key, only }));
    const init: Run = { code: 0, stdout: '', stderr: '' };
    init.code = await runInit(
      { target: server.restUrl, out: path.join(dir, 'init.json'), keyEnv: 'K', writeKeys: false, timeout: 5000 },
      CHECKS,
      {
        out: (t) => {
          init.stdout += t;
        },
        err: (t) => {
          init.stderr += t;
        },
        env: { K: key },
      },
    );
    oneLine(init);
    // The load tools: test/ci/load-tls.test.ts.
  });

  it('is not let through by NODE_TLS_REJECT_UNAUTHORIZED=0: no switch turns verification off', async () => {
    const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    try {
      oneLine(await library({ profile: plain, only }));
    } finally {
      if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
    }
    expect(await helpText()).not.toMatch(/insecure|reject-?unauthorized|no-verify|skip-verify/i);
  });

  it('names a CA file that cannot be read, or holds no certificate, in one line', async () => {
    const nope = path.join(dir, 'nope.pem');
    expect(await library({ profile: plain, ca: nope })).toMatchObject({
      code: 2,
      stderr: `conform: --ca: cannot read ${nope} (ENOENT)\n`,
    });
    expect((await library({ profile: plain, ca: plain })).stderr).toBe(
      `conform: --ca: ${plain} holds no PEM certificate (-----BEGIN CERTIFICATE-----)\n`,
    );
    expect((await library({ ca: CA })).stderr).toBe(
      'conform: --ca needs --target or --profile (the embedded reference service is plain HTTP)\n',
    );
  });
});

describe('the CA that signs it', () => {
  it('given with --ca, lets REST and the stream be checked through TLS', async () => {
    const out = path.join(dir, 'with-ca');
    const r = await conform(['--profile', plain, '--ca', CA, ...ONLY, '--report', 'console,json', '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(await readFile(path.join(out, 'conform-report.json'), 'utf8')) as {
      results: { id: string; outcome: string }[];
    };
    expect(report.results.map((x) => [x.id, x.outcome])).toEqual(
      expect.arrayContaining([
        ['rest.pairs.schema', 'pass'],
        ['ws.subscribe.notice', 'pass'],
      ]),
    );
  });

  it("named by the profile's tls.ca, relative to the profile's folder, does the same", async () => {
    await copyFile(CA, path.join(dir, 'company-ca.pem'));
    const profile = path.join(dir, 'with-tls.json');
    await writeFile(profile, JSON.stringify({ ...server.profile, tls: { ca: 'company-ca.pem' } }));
    const r = await library({ profile, only });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('lets discovery find the stream of a --target over wss', async () => {
    const r = await library({
      target: server.restUrl,
      key: server.profile.keys.primary.key,
      ca: CA,
      only: ['ws.subscribe.notice'],
    });
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^stream: wss:\/\/127\.0\.0\.1:\d+\/\S+ \(ws\)/m);
    expect(r.code).toBe(0);
  });

  it('goes into the profile conform init writes, so a run with it trusts the same CA', async () => {
    const out = path.join(dir, 'init-ca.json');
    let text = '';
    const code = await runInit(
      { target: server.restUrl, ca: CA, out, keyEnv: 'K', writeKeys: false, timeout: 5000 },
      CHECKS,
      {
        out: (t) => {
          text += t;
        },
        err: (t) => {
          text += t;
        },
        env: { K: server.profile.keys.primary.key },
      },
    );
    expect(code, text).toBe(0);
    const written = JSON.parse(await readFile(out, 'utf8')) as { tls?: { ca: string }; ws?: string };
    expect(written.tls).toEqual({ ca: CA });
    expect(written.ws).toMatch(/^wss:\/\//);
  });

  it('holds for the stream over Socket.IO', async () => {
    const sio = await startReferenceServer({
      tls: { cert: await readFile(fixture('leaf.pem')), key: await readFile(fixture('leaf-key.pem')) },
      transport: 'socketio',
      pingTimeoutMs: 2000,
    });
    try {
      let text = '';
      const code = await runConform(
        { ...OPTION_DEFAULTS, profile: sio.profile, ca: CA, only: ['ws.subscribe.notice', 'ws.ping'] },
        CHECKS,
        { out: (t) => (text += t), err: (t) => (text += t), tty: false, version: '0', reports: REPORTS },
      );
      expect(sio.profile.ws).toMatch(/^wss:\/\//);
      expect(text).toMatch(/^PASS( \(partial\))?: /m);
      expect(code).toBe(0);
    } finally {
      await sio.close();
    }
  });
});
