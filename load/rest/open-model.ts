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
  /** Requests whose intended time fell in the measured phase. */
  scheduled: number;
  completed: number;
  late: number;
  /** Requests that found every connection busy and queued for one. */
  waitedForConnection: number;
  /** Requests not sent: the backlog waiting for a connection was full. */
  dropped: number;
  timeouts: number;
  errors: Record<string, number>;
  httpStatus: Record<string, number>;
  timeline: { t: number; rps: number; latencyP50Ms: number | null; latencyP99Ms: number | null }[];
  measuredMs: number;
  eventLoopDelayP99Ms: number;
  /** Event-loop utilisation over the measured phase, %. */
  busyPercent: number;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Runs the plan to completion: warm-up, measured phase, then the last responses (each bounded by the timeout). */
export async function runOpenModel(plan: OpenModelPlan): Promise<OpenModelResult> {
  const pool = new Pool(plan.origin, {
    connections: plan.connections,
    headersTimeout: plan.timeoutMs,
    bodyTimeout: plan.timeoutMs,
    connectTimeout: plan.timeoutMs,
    keepAliveTimeout: 30_000,
  });
  const latency = createHistogram();
  const sendLag = createHistogram();
  const second = createHistogram();
  const result = {
    scheduled: 0,
    completed: 0,
    late: 0,
    waitedForConnection: 0,
    dropped: 0,
    timeouts: 0,
    errors: {} as Record<string, number>,
    httpStatus: {} as Record<string, number>,
  };
  const timeline: OpenModelResult['timeline'] = [];
  // Past this many requests waiting for a connection (about a second of arrivals), new ones are
  // dropped and counted: the generator stays bounded and never floods a stalled target.
  const backlogCap = Math.max(plan.connections, Math.ceil(plan.rate));
  const endMs = plan.warmupMs + plan.durationMs;
  const next = arrivalClock(plan.rate, plan.arrival, plan.seed);
  const loop = watchEventLoop();
  let inFlight = 0;
  let pathIndex = 0;
  let secondCount = 0;
  let measuredCompleted = 0;
  let onIdle: (() => void) | null = null;

  const bump = (m: Record<string, number>, k: string): void => {
    m[k] = (m[k] ?? 0) + 1;
  };
  const settle = (): void => {
    if (--inFlight === 0 && onIdle) onIdle();
  };

  const fire = (intendedAbs: number, measured: boolean): void => {
    if (measured) result.scheduled++;
    if (inFlight - plan.connections >= backlogCap) {
      if (measured) result.dropped++;
      return;
    }
    if (measured && inFlight >= plan.connections) result.waitedForConnection++;
    inFlight++;
    const path = plan.paths[pathIndex++ % plan.paths.length]!;
    const chunks: Buffer[] = [];
    let status = 0;
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart() {
        // Called as the request is written to a socket: the generator's own lag ends here.
        if (!measured) return;
        const lagUs = Math.max(0, Math.round((performance.now() - intendedAbs) * 1000));
        sendLag.recordValue(lagUs);
        if (lagUs > plan.lateMs * 1000) result.late++;
      },
      onResponseStart(_controller, statusCode) {
        status = statusCode;
      },
      onResponseData(_controller, chunk) {
        if (measured && plan.onResponse) chunks.push(chunk);
      },
      onResponseEnd() {
        const us = Math.round((performance.now() - intendedAbs) * 1000);
        settle();
        if (!measured) return;
        latency.recordValue(Math.max(1, us));
        second.recordValue(Math.max(1, us));
        secondCount++;
        result.completed++;
        measuredCompleted++;
        bump(result.httpStatus, String(status));
        plan.onResponse?.(status, Buffer.concat(chunks).toString('utf8'));
      },
      onResponseError(_controller, err) {
        settle();
        if (!measured) return;
        const code = (err as { code?: string }).code ?? err.name;
        if (TIMEOUT_CODES.has(code)) result.timeouts++;
        else bump(result.errors, code);
      },
    };
    pool.dispatch({ origin: plan.origin, path, method: 'GET', headers: plan.headers }, handler);
  };

  const t0 = performance.now() + 5;
  let nextAt = next();
  let measuring = plan.warmupMs <= 0;
  let measuredSince = measuring ? t0 : 0;
  const startMeasuring = (): void => {
    measuring = true;
    measuredSince = performance.now();
    loop.start();
  };
  if (measuring) startMeasuring();

  const ticker = setInterval(() => {
    if (!measuring) return;
    const elapsedS = Math.round((performance.now() - measuredSince) / 1000);
    const s = second.totalCount ? second : null;
    timeline.push({
      t: elapsedS,
      rps: secondCount,
      latencyP50Ms: s ? s.getValueAtPercentile(50) / 1000 : null,
      latencyP99Ms: s ? s.getValueAtPercentile(99) / 1000 : null,
    });
    plan.onSecond?.({ elapsedS, requests: measuredCompleted, rps: secondCount });
    second.reset();
    secondCount = 0;
  }, 1000);

  await new Promise<void>((resolve) => {
    // One timer at a time, set for the next intended time; every request already due is sent
    // on each wake, so a late wake-up sends the backlog at once (each keeps its intended time).
    const pump = (): void => {
      const now = performance.now();
      while (nextAt < endMs && t0 + nextAt <= now) {
        if (!measuring && nextAt >= plan.warmupMs) startMeasuring();
        fire(t0 + nextAt, nextAt >= plan.warmupMs);
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
  const measuredMs = Math.max(1, performance.now() - measuredSince);
  const health = loop.stop();
  if (inFlight > 0) {
    // Every request is bounded by the timeout, so this ends; the guard covers a stuck socket.
    await new Promise<void>((resolve) => {
      onIdle = resolve;
      setTimeout(resolve, plan.timeoutMs + 2000).unref();
    });
  }
  clearInterval(ticker);
  await pool.destroy().catch(() => {});
  second.destroy();
  return { latency, sendLag, ...result, timeline, measuredMs: Math.min(measuredMs, plan.durationMs), ...health };
}
