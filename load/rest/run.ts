/**
 * `conform load rest` as a library: `/v1/price` or `/v1/pairs` at a constant arrival rate through
 * autocannon's programmatic API (coordinated-omission correction on, warm-up excluded), with the
 * distribution of the envelope's `status_number` beside the HTTP codes. Returns plain data.
 */
import autocannon from 'autocannon';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { API_KEY_HEADER, PATHS, QUERY } from '../../src/spec.ts';
import { REST_DEFAULTS, LoadUsageError, positiveInt } from '../options.ts';
import { pickPairs, type LoadTarget } from '../target.ts';
import { evaluateThresholds, parseThresholds, type ThresholdResult } from '../thresholds.ts';
import { SATURATION } from '../fanout/aggregate.ts';

export interface RestOptions {
  endpoint?: 'price' | 'pairs';
  /** Requests per second (constant arrival rate). */
  rate?: number;
  connections?: number;
  durationMs?: number;
  warmupMs?: number;
  timeoutMs?: number;
  pair?: string[];
  thresholds?: string[];
  onProgress?: (p: { elapsedS: number; requests: number; rps: number }) => void;
}

export interface RestReport {
  kind: 'rest';
  startedAt: string;
  target: { rest: string; embedded: boolean };
  options: { endpoint: string; rate: number; connections: number; durationMs: number; warmupMs: number; pairs: string[] };
  requests: number;
  rps: number;
  latencyMs: { p50: number | null; p90: number | null; p99: number | null; p999: number | null; max: number | null; mean: number | null };
  errors: number;
  timeouts: number;
  non2xx: number;
  /** HTTP status → count. */
  httpStatus: Record<string, number>;
  /** Envelope `status_number` → count (`(none)` when a body had none). */
  statusNumbers: Record<string, number>;
  timeline: { t: number; rps: number }[];
  generator: { eventLoopDelayP99Ms: number; cpuPercent: number; saturated: boolean; reasons: string[] };
  trustworthy: boolean;
  thresholds: ThresholdResult[];
  observations: string[];
}

/** Flat metric values for thresholds (names in thresholds.ts METRICS.rest). */
export function restMetrics(r: Omit<RestReport, 'thresholds'>): Record<string, number | null> {
  const statusTotal = Object.values(r.statusNumbers).reduce((a, b) => a + b, 0);
  return {
    'latency.p50': r.latencyMs.p50, 'latency.p90': r.latencyMs.p90, 'latency.p99': r.latencyMs.p99, 'latency.p999': r.latencyMs.p999, 'latency.max': r.latencyMs.max,
    rps: r.rps, requests: r.requests, errors: r.errors, timeouts: r.timeouts, non_2xx: r.non2xx,
    rate_limited: r.statusNumbers['50006'] ?? 0,
    non_200_status: statusTotal - (r.statusNumbers['200'] ?? 0),
    saturated: r.generator.saturated ? 1 : 0,
  };
}

const STATUS_NUMBER = /"status_number"\s*:\s*"([^"]*)"/;

/** Runs the REST load against `target` (which the caller closes). */
export async function runRest(target: LoadTarget, options: RestOptions = {}): Promise<RestReport> {
  const endpoint = options.endpoint ?? REST_DEFAULTS.endpoint;
  if (endpoint !== 'price' && endpoint !== 'pairs') throw new LoadUsageError(`--endpoint ${String(endpoint)}: use price or pairs`);
  const rate = positiveInt(options.rate ?? REST_DEFAULTS.rate, '--rate', 1_000_000);
  const connections = positiveInt(options.connections ?? REST_DEFAULTS.connections, '--connections', 10_000);
  const durationMs = options.durationMs ?? REST_DEFAULTS.durationMs;
  const warmupMs = options.warmupMs ?? REST_DEFAULTS.warmupMs;
  const thresholds = parseThresholds(options.thresholds, 'rest');
  const key = target.keys[0]?.key ?? target.profile.keys.primary.key;
  const pairs = endpoint === 'price' ? options.pair ?? await pickPairs(target, 10) : [];
  const startedAt = new Date().toISOString();

  const paths = endpoint === 'price'
    ? pairs.map((c) => `${PATHS.price}?${QUERY.price.code}=${encodeURIComponent(c)}`)
    : [`${PATHS.pairs}?${QUERY.pairs.perPage}=10`];
  let next = 0;
  const statusNumbers: Record<string, number> = {};
  let counting = warmupMs <= 0;
  const timeline: { t: number; rps: number }[] = [];

  const ELD_RESOLUTION_MS = 10;
  const eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  const base = new URL(target.rest);
  const opts: autocannon.Options = {
    url: base.origin,
    connections: Math.min(connections, rate),
    overallRate: rate,
    duration: durationMs / 1000,
    timeout: (options.timeoutMs ?? REST_DEFAULTS.timeoutMs) / 1000,
    headers: { [API_KEY_HEADER]: key },
    requests: [{
      method: 'GET',
      setupRequest: (req) => ({ ...req, path: base.pathname.replace(/\/$/, '') + paths[next++ % paths.length]! }),
      onResponse: (_status, body) => {
        if (!counting) return;
        const m = STATUS_NUMBER.exec(body);
        const k = m ? m[1]! : '(none)';
        statusNumbers[k] = (statusNumbers[k] ?? 0) + 1;
      },
    }],
    ...(warmupMs > 0 ? { warmup: { connections: Math.min(connections, rate), duration: warmupMs / 1000 } } : {}),
  } as autocannon.Options;

  let elu = performance.eventLoopUtilization();
  let started = 0;
  // Without a callback autocannon returns an emitter that is also a promise.
  const instance = autocannon(opts) as unknown as Promise<autocannon.Result> & NodeJS.EventEmitter;
  // The warm-up runs on a tracker of its own: this one's 'start' is the measured run's.
  instance.on('start', () => {
    {
      counting = true;
      started = performance.now();
      eld.enable();
      elu = performance.eventLoopUtilization();
    }
  });
  instance.on('tick', (t: { counter: number }) => {
    if (!counting) return;
    const elapsedS = (performance.now() - started) / 1000;
    timeline.push({ t: Math.round(elapsedS), rps: t.counter });
    options.onProgress?.({ elapsedS, requests: timeline.reduce((a, b) => a + b.rps, 0), rps: t.counter });
  });
  let result: autocannon.Result;
  try {
    result = await instance;
  } catch (err) {
    throw new LoadUsageError(`load rest: ${(err as Error).message}`);
  }
  eld.disable();
  const u = performance.eventLoopUtilization(elu);
  // The histogram records whole timer intervals, resolution included: subtract it to get the delay.
  const eldP99 = eld.count ? Math.round(Math.max(0, eld.percentile(99) / 1e6 - ELD_RESOLUTION_MS) * 100) / 100 : 0;
  const cpuPercent = Math.round(u.utilization * 1000) / 10;
  const reasons: string[] = [];
  if (eldP99 > SATURATION.eventLoopDelayP99Ms) reasons.push(`event-loop delay p99 ${eldP99} ms > ${SATURATION.eventLoopDelayP99Ms} ms`);
  if (cpuPercent > SATURATION.cpuPercent) reasons.push(`busy ${cpuPercent}% > ${SATURATION.cpuPercent}%`);

  const lat = result.latency as unknown as Record<string, number>;
  const httpStatus: Record<string, number> = {};
  for (const [code, s] of Object.entries(result.statusCodeStats ?? {})) httpStatus[code] = (s as { count: number }).count;
  const observations: string[] = [];
  if (statusNumbers['50006']) observations.push(`${statusNumbers['50006']} responses were throttled (status_number 50006)`);
  const report: Omit<RestReport, 'thresholds'> = {
    kind: 'rest',
    startedAt,
    target: { rest: target.rest, embedded: target.embedded },
    options: { endpoint, rate, connections: Math.min(connections, rate), durationMs, warmupMs, pairs },
    requests: result.requests.total,
    rps: Math.round(result.requests.total / (durationMs / 1000)),
    latencyMs: { p50: lat.p50 ?? null, p90: lat.p90 ?? null, p99: lat.p99 ?? null, p999: lat.p99_9 ?? null, max: lat.max ?? null, mean: lat.average ?? null },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    httpStatus,
    statusNumbers,
    timeline,
    generator: { eventLoopDelayP99Ms: eldP99, cpuPercent, saturated: reasons.length > 0, reasons },
    trustworthy: reasons.length === 0,
    observations,
  };
  return { ...report, thresholds: evaluateThresholds(thresholds, restMetrics(report)) };
}
