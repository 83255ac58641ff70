/**
 * Options of the load tools: defaults in one typed object (merged, never mutated), parsers for
 * durations and rates, and validation whose messages name the option and the rule, so
 * programmatic callers get the same errors as the CLI (exit 2).
 */
import { LoadUsageError } from '../src/errors.ts';
import { LIMITS } from '../src/spec.ts';

/**
 * Limits of a trustworthy generator: above either, a run is marked untrustworthy (conform's
 * workers and the k6 scripts' VUs alike; the k6 scripts import this, so it stays plain data).
 */
export const SATURATION = { eventLoopDelayP99Ms: 20, cpuPercent: 90 } as const;

/**
 * Clients one `conform load fanout` process opens at most (its open files and two cores); a run
 * spread over shards may have this many per shard, up to the most shards `--shard` allows.
 */
export const MAX_CLIENTS_PER_HOST = 20_000;
export const MAX_SHARDS = 1000;

/** Defaults of `conform load fanout`. */
export const FANOUT_DEFAULTS = {
  /** Clients (WebSocket connections). */
  clients: 100,
  /** Pairs each client subscribes to, picked from `/v1/pairs` unless `--pair` names them. */
  pairs: 10,
  /** Length of the measured phase, after the ramp, ms. */
  durationMs: 30_000,
  /** New connections per second (open model). */
  rampRate: 1000,
  /** Settling time between the ramp and the measured phase, excluded from the figures. */
  warmupMs: 1000,
  /** Ping interval: half the spec's 30 s window. */
  pingIntervalMs: LIMITS.pingTimeoutMs / 2,
  connectTimeoutMs: 10_000,
  /** An update not received by a subscribed client within this window counts as lost. */
  updateWindowMs: 2000,
  /** Clients subscribed less than this before an update are not expected to receive it. */
  settleMs: 500,
  tickMs: 1000,
  /**
   * Push frames validated per second per worker (full JSON.parse + schema, ~1.5 µs each); above
   * this rate a stride sample is validated, so validation stays around 0.3% of a worker's time.
   */
  validatePerSecond: 2000,
  outDir: 'conform-reports',
} as const;

/** Defaults of `conform load rest`. */
export const REST_DEFAULTS = {
  /** Requests per second (open model); `max` runs the closed model. */
  rate: 200 as number | 'max',
  /** Intended send times evenly spaced; `poisson` draws exponential gaps. */
  arrival: 'uniform' as 'uniform' | 'poisson',
  /** Seed of Poisson arrivals. */
  seed: 1,
  /**
   * Open model: most connections opened to the target (enough for rate × latency in flight); closed
   * model: connections sending back to back.
   */
  connections: 50,
  /** Requests in flight on one connection at once: 1, none pipelined. */
  pipelining: 1,
  /** Worker threads the requests are spread over: 1, the calling thread. */
  workers: 1,
  /**
   * `--workers auto` gives an open-model run one thread per this many requests per second, up to
   * one per core. One thread here sends 12,400/s at 31 µs of CPU each, 39 % of a core
   * (docs/benchmarks.md); a rate it carries costs more CPU per request on two threads, each waking
   * for half the arrivals (222 against 127 µs at 1,000/s), so auto spreads only what one thread
   * would struggle to send on time, with room for a slower machine.
   */
  requestsPerThread: 10_000,
  durationMs: 20_000,
  warmupMs: 2000,
  endpoint: 'price' as 'price' | 'pairs',
  timeoutMs: 10_000,
} as const;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses `20s`, `500ms`, `2m`, `1h` or a bare number of seconds into ms. */
export function parseDuration(value: string | number, option: string): number {
  if (typeof value === 'number') {
    if (!(value > 0) || !Number.isFinite(value))
      throw new LoadUsageError(`${option} ${value}: must be a positive duration such as 20s`);
    return value * 1000;
  }
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(value);
  if (!m || !(Number(m[1]) > 0))
    throw new LoadUsageError(
      `${option} ${JSON.stringify(value)}: must be a positive duration such as 20s, 500ms or 2m`,
    );
  return Number(m[1]) * UNIT_MS[m[2] ?? 's']!;
}

/** Parses `3000/s`, `3000` or `180000/m` into a rate per second. */
export function parseRate(value: string | number, option: string): number {
  const text = String(value);
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:\/\s*(s|m))?\s*$/.exec(text);
  if (!m || !(Number(m[1]) > 0))
    throw new LoadUsageError(`${option} ${JSON.stringify(text)}: must be a positive rate such as 3000/s`);
  return m[2] === 'm' ? Number(m[1]) / 60 : Number(m[1]);
}

/** A positive integer option, with an optional upper bound. */
export function positiveInt(value: unknown, option: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > max) {
    // yargs turns a typed word into NaN, which JSON shows as null: say it was not a number.
    if (typeof n === 'number' && Number.isNaN(n))
      throw new LoadUsageError(`${option}: must be a whole number from 1 to ${max} (got something not a number)`);
    throw new LoadUsageError(`${option} ${JSON.stringify(value)}: must be a whole number from 1 to ${max}`);
  }
  return n;
}

/** Parses `--shard i/n` (1-based, as Playwright and Jest number shards). */
export function parseShard(value: string): { index: number; count: number } {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(value);
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!(count >= 1 && index >= 1 && index <= count && count <= MAX_SHARDS))
    throw new LoadUsageError(`--shard ${JSON.stringify(value)}: must be i/n with 1 ≤ i ≤ n ≤ ${MAX_SHARDS}, e.g. 1/4`);
  return { index, count };
}

/** Parses `--start-at` (an ISO date or epoch milliseconds) into epoch ms; it must lie ahead, within a day. */
export function parseStartAt(value: string, nowMs = Date.now()): number {
  const ms = /^\s*\d+\s*$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms))
    throw new LoadUsageError(
      `--start-at ${JSON.stringify(value)}: must be an ISO date such as 2026-01-31T22:00:00Z or epoch milliseconds`,
    );
  if (ms < nowMs) throw new LoadUsageError(`--start-at ${value}: is in the past; every host must start before it`);
  if (ms > nowMs + 86_400_000) throw new LoadUsageError(`--start-at ${value}: is more than a day ahead`);
  return ms;
}

/**
 * How an append to a `--history` file waits for another run's: the lock (a directory beside the
 * file) is retried with growing pauses, and taken over when its holder stopped refreshing it
 * (a run that died holding it).
 */
export const HISTORY_LOCK = { staleMs: 10_000, retries: 40, minRetryMs: 25, maxRetryMs: 500 } as const;

/** Defaults of the regression judgement of `conform load trend` and `--judge`. */
export const TREND_DEFAULTS = {
  /** Smallest relative change worth an alarm: a shift whose interval lies wholly below it is not a regression. */
  minEffect: 0.1,
  /** Significance of a change point (E-divisive's t-test, as Apache Otava's default). */
  maxPValue: 0.001,
  /** Runs in one window of E-divisive's split step (Otava's default). */
  windowLength: 50,
  /**
   * The newest runs tested as a segment of their own, from 2 (one run is a blip, not a shift) to
   * this many: E-divisive rarely splits off a segment this short at the end of a series.
   */
  tailRuns: 3,
  /**
   * The chance that a night's verdict is a false regression, over every metric judged: a shift
   * is a regression only when a one-sided test puts it at this divided by the metrics judged
   * (Bonferroni), and the newest runs' test divides it again by the lengths it tries.
   */
  verdictPValue: 0.01,
  /**
   * The level of the newest segment's rank test, which holds whatever the noise's shape. A few
   * runs' ranks cannot reach the t-test's share of verdictPValue per metric, so it has a level of
   * its own, below verdictPValue: across 42 metrics, some read in whole milliseconds, a rare value
   * two nights in a row passes a test at 1 % often enough to alarm more than once in 100 nights.
   */
  rankPValue: 0.005,
  /**
   * Runs a baseline segment needs before the newest ones are tested against it, and a segment
   * between two change points needs to be a shift rather than a blip.
   */
  minBaseline: 5,
  /** Confidence of the interval given with a shift's size. */
  confidence: 0.95,
} as const;

/** Defaults of `conform load capacity`. */
export const CAPACITY_DEFAULTS = {
  /** Measured window of each step, after its warm-up. */
  stepMs: 5000,
  /** Warm-up of each step, excluded from its figures. */
  warmupMs: 2000,
  /** Steps at most, doubling and bisecting together. */
  maxSteps: 14,
  /** Wall time at most; no step starts that would end past it. */
  maxTimeMs: 15 * 60_000,
  /** The bisection stops when the gap between held and failed is this share of the load held. */
  resolution: 0.05,
  /** First load: clients (fanout) or requests per second (rest). */
  start: { fanout: 50, rest: 50 },
} as const;

/** Live metrics (`--remote-write`): how often a sample goes out, and how long one push may take. */
export const LIVE_METRICS = { everyMs: 1000, pushTimeoutMs: 2000 } as const;
