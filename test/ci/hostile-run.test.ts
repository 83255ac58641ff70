/**
 * The CLI against every transport-level hostile target (REST and WebSocket upgrade alike), with
 * default settings and every report format: each check ends with a verdict and a one-line reason
 * within its timeout, the run ends with exit 1 (2 when the target does not speak HTTP), no stack
 * trace, bounded memory, under two minutes, and no key in any output.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { minimalProfile } from '../../src/profile.ts';
import { HOSTILE_TARGETS, closedPort } from '../helpers/hostile/targets.ts';
import { judgeHostileRuns } from '../helpers/hostile/harness.ts';
import { runCli } from '../helpers/hostile/run-cli.ts';
import { jsonReportOf, runLine } from '../helpers/hostile/judge.ts';
import { READ_CHUNK } from '../helpers/client-reads.ts';
import { RUN_DEFAULTS } from '../../src/runner.ts';

/** Preloaded into a child conform to count what each of its sockets read. */
const COUNT_READS = fileURLToPath(new URL('../helpers/count-reads.ts', import.meta.url));

/** Targets whose checks are judged here; the key-focused ones are in hostile-secrets.test.ts. */
const TARGETS = HOSTILE_TARGETS.filter(
  (t) => t.layer === 'both' && t.name !== 'echo-key' && t.name !== 'redirect-elsewhere',
);
const REPORTS = 'console,json,junit,html';

describe('the CLI against a hostile target', () => {
  judgeHostileRuns(
    TARGETS.map((def) => ({ name: def.name, def })),
    {
      concurrency: 4,
      timeoutMs: 15 * 60_000,
      run: async (_c, target, key) => ({
        run: await runCli(['--target', target.rest!, '--ws', target.ws!, '--key', key, '--report', REPORTS]),
      }),
      judging: (o) => ({
        profile: minimalProfile({ target: o.target.rest!, key: o.key, ws: o.target.ws }),
        facesHostile: () => true,
      }),
    },
  );

  it('reads each 50 MB body up to the body limit, at most one socket read past it, and no further', async () => {
    const target = await HOSTILE_TARGETS.find((t) => t.name === 'body-50mb')!.start();
    const dir = await mkdtemp(path.join(tmpdir(), 'conform-reads-'));
    try {
      const readsFile = path.join(dir, 'reads.json');
      const run = await runCli(
        ['--target', target.rest!, '--key', 'hk_body_50mb_reads_key', '--only', 'rest.pairs', '--report', 'json'],
        { env: { NODE_OPTIONS: `--import tsx --import ${COUNT_READS}`, CONFORM_READS_FILE: readsFile } },
      );
      console.log(runLine('body-50mb, bytes read', run));
      expect(run.exitCode).toBe(1);
      expect(jsonReportOf(run)!.results.some((r) => r.errorCode === 'CONFORM_BODY_TOO_LARGE')).toBe(true);
      const reads = JSON.parse(await readFile(readsFile, 'utf8')) as number[];
      expect(Math.max(...reads)).toBeGreaterThan(RUN_DEFAULTS.maxBodyBytes);
      // The response head is a few hundred bytes: 1 KiB bounds it.
      for (const read of reads) expect(read).toBeLessThanOrEqual(1024 + RUN_DEFAULTS.maxBodyBytes + READ_CHUNK);
    } finally {
      await target.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('--max-body lowers the REST body limit: a 64 KiB body becomes CONFORM_BODY_TOO_LARGE at 4096 bytes', async () => {
    const def = HOSTILE_TARGETS.find((t) => t.name === 'octet-stream')!;
    const target = await def.start();
    try {
      const run = await runCli([
        '--target',
        target.rest!,
        '--key',
        'hk_max_body_key_0123',
        '--max-body',
        '4096',
        '--only',
        'rest',
        '--report',
        'json',
      ]);
      console.log(runLine('octet-stream --max-body 4096', run));
      expect(run.exitCode).toBe(1);
      const errors = jsonReportOf(run)!.results.filter((r) => r.outcome === 'error');
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.every((r) => r.errorCode === 'CONFORM_BODY_TOO_LARGE' && /4096 bytes/.test(r.reason ?? ''))).toBe(
        true,
      );
    } finally {
      await target.close();
    }
  });

  it('exits 2 with one line when nothing listens at the target', async () => {
    const rest = await closedPort();
    const run = await runCli(['--target', rest, '--key', 'hk_closed_port_key', '--report', 'console,json,junit,html']);
    console.log(runLine('closed-port', run));
    expect(run.exitCode).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(`${run.stdout}${run.stderr}`).not.toContain('hk_closed_port_key');
  });
});
