/** The CLI as a user runs it, for tests: `node bin/conform.js …` as a child process in the repository. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = path.join(ROOT, 'bin', 'conform.js');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs conform with `args` (colour off, extra `env`), at most 2 minutes; resolves with its exit code and output. */
export function conform(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, env: { ...process.env, ...env, FORCE_COLOR: '0' }, timeout: 120_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}
