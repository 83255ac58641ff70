/**
 * `conform load rest` as a library: `/v1/price` (cycling pairs) or `/v1/pairs`, with the
 * distribution of the envelope's `status_number` beside the HTTP codes. Two models:
 * - open (`rate` a number): requests at intended times, latency from the intended send time
 *   (load/rest/open-model.ts); what a fixed arrival of users would see.
 * - closed (`rate: 'max'`): connections back to back (load/rest/closed-model.ts); the most
 *   requests per second the target serves, latency as service time under saturation.
 * Both send through one lean HTTP/1.1 client on raw sockets (load/rest/http-client.ts).
 * Returns plain data with the latency histogram encoded (µs), so runs can be merged.
 */
import { availableParallelism } from 'node:os';
import { API_KEY_HEADER, PATHS, QUERY, STATUS } from '../../src/spec.ts';
import { encode, summarize, type Percentiles } from '../histogram.ts';
import { LoadUsageError } from '../../src/errors.ts';
import { REST_DEFAULTS, SATURATION, positiveInt } from '../options.ts';
import { pickPairs, type LoadTarget } from '../target.ts';
import { flatMetrics } from '../metrics.ts';
import { evaluateThresholds, parseThresholds, type ThresholdResult } from '../thresholds.ts';
import { runClosedModel } from './closed-model.ts';
import { runOpenModel, type OpenModelResult } from './open-model.ts';
import { runInWorkers } from './rest-workers.ts';
import type { RestPlan } from './plan.ts';
import { ARRIVALS, type Arrival } from './schedule.ts';
import { caCertificates, caOf } from '../../src/transports/tls-trust.ts';

/** Limits of a trustworthy open-model run, beside the event-loop ones every load mode shares. */
export const REST_SATURATION = {
  /** A request written to its socket more than this after its intended time is late. */
  lateMs: 5,
  /** Above this share of late requests the generator's lag is part of the figures. */
  lateShare: 0.01,
} as const;

export interface RestOptions {
  endpoint?: 'price' | 'pairs';
  /** Requests per second (open model), or 'max' (closed model: as many as the connections carry). */
  rate?: number | 'max';
  /** Open model: evenly spaced intended times, or a Poisson process. */
  arrival?: Arrival;
  /** Seed of the Poisson arrivals (the same seed replays the same times). */
  seed?: number;
  /** Open model: most connections to the target; closed model: the connections that send back to back. */
  connections?: number;
  /** Requests in flight on one connection at once (default 1: none pipelined, as browsers and most clients send). */
  pipelining?: number;
  /** Worker threads the requests are spread over, or `auto`: one per core (default 1: the calling thread). */
  workers?: number | 'auto';
  durationMs?: number;
  warmupMs?: number;
  timeoutMs?: number;
  pair?: string[];
  thresholds?: string[];
  onProgress?: (p: { elapsedS: number; requests: number; rps: number }) => void;
  /** Given, once the run starts, the function that reads its figures so far (live metrics; one thread only). */
  onLiveSource?: (read: () => Record<string, number | null>) => void;
}

export interface RestReport {
  kind: 'rest';
  /** open: fixed arrival rate; closed: `--rate max`. */
  model: 'open' | 'closed';
  startedAt: string;
  target: { rest: string; embedded: boolean };
  options: {
    endpoint: string;
    rate: number | 'max';
    pipelining: number;
    workers: number;
    arrival: Arrival | null;
    seed: number | null;
    connections: number;
    durationMs: number;
    warmupMs: number;
    timeoutMs: number;
    pairs: string[];
  };
  /** What latency runs from: the intended send time (open) or the actual send (closed). */
  latencyFrom: 'intended send time' | 'actual send time';
  /** Requests whose intended time lay in the measured phase (open); completed ones (closed). */
  scheduled: number;
  /** Responses received, one latency sample each. */
  requests: number;
  rps: number;
  latencyMs: Percentiles;
  /** Open model: actual send − intended send time (the generator's own lag). */
  sendLagMs: Percentiles | null;
  /** Open model: the same for the requests that found a connection free (no wait on the target in it). */
  ownSendLagMs: Percentiles | null;
  /** Requests sent more than `lateMs` after their intended time. */
  late: number;
  /** Of those, the ones that found a connection free: the generator's own lag, not the target's. */
  lateOnOwn: number;
  lateMs: number;
  /** Requests that found every connection busy and waited for one (their latency includes the wait). */
  waitedForConnection: number;
  /** Requests not sent at all: the backlog waiting for a connection was full. */
  dropped: number;
  /**
   * Distributions by threshold metric name, each an hdr-histogram-js compressed base64 histogram
   * of µs values (3 significant digits, lowest 1, highest 60 s): runs merge by adding them.
   */
  histograms: { latency: string };
  errors: number;
  /** Errors by code (ECONNREFUSED, UND_ERR_SOCKET, …). */
  errorCodes: Record<string, number>;
  timeouts: number;
  non2xx: number;
  /** HTTP status → count. */
  httpStatus: Record<string, number>;
  /** Envelope `status_number` → count (`(none)` when a body had none). */
  statusNumbers: Record<string, number>;
  timeline: { t: number; rps: number; requests: number; latencyP50Ms: number | null; latencyP99Ms: number | null }[];
  generator: {
    eventLoopDelayP99Ms: number;
    cpuPercent: number;
    /** CPU time of the generator's process over the measured phase per response, µs (every thread counted). */
    cpuMicrosPerRequest: number | null;
    saturated: boolean;
    reasons: string[];
  };
  trustworthy: boolean;
  thresholds: ThresholdResult[];
  observations: string[];
}

/** Flat metric values for thresholds, read as load/metrics.ts says. */
export function restMetrics(r: Omit<RestReport, 'thresholds'>): Record<string, number | null> {
  return flatMetrics('rest', r as unknown as Record<string, unknown>);
}

/** Validated options with defaults merged (usage errors name the option). */
export function resolveRestOptions(options: RestOptions): Required<
  Omit<RestOptions, 'pair' | 'onProgress' | 'onLiveSource' | 'thresholds' | 'workers'>
> & {
  workers: number;
} {
  const endpoint = options.endpoint ?? REST_DEFAULTS.endpoint;
  if (endpoint !== 'price' && endpoint !== 'pairs')
    throw new LoadUsageError(`--endpoint ${String(endpoint)}: use price or pairs`);
  const rawRate = options.rate ?? REST_DEFAULTS.rate;
  const rate = rawRate === 'max' ? ('max' as const) : rawRate;
  if (rate !== 'max' && !(typeof rate === 'number' && rate > 0 && rate <= 100_000))
    throw new LoadUsageError(`--rate ${String(rawRate)}: must be a rate from 1 to 100000 per second, or max`);
  const arrival = options.arrival ?? REST_DEFAULTS.arrival;
  if (!ARRIVALS.includes(arrival))
    throw new LoadUsageError(`--arrival ${String(arrival)}: use ${ARRIVALS.join(' or ')}`);
  const durationMs = options.durationMs ?? REST_DEFAULTS.durationMs;
  if (!(durationMs > 0)) throw new LoadUsageError('--duration: must be positive');
  const warmupMs = options.warmupMs ?? REST_DEFAULTS.warmupMs;
  if (!(warmupMs >= 0)) throw new LoadUsageError('--warmup: must be 0 or more');
  return {
    endpoint,
    rate,
    arrival,
    durationMs,
    warmupMs,
    seed: positiveInt(options.seed ?? REST_DEFAULTS.seed, '--seed', 2 ** 31),
    connections: positiveInt(options.connections ?? REST_DEFAULTS.connections, '--connections', 10_000),
    pipelining: positiveInt(options.pipelining ?? REST_DEFAULTS.pipelining, '--pipelining', 100),
    workers:
      options.workers === 'auto'
        ? autoWorkers(rate)
        : positiveInt(options.workers ?? REST_DEFAULTS.workers, '--workers', 64),
    timeoutMs: options.timeoutMs ?? REST_DEFAULTS.timeoutMs,
  };
}

type ResolvedRestOptions = ReturnType<typeof resolveRestOptions>;

/** `--workers auto`: one thread per core for the closed model, else the threads the rate needs. */
export function autoWorkers(rate: number | 'max'): number {
  const cores = availableParallelism();
  return rate === 'max' ? cores : Math.min(cores, Math.ceil(rate / REST_DEFAULTS.requestsPerThread));
}

/** What either model measured, the closed one with the open model's schedule figures at zero. */
type ModelResult = Omit<OpenModelResult, 'sendLag' | 'ownSendLag'> & {
  sendLag: OpenModelResult['sendLag'] | null;
  ownSendLag: OpenModelResult['ownSendLag'] | null;
};

/** The request paths, used in turn: the price of each pair, or one page of pairs, under the base URL's path. */
function requestPaths(base: URL, endpoint: string, pairs: readonly string[]): string[] {
  const prefix = base.pathname.replace(/\/$/, '');
  return (
    endpoint === 'price'
      ? pairs.map((c) => `${PATHS.price}?${QUERY.price.code}=${encodeURIComponent(c)}`)
      : [`${PATHS.pairs}?${QUERY.pairs.perPage}=10`]
  ).map((p) => prefix + p);
}

/** Runs the model the rate asks for: open at a number, closed at `max`; on worker threads when asked. */
async function runModel(o: ResolvedRestOptions, plan: RestPlan): Promise<ModelResult> {
  const open =
    o.rate === 'max' ? null : { rate: o.rate, arrival: o.arrival, seed: o.seed, lateMs: REST_SATURATION.lateMs };
  if (o.workers > 1) return runInWorkers(plan, open, o.workers);
  if (!open)
    return {
      ...(await runClosedModel(plan)),
      scheduled: 0,
      late: 0,
      lateOnOwn: 0,
      waitedForConnection: 0,
      dropped: 0,
      sendLag: null,
      ownSendLag: null,
    };
  return runOpenModel({ ...plan, ...open });
}

/** Why the generator's figures cannot be trusted (empty when they can). */
function restSaturationReasons(m: ModelResult, o: ResolvedRestOptions, scheduled: number): string[] {
  const reasons: string[] = [];
  if (m.eventLoopDelayP99Ms > SATURATION.eventLoopDelayP99Ms)
    reasons.push(`event-loop delay p99 ${m.eventLoopDelayP99Ms} ms > ${SATURATION.eventLoopDelayP99Ms} ms`);
  if (m.busyPercent > SATURATION.cpuPercent) reasons.push(`busy ${m.busyPercent}% > ${SATURATION.cpuPercent}%`);
  if (o.rate !== 'max' && scheduled > 0 && m.late / scheduled > REST_SATURATION.lateShare) {
    reasons.push(
      `${m.late} of ${scheduled} requests sent more than ${REST_SATURATION.lateMs} ` +
        `ms after their intended time (> ${REST_SATURATION.lateShare * 100}%)` +
        `${m.waitedForConnection ? `; ${m.waitedForConnection} waited for one of ${o.connections} connections` : ''}`,
    );
  }
  if (m.dropped > 0)
    reasons.push(
      `${m.dropped} requests dropped: the backlog waiting for one of ${o.connections} ` +
        `connections was full (their latency is missing)`,
    );
  return reasons;
}

/** The report of a run, thresholds not yet judged. */
function restReport(
  target: LoadTarget,
  o: ResolvedRestOptions,
  run: { startedAt: string; pairs: string[]; m: ModelResult },
): Omit<RestReport, 'thresholds'> {
  const { m } = run;
  const { statusNumbers } = m;
  const open = o.rate !== 'max';
  const errorCount = Object.values(m.errors).reduce((a, b) => a + b, 0);
  const scheduled = open ? m.scheduled : m.completed;
  const reasons = restSaturationReasons(m, o, scheduled);
  let non2xx = 0;
  for (const [code, count] of Object.entries(m.httpStatus)) if (!code.startsWith('2')) non2xx += count;
  const observations: string[] = [];
  if (statusNumbers[STATUS.RATE_LIMITED])
    observations.push(
      `${statusNumbers[STATUS.RATE_LIMITED]} responses were throttled (status_number ${STATUS.RATE_LIMITED})`,
    );
  if (m.waitedForConnection)
    observations.push(
      `${m.waitedForConnection} requests found all ${o.connections} connections busy ` +
        `and waited for one; their latency includes the wait`,
    );
  return {
    kind: 'rest',
    model: open ? 'open' : 'closed',
    startedAt: run.startedAt,
    target: { rest: target.rest, embedded: target.embedded },
    options: {
      endpoint: o.endpoint,
      rate: o.rate,
      pipelining: o.pipelining,
      workers: o.workers,
      arrival: open ? o.arrival : null,
      seed: open && o.arrival === 'poisson' ? o.seed : null,
      connections: o.connections,
      durationMs: o.durationMs,
      warmupMs: o.warmupMs,
      timeoutMs: o.timeoutMs,
      pairs: run.pairs,
    },
    latencyFrom: open ? 'intended send time' : 'actual send time',
    scheduled,
    requests: m.completed,
    rps: Math.round((m.completed * 1000) / m.measuredMs),
    latencyMs: summarize(m.latency),
    sendLagMs: m.sendLag ? summarize(m.sendLag) : null,
    ownSendLagMs: m.ownSendLag ? summarize(m.ownSendLag) : null,
    late: m.late,
    lateOnOwn: m.lateOnOwn,
    lateMs: REST_SATURATION.lateMs,
    waitedForConnection: m.waitedForConnection,
    dropped: m.dropped,
    histograms: { latency: encode(m.latency) },
    errors: errorCount + m.timeouts,
    errorCodes: m.errors,
    timeouts: m.timeouts,
    non2xx,
    httpStatus: m.httpStatus,
    statusNumbers,
    timeline: m.timeline,
    generator: {
      eventLoopDelayP99Ms: m.eventLoopDelayP99Ms,
      cpuPercent: m.busyPercent,
      cpuMicrosPerRequest: m.completed ? Math.round((m.cpuMicros / m.completed) * 100) / 100 : null,
      saturated: reasons.length > 0,
      reasons,
    },
    trustworthy: reasons.length === 0,
    observations,
  };
}

/** Runs the REST load against `target` (which the caller closes). */
export async function runRest(target: LoadTarget, options: RestOptions = {}): Promise<RestReport> {
  const o = resolveRestOptions(options);
  const thresholds = parseThresholds(options.thresholds, 'rest');
  const key = target.keys[0]?.key ?? target.profile.keys.primary.key;
  const pairs = o.endpoint === 'price' ? (options.pair ?? (await pickPairs(target, 10))) : [];
  const startedAt = new Date().toISOString();
  const base = new URL(target.rest);
  const m = await runModel(o, {
    origin: base.origin,
    ...(caOf(target.profile) ? { ca: caCertificates(caOf(target.profile))! } : {}),
    paths: requestPaths(base, o.endpoint, pairs),
    headers: { [API_KEY_HEADER]: key },
    connections: o.connections,
    pipelining: o.pipelining,
    warmupMs: o.warmupMs,
    durationMs: o.durationMs,
    timeoutMs: o.timeoutMs,
    ...(options.onProgress ? { onSecond: options.onProgress } : {}),
    ...(options.onLiveSource ? { onLiveSource: options.onLiveSource } : {}),
  });
  const errorCount = Object.values(m.errors).reduce((a, b) => a + b, 0);
  if (m.completed === 0 && errorCount > 0 && m.timeouts === 0) {
    // Not one answer, only errors: a usage problem (wrong URL, nothing listening), not a load result.
    throw new LoadUsageError(
      `target unreachable: ${base.origin} (${Object.entries(m.errors)
        .map(([k, v]) => `${k} ×${v}`)
        .join(', ')})`,
    );
  }
  const report = restReport(target, o, { startedAt, pairs, m });
  m.latency.destroy();
  m.sendLag?.destroy();
  m.ownSendLag?.destroy();
  return { ...report, thresholds: evaluateThresholds(thresholds, restMetrics(report)) };
}
