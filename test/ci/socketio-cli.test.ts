/**
 * `--transport socketio --event NAME` as a user runs it: option parsing and validation, then the
 * CLI as a child process against the reference service serving Socket.IO (clean: exit 0; with a
 * stream fault: exit 1 naming the check), and `conform serve --transport socketio`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { parseArgs } from '../../bin/commands/conform.ts';
import { OPTION_DEFAULTS, validateOptions, type ConformOptions } from '../../src/options.ts';
import { REPORT_FORMAT_NAMES } from '../../reports/index.ts';
import { profileSecrets } from '../../src/profile.ts';
import { BIN, conform, ROOT } from '../helpers/conform-cli.ts';

const options = (extra: Partial<ConformOptions>): ConformOptions =>
  ({ ...OPTION_DEFAULTS, ...extra }) as ConformOptions;

describe('--transport and --event options', () => {
  it('parses --transport socketio --event NAME', () => {
    expect(parseArgs(['--transport', 'socketio', '--event', 'price'])).toMatchObject({
      kind: 'run',
      options: { transport: 'socketio', event: 'price' },
    });
  });

  it('refuses an unknown transport, naming the option and the choices', () => {
    const r = parseArgs(['--transport', 'mqtt']);
    expect(r.kind).toBe('run');
    if (r.kind === 'run')
      expect(() => validateOptions(r.options, REPORT_FORMAT_NAMES)).toThrow(/--transport: .*ws or socketio/);
  });

  it('needs --event with socketio, --event only with socketio, and neither with a profile', () => {
    expect(() => validateOptions(options({ transport: 'socketio' }), REPORT_FORMAT_NAMES)).toThrow(
      /--transport socketio needs --event/,
    );
    expect(() => validateOptions(options({ event: 'price' }), REPORT_FORMAT_NAMES)).toThrow(
      /--event needs --transport socketio/,
    );
    expect(() =>
      validateOptions(options({ profile: 'p.json', transport: 'socketio', event: 'price' }), REPORT_FORMAT_NAMES),
    ).toThrow(/a profile names its own/);
    expect(() =>
      validateOptions(options({ transport: 'socketio', event: 'price' }), REPORT_FORMAT_NAMES),
    ).not.toThrow();
  });
});

describe('conform over Socket.IO as a child process', () => {
  let dir: string;
  let clean: ReferenceServer;
  let faulty: ReferenceServer;
  const secrets: string[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'conform-sio-'));
    clean = await startReferenceServer({ transport: 'socketio', event: 'price' });
    faulty = await startReferenceServer({ transport: 'socketio', event: 'price', fault: 'ping-reply-json' });
    secrets.push(...profileSecrets(clean.profile));
  });
  afterAll(async () => {
    await Promise.all([clean.close(), faulty.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  it('passes against the clean reference with --target --ws --transport socketio --event price (exit 0)', async () => {
    const r = await conform(
      [
        '--target',
        clean.restUrl,
        '--ws',
        clean.socketIoUrl!,
        '--transport',
        'socketio',
        '--event',
        'price',
        '--only',
        'ws',
        '--skip',
        'slow',
      ],
      { CONFORM_API_KEY: clean.profile.keys.primary.key },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/PASS \(partial\): \d+ of \d+ stated rules checked — \d+ passed, 0 failed, 0 errors/);
    for (const k of secrets) expect(r.stdout + r.stderr).not.toContain(k);
  });

  it('fails the ping checks against the ping-reply-json fault, as over raw WebSocket (exit 1)', async () => {
    const r = await conform(
      [
        '--target',
        faulty.restUrl,
        '--ws',
        faulty.socketIoUrl!,
        '--transport',
        'socketio',
        '--event',
        'price',
        '--only',
        'ws.ping',
      ],
      { CONFORM_API_KEY: faulty.profile.keys.primary.key },
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAIL\s+ws\.ping\.pong\.bare/);
  });

  it('refuses --transport socketio without --event with exit 2 and one line', async () => {
    const r = await conform(['--transport', 'socketio']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/needs --event/);
  });

  it('conform serve --transport socketio --event price serves Socket.IO, and its profile says so', async () => {
    const file = path.join(dir, 'serve.json');
    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--port', '0', '--transport', 'socketio', '--event', 'price', '--profile-out', file],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    try {
      await expect.poll(() => out, { timeout: 20_000 }).toMatch(/profile/);
      expect(out).toMatch(/^Socket\.IO {2}ws:\/\/127\.0\.0\.1:\d+\/socket\.io\/ \(event "price", namespace \/\)$/m);
      const profile = JSON.parse(await readFile(file, 'utf8')) as { ws: string; transport: string; event: string };
      expect(profile).toMatchObject({
        transport: 'socketio',
        event: 'price',
        ws: expect.stringMatching(/\/socket\.io\/$/),
      });
      const r = await conform(['--profile', file, '--only', 'ws.subscribe.notice,ws.ping.pong.bare']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});
