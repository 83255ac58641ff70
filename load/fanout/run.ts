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
import { FANOUT_DEFAULTS, LoadUsageError, positiveInt } from '../options.ts';
import { assignKeys, pickPairs, sampleTargetClock, type LoadTarget } from '../target.ts';
import { evaluateThresholds, parseThresholds, type ThresholdResult } from '../thresholds.ts';
import { FanoutAggregator, saturationReasons, type FanoutMeasurements, type WorkerHealth } from './aggregate.ts';
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
  /** Busy-spin per frame in the workers: simulates a slow generator (tests of the saturation verdict). */
  burnMsPerFrame?: number;
  onProgress?: (p: FanoutProgress) => void;
}

export interface FanoutProgress { phase: 'ramp' | 'steady' | 'closing'; elapsedS: number; connections: number; subscribed: number; frames: number; clients: number }

/** The fan-out report: plain data, formatted by load/report/*. */
export interface FanoutReport extends FanoutMeasurements {
  kind: 'fanout';
  /** `calibrate` when the target was the trivial broadcast server (the generator's floor). */
  mode: 'fanout' | 'calibrate';
  startedAt: string;
  target: { rest: string; ws: string; embedded: boolean };
  options: { clients: number; pairs: string[]; durationMs: number; rampRate: number; workers: number; keys: number; updateWindowMs: number; validatePerSecond: number };
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

/** Flat metric values for thresholds (names in thresholds.ts METRICS.fanout). */
export function fanoutMetrics(r: Omit<FanoutReport, 'thresholds'>): Record<string, number | null> {
  const m: Record<string, number | null> = {};
  const dist = (name: string, d: { p50: number | null; p90?: number | null; p99: number | null; p999?: number | null; max: number | null }): void => {
    m[`${name}.p50`] = d.p50; m[`${name}.p90`] = d.p90 ?? null; m[`${name}.p99`] = d.p99; m[`${name}.p999`] = d.p999 ?? null; m[`${name}.max`] = d.max;
  };
  dist('latency', r.latencyMs); dist('server_latency', r.serverLatencyMs); dist('skew', r.skewMs);
  dist('connect', r.connectMs); dist('subscribe', r.subscribeMs); dist('first_frame', r.firstFrameMs);
  m.lost = r.lost; m.loss_rate = r.lossRate; m.errors = r.errors; m.frames_per_second = r.framesPerSecond; m.frames = r.framesReceived;
  m.connected = r.connected; m.refused = Object.values(r.refusals).reduce((a, b) => a + b, 0);
  m.disconnects = Object.values(r.disconnects).reduce((a, b) => a + b, 0); m.saturated = r.generator.saturated ? 1 : 0;
  return m;
}

/** Validated options with defaults merged. */
export function resolveFanoutOptions(o: FanoutOptions): Required<Omit<FanoutOptions, 'pair' | 'localAddress' | 'onProgress' | 'burnMsPerFrame' | 'workers' | 'subscribeAfterRamp'>> & { workers: number; pair?: string[] } {
  const clients = positiveInt(o.clients ?? FANOUT_DEFAULTS.clients, '--clients', 20_000);
  const pairs = positiveInt(o.pairs ?? FANOUT_DEFAULTS.pairs, '--pairs', 100);
  if (o.pair && o.pair.length > 100) throw new LoadUsageError(`--pair: ${o.pair.length} pairs; the spec allows at most 100 per connection`);
  const cores = availableParallelism();
  const workers = o.workers === undefined || o.workers === 'auto' ? Math.max(1, Math.min(cores, clients)) : positiveInt(o.workers, '--workers', 64);
  const rampRate = o.rampRate ?? FANOUT_DEFAULTS.rampRate;
  if (!(rampRate > 0)) throw new LoadUsageError(`--ramp-rate ${rampRate}: must be a positive rate`);
  const durationMs = o.durationMs ?? FANOUT_DEFAULTS.durationMs;
  if (!(durationMs > 0)) throw new LoadUsageError(`--duration: must be positive`);
  return {
    clients, pairs, workers, rampRate, durationMs,
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
    throw new LoadUsageError(`load fanout drives the raw WebSocket stream; the profile's transport is socketio, which it does not speak (load rest works with this profile)`);
  }
  const keys = assignKeys(o.clients, target.keys);
  const pairs = o.pair ?? await pickPairs(target, o.pairs);
  const startedAt = new Date().toISOString();
  const observations: string[] = [];
  const wallOffset = wallOffsetMs();
  // The target's clock is read on the time scale frames are timed with (mono + wall offset).
  const clockSamples = await sampleTargetClock(target, () => monoNow() + wallOffset);
  const before = estimateClock(clockSamples.samples, clockSamples.resolutionMs);
  // Workers record latency with this correction; frames may narrow it later (then it is shifted).
  const preOffsetMs = before.offsetMs ?? 0;
  const perWorker: ClientPlan[][] = Array.from({ length: o.workers }, () => []);
  for (let i = 0; i < o.clients; i++) perWorker[i % o.workers]!.push({ index: i, key: keys[i]!, startAtMs: (i * 1000) / o.rampRate });

  const agg = new FanoutAggregator({ clients: o.clients, updateWindowMs: o.updateWindowMs, settleMs: o.settleMs, tickMs: o.tickMs });
  const workers: Worker[] = [];
  const done = new Set<number>();
  let ready = 0;
  let onReady: () => void = () => {};
  let onDone: () => void = () => {};
  let failure: Error | null = null;
  let onFailure: (e: Error) => void = () => {};

  for (let w = 0; w < o.workers; w++) {
    agg.setWorkerClients(w, perWorker[w]!.length);
    const config: WorkerConfig = {
      workerIndex: w, wsUrl: target.ws, keyHeader: API_KEY_HEADER, clients: perWorker[w]!, pairs,
      pingIntervalMs: o.pingIntervalMs, connectTimeoutMs: o.connectTimeoutMs, tickMs: o.tickMs, updateWindowMs: o.updateWindowMs,
      validatePerSecond: o.validatePerSecond, wallOffsetMs: wallOffset, serverOffsetMs: preOffsetMs, msPerUnit: null,
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      ...(options.burnMsPerFrame ? { burnMsPerFrame: options.burnMsPerFrame } : {}),
      ...(options.subscribeAfterRamp ? { holdSubscribe: true } : {}),
    };
    const worker = new Worker(BOOT, { workerData: { ...config, entry: WORKER } });
    worker.on('message', (msg: WorkerMessage) => {
      if (msg.type === 'tick') agg.addTick(msg);
      else if (msg.type === 'ready') { if (++ready === o.workers) onReady(); }
      else if (msg.type === 'done') { done.add(msg.workerIndex); if (done.size === o.workers) onDone(); }
    });
    worker.on('error', (err) => { failure = err; onFailure(err); });
    workers.push(worker);
  }
  const post = (msg: CoordinatorMessage): void => { for (const w of workers) w.postMessage(msg); };
  const failed = new Promise<never>((_, reject) => { onFailure = reject; });
  failed.catch(() => {});

  try {
    await Promise.race([new Promise<void>((r) => { onReady = r; if (ready === o.workers) r(); }), failed]);
    const rssBefore = process.memoryUsage().rss;
    const t0 = monoNow() + 20;
    agg.start(t0);
    post({ type: 'start', atMs: t0 });

    // Ramp: wait until every client is subscribed or finished, or the last one had its chance.
    const rampDeadline = t0 + (o.clients * 1000) / o.rampRate + o.connectTimeoutMs + 5000;
    const progress = (phase: FanoutProgress['phase']): void => {
      if (!options.onProgress) return;
      const p = agg.progress(monoNow());
      options.onProgress({ phase, clients: o.clients, ...p });
    };
    const progressTimer = setInterval(() => progress(agg.steadySince < Infinity ? 'steady' : 'ramp'), 500);
    try {
      let iv: NodeJS.Timeout | undefined;
      if (options.subscribeAfterRamp) {
        try {
          await Promise.race([failed, new Promise<void>((resolve) => {
            iv = setInterval(() => {
              if (agg.openRate.opened + agg.failedClients >= o.clients || monoNow() >= rampDeadline) resolve();
            }, 50);
          })]);
        } finally {
          clearInterval(iv);
        }
        post({ type: 'subscribe' });
      }
      try {
        await Promise.race([failed, new Promise<void>((resolve) => {
          iv = setInterval(() => {
            const settled = agg.subscribedCount + agg.failedClients >= o.clients;
            if (settled || monoNow() >= rampDeadline) resolve();
          }, 50);
        })]);
      } finally {
        clearInterval(iv);
      }
      if (agg.subscribedCount === 0 && agg.failedClients >= o.clients) {
        // Not one client got in: a usage problem (wrong URL, key or path), not a load result.
        const { connectErrors, refusals, noticeErrors } = agg.failures;
        const list = (m: Record<string, number>): string => Object.entries(m).map(([k, v]) => `${k} ×${v}`).join(', ');
        if (agg.connections > 0 && Object.keys(noticeErrors).length) throw new LoadUsageError(`no client could subscribe to ${pairs.join(', ')}: error notices ${list(noticeErrors)}`);
        throw new LoadUsageError(`no client could connect to ${target.ws}: ${list({ ...refusals, ...connectErrors }) || 'closed before subscribing'}`);
      }
      // Warm-up: connection bursts of the ramp settle before anything is counted.
      if (o.warmupMs > 0) await Promise.race([failed, sleep(o.warmupMs)]);
      const steadyAt = monoNow();
      agg.markSteady(steadyAt);
      post({ type: 'steady' });
      const rssSteady = process.memoryUsage().rss;
      const cpu0 = process.cpuUsage();
      await Promise.race([failed, sleep(o.durationMs)]);
      const stopAt = monoNow();
      const cpu = process.cpuUsage(cpu0);
      agg.markStop(stopAt);
      post({ type: 'stop', closeAtMs: stopAt });
      progress('closing');
      await Promise.race([failed, new Promise<void>((r) => { onDone = r; if (done.size === o.workers) r(); }), sleep(15_000)]);

      const estimate = estimateClock(clockSamples.samples, clockSamples.resolutionMs, agg.maxSentMinusReceivedMs);
      const m = agg.finish(estimate.offsetMs === null ? null : estimate.offsetMs - preOffsetMs);
      if (failure) throw failure;
      const sentAtResolution = m.sentAtUnit ? resolutionMs(m.sentAtUnit as TimeUnit) : null;
      const clock: FanoutReport['clock'] = {
        ...estimate,
        ...(m.framesReceived > 0 && m.sentAtUnit === null ? { status: 'unknown' as const, offsetMs: null, reason: m.framesWithoutSentAt >= m.framesReceived ? 'push frames carry no sent_at' : 'the unit of sent_at could not be guessed (not within a day of our clock in s, ms, µs or ns)' } : {}),
        tsUnit: clockSamples.tsUnit,
        sentAtUnit: m.sentAtUnit,
        // A stamp in whole units is up to one unit before the true send time.
        latencyBoundMs: estimate.boundMs === null || sentAtResolution === null ? null : Math.round((estimate.boundMs + sentAtResolution) * 1000) / 1000,
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
        options: { clients: o.clients, pairs, durationMs: o.durationMs, rampRate: o.rampRate, workers: o.workers, keys: new Set(keys).size, updateWindowMs: o.updateWindowMs, validatePerSecond: o.validatePerSecond },
        ...m,
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
          cpuMicrosPerFrame: m.framesReceived ? Math.round((cpuMs * 1000 / m.framesReceived) * 100) / 100 : null,
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

/** A delay that does not keep the process alive on its own. */
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

function observe(r: Omit<FanoutReport, 'thresholds'>, out: string[]): void {
  const c = r.clock;
  if (c.sentAtUnit) out.push(`sent_at and last_updated read as ${c.sentAtUnit} since the epoch (the spec does not show the unit)`);
  if (c.tsUnit) out.push(`REST ts read as ${c.tsUnit} since the epoch`);
  if (c.status === 'unknown') out.push(`latency unknown: ${c.reason}`);
  else if (c.status === 'corrected') out.push(`the target's clock runs ${c.offsetMs! > 0 ? 'ahead of' : 'behind'} ours by ${Math.abs(c.offsetMs!)} ms (between ${c.lowMs} and ${c.highMs} ms, from ${c.samples} REST round trips${c.narrowedByFrames ? ' and the frames' : ''}): latency corrected by it, true within ± ${c.latencyBoundMs} ms`);
  else out.push(`the target's clock is ours within ${c.lowMs} to ${c.highMs} ms (${c.samples} REST round trips${c.narrowedByFrames ? ' and the frames' : ''}): latency not corrected, true within ± ${c.latencyBoundMs} ms`);
  if (r.receiptsBeforeSentAt) out.push(`${r.receiptsBeforeSentAt} frames arrived before their sent_at on the clock estimated before the run: the estimate was narrowed by them and latency moved to it, never clamped`);
  if (r.latencyBelowZeroAfterCorrection) out.push(`${r.latencyBelowZeroAfterCorrection} latencies still below zero after the correction (histogram rounding) are left out, not clamped`);
  if (r.framesWithoutSentAt && r.framesWithoutSentAt < r.framesReceived) out.push(`${r.framesWithoutSentAt} of ${r.framesReceived} frames carry no sent_at: their latency is not measured`);
  if (r.duplicates) out.push(`${r.duplicates} frames repeated an update a client had already received (same code and last_updated): the push interval is not tied to price changes`);
  if (r.outOfOrder) out.push(`${r.outOfOrder} frames carried an older last_updated than the client had already seen`);
  if (r.lateReceipts) out.push(`${r.lateReceipts} receipts arrived after the ${r.options.updateWindowMs} ms loss window`);
}
