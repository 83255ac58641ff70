/**
 * Drive: the phases of a fan-out run, told to the workers and timed on the coordinator. The ramp
 * (every client subscribed, refused or given up), the warm-up, the measured phase, and the close;
 * `onProgress` gets a live figure every half second. Returns when each phase began, the process's
 * CPU and memory over them, and what the schedule's hosts should know.
 */
import { LoadUsageError } from '../../src/errors.ts';
import { monoNow } from '../mono-clock.ts';
import { CLOSE_GRACE_MS } from '../schedule.ts';
import type { FanoutAggregator } from './aggregate.ts';
import type { FanoutOptions, FanoutPlan, FanoutProgress } from './plan.ts';
import type { WorkerPool } from './workers.ts';

/** When the phases of a run began and what the process spent on them. */
export interface RunPhases {
  /** Mono ms: the ramp's start, the measured phase's start and its stop. */
  t0: number;
  steadyAt: number;
  stopAt: number;
  /** CPU of the whole process (main thread and workers) over the measured phase. */
  cpu: NodeJS.CpuUsage;
  /** Resident memory before the ramp and when the measured phase began. */
  rssBefore: number;
  rssSteady: number;
  /** A late start, clients missing from the shared window: sentences for the report. */
  observations: string[];
}

/** What the phases need besides the plan: where the clients subscribe, and the caller's wishes. */
export interface PhaseContext {
  wsUrl: string;
  pairs: readonly string[];
  options: Pick<FanoutOptions, 'startAtMs' | 'subscribeAfterRamp' | 'onProgress'>;
}

/** A delay that does not keep the process alive on its own. */
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

/** Resolves once `done()` holds (checked every 50 ms), or rejects with a worker's failure. */
async function until(failed: Promise<never>, done: () => boolean): Promise<void> {
  let iv: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      failed,
      new Promise<void>((resolve) => {
        iv = setInterval(() => {
          if (done()) resolve();
        }, 50);
      }),
    ]);
  } finally {
    clearInterval(iv);
  }
}

/** Runs the plan's phases on the started workers, from their start to their close. */
export async function driveRun(
  plan: FanoutPlan,
  pool: WorkerPool,
  agg: FanoutAggregator,
  ctx: PhaseContext,
): Promise<RunPhases> {
  const { options } = ctx;
  const observations: string[] = [];
  await pool.ready();
  const rssBefore = process.memoryUsage().rss;
  const t0 = options.startAtMs === undefined ? monoNow() + 20 : monoNow() + (options.startAtMs - Date.now());
  if (t0 < monoNow())
    observations.push(
      `the workers were ready ${Math.round(monoNow() - t0)} ms after --start-at: this host's ramp began late`,
    );
  agg.start(t0);
  pool.post({ type: 'start', atMs: t0 });
  const progress = (phase: FanoutProgress['phase']): void => {
    if (!options.onProgress) return;
    const p = agg.progress(monoNow());
    options.onProgress({ phase, clients: plan.clients, ...p });
  };
  const progressTimer = setInterval(() => progress(agg.steadySince < Infinity ? 'steady' : 'ramp'), 500);
  try {
    await ramp(plan, pool, agg, t0, ctx);
    const steadyAt = await warmUp(plan, pool, agg, t0, observations);
    const rssSteady = process.memoryUsage().rss;
    const cpu0 = process.cpuUsage();
    // Shared schedule: frames sent just before the window ends still arrive before the close.
    const { schedule } = plan;
    await Promise.race([
      pool.failed,
      sleep(schedule ? t0 + schedule.windowEndMs + CLOSE_GRACE_MS - monoNow() : plan.o.durationMs),
    ]);
    const stopAt = monoNow();
    const cpu = process.cpuUsage(cpu0);
    agg.markStop(stopAt);
    pool.post({ type: 'stop', closeAtMs: stopAt });
    progress('closing');
    await Promise.race([pool.done(), sleep(15_000)]);
    return { t0, steadyAt, stopAt, cpu, rssBefore, rssSteady, observations };
  } finally {
    clearInterval(progressTimer);
  }
}

/**
 * The ramp: waits until every client is subscribed or finished, or the last one had its chance
 * (with `subscribeAfterRamp`, first until every client is connected, then tells them to subscribe).
 */
async function ramp(
  plan: FanoutPlan,
  pool: WorkerPool,
  agg: FanoutAggregator,
  t0: number,
  ctx: PhaseContext,
): Promise<void> {
  const { o, clients } = plan;
  const rampDeadline = t0 + (o.clients * 1000) / o.rampRate + o.connectTimeoutMs + 5000;
  if (ctx.options.subscribeAfterRamp) {
    await until(pool.failed, () => agg.openRate.opened + agg.failedClients >= clients || monoNow() >= rampDeadline);
    pool.post({ type: 'subscribe' });
  }
  await until(pool.failed, () => agg.subscribedCount + agg.failedClients >= clients || monoNow() >= rampDeadline);
  if (agg.subscribedCount === 0 && agg.failedClients >= clients) {
    // Not one client got in: a usage problem (wrong URL, key or path), not a load result.
    const { connectErrors, refusals, noticeErrors } = agg.failures;
    const list = (m: Record<string, number>): string =>
      Object.entries(m)
        .map(([k, v]) => `${k} ×${v}`)
        .join(', ');
    if (agg.connections > 0 && Object.keys(noticeErrors).length)
      throw new LoadUsageError(
        `no client could subscribe to ${ctx.pairs.join(', ')}: error notices ${list(noticeErrors)}`,
      );
    throw new LoadUsageError(
      `no client could connect to ${ctx.wsUrl}: ` +
        `${list({ ...refusals, ...connectErrors }) || 'closed before subscribing'}`,
    );
  }
}

/**
 * The warm-up: connection bursts of the ramp settle before anything is counted. On a shared
 * schedule every host's window opens at the same wall time, whatever its ramp did. Returns when
 * the measured phase began.
 */
async function warmUp(
  plan: FanoutPlan,
  pool: WorkerPool,
  agg: FanoutAggregator,
  t0: number,
  observations: string[],
): Promise<number> {
  const { schedule, clients } = plan;
  if (schedule) await Promise.race([pool.failed, sleep(t0 + schedule.windowStartMs - monoNow())]);
  else if (plan.o.warmupMs > 0) await Promise.race([pool.failed, sleep(plan.o.warmupMs)]);
  const steadyAt = monoNow();
  if (schedule && agg.subscribedCount < clients)
    observations.push(
      `${clients - agg.subscribedCount} of ${clients} clients were not subscribed when the ` +
        `shared window opened: their frames are missing from window.frames`,
    );
  else if (schedule && steadyAt > t0 + schedule.windowStartMs + 50)
    observations.push(
      `the ramp ended ${Math.round(steadyAt - t0 - schedule.windowStartMs)} ` +
        `ms after the shared window opened: clients that subscribed late miss ` +
        `frames in window.frames (give a longer --warmup)`,
    );
  agg.markSteady(steadyAt);
  pool.post({ type: 'steady' });
  return steadyAt;
}
