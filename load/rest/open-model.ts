/**
 * Measure: the open-model REST generator. Requests are scheduled at intended times (evenly
 * spaced or Poisson) whatever the target does; each one's latency runs from its intended send
 * time to the last byte of its response (the correction wrk2 and k6's constant-arrival-rate
 * make), recorded once, in µs, into an HDR histogram. Requests the generator sent late (its
 * event loop behind, or no free connection) are counted with their lag; requests it could not
 * send at all (the backlog full) are counted as dropped. Returns plain data; prints nothing.
 */
import { performance } from 'node:perf_hooks';
import { createHistogram, type Histogram } from '../histogram.ts';
import { HttpLoadClient, type HttpLoadEvents } from './http-client.ts';
import {
  countFailure,
  countResponse,
  responseCounts,
  processCpuMicros,
  type RestPlan,
  type TimelinePoint,
  watchEventLoop,
} from './plan.ts';
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
  /** Envelope `status_number` → count (`(none)` when a body had none). */
  statusNumbers: Record<string, number>;
  /**
   * The measured phase second by second from its start, the last (partial) second included, so
   * its `requests` add up to every response: `t` is the end of the span in seconds, `rps` its rate.
   */
  timeline: TimelinePoint[];
  measuredMs: number;
  eventLoopDelayP99Ms: number;
  /** Event-loop utilisation over the measured phase, %. */
  busyPercent: number;
  /** CPU time of the whole process over the measured phase, µs. */
  cpuMicros: number;
}

/** One open-model run in progress: its requests in flight, its counts and its measured phase. */
class OpenModelRun implements HttpLoadEvents {
  readonly latency = createHistogram();
  readonly sendLag = createHistogram();
  readonly ownSendLag = createHistogram();
  /** This second's latencies, for the timeline. */
  private readonly second = createHistogram();
  readonly counts = {
    ...responseCounts(),
    scheduled: 0,
    late: 0,
    lateOnOwn: 0,
    waitedForConnection: 0,
    dropped: 0,
  };
  readonly timeline: OpenModelResult['timeline'] = [];
  readonly loop = watchEventLoop();
  measuring = false;
  /** performance.now() at which the measured phase began. */
  measuredSince = 0;
  /** Process CPU (µs) when the measured phase began. */
  cpuSince = 0;
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
  /** Each request in flight by its tag (a slot of this ring): its intended time and whether it is measured. */
  private readonly intended: Float64Array;
  private readonly measured: Uint8Array;
  /** Whether each request in flight found every connection busy (its lag then includes a wait on the target). */
  private readonly waited: Uint8Array;
  private nextTag = 0;
  readonly client: HttpLoadClient;

  constructor(private readonly plan: OpenModelPlan) {
    this.backlogCap = Math.max(plan.connections, Math.ceil(plan.rate / (plan.share?.of ?? 1)));
    // Never more requests in flight than the backlog and the connections hold, so a tag is free again by its turn.
    const slots = 2 ** Math.ceil(Math.log2(this.backlogCap + plan.connections * plan.pipelining + 1));
    this.intended = new Float64Array(slots);
    this.measured = new Uint8Array(slots);
    this.waited = new Uint8Array(slots);
    this.client = new HttpLoadClient(
      {
        origin: plan.origin,
        paths: plan.paths,
        headers: plan.headers,
        connections: plan.connections,
        pipelining: plan.pipelining,
        timeoutMs: plan.timeoutMs,
        ...(plan.ca ? { ca: plan.ca } : {}),
      },
      this,
    );
  }

  startMeasuring(): void {
    this.measuring = true;
    this.measuredSince = performance.now();
    this.cpuSince = processCpuMicros();
    this.secondSince = this.measuredSince;
    this.loop.start();
    // The seconds count from the measured phase's start, not the warm-up's.
    this.ticker = setInterval(() => this.tick(), 1000);
  }

  /** Sends the request intended at `intendedAbs` (performance.now() ms), unless the backlog is full. */
  fire(intendedAbs: number, measured: boolean): void {
    const { plan, counts } = this;
    if (measured) counts.scheduled++;
    if (this.inFlight - plan.connections * plan.pipelining >= this.backlogCap) {
      if (measured) counts.dropped++;
      return;
    }
    const waited = !this.client.canSendNow;
    if (measured && waited) counts.waitedForConnection++;
    this.inFlight++;
    const tag = this.nextTag++ & (this.intended.length - 1);
    this.intended[tag] = intendedAbs;
    this.measured[tag] = measured ? 1 : 0;
    this.waited[tag] = waited ? 1 : 0;
    this.client.send(this.pathIndex++ % plan.paths.length, tag);
  }

  /** The request was written to its socket: the generator's own lag ends here. */
  sent(tag: number): void {
    if (!this.measured[tag]) return;
    const lagUs = Math.max(0, Math.round((performance.now() - this.intended[tag]!) * 1000));
    this.sendLag.recordValue(lagUs);
    const own = !this.waited[tag];
    if (own) this.ownSendLag.recordValue(lagUs);
    if (lagUs > this.plan.lateMs * 1000) {
      this.counts.late++;
      if (own) this.counts.lateOnOwn++;
    }
  }

  response(tag: number, status: number, statusNumber: string | undefined): void {
    const us = Math.max(1, Math.round((performance.now() - this.intended[tag]!) * 1000));
    this.settle();
    if (!this.measured[tag]) return;
    this.latency.recordValue(us);
    this.second.recordValue(us);
    this.secondCount++;
    this.counts.completed++;
    this.measuredCompleted++;
    countResponse(this.counts, status, statusNumber);
  }

  failed(tag: number, code: string): void {
    this.settle();
    if (this.measured[tag]) countFailure(this.counts, code);
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
    const point: TimelinePoint = {
      t: elapsedS,
      rps,
      requests: this.secondCount,
      latencyP50Ms: s ? s.getValueAtPercentile(50) / 1000 : null,
      latencyP99Ms: s ? s.getValueAtPercentile(99) / 1000 : null,
    };
    this.timeline.push(point);
    this.plan.onTick?.(point, s);
    this.plan.onSecond?.({ elapsedS, requests: this.measuredCompleted, rps });
    this.second.reset();
    this.secondCount = 0;
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

  /** Resolves when every request sent has ended: each is bounded by the timeout; the guard covers a stuck socket. */
  async drain(): Promise<void> {
    if (this.inFlight === 0) return;
    await new Promise<void>((resolve) => {
      this.onIdle = resolve;
      setTimeout(resolve, this.plan.timeoutMs + 2000).unref();
    });
  }

  /** Frees what only the run needed. */
  close(): void {
    clearInterval(this.ticker);
    this.client.close();
    this.second.destroy();
  }
}

/**
 * Sends every request at its intended time from `t0`, warm-up first, until the measured phase
 * ends. One timer at a time, set for the next intended time; every request already due is sent on
 * each wake, so a late wake-up sends the backlog at once (each keeps its intended time).
 */
function sendArrivals(plan: OpenModelPlan, run: OpenModelRun, t0: number): Promise<void> {
  const endMs = plan.warmupMs + plan.durationMs;
  const next = arrivalClock(plan.rate, plan.arrival, plan.seed);
  const { index, of } = plan.share ?? { index: 0, of: 1 };
  // A share of the schedule: this thread's arrivals are every `of`-th from the `index`-th.
  let i = 0;
  const nextOwn = (): number => {
    let at = next();
    while (i++ % of !== index) at = next();
    return at;
  };
  let nextAt = nextOwn();
  return new Promise<void>((resolve) => {
    const pump = (): void => {
      const now = performance.now();
      while (nextAt < endMs && t0 + nextAt <= now) {
        if (!run.measuring && nextAt >= plan.warmupMs) run.startMeasuring();
        run.fire(t0 + nextAt, nextAt >= plan.warmupMs);
        nextAt = nextOwn();
      }
      if (nextAt >= endMs) {
        resolve();
        return;
      }
      setTimeout(pump, Math.max(0, Math.floor(t0 + nextAt - performance.now())));
    };
    setTimeout(pump, Math.max(0, t0 - performance.now()));
  });
}

/** Runs the plan to completion: warm-up, measured phase, then the last responses (each bounded by the timeout). */
export async function runOpenModel(plan: OpenModelPlan): Promise<OpenModelResult> {
  const run = new OpenModelRun(plan);
  plan.onLiveSource?.(() => run.liveValues());
  const t0 = plan.startAt ?? performance.now() + 5;
  if (plan.warmupMs <= 0) run.startMeasuring();
  await sendArrivals(plan, run, t0);
  const measuredMs = Math.max(1, performance.now() - run.measuredSince);
  const cpuMicros = processCpuMicros() - run.cpuSince;
  const health = run.loop.stop();
  await run.drain();
  run.tick(true);
  run.close();
  return {
    latency: run.latency,
    sendLag: run.sendLag,
    ownSendLag: run.ownSendLag,
    ...run.counts,
    timeline: run.timeline,
    measuredMs: Math.min(measuredMs, plan.durationMs),
    ...health,
    cpuMicros,
  };
}
