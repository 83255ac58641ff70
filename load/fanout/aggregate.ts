/**
 * Aggregate: merges the workers' ticks into one picture of the run. Pure (no I/O, no clock of
 * its own): skew and loss per distinct update (update-judge.ts), merged HDR histograms, the
 * timeline (timeline.ts), and the generator's own health. The coordinator feeds it; reports
 * format its result (measurements.ts).
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
} from '../histogram.ts';
import { distributions, LOAD_METRICS, type ValueMetric } from '../metrics.ts';
import { SATURATION } from '../options.ts';
import type { AggregatorOptions, FanoutMeasurements, WorkerHealth } from './measurements.ts';
import type { Tick } from './protocol.ts';
import { Timeline, type LatencyCorrection } from './timeline.ts';
import { UpdateJudge } from './update-judge.ts';

/**
 * The per-client times of a fan-out result: every distribution of load/metrics.ts other than the
 * per-frame and per-update ones the aggregator computes itself (latency, server_latency, skew).
 * The workers time them once per client (Tick.clientTimes); the result carries each under its
 * row's field (`connectMs`, `connectTimeMs`, …) and its histogram under its name.
 */
const OWN_DISTRIBUTIONS = new Set(['latency', 'server_latency', 'skew']);
const CLIENT_TIMED = distributions('fanout').filter((m) => !OWN_DISTRIBUTIONS.has(m.name));

/**
 * The counts the workers tally (`ClientState.count`, Tick.counts): every count of load/metrics.ts
 * carried in a result field, other than the ones the aggregator counts itself. Each is summed over
 * the measured phase into its row's field.
 */
const OWN_COUNTS = new Set(['lost', 'errors', 'frames', 'connected']);
const TALLIED = LOAD_METRICS.fanout.filter(
  (m): m is ValueMetric & { field: string } => m.kind === 'count' && m.field !== undefined && !OWN_COUNTS.has(m.name),
);

/** The coordinator's one picture of the run, fed every worker's ticks. */
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
  private readonly clientTimed = new Map(CLIENT_TIMED.map((m) => [m.name, createHistogram()]));
  private readonly tallied = new Map(TALLIED.map((m) => [m.name, 0]));
  private readonly updates: UpdateJudge;
  private readonly timeline: Timeline;
  private readonly health = new Map<number, { clients: number; eld: number; util: number[]; heap: number }>();
  private readonly lastOpen = new Map<number, number>();
  private startMs = 0;
  private steadyAt = Number.POSITIVE_INFINITY;
  private stopAt = Number.POSITIVE_INFINITY;
  private latestMs = 0;
  private steadyFrames = 0;
  private framesTotal = 0;
  private peakConnected = 0;
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
    this.updates = new UpdateJudge(opts);
    this.timeline = new Timeline(opts.tickMs);
  }

  /** The ramp began at this mono ms. */
  start(atMs: number): void {
    this.startMs = atMs;
    this.timeline.start(atMs);
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
    return this.updates.subscribedCount;
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
    this.addClients(tick);
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
    this.timeline.add(tick);
    if (tick.steady) this.addSteady(tick);
    else if (tick.atMs >= this.stopAt) {
      // Frames that arrived between the stop and the close still count as conformance evidence.
      this.validated += tick.validated;
      this.violations += tick.violations;
    }
    for (const s of tick.violationSamples) if (this.violationSamples.length < 10) this.violationSamples.push(s);
    this.updates.add(tick.updates);
    this.updates.judge(false, this.latestMs, this.steadyAt, this.stopAt);
  }

  /** What a tick says of the clients: opened, timed, subscribed, closed, refused or failed. */
  private addClients(tick: Tick): void {
    for (const t of tick.openedAt) {
      this.opened++;
      if (t < this.firstOpen) this.firstOpen = t;
      if (t > this.lastOpen_) this.lastOpen_ = t;
    }
    for (const [name, values] of Object.entries(tick.clientTimes)) {
      const h = this.clientTimed.get(name);
      if (h) for (const v of values) recordMs(h, v);
    }
    for (const [i, t] of tick.subscribed) this.updates.subscribed(i, t);
    for (const [i, t, code] of tick.closed) {
      if (!this.updates.closed(i, t)) this.neverSubscribed++;
      if (t < this.stopAt) this.disconnects[String(code)] = (this.disconnects[String(code)] ?? 0) + 1;
    }
    merge(this.refusals, tick.refusals);
    merge(this.connectErrors, tick.connectErrors);
    for (const v of Object.values(tick.refusals)) this.neverSubscribed += v;
    this.neverSubscribed += tick.subscribeFailed;
    for (const v of Object.values(tick.connectErrors)) this.neverSubscribed += v;
    merge(this.noticeErrors, tick.noticeErrors);
  }

  /** What only a tick of the measured phase adds: its frames, latency, validation and health. */
  private addSteady(tick: Tick): void {
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
    for (const [name, n] of Object.entries(tick.counts)) {
      const sum = this.tallied.get(name);
      if (sum !== undefined) this.tallied.set(name, sum + n);
    }
    const h = this.health.get(tick.workerIndex) ?? { clients: 0, eld: 0, util: [], heap: 0 };
    h.util.push(tick.utilization);
    h.eld = Math.max(h.eld, tick.steadyEventLoopDelayP99Ms);
    h.heap = Math.max(h.heap, tick.heapUsedBytes);
    this.health.set(tick.workerIndex, h);
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

  /**
   * The run's figures so far, by threshold name, for live metrics: the measured phase's latency
   * and frames once it has begun, and the connections, losses and errors at any time.
   */
  liveValues(nowMs: number): Record<string, number | null> {
    const l = summarize(this.latency);
    const measuredMs = Math.min(nowMs, this.stopAt) - this.steadyAt;
    return {
      'latency.p50': l.p50,
      'latency.p90': l.p90,
      'latency.p99': l.p99,
      'latency.max': l.max,
      connected: this.connections,
      frames: this.steadyFrames,
      frames_per_second: measuredMs > 0 ? Math.round((this.steadyFrames * 1000) / measuredMs) : null,
      lost: this.updates.lost,
      errors: this.violations,
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
    this.updates.judge(true, this.latestMs, this.steadyAt, this.stopAt);
    let stillBelow = 0;
    const corrected: LatencyCorrection = (pos, below) => {
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
    // The seconds re-count the same receipts: what stays below zero is counted once, above.
    const belowOnce = stillBelow;
    const timeline = this.timeline.points(corrected);
    return this.measurements(latency, belowOnce, timeline);
  }

  /** The measurements as plain data, latency already moved to the final clock (null: unknown). */
  private measurements(
    latency: Histogram | null,
    stillBelow: number,
    timeline: FanoutMeasurements['timeline'],
  ): FanoutMeasurements {
    const none = createHistogram();
    const measuredMs = Math.max(0, Math.min(this.stopAt, this.latestMs) - this.steadyAt);
    const u = this.updates;
    const skew = summarize(u.skew);
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
      updates: u.updates,
      lost: u.lost,
      lostUpdates: u.lostUpdates,
      lossRate: u.expected ? u.lost / u.expected : 0,
      lateReceipts: u.late,
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
      workers: this.workerHealth(),
      timeline,
      latencyCurve: percentileCurve(latency ?? none),
      skewHistogram: bucketize(u.skewValues),
      histograms: {
        // Latency as corrected to the final clock estimate; none when no estimate holds.
        ...(latency ? { latency: encode(latency) } : {}),
        server_latency: encode(this.serverLatency),
        skew: encode(u.skew),
        ...Object.fromEntries(timed.map(({ m, h }) => [m.name, encode(h)])),
      },
    };
    // Each under its row's field (`connectTimeMs`), where thresholds and reports read it.
    return Object.assign(
      out,
      Object.fromEntries(timed.map(({ m, h }) => [m.field, summarize(h)])),
      Object.fromEntries(TALLIED.map((m) => [m.field, this.tallied.get(m.name)])),
    );
  }

  /** Each worker's health over the measured phase, in worker order. */
  private workerHealth(): WorkerHealth[] {
    return [...this.health.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([workerIndex, h]) => ({
        workerIndex,
        clients: h.clients,
        eventLoopDelayP99Ms: round(h.eld),
        cpuPercent: round(h.util.length ? (100 * h.util.reduce((a, b) => a + b, 0)) / h.util.length : 0),
        heapUsedBytes: h.heap,
      }));
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
