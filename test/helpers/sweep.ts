/**
 * Runs many whole-suite runs (a fault, a dialect, a transport: each on its own reference
 * server on port 0) across worker processes, as many at once as the machine holds. A run mostly
 * waits on the target's timers (about 2 CPU-seconds over 5 to 90 s of wall time), so each core
 * carries several runs; one process per core keeps every run's event loop from queueing behind
 * the others. Inside a process a run starts only while its event loop has idle time, so the waits
 * the checks measure are not stretched by the harness's own load.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism, freemem } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { CheckResult } from '../../src/check.ts';

/** One suite run: with a fault or clean, over a transport, under a dialect seed or the default dialect. */
export interface SweepJob {
  fault?: string;
  transport: 'ws' | 'socketio';
  seed?: number;
  /** Run as against a target whose profile states nothing of its timing. */
  unstatedTiming?: boolean;
}

/** What one run gave back. */
export interface SweepResult {
  job: SweepJob;
  results: CheckResult[];
  durationMs: number;
}

/** How many runs go at once: processes, and runs in flight in each. */
export interface SweepCapacity {
  processes: number;
  perProcess: number;
}

/**
 * Runs per core: a run spends about a tenth of its wall time on the CPU (measured: 1.9 CPU-s of a
 * 5 s clean run, 2 to 9 CPU-s of a 60 to 200 s run under a dialect; a sweep of 181 runs at eight
 * a core kept its two cores 27 % busy), so twelve keep a core well used with room for the bursts;
 * the event-loop gate of each process catches the rest.
 */
const RUNS_PER_CORE = 12;
/** Memory one run holds at its peak (its server, its sessions, its results), with room. */
const BYTES_PER_RUN = 128 * 1024 * 1024;
/** Share of the free memory the sweep may take. */
const MEMORY_SHARE = 0.5;

/** The capacity of this machine: its cores and its free memory. */
export function sweepCapacity(
  cores = availableParallelism(),
  free = freemem(),
  override = process.env.CONFORM_SWEEP_CONCURRENCY,
): SweepCapacity {
  const byMemory = Math.floor((free * MEMORY_SHARE) / BYTES_PER_RUN);
  const asked = override === undefined ? undefined : Number.parseInt(override, 10);
  const total = Math.max(1, asked !== undefined && asked > 0 ? asked : Math.min(cores * RUNS_PER_CORE, byMemory));
  const processes = Math.max(1, Math.min(cores, total));
  return { processes, perProcess: Math.ceil(total / processes) };
}

/** A sweep's results in job order, with its wall time and the CPU time its processes spent. */
export interface SweepOutcome {
  results: SweepResult[];
  wallMs: number;
  cpuMs: number;
  capacity: SweepCapacity;
}

const CHILD = fileURLToPath(new URL('./sweep-child.ts', import.meta.url));

type FromChild =
  | { kind: 'result'; index: number; results: CheckResult[]; durationMs: number }
  | { kind: 'failed'; index: number; error: string }
  | { kind: 'cpu'; cpuMs: number };

/**
 * Runs every job once, `capacity` at a time; `onDone` hears each as it ends. A run that throws
 * (the harness broke, not the target) rejects the sweep.
 */
export async function sweep(
  jobs: readonly SweepJob[],
  onDone?: (r: SweepResult) => void,
  capacity: SweepCapacity = sweepCapacity(),
): Promise<SweepOutcome> {
  const started = performance.now();
  const out = new Array<SweepResult>(jobs.length);
  let next = 0;
  let cpuMs = 0;
  const processes = Math.min(capacity.processes, Math.max(1, jobs.length));
  const children: ChildProcess[] = [];
  try {
    await Promise.all(
      Array.from({ length: processes }, async () => {
        const child = fork(CHILD, [], { execArgv: ['--import', 'tsx'], serialization: 'advanced', stdio: 'inherit' });
        children.push(child);
        let inFlight = 0;
        await new Promise<void>((resolve, reject) => {
          const feed = (): void => {
            while (inFlight < capacity.perProcess && next < jobs.length) {
              const index = next++;
              inFlight++;
              child.send({ index, job: jobs[index] });
            }
            if (inFlight === 0) child.send({ done: true });
          };
          child.on('message', (m: FromChild) => {
            if (m.kind === 'cpu') {
              cpuMs += m.cpuMs;
              return;
            }
            inFlight--;
            if (m.kind === 'failed') {
              reject(new Error(`sweep run ${JSON.stringify(jobs[m.index])} broke: ${m.error}`));
              return;
            }
            out[m.index] = { job: jobs[m.index]!, results: m.results, durationMs: m.durationMs };
            onDone?.(out[m.index]!);
            feed();
          });
          child.on('error', reject);
          child.on('exit', (code) =>
            inFlight === 0 && next >= jobs.length
              ? resolve()
              : reject(new Error(`a sweep process exited (code ${code}) with ${inFlight} run(s) in flight`)),
          );
          feed();
        });
      }),
    );
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill();
  }
  return { results: out, wallMs: performance.now() - started, cpuMs, capacity };
}

/** One line: how long the sweep took, on what, and how busy it kept the machine. */
export function sweepLine(o: SweepOutcome, cores = availableParallelism()): string {
  const wall = o.wallMs / 1000;
  const slowest = [...o.results].sort((a, b) => b.durationMs - a.durationMs)[0];
  const job = slowest?.job;
  return (
    `${o.results.length} suite runs in ${wall.toFixed(1)} s wall, ${(o.cpuMs / 1000).toFixed(1)} s CPU ` +
    `(${((o.cpuMs / o.wallMs / cores) * 100).toFixed(0)} % of ${cores} cores; ` +
    `${o.capacity.processes} processes × ${o.capacity.perProcess} runs; ` +
    `${(o.results.reduce((n, r) => n + r.durationMs, 0) / 1000).toFixed(0)} s of runs one after another)` +
    (job
      ? `; slowest run ${(slowest.durationMs / 1000).toFixed(1)} s (${job.fault ?? 'clean'}, ${job.transport}` +
        `${job.seed === undefined ? '' : `, dialect ${job.seed}`})`
      : '')
  );
}
