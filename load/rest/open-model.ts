/**
 * Measure: the open-model REST generator. Requests are scheduled at intended times (evenly
 * spaced or Poisson) whatever the target does; each one's latency runs from its intended send
 * time to the last byte of its response (the correction wrk2 and k6's constant-arrival-rate
 * make), recorded once, in µs, into an HDR histogram. Requests the generator sent late (its
 * event loop behind, or no free connection) are counted with their lag; requests it could not
 * send at all (the backlog full) are counted as dropped. Returns plain data; prints nothing.
 */
import { performance } from 'node:perf_hooks';
import { Pool, type Dispatcher } from 'undici';
import { createHistogram, type Histogram } from '../histogram.ts';
import { watchEventLoop, type RestPlan } from './plan.ts';
import { arrivalClock, type Arrival } from './schedule.ts';

export interface OpenModelPlan extends RestPlan {
  rate: number;
  arrival: Arrival;
  seed: number;
  /** A request sent more than this after its intended time is late. */
  lateMs: number;
}

export interface OpenModelResult {
  /** From the intended send time to the last byte, µs, one sample per completed request. */
  latency: Histogram;
  /** Actual send (the request written to a socket) − intended send time, µs. */
  sendLag: Histogram;
  /** The same for the requests that found a connection free: the generator's own lag, µs. */
  ownSendLag: Histogram;
  /** Requests whose intended time fell in the measured phase. */
  scheduled: number;
  completed: number;
  late: number;
  /**
   * Late requests that found a connection free: the generator's own lag, not a wait for the
   * target (a late request that waited for a connection waited on the target's answers).
   */
  lateOnOwn: number;
  /** Requests that found every connection busy and queued for one. */
  waitedForConnection: number;
  /** Requests not sent: the backlog waiting for a connection was full. */
  dropped: number;
  timeouts: number;
  errors: Record<string, number>;
  httpStatus: Record<string, number>;
  /**
   * The measured phase second by second from its start, the last (partial) second included, so
   * its `requests` add up to every response: `t` is the end of the span in seconds, `rps` its rate.
   */
  timeline: { t: number; rps: number; requests: number; latencyP50Ms: number | null; latencyP99Ms: number | null }[];
  measuredMs: number;
  eventLoopDelayP99Ms: number;
  /** Event-loop utilisation over the measured phase, %. */
  busyPercent: number;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** One open-model run in progress: its requests in flight, its counts and its measured phase. */
class OpenModelRun {
  readonly latency = createHistogram();
  readonly sendLag = createHistogram();
  readonly ownSendLag = createHistogram();
  /** This second's latencies, for the timeline. */
  private readonly second = createHistogram();
  readonly counts = {
    scheduled: 0,
    completed: 0,
    late: 0,
    lateOnOwn: 0,
    waitedForConnection: 0,
    dropped: 0,
    timeouts: 0,
    errors: {} as Record<string, number>,
    httpStatus: {} as Record<string, number>,
  };
  readonly timeline: OpenModelResult['timeline'] = [];
  readonly loop = watchEventLoop();
  measuring = false;
  /** performance.now() at which the measured phase began. */
  measuredSince = 0;
  private inFlight = 0;
  private pathIndex = 0;
  private secondCount = 0;
  /** performance.now() of the last point of the timeline (the measured phase's start before the first). */
  private secondSince = 0;
  private ticker: NodeJS.Timeout | undefined;
  private measuredCompleted = 0;
  private onIdle: (() => void) | null = null;
  /**
   * Past this many requests waiting for a connection (about a second of arrivals), new ones are
   * dropped and counted: the generator stays bounded and never floods a stalled target.
   */
  private readonly backlogCap: number;

  constructor(
    private readonly plan: OpenModelPlan,
    private readonly pool: Pool,
  ) {
    this.backlogCap = Math.max(plan.connections, Math.ceil(plan.rate));
  }

  startMeasuring(): void {
    this.measuring = true;
    this.measuredSince = performance.now();
    this.secondSince = this.measuredSince;
    this.loop.start();
    // The seconds count from the measured phase's start, not the warm-up's.
    this.ticker = setInterval(() => this.tick(), 1000);
  }

  /** Sends the request intended at `intendedAbs` (performance.now() ms), unless the backlog is full. */
  fire(intendedAbs: number, measured: boolean): void {
    const { plan, counts } = this;
    if (measured) counts.scheduled++;
    if (this.inFlight - plan.connections >= this.backlogCap) {
      if (measured) counts.dropped++;
      return;
    }
    const waited = this.inFlight >= plan.connections;
    if (measured && waited) counts.waitedForConnection++;
    this.inFlight++;
    const path = plan.paths[this.pathIndex++ % plan.paths.length]!;
    this.pool.dispatch(
      { origin: plan.origin, path, method: 'GET', headers: plan.headers },
      this.handler(intendedAbs, measured, waited),
    );
  }

  /** What one request records as it is written, answered or fails. */
  private handler(intendedAbs: number, measured: boolean, waited: boolean): Dispatcher.DispatchHandler {
    const { plan, counts } = this;
    const chunks: Buffer[] = [];
    let status = 0;
    return {
      onRequestStart: () => {
        // Called as the request is written to a socket: the generator's own lag ends here.
        if (!measured) return;
        const lagUs = Math.max(0, Math.round((performance.now() - intendedAbs) * 1000));
        this.sendLag.recordValue(lagUs);
        if (!waited) this.ownSendLag.recordValue(lagUs);
        if (lagUs > plan.lateMs * 1000) {
          counts.late++;
          if (!waited) counts.lateOnOwn++;
        }
      },
      onResponseStart: (_controller, statusCode) => {
        status = statusCode;
      },
      onResponseData: (_controller, chunk) => {
        if (measured && plan.onResponse) chunks.push(chunk);
      },
      onResponseEnd: () => {
        const us = Math.round((performance.now() - intendedAbs) * 1000);
        this.settle();
        if (!measured) return;
        this.latency.recordValue(Math.max(1, us));
        this.second.recordValue(Math.max(1, us));
        this.secondCount++;
        counts.completed++;
        this.measuredCompleted++;
        bump(counts.httpStatus, String(status));
        plan.onResponse?.(status, Buffer.concat(chunks).toString('utf8'));
      },
      onResponseError: (_controller, err) => {
        this.settle();
        if (!measured) return;
        const code = (err as { code?: string }).code ?? err.name;
        if (TIMEOUT_CODES.has(code)) counts.timeouts++;
        else bump(counts.errors, code);
      },
    };
  }

  private settle(): void {
    if (--this.inFlight === 0 && this.onIdle) this.onIdle();
  }

  /**
   * The second just ended: its point of the timeline, and the progress callback. The last call,
   * once every response is in, flushes the partial second the run ended in.
   */
  tick(last = false): void {
    if (!this.measuring) return;
    if (last) clearInterval(this.ticker);
    const now = performance.now();
    const spanMs = now - this.secondSince;
    if (last && this.secondCount === 0) return;
    this.secondSince = now;
    const elapsedS = Math.round((now - this.measuredSince) / 10) / 100;
    const s = this.second.totalCount ? this.second : null;
    const rps = spanMs > 0 ? Math.round((this.secondCount * 1000) / spanMs) : 0;
    this.timeline.push({
      t: elapsedS,
      rps,
      requests: this.secondCount,
      latencyP50Ms: s ? s.getValueAtPercentile(50) / 1000 : null,
      latencyP99Ms: s ? s.getValueAtPercentile(99) / 1000 : null,
    });
    this.plan.onSecond?.({ elapsedS, requests: this.measuredCompleted, rps });
    this.second.reset();
    this.secondCount = 0;
  }

  /** Resolves when every request sent has ended: each is bounded by the timeout; the guard covers a stuck socket. */
  async drain(): Promise<void> {
    if (this.inFlight === 0) return;
    await new Promise<void>((resolve) => {
      this.onIdle = resolve;
      setTimeout(resolve, this.plan.timeoutMs + 2000).unref();
    });
  }

  /** The measured phase's figures so far, by threshold name (live metrics). */
  liveValues(): Record<string, number | null> {
    const h = this.latency.totalCount ? this.latency : null;
    const s = this.measuring ? (performance.now() - this.measuredSince) / 1000 : 0;
    return {
      'latency.p50': h ? h.getValueAtPercentile(50) / 1000 : null,
      'latency.p90': h ? h.getValueAtPercentile(90) / 1000 : null,
      'latency.p99': h ? h.getValueAtPercentile(99) / 1000 : null,
      'latency.max': h ? h.maxValue / 1000 : null,
      requests: this.counts.completed,
      rps: s > 0 ? Math.round(this.counts.completed / s) : null,
      errors: Object.values(this.counts.errors).reduce((a, b) => a + b, 0) + this.counts.timeouts,
      timeouts: this.counts.timeouts,
      late: this.counts.late,
      dropped: this.counts.dropped,
    };
  }

  /** Frees what only the run needed. */
  close(): void {
    this.second.destroy();
  }
}

function bump(m: Record<string, number>, k: string): void {
  m[k] = (m[k] ?? 0) + 1;
}

/**
 * Sends every request at its intended time from `t0`, warm-up first, until the measured phase
 * ends. One timer at a time, set for the next intended time; every request already due is sent on
 * each wake, so a late wake-up sends the backlog at once (each keeps its intended time).
 */
function sendArrivals(plan: OpenModelPlan, run: OpenModelRun, t0: number): Promise<void> {
  const endMs = plan.warmupMs + plan.durationMs;
  const next = arrivalClock(plan.rate, plan.arrival, plan.seed);
  let nextAt = next();
  return new Promise<void>((resolve) => {
    const pump = (): void => {
      const now = performance.now();
      while (nextAt < endMs && t0 + nextAt <= now) {
        if (!run.measuring && nextAt >= plan.warmupMs) run.startMeasuring();
        run.fire(t0 + nextAt, nextAt >= plan.warmupMs);
        nextAt = next();
      }
      if (nextAt >= endMs) {
        resolve();
        return;
      }
      setTimeout(pump, Math.max(0, Math.floor(t0 + nextAt - performance.now())));
    };
    setTimeout(pump, 5);
  });
}

/** Runs the plan to completion: warm-up, measured phase, then the last responses (each bounded by the timeout). */
export async function runOpenModel(plan: OpenModelPlan): Promise<OpenModelResult> {
  const pool = new Pool(plan.origin, {
    connections: plan.connections,
    headersTimeout: plan.timeoutMs,
    bodyTimeout: plan.timeoutMs,
    connectTimeout: plan.timeoutMs,
    keepAliveTimeout: 30_000,
  });
  const run = new OpenModelRun(plan, pool);
  plan.onLiveSource?.(() => run.liveValues());
  const t0 = performance.now() + 5;
  if (plan.warmupMs <= 0) run.startMeasuring();
  await sendArrivals(plan, run, t0);
  const measuredMs = Math.max(1, performance.now() - run.measuredSince);
  const health = run.loop.stop();
  await run.drain();
  run.tick(true);
  await pool.destroy().catch(() => {});
  run.close();
  return {
    latency: run.latency,
    sendLag: run.sendLag,
    ownSendLag: run.ownSendLag,
    ...run.counts,
    timeline: run.timeline,
    measuredMs: Math.min(measuredMs, plan.durationMs),
    ...health,
  };
}
