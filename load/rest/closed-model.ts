/**
 * Measure: the closed-model REST run (`--rate max`) through autocannon: every connection sends
 * its next request as soon as the last one is answered, so the figure that matters is the most
 * requests per second the target serves over that many connections. Latency here is service
 * time under saturation, from the actual send: there is no intended time to measure from. Each
 * response is recorded once, in µs, from autocannon's own per-request timing (its histogram
 * keeps whole milliseconds). Returns plain data; prints nothing.
 */
import autocannon from 'autocannon';
import { performance } from 'node:perf_hooks';
import { createHistogram, type Histogram } from '../histogram.ts';
import { LoadUsageError } from '../../src/errors.ts';
import { watchEventLoop, type RestPlan } from './plan.ts';

export interface ClosedModelResult {
  /** From the send to the last byte, µs, one sample per response. */
  latency: Histogram;
  completed: number;
  timeouts: number;
  errors: Record<string, number>;
  httpStatus: Record<string, number>;
  timeline: { t: number; rps: number; requests: number; latencyP50Ms: null; latencyP99Ms: null }[];
  measuredMs: number;
  eventLoopDelayP99Ms: number;
  busyPercent: number;
}

export async function runClosedModel(plan: RestPlan): Promise<ClosedModelResult> {
  const latency = createHistogram();
  const httpStatus: Record<string, number> = {};
  const timeline: ClosedModelResult['timeline'] = [];
  let counting = plan.warmupMs <= 0;
  let next = 0;
  const loop = watchEventLoop();
  let started = performance.now();
  let completed = 0;
  const opts: autocannon.Options = {
    url: plan.origin,
    connections: plan.connections,
    duration: plan.durationMs / 1000,
    timeout: plan.timeoutMs / 1000,
    headers: plan.headers,
    requests: [
      {
        method: 'GET',
        setupRequest: (req) => ({ ...req, path: plan.paths[next++ % plan.paths.length]! }),
        onResponse: (status, body) => {
          if (counting) plan.onResponse?.(status, body);
        },
      },
    ],
    ...(plan.warmupMs > 0 ? { warmup: { connections: plan.connections, duration: plan.warmupMs / 1000 } } : {}),
  } as autocannon.Options;
  // Without a callback autocannon returns an emitter that is also a promise.
  const instance = autocannon(opts) as unknown as Promise<autocannon.Result> & NodeJS.EventEmitter;
  // The warm-up runs on a tracker of its own: this one's 'start' is the measured run's.
  instance.on('start', () => {
    counting = true;
    started = performance.now();
    loop.start();
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, responseTimeMs: number) => {
    if (!counting) return;
    latency.recordValue(Math.max(1, Math.round(responseTimeMs * 1000)));
    httpStatus[String(status)] = (httpStatus[String(status)] ?? 0) + 1;
    completed++;
  });
  instance.on('tick', (t: { counter: number }) => {
    if (!counting) return;
    const elapsedS = (performance.now() - started) / 1000;
    timeline.push({
      t: Math.round(elapsedS),
      rps: t.counter,
      requests: t.counter,
      latencyP50Ms: null,
      latencyP99Ms: null,
    });
    plan.onSecond?.({ elapsedS, requests: completed, rps: t.counter });
  });
  let result: autocannon.Result;
  try {
    result = await instance;
  } catch (err) {
    throw new LoadUsageError(`load rest: ${(err as Error).message}`);
  }
  const health = loop.stop();
  const errors: Record<string, number> = {};
  if (result.errors - result.timeouts > 0) errors.request = result.errors - result.timeouts;
  return {
    latency,
    completed,
    timeouts: result.timeouts,
    errors,
    httpStatus,
    timeline,
    measuredMs: plan.durationMs,
    ...health,
  };
}
