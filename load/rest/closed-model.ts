/**
 * Measure: the closed-model REST run (`--rate max`): every connection sends its next request as
 * soon as the last one is answered (with `pipelining` > 1, keeps that many in flight), so the
 * figure that matters is the most requests per second the target serves over that many
 * connections. Latency here is service time under saturation, from the actual send: there is no
 * intended time to measure from. Each response is recorded once, in µs. Returns plain data;
 * prints nothing.
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

export interface ClosedModelResult {
  /** From the send to the last byte, µs, one sample per response. */
  latency: Histogram;
  completed: number;
  timeouts: number;
  errors: Record<string, number>;
  httpStatus: Record<string, number>;
  /** Envelope `status_number` → count (`(none)` when a body had none). */
  statusNumbers: Record<string, number>;
  timeline: TimelinePoint[];
  measuredMs: number;
  eventLoopDelayP99Ms: number;
  busyPercent: number;
  /** CPU time of the whole process over the measured phase, µs. */
  cpuMicros: number;
}

/**
 * After a failed request its slot waits this long before sending again, so a target that refuses
 * or resets every connection is not hammered with reconnections at the speed of the loopback.
 */
const RETRY_PAUSE_MS = 10;

/** One closed-model run in progress: its slots sending back to back, its counts and its phases. */
class ClosedModelRun implements HttpLoadEvents {
  readonly latency = createHistogram();
  readonly counts = responseCounts();
  readonly timeline: ClosedModelResult['timeline'] = [];
  readonly loop = watchEventLoop();
  counting = false;
  ended = false;
  startedAt = 0;
  cpuSince = 0;
  private secondCount = 0;
  /** performance.now() of the last point of the timeline (the measured phase's start before the first). */
  private secondSince = 0;
  private inFlight = 0;
  private onIdle: (() => void) | null = null;
  private pathIndex = 0;
  /** Actual send time of each request in flight, by tag. */
  private readonly sentAt: Float64Array;
  private readonly counted: Uint8Array;
  private nextTag = 0;
  readonly client: HttpLoadClient;

  constructor(private readonly plan: RestPlan) {
    const slots = 2 ** Math.ceil(Math.log2(plan.connections * plan.pipelining + 1));
    this.sentAt = new Float64Array(slots);
    this.counted = new Uint8Array(slots);
    this.client = new HttpLoadClient(plan, this);
  }

  /** Fills every slot: `connections` × `pipelining` requests in flight. */
  start(): void {
    for (let i = 0; i < this.plan.connections * this.plan.pipelining; i++) this.send();
  }

  startMeasuring(): void {
    this.counting = true;
    this.startedAt = performance.now();
    this.secondSince = this.startedAt;
    this.cpuSince = processCpuMicros();
    this.loop.start();
  }

  private send(): void {
    if (this.ended) return;
    this.inFlight++;
    const tag = this.nextTag++ & (this.sentAt.length - 1);
    this.counted[tag] = this.counting ? 1 : 0;
    this.client.send(this.pathIndex++ % this.plan.paths.length, tag);
  }

  sent(tag: number): void {
    this.sentAt[tag] = performance.now();
  }

  response(tag: number, status: number, statusNumber: string | undefined): void {
    this.settle();
    if (this.counted[tag] && !this.ended) {
      this.latency.recordValue(Math.max(1, Math.round((performance.now() - this.sentAt[tag]!) * 1000)));
      this.counts.completed++;
      this.secondCount++;
      countResponse(this.counts, status, statusNumber);
    }
    this.send();
  }

  failed(tag: number, code: string): void {
    this.settle();
    if (this.counted[tag] && !this.ended) countFailure(this.counts, code);
    setTimeout(() => this.send(), RETRY_PAUSE_MS);
  }

  private settle(): void {
    if (--this.inFlight === 0 && this.onIdle) this.onIdle();
  }

  /**
   * The second just ended: its point of the timeline, and the progress callback. The last call, as
   * the measured phase ends, flushes the partial second it ended in.
   */
  tick(last = false): void {
    if (!this.counting || this.ended) return;
    const now = performance.now();
    const spanMs = now - this.secondSince;
    if (last && this.secondCount === 0) return;
    this.secondSince = now;
    const elapsedS = Math.round((now - this.startedAt) / 10) / 100;
    const rps = spanMs > 0 ? Math.round((this.secondCount * 1000) / spanMs) : 0;
    const point = { t: elapsedS, rps, requests: this.secondCount, latencyP50Ms: null, latencyP99Ms: null };
    this.timeline.push(point);
    this.plan.onTick?.(point, null);
    this.plan.onSecond?.({ elapsedS, requests: this.counts.completed, rps });
    this.secondCount = 0;
  }

  /** Stops sending and resolves when every request in flight has ended, each bounded by the timeout. */
  async drain(): Promise<void> {
    this.ended = true;
    if (this.inFlight === 0) return;
    await new Promise<void>((resolve) => {
      this.onIdle = resolve;
      setTimeout(resolve, this.plan.timeoutMs + 2000).unref();
    });
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs the plan: warm-up, the measured phase, then the requests still in flight (each bounded by the timeout). */
export async function runClosedModel(plan: RestPlan): Promise<ClosedModelResult> {
  const run = new ClosedModelRun(plan);
  if (plan.startAt !== undefined) await sleep(plan.startAt - performance.now());
  if (plan.warmupMs <= 0) run.startMeasuring();
  run.start();
  if (plan.warmupMs > 0) {
    await sleep(plan.warmupMs);
    run.startMeasuring();
  }
  const ticker = setInterval(() => run.tick(), 1000);
  await sleep(plan.durationMs);
  const measuredMs = performance.now() - run.startedAt;
  const cpuMicros = processCpuMicros() - run.cpuSince;
  const health = run.loop.stop();
  clearInterval(ticker);
  run.tick(true);
  await run.drain();
  run.client.close();
  return {
    latency: run.latency,
    ...run.counts,
    timeline: run.timeline,
    measuredMs: Math.max(1, measuredMs),
    ...health,
    cpuMicros,
  };
}
