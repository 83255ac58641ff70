/**
 * Aggregate: merges the workers' ticks into one picture of the run. Pure (no I/O, no clock of
 * its own): skew and loss per distinct update (code, last_updated), merged HDR histograms, the
 * timeline, and the generator's own health. The coordinator feeds it; reports format its result.
 */
import {
  addEncoded,
  addShifted,
  bucketize,
  createHistogram,
  encode,
  percentileCurve,
  recordMs,
  summarize,
  type Histogram,
  type Percentiles,
} from '../histogram.ts';
import { distributions } from '../metrics.ts';
import type { Tick } from './protocol.ts';

import { SATURATION } from '../options.ts';

export { SATURATION };

export interface AggregatorOptions {
  clients: number;
  /** An update is judged this long after its first receipt (receipts later than that are lost). */
  updateWindowMs: number;
  /** A client counts for an update only if subscribed at least this long before the update's first receipt. */
  settleMs: number;
  tickMs: number;
}

export interface WorkerHealth {
  workerIndex: number;
  clients: number;
  eventLoopDelayP99Ms: number;
  /** Event-loop utilisation over the measured phase: the worker thread's busy share, in %. */
  cpuPercent: number;
  heapUsedBytes: number;
}

export interface TimelinePoint {
  /** Seconds since the ramp began. */
  t: number;
  /**
   * Frames per second over the time each worker's samples in this second cover; null when a
   * worker sent no sample for it (`missingWorkers`): unknown, never drawn as a drop.
   */
  framesPerSecond: number | null;
  /** Open connections at the workers' samples; null when a worker's sample is missing. */
  connections: number | null;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  steady: boolean;
  /** Workers that were running but sent no sample for this second (its figures came later). */
  missingWorkers: number[];
}

/** Everything measured on the client side, before the coordinator adds target, clock and options. */
export interface FanoutMeasurements {
  clients: number;
  connected: number;
  framesReceived: number;
  framesPerSecond: number;
  measuredMs: number;
  /** Of the measured phase's frames; with a shared window (--start-at), of the frames sent inside it. */
  latencyMs: Percentiles;
  serverLatencyMs: Percentiles;
  skewMs: { count: number; p50: number | null; p90: number | null; p99: number | null; max: number | null };
  updates: number;
  lost: number;
  lostUpdates: number;
  lossRate: number;
  lateReceipts: number;
  duplicates: number;
  outOfOrder: number;
  errors: number;
  validated: number;
  violationSamples: string[];
  refusals: Record<string, number>;
  connectErrors: Record<string, number>;
  noticeErrors: Record<string, number>;
  disconnects: Record<string, number>;
  pongs: number;
  sentAtUnit: string | null;
  maxSentMinusReceivedMs: number;
  /** Frames sent inside the shared window (--start-at), whenever they arrived. */
  windowFrames: number;
  /** Frames received before their sent_at on the clock estimated before the run (the estimate was then narrowed). */
  receiptsBeforeSentAt: number;
  /** Push frames without a numeric sent_at. */
  framesWithoutSentAt: number;
  /** Latencies still below zero after the final correction (bucket rounding only; reported, never clamped). */
  latencyBelowZeroAfterCorrection: number;
  workers: WorkerHealth[];
  timeline: TimelinePoint[];
  latencyCurve: { percentile: number; ms: number }[];
  skewHistogram: { fromMs: number; toMs: number; count: number }[];
  /**
   * The measured distributions as encoded HDR histograms (µs, hdr-histogram-js compressed
   * base64), keyed by threshold metric name: what `conform load merge` adds across hosts.
   */
  histograms: Record<'server_latency' | 'skew', string> & Record<string, string> & { latency?: string };
}

/**
 * The per-client times of a fan-out result: every distribution of load/metrics.ts other than the
 * per-frame and per-update ones the aggregator computes itself (latency, server_latency, skew).
 * The workers time them once per client (Tick.clientTimes); the result carries each under its
 * row's field (`connectMs`, `connectTimeMs`, …) and its histogram under its name.
 */
const OWN_DISTRIBUTIONS = new Set(['latency', 'server_latency', 'skew']);
const CLIENT_TIMED = distributions('fanout').filter((m) => !OWN_DISTRIBUTIONS.has(m.name));

interface UpdateState {
  code: string;
  lastUpdated: number;
  first: number;
  last: number;
  receivers: number;
}
interface Bucket {
  frames: number;
  latency: Histogram;
  below: Histogram | null;
  open: Map<number, number>;
  /** Per worker: frames and the ms its ticks here cover (since its tick before). */
  covered: Map<number, { frames: number; spanMs: number }>;
  steady: boolean;
}

const SKEW_VALUES_CAP = 200_000;

export class FanoutAggregator {
  private readonly opts: AggregatorOptions;
  private readonly latency = createHistogram();
  /** Magnitudes of latencies below zero on the pre-run clock estimate (created when one arrives). */
  private latencyBelow: Histogram | null = null;
  /**
   * With a shared window (--start-at): latency of the frames sent inside it, from every tick,
   * measured phase or not. It replaces `latency` in the result, so hosts on one schedule report
   * the same frames and merge to the unsharded distribution.
   */
  private windowLatency: Histogram | null = null;
  private windowLatencyBelow: Histogram | null = null;
  private receiptsBeforeSentAt = 0;
  private framesWithoutSentAt = 0;
  private readonly serverLatency = createHistogram();
  private readonly skew = createHistogram();
  private readonly skewValues: number[] = [];
  private readonly clientTimed = new Map(CLIENT_TIMED.map((m) => [m.name, createHistogram()]));
  private readonly pending = new Map<string, UpdateState>();
  private readonly judged = new Map<string, number>();
  private readonly subscribedAt = new Map<number, number>();
  private subscribedSorted: number[] = [];
  private subscribedDirty = false;
  private readonly closedClients: { subscribedAt: number; closedAt: number }[] = [];
  private readonly buckets = new Map<number, Bucket>();
  private readonly health = new Map<number, { clients: number; eld: number; util: number[]; heap: number }>();
  private readonly lastOpen = new Map<number, number>();
  /** Per worker: its last tick's time and the first and last second it sent a tick for. */
  private readonly workerTicks = new Map<number, { lastAtMs: number; firstKey: number; lastKey: number }>();
  private startMs = 0;
  private steadyAt = Number.POSITIVE_INFINITY;
  private stopAt = Number.POSITIVE_INFINITY;
  private latestMs = 0;
  private steadyFrames = 0;
  private framesTotal = 0;
  private peakConnected = 0;
  private updates = 0;
  private lost = 0;
  private lostUpdates = 0;
  private expected = 0;
  private late = 0;
  private duplicates = 0;
  private outOfOrder = 0;
  private violations = 0;
  private validated = 0;
  private pongs = 0;
  private readonly violationSamples: string[] = [];
  private readonly refusals: Record<string, number> = {};
  private readonly connectErrors: Record<string, number> = {};
  private readonly noticeErrors: Record<string, number> = {};
  private readonly disconnects: Record<string, number> = {};
  private sentAtUnit: string | null = null;
  private maxSentMinusReceived = Number.NEGATIVE_INFINITY;
  private windowFrames = 0;
  private neverSubscribed = 0;
  private opened = 0;
  private firstOpen = Number.POSITIVE_INFINITY;
  private lastOpen_ = Number.NEGATIVE_INFINITY;

  constructor(opts: AggregatorOptions) {
    this.opts = opts;
  }

  /** The ramp began at this mono ms. */
  start(atMs: number): void {
    this.startMs = atMs;
  }
  /** Every client is subscribed (or the ramp gave up): the measured phase begins. */
  markSteady(atMs: number): void {
    this.steadyAt = atMs;
  }
  /** The measured phase ended; closes after this are the generator's own. */
  markStop(atMs: number): void {
    this.stopAt = atMs;
  }
  get steadySince(): number {
    return this.steadyAt;
  }

  /** Clients per worker, for the health table. */
  setWorkerClients(workerIndex: number, clients: number): void {
    this.health.set(workerIndex, { clients, eld: 0, util: [], heap: 0 });
  }

  /** Open connections now, summed over workers' latest ticks. */
  get connections(): number {
    let n = 0;
    for (const v of this.lastOpen.values()) n += v;
    return n;
  }
  get subscribedCount(): number {
    return this.subscribedAt.size;
  }
  /** Connect errors so far (by error code), refusals by status_number. */
  get failures(): {
    connectErrors: Record<string, number>;
    refusals: Record<string, number>;
    noticeErrors: Record<string, number>;
  } {
    return {
      connectErrors: { ...this.connectErrors },
      refusals: { ...this.refusals },
      noticeErrors: { ...this.noticeErrors },
    };
  }
  /** Clients that will never subscribe: refused, failed to connect, or closed before subscribing. */
  get failedClients(): number {
    return this.neverSubscribed;
  }
  get frames(): number {
    return this.framesTotal;
  }

  addTick(tick: Tick): void {
    this.latestMs = Math.max(this.latestMs, tick.atMs);
    this.framesTotal += tick.frames;
    this.lastOpen.set(tick.workerIndex, tick.open);
    this.peakConnected = Math.max(this.peakConnected, this.connections);
    for (const t of tick.openedAt) {
      this.opened++;
      if (t < this.firstOpen) this.firstOpen = t;
      if (t > this.lastOpen_) this.lastOpen_ = t;
    }
    for (const [name, values] of Object.entries(tick.clientTimes)) {
      const h = this.clientTimed.get(name);
      if (h) for (const v of values) recordMs(h, v);
    }
    for (const [i, t] of tick.subscribed) {
      this.subscribedAt.set(i, t);
      this.subscribedDirty = true;
    }
    for (const [i, t, code] of tick.closed) {
      const s = this.subscribedAt.get(i);
      if (s !== undefined) this.closedClients.push({ subscribedAt: s, closedAt: t });
      else this.neverSubscribed++;
      if (t < this.stopAt) this.disconnects[String(code)] = (this.disconnects[String(code)] ?? 0) + 1;
    }
    merge(this.refusals, tick.refusals);
    merge(this.connectErrors, tick.connectErrors);
    for (const v of Object.values(tick.refusals)) this.neverSubscribed += v;
    this.neverSubscribed += tick.subscribeFailed;
    for (const v of Object.values(tick.connectErrors)) this.neverSubscribed += v;
    merge(this.noticeErrors, tick.noticeErrors);
    this.pongs += tick.pongs;
    if (tick.sentAtUnit) this.sentAtUnit = tick.sentAtUnit;
    this.maxSentMinusReceived = Math.max(this.maxSentMinusReceived, tick.maxSentMinusReceivedMs);
    this.windowFrames += tick.windowFrames;
    if (tick.windowLatency !== undefined) {
      this.windowLatency ??= createHistogram();
      addEncoded(this.windowLatency, tick.windowLatency);
    }
    if (tick.windowLatencyBelowZero) {
      this.windowLatencyBelow ??= createHistogram();
      addEncoded(this.windowLatencyBelow, tick.windowLatencyBelowZero);
    }

    const key = this.bucketKey(tick.atMs);
    const b = this.bucket(key);
    b.frames += tick.frames;
    const seen = this.workerTicks.get(tick.workerIndex);
    // A worker's first tick covers its interval from before the start: take it as one nominal tick.
    const spanMs = seen ? Math.max(0, tick.atMs - seen.lastAtMs) : this.opts.tickMs;
    const cov = b.covered.get(tick.workerIndex) ?? { frames: 0, spanMs: 0 };
    cov.frames += tick.frames;
    cov.spanMs += spanMs;
    b.covered.set(tick.workerIndex, cov);
    this.workerTicks.set(tick.workerIndex, {
      lastAtMs: Math.max(tick.atMs, seen?.lastAtMs ?? tick.atMs),
      firstKey: Math.min(key, seen?.firstKey ?? key),
      lastKey: Math.max(key, seen?.lastKey ?? key),
    });
    addEncoded(b.latency, tick.latency);
    if (tick.latencyBelowZero) {
      b.below ??= createHistogram();
      addEncoded(b.below, tick.latencyBelowZero);
    }
    b.open.set(tick.workerIndex, tick.open);
    if (tick.steady) {
      b.steady = true;
      this.steadyFrames += tick.frames;
      this.duplicates += tick.duplicates;
      this.outOfOrder += tick.outOfOrder;
      addEncoded(this.latency, tick.latency);
      if (tick.latencyBelowZero) {
        this.latencyBelow ??= createHistogram();
        const below = this.latencyBelow;
        const before = below.totalCount;
        addEncoded(below, tick.latencyBelowZero);
        this.receiptsBeforeSentAt += below.totalCount - before;
      }
      this.framesWithoutSentAt += tick.framesWithoutSentAt;
      addEncoded(this.serverLatency, tick.serverLatency);
      this.validated += tick.validated;
      this.violations += tick.violations;
      const h = this.health.get(tick.workerIndex) ?? { clients: 0, eld: 0, util: [], heap: 0 };
      h.util.push(tick.utilization);
      h.eld = Math.max(h.eld, tick.steadyEventLoopDelayP99Ms);
      h.heap = Math.max(h.heap, tick.heapUsedBytes);
      this.health.set(tick.workerIndex, h);
    } else if (tick.atMs >= this.stopAt) {
      // Frames that arrived between the stop and the close still count as conformance evidence.
      this.validated += tick.validated;
      this.violations += tick.violations;
    }
    for (const s of tick.violationSamples) if (this.violationSamples.length < 10) this.violationSamples.push(s);

    for (const [code, lu, first, last, receivers] of tick.updates) {
      const key = `${code}\u0000${lu}`;
      const judged = this.judged.get(key);
      if (judged !== undefined) {
        if (judged > 0) this.late += receivers;
        continue;
      }
      const u = this.pending.get(key);
      if (!u) this.pending.set(key, { code, lastUpdated: lu, first, last, receivers });
      else {
        if (first < u.first) u.first = first;
        if (last > u.last) u.last = last;
        u.receivers += receivers;
      }
    }
    this.judge(false);
  }

  /** The second a tick belongs to: a tick covers the second before it was sent. */
  private bucketKey(atMs: number): number {
    return Math.max(0, Math.ceil((atMs - this.startMs) / this.opts.tickMs - 1e-6));
  }

  private bucket(key: number): Bucket {
    let b = this.buckets.get(key);
    if (!b) {
      b = { frames: 0, latency: createHistogram(), below: null, open: new Map(), covered: new Map(), steady: false };
      this.buckets.set(key, b);
    }
    return b;
  }

  /**
   * The run second by second. A worker that was running (it sent ticks before and after) but sent
   * none for a second leaves that second's frames and connections unknown: null, with the worker
   * named, never a drop to what the other workers saw. Its late tick then covers two seconds, and
   * its frames count over the time they cover, not as a spike.
   */
  private timeline(corrected: (pos: Histogram, below: Histogram | null) => Histogram | null): TimelinePoint[] {
    const keys = [...this.buckets.keys()];
    if (!keys.length) return [];
    const none = createHistogram();
    const points: TimelinePoint[] = [];
    for (let k = Math.min(...keys); k <= Math.max(...keys); k++) {
      const b = this.buckets.get(k);
      const missingWorkers = [...this.workerTicks.entries()]
        .filter(([w, t]) => t.firstKey <= k && k <= t.lastKey && !b?.covered.has(w))
        .map(([w]) => w)
        .sort((x, y) => x - y);
      const s = b ? summarize(corrected(b.latency, b.below) ?? none) : null;
      let rate = 0;
      let conns = 0;
      for (const c of b?.covered.values() ?? []) rate += c.spanMs > 0 ? (c.frames * 1000) / c.spanMs : 0;
      for (const v of b?.open.values() ?? []) conns += v;
      const known = b !== undefined && missingWorkers.length === 0;
      points.push({
        t: (k * this.opts.tickMs) / 1000,
        framesPerSecond: known ? Math.round(rate) : null,
        connections: known ? conns : null,
        latencyP50Ms: s?.p50 ?? null,
        latencyP99Ms: s?.p99 ?? null,
        steady: b?.steady ?? false,
        missingWorkers,
      });
    }
    none.destroy();
    return points;
  }

  private eligibleAt(firstMs: number): number {
    if (this.subscribedDirty) {
      this.subscribedSorted = [...this.subscribedAt.values()].sort((a, b) => a - b);
      this.subscribedDirty = false;
    }
    const cut = firstMs - this.opts.settleMs;
    let lo = 0;
    let hi = this.subscribedSorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.subscribedSorted[mid]! <= cut) lo = mid + 1;
      else hi = mid;
    }
    let n = lo;
    for (const c of this.closedClients)
      if (c.subscribedAt <= cut && c.closedAt < firstMs + this.opts.updateWindowMs) n--;
    return n;
  }

  /**
   * Judges updates whose window has passed: skew = last − first receipt over all clients; every
   * eligible client that did not receive it is one lost delivery. Only updates first received in
   * the measured phase, with a full window before the stop, are judged.
   */
  private judge(all: boolean): void {
    // Other workers' ticks for the same update may still be on their way: wait one more tick.
    const cutoff = all ? Number.POSITIVE_INFINITY : this.latestMs - this.opts.updateWindowMs - 2 * this.opts.tickMs;
    for (const [key, u] of this.pending) {
      if (u.first >= cutoff) continue;
      this.pending.delete(key);
      const counted = u.first >= this.steadyAt && u.first <= this.stopAt - this.opts.updateWindowMs;
      // Positive: judged in the measured phase (later receipts are late); negative: not judged.
      this.judged.set(key, counted ? u.first + 1 : -(u.first + 1));
      if (!counted) continue;
      this.updates++;
      const skew = u.last - u.first;
      recordMs(this.skew, skew);
      if (this.skewValues.length < SKEW_VALUES_CAP) this.skewValues.push(skew);
      const eligible = this.eligibleAt(u.first);
      this.expected += Math.max(eligible, u.receivers);
      const missing = eligible - u.receivers;
      if (missing > 0) {
        this.lost += missing;
        this.lostUpdates++;
      }
    }
    // Forget judged keys after a while; a receipt that late is already counted lost.
    if (this.judged.size > 50_000) {
      const old = this.latestMs - 10 * this.opts.updateWindowMs;
      for (const [k, first] of this.judged) if (Math.abs(first) < old) this.judged.delete(k);
    }
  }

  /** Live figures for the progress line. */
  progress(nowMs: number): { connections: number; subscribed: number; frames: number; elapsedS: number } {
    return {
      connections: this.connections,
      subscribed: this.subscribedCount,
      frames: this.framesTotal,
      elapsedS: (nowMs - this.startMs) / 1000,
    };
  }

  /** Connections opened and the rate they opened at (first to last open), per second. */
  get openRate(): { opened: number; perSecond: number; spanMs: number } {
    const spanMs = this.opened > 1 ? this.lastOpen_ - this.firstOpen : 0;
    return {
      opened: this.opened,
      perSecond: spanMs > 0 ? Math.round(((this.opened - 1) * 1000) / spanMs) : 0,
      spanMs: Math.round(spanMs),
    };
  }

  /** Largest sent_at − receipt so far (ms, on our wall clock): the frames' lower bound on the target's clock offset. */
  get maxSentMinusReceivedMs(): number {
    return this.maxSentMinusReceived;
  }

  /**
   * Judges what is left and returns the measurements. Latency was recorded with the clock
   * correction estimated before the run; `latencyShiftMs` moves it to the final one (0: none),
   * and null means no estimate holds: latency is not reported.
   */
  finish(latencyShiftMs: number | null = 0): FanoutMeasurements {
    this.judge(true);
    let stillBelow = 0;
    const corrected = (pos: Histogram, below: Histogram | null): Histogram | null => {
      if (latencyShiftMs === null) return null;
      if (latencyShiftMs === 0 && !below) return pos;
      const out = createHistogram();
      const shiftUs = Math.round(latencyShiftMs * 1000);
      stillBelow += addShifted(out, pos, shiftUs);
      if (below) stillBelow += addShifted(out, below, shiftUs, true);
      return out;
    };
    const latency = this.windowLatency
      ? corrected(this.windowLatency, this.windowLatencyBelow)
      : corrected(this.latency, this.latencyBelow);
    const none = createHistogram();
    const measuredMs = Math.max(0, Math.min(this.stopAt, this.latestMs) - this.steadyAt);
    const workers: WorkerHealth[] = [...this.health.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([workerIndex, h]) => ({
        workerIndex,
        clients: h.clients,
        eventLoopDelayP99Ms: round(h.eld),
        cpuPercent: round(h.util.length ? (100 * h.util.reduce((a, b) => a + b, 0)) / h.util.length : 0),
        heapUsedBytes: h.heap,
      }));
    // The seconds re-count the same receipts: what stays below zero is counted once, above.
    const belowOnce = stillBelow;
    const timeline = this.timeline(corrected);
    stillBelow = belowOnce;
    const skew = summarize(this.skew);
    const timed = CLIENT_TIMED.map((m) => ({ m, h: this.clientTimed.get(m.name)! }));
    const out: FanoutMeasurements = {
      clients: this.opts.clients,
      connected: this.peakConnected,
      framesReceived: this.steadyFrames,
      framesPerSecond: measuredMs > 0 ? Math.round((this.steadyFrames * 1000) / measuredMs) : 0,
      measuredMs: Math.round(measuredMs),
      latencyMs: summarize(latency ?? none),
      serverLatencyMs: summarize(this.serverLatency),
      skewMs: { count: skew.count, p50: skew.p50, p90: skew.p90, p99: skew.p99, max: skew.max },
      updates: this.updates,
      lost: this.lost,
      lostUpdates: this.lostUpdates,
      lossRate: this.expected ? this.lost / this.expected : 0,
      lateReceipts: this.late,
      duplicates: this.duplicates,
      outOfOrder: this.outOfOrder,
      errors: this.violations,
      validated: this.validated,
      violationSamples: this.violationSamples,
      refusals: this.refusals,
      connectErrors: this.connectErrors,
      noticeErrors: this.noticeErrors,
      disconnects: this.disconnects,
      pongs: this.pongs,
      sentAtUnit: this.sentAtUnit,
      maxSentMinusReceivedMs: this.maxSentMinusReceived,
      windowFrames: this.windowFrames,
      receiptsBeforeSentAt: this.receiptsBeforeSentAt,
      framesWithoutSentAt: this.framesWithoutSentAt,
      latencyBelowZeroAfterCorrection: stillBelow,
      workers,
      timeline,
      latencyCurve: percentileCurve(latency ?? none),
      skewHistogram: bucketize(this.skewValues),
      histograms: {
        // Latency as corrected to the final clock estimate; none when no estimate holds.
        ...(latency ? { latency: encode(latency) } : {}),
        server_latency: encode(this.serverLatency),
        skew: encode(this.skew),
        ...Object.fromEntries(timed.map(({ m, h }) => [m.name, encode(h)])),
      },
    };
    // Each under its row's field (`connectTimeMs`), where thresholds and reports read it.
    return Object.assign(out, Object.fromEntries(timed.map(({ m, h }) => [m.field, summarize(h)])));
  }
}

/** Whether the generator was saturated, and why (empty when it was not). */
export function saturationReasons(workers: readonly WorkerHealth[]): string[] {
  const reasons: string[] = [];
  for (const w of workers) {
    if (w.eventLoopDelayP99Ms > SATURATION.eventLoopDelayP99Ms)
      reasons.push(
        `worker ${w.workerIndex}: event-loop delay p99 ${w.eventLoopDelayP99Ms} ` +
          `ms > ${SATURATION.eventLoopDelayP99Ms} ms`,
      );
    if (w.cpuPercent > SATURATION.cpuPercent)
      reasons.push(`worker ${w.workerIndex}: busy ${w.cpuPercent}% > ${SATURATION.cpuPercent}%`);
  }
  return reasons;
}

function merge(into: Record<string, number>, from: Record<string, number>): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

const round = (x: number): number => Math.round(x * 100) / 100;
