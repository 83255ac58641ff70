/**
 * `conform load fanout` as a library: validates options, spreads clients over worker threads,
 * ramps them at an open-model rate, runs the measured phase, and returns the report as plain
 * data. It prints nothing; `onProgress` feeds a live line if the caller wants one.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { API_KEY_HEADER } from '../../src/spec.ts';
import { estimateClock, resolutionMs, type ClockEstimate, type TimeUnit } from '../clock.ts';
import { monoNow, wallOffsetMs } from '../mono-clock.ts';
import { moduleUrl } from '../../src/module-url.ts';
import { LoadUsageError } from '../../src/errors.ts';
import { FANOUT_DEFAULTS, MAX_CLIENTS_PER_HOST, MAX_SHARDS, positiveInt } from '../options.ts';
import { assignKeys, pickPairs, sampleTargetClock, type LoadTarget } from '../target.ts';
import { flatMetrics } from '../metrics.ts';
import { evaluateThresholds, parseThresholds, type ThresholdResult } from '../thresholds.ts';
import { CLOSE_GRACE_MS, fanoutSchedule } from '../schedule.ts';
import { FanoutAggregator, saturationReasons } from './aggregate.ts';
import type { FanoutMeasurements, WorkerHealth } from './measurements.ts';
import type { ClientPlan, CoordinatorMessage, WorkerConfig, WorkerMessage } from './protocol.ts';

export interface FanoutOptions {
  clients?: number;
  /** How many pairs to pick from `/v1/pairs`; ignored when `pair` names them. */
  pairs?: number;
  pair?: string[];
  durationMs?: number;
  /** Connect every client first and subscribe them all after the ramp, so the ramp runs without traffic. */
  subscribeAfterRamp?: boolean;
  /** Settling time after the ramp, excluded from every figure (default 1 s). */
  warmupMs?: number;
  rampRate?: number;
  /** Worker threads; default one per core (at most one per client). */
  workers?: number | 'auto';
  thresholds?: string[];
  pingIntervalMs?: number;
  connectTimeoutMs?: number;
  updateWindowMs?: number;
  settleMs?: number;
  tickMs?: number;
  validatePerSecond?: number;
  localAddress?: string;
  /**
   * This host's share of a run spread over `count` hosts (1-based `index`): `clients` is the whole
   * run's, the keys are assigned over the whole run, and this host opens clients
   * [⌊(index−1)·clients/count⌋, ⌊index·clients/count⌋) at their places in the one ramp.
   */
  shard?: { index: number; count: number };
  /**
   * Wall-clock epoch ms at which the whole run's ramp begins on every host. The measured window is
   * then the shared schedule's (load/schedule.ts, as the k6 script's), and frames sent inside it
   * are counted apart (`window.frames`), so shards merge to the unsharded counts.
   */
  startAtMs?: number;
  onProgress?: (p: FanoutProgress) => void;
}

export interface FanoutProgress {
  phase: 'ramp' | 'steady' | 'closing';
  elapsedS: number;
  connections: number;
  subscribed: number;
  frames: number;
  clients: number;
}

/** The fan-out report: plain data, formatted by load/report/*. */
export interface FanoutReport extends FanoutMeasurements {
  kind: 'fanout';
  /** `calibrate` when the target was the trivial broadcast server (the generator's floor). */
  mode: 'fanout' | 'calibrate';
  startedAt: string;
  target: { rest: string; ws: string; embedded: boolean };
  options: {
    clients: number;
    pairs: string[];
    durationMs: number;
    rampRate: number;
    workers: number;
    keys: number;
    updateWindowMs: number;
    validatePerSecond: number;
  };
  /** Set with a shard: this host's share (clients and options.clients are the whole run's). */
  shard?: { index: number; count: number; clients: number };
  /** Set with a coordinated start: the shared window and the frames sent inside it. */
  window?: { startAt: string; endAt: string; frames: number };
  /** From the first scheduled connect to the measured phase (every client subscribed or given up, plus the warm-up). */
  rampMs: number;
  /** Connections opened per second, first open to last. */
  achievedRampRate: number;
  /**
   * The target's clock against ours (load/clock.ts), from REST `ts` round trips narrowed by the
   * frames; latency is corrected by `offsetMs` when the bounds exclude zero, and not reported when
   * `status` is unknown. `latencyBoundMs` adds the resolution of `sent_at` to the clock's bound.
   */
  clock: ClockEstimate & { tsUnit: string | null; sentAtUnit: string | null; latencyBoundMs: number | null };
  generator: {
    eventLoopDelayP99Ms: number;
    cpuPercent: number;
    saturated: boolean;
    reasons: string[];
    workers: WorkerHealth[];
    /** CPU of this whole process (main + workers) over the measured phase, % of one core. */
    processCpuPercent: number;
    /** CPU µs per received frame (process-wide, measured phase). */
    cpuMicrosPerFrame: number | null;
    rssBytes: number;
    memoryPerConnectionBytes: number | null;
  };
  trustworthy: boolean;
  thresholds: ThresholdResult[];
  observations: string[];
}

/** Flat metric values for thresholds, read as load/metrics.ts says. */
export function fanoutMetrics(r: Omit<FanoutReport, 'thresholds'>): Record<string, number | null> {
  return flatMetrics('fanout', r as unknown as Record<string, unknown>);
}

/** Validated options with defaults merged. */
export function resolveFanoutOptions(
  o: FanoutOptions,
): Required<
  Omit<FanoutOptions, 'pair' | 'localAddress' | 'onProgress' | 'workers' | 'subscribeAfterRamp' | 'shard' | 'startAtMs'>
> & { workers: number; pair?: string[] } {
  // The whole run's clients: one host opens at most MAX_CLIENTS_PER_HOST of them (checked per shard).
  const clients = positiveInt(o.clients ?? FANOUT_DEFAULTS.clients, '--clients', MAX_CLIENTS_PER_HOST * MAX_SHARDS);
  const pairs = positiveInt(o.pairs ?? FANOUT_DEFAULTS.pairs, '--pairs', 100);
  if (o.pair && o.pair.length > 100)
    throw new LoadUsageError(`--pair: ${o.pair.length} pairs; the spec allows at most 100 per connection`);
  const cores = availableParallelism();
  const workers =
    o.workers === undefined || o.workers === 'auto'
      ? Math.max(1, Math.min(cores, clients))
      : positiveInt(o.workers, '--workers', 64);
  const rampRate = o.rampRate ?? FANOUT_DEFAULTS.rampRate;
  if (!(rampRate > 0)) throw new LoadUsageError(`--ramp-rate ${rampRate}: must be a positive rate`);
  const durationMs = o.durationMs ?? FANOUT_DEFAULTS.durationMs;
  if (!(durationMs > 0)) throw new LoadUsageError(`--duration: must be positive`);
  return {
    clients,
    pairs,
    workers,
    rampRate,
    durationMs,
    warmupMs: o.warmupMs ?? FANOUT_DEFAULTS.warmupMs,
    thresholds: o.thresholds ?? [],
    pingIntervalMs: o.pingIntervalMs ?? FANOUT_DEFAULTS.pingIntervalMs,
    connectTimeoutMs: o.connectTimeoutMs ?? FANOUT_DEFAULTS.connectTimeoutMs,
    updateWindowMs: o.updateWindowMs ?? FANOUT_DEFAULTS.updateWindowMs,
    settleMs: o.settleMs ?? FANOUT_DEFAULTS.settleMs,
    tickMs: o.tickMs ?? FANOUT_DEFAULTS.tickMs,
    validatePerSecond: o.validatePerSecond ?? FANOUT_DEFAULTS.validatePerSecond,
    ...(o.pair ? { pair: o.pair } : {}),
  };
}

const BOOT = new URL('./worker-boot.mjs', import.meta.url);
const WORKER = moduleUrl('./client-worker.ts', import.meta.url).href;

/** Runs the fan-out test against `target` (which the caller closes). */
export async function runFanout(target: LoadTarget, options: FanoutOptions = {}): Promise<FanoutReport> {
  const o = resolveFanoutOptions(options);
  const thresholds = parseThresholds(o.thresholds, 'fanout');
  if (target.profile.transport === 'socketio') {
    // Refused up front: raw WebSocket clients against a Socket.IO endpoint would all fail to connect.
    throw new LoadUsageError(
      `load fanout drives the raw WebSocket stream; the profile's transport is socketio, ` +
        `which it does not speak (load rest works with this profile)`,
    );
  }
  const shard = shardRange(o.clients, options.shard);
  const mine = shard.to - shard.from;
  if (mine > MAX_CLIENTS_PER_HOST)
    throw new LoadUsageError(
      `--clients ${o.clients}${options.shard ? ` --shard ${options.shard.index}/${options.shard.count}` : ''}: ` +
        `${mine} clients on this host; one host opens at most ${MAX_CLIENTS_PER_HOST}: spread them over more shards`,
    );
  const keys = assignKeys(o.clients, target.keys);
  if (options.shard && mine < 1)
    throw new LoadUsageError(
      `--shard ${options.shard.index}/${options.shard.count}: no clients left for this shard (--clients ${o.clients})`,
    );
  if (options.startAtMs !== undefined && options.subscribeAfterRamp)
    throw new LoadUsageError(
      '--start-at and --subscribe-after-ramp: the shared schedule subscribes as clients connect; give one',
    );
  const schedule =
    options.startAtMs === undefined
      ? null
      : fanoutSchedule({
          clients: o.clients,
          rampRate: o.rampRate,
          warmupMs: o.warmupMs,
          durationS: o.durationMs / 1000,
          startAtMs: options.startAtMs,
        });
  const workerCount = Math.min(o.workers, mine);
  const pairs = o.pair ?? (await pickPairs(target, o.pairs));
  const startedAt = new Date().toISOString();
  const observations: string[] = [];
  const wallOffset = wallOffsetMs();
  // The target's clock is read on the time scale frames are timed with (mono + wall offset).
  const clockSamples = await sampleTargetClock(target, () => monoNow() + wallOffset);
  const before = estimateClock(clockSamples.samples, clockSamples.resolutionMs);
  // Workers record latency with this correction; frames may narrow it later (then it is shifted).
  const preOffsetMs = before.offsetMs ?? 0;
  const perWorker: ClientPlan[][] = Array.from({ length: workerCount }, () => []);
  for (let i = shard.from; i < shard.to; i++)
    perWorker[i % workerCount]!.push({ index: i, key: keys[i]!, startAtMs: (i * 1000) / o.rampRate });
  // The shared window is judged on sent_at mapped to our clock with the estimate made before the run.
  const frameWindow = schedule
    ? { startWallMs: options.startAtMs! + schedule.windowStartMs, endWallMs: options.startAtMs! + schedule.windowEndMs }
    : undefined;

  const agg = new FanoutAggregator({
    clients: mine,
    updateWindowMs: o.updateWindowMs,
    settleMs: o.settleMs,
    tickMs: o.tickMs,
  });
  const workers: Worker[] = [];
  const done = new Set<number>();
  let ready = 0;
  let onReady: () => void = () => {};
  let onDone: () => void = () => {};
  let failure: Error | null = null;
  let onFailure: (e: Error) => void = () => {};

  for (let w = 0; w < workerCount; w++) {
    agg.setWorkerClients(w, perWorker[w]!.length);
    const config: WorkerConfig = {
      workerIndex: w,
      wsUrl: target.ws,
      keyHeader: API_KEY_HEADER,
      clients: perWorker[w]!,
      pairs,
      pingIntervalMs: o.pingIntervalMs,
      connectTimeoutMs: o.connectTimeoutMs,
      tickMs: o.tickMs,
      updateWindowMs: o.updateWindowMs,
      validatePerSecond: o.validatePerSecond,
      wallOffsetMs: wallOffset,
      serverOffsetMs: preOffsetMs,
      msPerUnit: null,
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      ...(options.subscribeAfterRamp ? { holdSubscribe: true } : {}),
      ...(frameWindow ? { frameWindow } : {}),
    };
    const worker = new Worker(BOOT, { workerData: { ...config, entry: WORKER } });
    worker.on('message', (msg: WorkerMessage) => {
      if (msg.type === 'tick') agg.addTick(msg);
      else if (msg.type === 'ready') {
        if (++ready === workerCount) onReady();
      } else if (msg.type === 'done') {
        done.add(msg.workerIndex);
        if (done.size === workerCount) onDone();
      }
    });
    worker.on('error', (err) => {
      failure = err;
      onFailure(err);
    });
    workers.push(worker);
  }
  const post = (msg: CoordinatorMessage): void => {
    for (const w of workers) w.postMessage(msg);
  };
  const failed = new Promise<never>((_, reject) => {
    onFailure = reject;
  });
  failed.catch(() => {});

  try {
    await Promise.race([
      new Promise<void>((r) => {
        onReady = r;
        if (ready === workerCount) r();
      }),
      failed,
    ]);
    const rssBefore = process.memoryUsage().rss;
    const t0 = options.startAtMs === undefined ? monoNow() + 20 : monoNow() + (options.startAtMs - Date.now());
    if (t0 < monoNow())
      observations.push(
        `the workers were ready ${Math.round(monoNow() - t0)} ms after --start-at: this host's ramp began late`,
      );
    agg.start(t0);
    post({ type: 'start', atMs: t0 });

    // Ramp: wait until every client is subscribed or finished, or the last one had its chance.
    const rampDeadline = t0 + (o.clients * 1000) / o.rampRate + o.connectTimeoutMs + 5000;
    const progress = (phase: FanoutProgress['phase']): void => {
      if (!options.onProgress) return;
      const p = agg.progress(monoNow());
      options.onProgress({ phase, clients: mine, ...p });
    };
    const progressTimer = setInterval(() => progress(agg.steadySince < Infinity ? 'steady' : 'ramp'), 500);
    try {
      let iv: NodeJS.Timeout | undefined;
      if (options.subscribeAfterRamp) {
        try {
          await Promise.race([
            failed,
            new Promise<void>((resolve) => {
              iv = setInterval(() => {
                if (agg.openRate.opened + agg.failedClients >= mine || monoNow() >= rampDeadline) resolve();
              }, 50);
            }),
          ]);
        } finally {
          clearInterval(iv);
        }
        post({ type: 'subscribe' });
      }
      try {
        await Promise.race([
          failed,
          new Promise<void>((resolve) => {
            iv = setInterval(() => {
              const settled = agg.subscribedCount + agg.failedClients >= mine;
              if (settled || monoNow() >= rampDeadline) resolve();
            }, 50);
          }),
        ]);
      } finally {
        clearInterval(iv);
      }
      if (agg.subscribedCount === 0 && agg.failedClients >= mine) {
        // Not one client got in: a usage problem (wrong URL, key or path), not a load result.
        const { connectErrors, refusals, noticeErrors } = agg.failures;
        const list = (m: Record<string, number>): string =>
          Object.entries(m)
            .map(([k, v]) => `${k} ×${v}`)
            .join(', ');
        if (agg.connections > 0 && Object.keys(noticeErrors).length)
          throw new LoadUsageError(
            `no client could subscribe to ${pairs.join(', ')}: error notices ${list(noticeErrors)}`,
          );
        throw new LoadUsageError(
          `no client could connect to ${target.ws}: ` +
            `${list({ ...refusals, ...connectErrors }) || 'closed before subscribing'}`,
        );
      }
      // Warm-up: connection bursts of the ramp settle before anything is counted.
      // On a shared schedule every host's window opens at the same wall time, whatever its ramp did.
      if (schedule) await Promise.race([failed, sleep(t0 + schedule.windowStartMs - monoNow())]);
      else if (o.warmupMs > 0) await Promise.race([failed, sleep(o.warmupMs)]);
      const steadyAt = monoNow();
      if (schedule && agg.subscribedCount < mine)
        observations.push(
          `${mine - agg.subscribedCount} of ${mine} clients were not subscribed when the ` +
            `shared window opened: their frames are missing from window.frames`,
        );
      else if (schedule && steadyAt > t0 + schedule.windowStartMs + 50)
        observations.push(
          `the ramp ended ${Math.round(steadyAt - t0 - schedule.windowStartMs)} ` +
            `ms after the shared window opened: clients that subscribed late miss ` +
            `frames in window.frames (give a longer --warmup)`,
        );
      agg.markSteady(steadyAt);
      post({ type: 'steady' });
      const rssSteady = process.memoryUsage().rss;
      const cpu0 = process.cpuUsage();
      // Shared schedule: frames sent just before the window ends still arrive before the close.
      await Promise.race([
        failed,
        sleep(schedule ? t0 + schedule.windowEndMs + CLOSE_GRACE_MS - monoNow() : o.durationMs),
      ]);
      const stopAt = monoNow();
      const cpu = process.cpuUsage(cpu0);
      agg.markStop(stopAt);
      post({ type: 'stop', closeAtMs: stopAt });
      progress('closing');
      await Promise.race([
        failed,
        new Promise<void>((r) => {
          onDone = r;
          if (done.size === workerCount) r();
        }),
        sleep(15_000),
      ]);

      const estimate = estimateClock(clockSamples.samples, clockSamples.resolutionMs, agg.maxSentMinusReceivedMs);
      const m = agg.finish(estimate.offsetMs === null ? null : estimate.offsetMs - preOffsetMs);
      if (failure) throw failure;
      const sentAtResolution = m.sentAtUnit ? resolutionMs(m.sentAtUnit as TimeUnit) : null;
      const clock: FanoutReport['clock'] = {
        ...estimate,
        ...(m.framesReceived > 0 && m.sentAtUnit === null
          ? {
              status: 'unknown' as const,
              offsetMs: null,
              reason:
                m.framesWithoutSentAt >= m.framesReceived
                  ? 'push frames carry no sent_at'
                  : 'the unit of sent_at could not be guessed (not within a day of our clock in s, ms, µs or ns)',
            }
          : {}),
        tsUnit: clockSamples.tsUnit,
        sentAtUnit: m.sentAtUnit,
        // A stamp in whole units is up to one unit before the true send time.
        latencyBoundMs:
          estimate.boundMs === null || sentAtResolution === null
            ? null
            : Math.round((estimate.boundMs + sentAtResolution) * 1000) / 1000,
      };
      const reasons = saturationReasons(m.workers);
      const measuredMs = Math.max(1, stopAt - steadyAt);
      const cpuMs = (cpu.user + cpu.system) / 1000;
      const connected = m.connected;
      const rampMs = Math.round(steadyAt - t0);
      const report: Omit<FanoutReport, 'thresholds'> = {
        kind: 'fanout',
        mode: 'fanout',
        startedAt,
        target: { rest: target.rest, ws: target.ws, embedded: target.embedded },
        options: {
          clients: o.clients,
          pairs,
          durationMs: o.durationMs,
          rampRate: o.rampRate,
          workers: workerCount,
          keys: new Set(keys.slice(shard.from, shard.to)).size,
          updateWindowMs: o.updateWindowMs,
          validatePerSecond: o.validatePerSecond,
        },
        ...m,
        ...(options.shard ? { shard: { ...options.shard, clients: mine } } : {}),
        ...(schedule
          ? {
              window: {
                startAt: new Date(frameWindow!.startWallMs).toISOString(),
                endAt: new Date(frameWindow!.endWallMs).toISOString(),
                frames: m.windowFrames,
              },
            }
          : {}),
        rampMs,
        achievedRampRate: agg.openRate.perSecond,
        clock,
        generator: {
          eventLoopDelayP99Ms: Math.max(0, ...m.workers.map((w) => w.eventLoopDelayP99Ms)),
          cpuPercent: Math.max(0, ...m.workers.map((w) => w.cpuPercent)),
          saturated: reasons.length > 0,
          reasons,
          workers: m.workers,
          processCpuPercent: Math.round((cpuMs / measuredMs) * 1000) / 10,
          cpuMicrosPerFrame: m.framesReceived ? Math.round(((cpuMs * 1000) / m.framesReceived) * 100) / 100 : null,
          rssBytes: rssSteady,
          memoryPerConnectionBytes: connected ? Math.round((rssSteady - rssBefore) / connected) : null,
        },
        trustworthy: reasons.length === 0,
        observations,
      };
      observe(report, observations);
      return { ...report, thresholds: evaluateThresholds(thresholds, fanoutMetrics(report)) };
    } finally {
      clearInterval(progressTimer);
    }
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** The global client indices [from, to) of a shard; the whole run without one. */
export function shardRange(
  clients: number,
  shard: { index: number; count: number } | undefined,
): { from: number; to: number } {
  if (!shard) return { from: 0, to: clients };
  return {
    from: Math.floor(((shard.index - 1) * clients) / shard.count),
    to: Math.floor((shard.index * clients) / shard.count),
  };
}

/** A delay that does not keep the process alive on its own. */
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

function observe(r: Omit<FanoutReport, 'thresholds'>, out: string[]): void {
  const c = r.clock;
  if (c.sentAtUnit)
    out.push(`sent_at and last_updated read as ${c.sentAtUnit} since the epoch (the spec does not show the unit)`);
  if (c.tsUnit) out.push(`REST ts read as ${c.tsUnit} since the epoch`);
  if (c.status === 'unknown') out.push(`latency unknown: ${c.reason}`);
  else if (c.status === 'corrected')
    out.push(
      `the target's clock runs ${c.offsetMs! > 0 ? 'ahead of' : 'behind'} ours ` +
        `by ${Math.abs(c.offsetMs!)} ms (between ${c.lowMs} and ${c.highMs} ms, ` +
        `from ${c.samples} REST round trips${c.narrowedByFrames ? ' and the frames' : ''}): ` +
        `latency corrected by it, true within ± ${c.latencyBoundMs} ms`,
    );
  else
    out.push(
      `the target's clock is ours within ${c.lowMs} to ${c.highMs} ms (${c.samples} ` +
        `REST round trips${c.narrowedByFrames ? ' and the frames' : ''}): latency ` +
        `not corrected, true within ± ${c.latencyBoundMs} ms`,
    );
  if (r.receiptsBeforeSentAt)
    out.push(
      `${r.receiptsBeforeSentAt} frames arrived before their sent_at on the clock estimated before ` +
        `the run: the estimate was narrowed by them and latency moved to it, never clamped`,
    );
  if (r.latencyBelowZeroAfterCorrection)
    out.push(
      `${r.latencyBelowZeroAfterCorrection} latencies still below zero after the ` +
        `correction (histogram rounding) are left out, not clamped`,
    );
  if (r.framesWithoutSentAt && r.framesWithoutSentAt < r.framesReceived)
    out.push(`${r.framesWithoutSentAt} of ${r.framesReceived} frames carry no sent_at: their latency is not measured`);
  if (r.duplicates)
    out.push(
      `${r.duplicates} frames repeated an update a client had already received (same code ` +
        `and last_updated): the push interval is not tied to price changes`,
    );
  if (r.outOfOrder) out.push(`${r.outOfOrder} frames carried an older last_updated than the client had already seen`);
  if (r.lateReceipts)
    out.push(`${r.lateReceipts} receipts arrived after the ${r.options.updateWindowMs} ms loss window`);
}
