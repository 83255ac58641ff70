/**
 * Runs the real k6 that scripts/install-k6.sh installs (or CONFORM_K6 names), offline: automatic
 * extension resolution and usage reports off, and only the environment given here (no stray keys).
 * Node-side (tests and the load benchmark), not part of the k6 bundles.
 */
import { execFile, execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { K6RunError } from '../../src/errors.ts';

const INSTALL = fileURLToPath(new URL('../../scripts/install-k6.sh', import.meta.url));

/** The k6 binary: CONFORM_K6, else the path the install script uses; throws when it is absent. */
export function k6Binary(): string {
  const bin = process.env.CONFORM_K6 || execFileSync(INSTALL, ['--print-path'], { encoding: 'utf8' }).trim();
  try {
    accessSync(bin, constants.X_OK);
  } catch {
    throw new K6RunError(`k6 is not installed at ${bin}: run scripts/install-k6.sh (CI's .ci/run does)`);
  }
  return bin;
}

/** The environment every k6 run gets: no network beyond the target, no usage report. */
export const K6_ENV = { K6_AUTO_EXTENSION_RESOLUTION: 'false', K6_NO_USAGE_REPORT: 'true' } as const;

export interface K6Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `k6 args…` in `cwd` with `env` added to K6_ENV and PATH/HOME; resolves with the exit code. */
export function runK6(
  args: readonly string[],
  opts: { cwd: string; env?: Record<string, string>; timeoutMs?: number; onSpawn?: (pid: number) => void },
): Promise<K6Run> {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...K6_ENV, ...opts.env };
  return new Promise((resolve, reject) => {
    const child = execFile(
      k6Binary(),
      [...args],
      { cwd: opts.cwd, env, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') {
          reject(new K6RunError(`k6 did not finish: ${err.message}\n${stderr}`));
          return;
        }
        resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
      },
    );
    if (child.pid !== undefined) opts.onSpawn?.(child.pid);
  });
}
