/**
 * A worker process of a sweep (test/helpers/sweep.ts): takes suite runs from its parent, runs
 * them concurrently, sends each run's results back, and its CPU time when told it is done.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { drawDialect } from '../../reference/index.ts';
import { runSuite } from './mutation.ts';
import type { SweepJob } from './sweep.ts';

/**
 * A run starts only while the event loop was idle at least this share of the last window (or
 * nothing runs): a busy loop would stretch the waits the checks measure in runs already going.
 */
const MAX_BUSY = 0.6;
const WINDOW_MS = 250;

let inFlight = 0;
let last = performance.eventLoopUtilization();

async function admitted(): Promise<void> {
  for (;;) {
    if (inFlight === 0) return;
    await sleep(WINDOW_MS);
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    if (busy < MAX_BUSY) return;
  }
}

/** Runs start one at a time through the gate, in the order they came. */
let gate = Promise.resolve();

async function run(index: number, job: SweepJob): Promise<void> {
  const turn = gate.then(admitted);
  gate = turn;
  await turn;
  inFlight++;
  const t0 = performance.now();
  try {
    const results = await runSuite(job.fault, {
      transport: job.transport,
      ...(job.seed === undefined ? {} : { dialect: drawDialect(job.seed) }),
      ...(job.unstatedTiming ? { unstatedTiming: true } : {}),
    });
    process.send!({ kind: 'result', index, results, durationMs: Math.round(performance.now() - t0) });
  } catch (err) {
    process.send!({ kind: 'failed', index, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  } finally {
    inFlight--;
  }
}

// A parent that went away (Ctrl-C, a killed test run) leaves nobody to read the results: stop too.
process.on('disconnect', () => process.exit(1));

process.on('message', (m: { index: number; job: SweepJob } | { done: true }) => {
  if ('done' in m) {
    const { user, system } = process.cpuUsage();
    process.send!({ kind: 'cpu', cpuMs: (user + system) / 1000 }, () => process.exit(0));
    return;
  }
  void run(m.index, m.job);
});
