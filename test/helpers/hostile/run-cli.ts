/**
 * Runs the real CLI as a user would (a child process: `node bin/conform.js ...`) and gathers what
 * a test asserts on: exit code, wall time, peak memory, stdout/stderr and every file written.
 */
import { spawn } from 'node:child_process';
import { readFile, readdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface CliRun {
  args: string[];
  /** null when the child was killed (a hang past `killAfterMs`). */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  durationMs: number;
  /** Wall-clock time (ms since the epoch) at which the child exited. */
  exitedAt: number;
  /** Peak resident set of the child (VmHWM), MiB; undefined where /proc is not there. */
  peakRssMiB?: number;
  stdout: string;
  stderr: string;
  /** Where the run wrote its reports; removed after reading unless CONFORM_HOSTILE_KEEP is set. */
  outDir: string;
  /** Every file the run wrote into `outDir`, by name. */
  files: Record<string, string>;
}

/** V8 heap cap of the child, MiB: far above what a bounded run needs, far below the machine. */
export const HEAP_CAP_MIB = 1024;

/** Output kept per stream; beyond it the child is flooding the console, itself a finding. */
const MAX_CAPTURE = 4 * 1024 * 1024;

async function peakRss(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const m = /VmHWM:\s+(\d+) kB/.exec(status);
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs `node bin/conform.js ...args --out <fresh dir>`; kills it after `killAfterMs` (a hang is
 * reported as `exitCode: null`, never waited out).
 */
export async function runCli(
  args: readonly string[],
  opts: { killAfterMs?: number; env?: Record<string, string> } = {},
): Promise<CliRun> {
  const outDir = await mkdtemp(path.join(tmpdir(), 'conform-hostile-'));
  const fullArgs = [...args, '--out', outDir];
  const env: NodeJS.ProcessEnv = { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', ...opts.env };
  // A runaway harness must crash (a finding) rather than take the shared machine's memory.
  env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --max-old-space-size=${HEAP_CAP_MIB}`.trim();
  delete env.CONFORM_API_KEY;
  if (opts.env?.CONFORM_API_KEY) env.CONFORM_API_KEY = opts.env.CONFORM_API_KEY;
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/conform.js'), ...fullArgs], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  for (const name of ['stdout', 'stderr'] as const) {
    child[name].setEncoding('utf8');
    child[name].on('data', (s: string) => {
      if (out[name].length < MAX_CAPTURE) out[name] += s;
    });
  }
  let peak: number | undefined;
  const poll = setInterval(() => {
    if (child.pid !== undefined)
      void peakRss(child.pid).then((v) => {
        if (v !== undefined) peak = Math.max(peak ?? 0, v);
      });
  }, 100);
  const kill = setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs ?? 270_000);
  const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (code, sig) => resolve([code, sig])),
  );
  const durationMs = Math.round(performance.now() - started);
  const exitedAt = Date.now();
  clearInterval(poll);
  clearTimeout(kill);
  const files: Record<string, string> = {};
  for (const name of await readdir(outDir, { recursive: true })) {
    try {
      files[String(name)] = await readFile(path.join(outDir, String(name)), 'utf8');
    } catch {
      /* a directory */
    }
  }
  // The files are in memory now; keep the directory only when asked to (for a look by hand).
  if (!process.env.CONFORM_HOSTILE_KEEP) await rm(outDir, { recursive: true, force: true });
  return {
    args: fullArgs,
    exitCode,
    signal,
    durationMs,
    exitedAt,
    peakRssMiB: peak === undefined ? undefined : Math.round(peak),
    ...out,
    outDir,
    files,
  };
}

/** Runs `tasks` with at most `limit` in flight; results in input order. */
export async function pool<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await task(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Stack frames, crashes and leak warnings that must never reach a user's console. */
export const CRASH_SIGNS: readonly RegExp[] = [
  /^\s+at .+:\d+:\d+\)?$/m,
  /node:internal/,
  /Unhandled|Uncaught/i,
  /MaxListenersExceededWarning/,
  /FATAL ERROR|heap out of memory/i,
  /\b(TypeError|ReferenceError|RangeError|SyntaxError):/,
];

/**
 * Every way a key can show up in output: as sent, JSON-escaped, URL-encoded, HTML-escaped, and
 * each half on its own (a truncation that cuts a key in two leaks it just the same).
 */
export function keyForms(key: string): string[] {
  const half = Math.floor(key.length / 2);
  const forms = [
    key,
    JSON.stringify(key).slice(1, -1),
    encodeURIComponent(key),
    key.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'),
  ];
  if (half >= 8) forms.push(key.slice(0, half), key.slice(half));
  return [...new Set(forms)];
}

/** Where in a run's output a key appears: `stdout`, `stderr` or a file name, with the form found. */
export function keyLeaks(run: Pick<CliRun, 'stdout' | 'stderr' | 'files'>, key: string): string[] {
  const places: [string, string][] = [['stdout', run.stdout], ['stderr', run.stderr], ...Object.entries(run.files)];
  const leaks: string[] = [];
  for (const [where, text] of places)
    for (const form of keyForms(key)) if (text.includes(form)) leaks.push(`${where} contains ${JSON.stringify(form)}`);
  return leaks;
}
