/**
 * The unit tier under each supported Node line, each pinned by scripts/install-node.sh and taken
 * from the npm registry: `npm ci` of the lock prints no EBADENGINE on it, and the unit tests pass.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { stripVTControlCharacters } from 'node:util';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/conform-cli.ts';
import { installNode, nodeLines } from '../helpers/node-lines.ts';

interface Run {
  code: number;
  out: string;
}
/** Runs `cmd` with the Node of `bin` first on PATH, so npm and every process the tests start run on it. */
function onNode(bin: string, cmd: string, args: string[], cwd: string, timeout: number): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` };
  delete env.VITEST;
  delete env.VITEST_POOL_ID;
  delete env.VITEST_WORKER_ID;
  delete env.CONFORM_TIER;
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env, timeout, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: `${stdout}${stderr}` }),
    );
  });
}

const scratch = mkdtempSync(path.join(tmpdir(), 'conform-node-lines-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.each(nodeLines())('on Node $version (the $line line)', ({ line, version }) => {
  let bin = '';

  it('npm ci of the lock prints no EBADENGINE', async () => {
    bin = installNode(line);
    const dir = path.join(scratch, line);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    for (const f of ['package.json', 'package-lock.json']) copyFileSync(path.join(ROOT, f), path.join(dir, f));
    const v = await onNode(bin, 'node', ['--version'], dir, 30_000);
    expect(v.out.trim()).toBe(`v${version}`);
    const ci = await onNode(bin, 'npm', ['ci', '--dry-run', '--no-audit', '--no-fund'], dir, 300_000);
    expect(ci.code, ci.out).toBe(0);
    expect(ci.out).not.toContain('EBADENGINE');
  }, 600_000);

  it('passes the unit tier', async () => {
    bin ||= installNode(line);
    const r = await onNode(
      bin,
      'node',
      [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--project', 'unit'],
      ROOT,
      900_000,
    );
    expect(r.code, r.out.slice(-4000)).toBe(0);
    // Vitest colours its summary when the tier above it does: its words are read without the codes.
    expect(stripVTControlCharacters(r.out)).toMatch(/Test Files\s+\d+ passed/);
  }, 900_000);
});
