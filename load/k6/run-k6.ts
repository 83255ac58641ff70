/**
 * Runs a k6 that the user installed and named in CONFORM_K6, offline: automatic extension
 * resolution and usage reports off, and only the environment given here (no stray keys).
 * The project never fetches, builds or ships k6 (AGPL-3.0): without CONFORM_K6 nothing here runs.
 * Node-side (tests and the load benchmark), not part of the k6 bundles.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { K6RunError } from '../../src/errors.ts';

/** The k6 release the scripts were written and last run against. */
export const K6_WRITTEN_AGAINST = 'v1.8.1';

/**
 * Why a real k6 cannot run here (one line), or null when CONFORM_K6 names an executable file.
 * `env` is the process environment, read in this one place.
 */
export function k6Unavailable(env: Readonly<Record<string, string | undefined>> = process.env): string | null {
  const bin = env.CONFORM_K6;
  if (!bin) return `CONFORM_K6 is not set: name a k6 you installed (written against ${K6_WRITTEN_AGAINST})`;
  try {
    accessSync(bin, constants.X_OK);
  } catch {
    return `CONFORM_K6=${bin} is not an executable file`;
  }
  return null;
}

/** The k6 binary CONFORM_K6 names; throws K6RunError saying why when there is none. */
export function k6Binary(): string {
  const why = k6Unavailable();
  if (why) throw new K6RunError(`k6 is not available: ${why}`);
  return process.env.CONFORM_K6!;
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
