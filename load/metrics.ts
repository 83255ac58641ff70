/**
 * The load metrics, one row each: name, kind, unit, what it measures, where a result carries it,
 * how `conform load merge` combines hosts, and what a k6 run makes of it. Thresholds (names and
 * statistics), the flat values they are judged on, the k6 threshold form and allow-lists, the k6
 * summary's distributions and counts, merge's rules, the fan-out aggregator's per-client times
 * and tallied counts, and the console's distribution rows are all read from here. A new metric
 * is a row here plus the code that measures it.
 * Pure and import-free but for the spec's constants, so the k6 scripts bundle it too.
 */
import { STATUS } from '../src/spec.ts';

/** The load commands whose results carry metrics. */
export type LoadKind = 'fanout' | 'rest';

/** Statistics of a distribution a threshold may name (`latency.p99`). */
export const STATS = ['p50', 'p90', 'p99', 'p999', 'max'] as const;
export type Stat = (typeof STATS)[number];

type Json = Record<string, unknown>;

interface MetricBase {
  /** The name in thresholds, merged histograms and k6 metrics (`latency.p99<50`, `errors==0`). */
  name: string;
  /** What it measures, in the spec's terms (the console's row label for a distribution). */
  title: string;
  unit: string;
  /**
   * How a k6 run measures it: the k6 metric and aggregation a threshold becomes (a counter's
   * `count` by default), or why a k6 run cannot (a threshold naming it is then an error there).
   */
  k6: { metric?: string; agg?: string } | { absent: string };
  /**
   * Which way a change is a regression of the service, for `conform load trend`: `up` (latency,
   * loss, errors), `down` (throughput, connections), or `none` for the generator's own figures,
   * which say nothing of the service.
   */
  worse: 'up' | 'down' | 'none';
}

/** Percentiles over samples, recorded as a histogram (µs) that merge adds across hosts. */
export interface DistributionMetric extends MetricBase {
  kind: 'distribution';
  /** The result's field holding `{ count, p50, …, max }` in ms (`latencyMs`). */
  field: string;
  stats: readonly Stat[];
  /** `histogram`: hosts' histograms added; `worst-host`: needs one view of every client. */
  merge: 'histogram' | 'worst-host';
}

/** One number per result: a count, a rate or a flag. */
export interface ValueMetric extends MetricBase {
  kind: 'count' | 'rate' | 'flag';
  /** Its value in a result (a conform report or a k6 result); null when the result has none. */
  value: (r: Json) => number | null;
  /**
   * A count's field in a result, when it carries the count as one number. A k6 script that keeps
   * the count in a Counter (named `k6.metric`, else the row's name) has handleSummary write it
   * there; a fan-out count the workers tally (`ClientState.count(name)`) is summed there over the
   * measured phase by the aggregator. Nothing else names the field.
   */
  field?: string;
  /** `sum` over hosts, the `worst-host`'s value, or `any` host's flag. */
  merge: 'sum' | 'worst-host' | 'any';
}

export type LoadMetric = DistributionMetric | ValueMetric;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
/** The sum of a `{ code: count }` object, or a number as it is. */
const total = (v: unknown): number | null =>
  v && typeof v === 'object'
    ? Object.values(v as Json).reduce<number>((a, x) => a + (typeof x === 'number' ? x : 0), 0)
    : num(v);
const field =
  (name: string) =>
  (r: Json): number | null =>
    num(r[name]);
/** A count carried as one number under `name`. */
const counted = (name: string) => ({ field: name, value: field(name) });
/** conform reports the generator's verdict under `generator`, k6 results as `trustworthy`. */
const saturated = (r: Json): number | null => {
  const g = r.generator as Json | undefined;
  if (g && typeof g.saturated === 'boolean') return g.saturated ? 1 : 0;
  return typeof r.trustworthy === 'boolean' ? (r.trustworthy ? 0 : 1) : null;
};

const DIST = {
  kind: 'distribution',
  unit: 'ms',
  stats: STATS,
  merge: 'histogram',
  k6: {},
  worse: 'up',
} as const satisfies Partial<DistributionMetric>;
const ONE_VIEW = "needs every client's view (skew, loss) or conform's self-monitoring: run it with conform load fanout";
const REST_ONLY = 'exists only in conform load rest; k6 has http_req_failed for failures';

/** The metrics of each load command, in report order. */
export const LOAD_METRICS: Readonly<Record<LoadKind, readonly LoadMetric[]>> = {
  fanout: [
    { ...DIST, name: 'latency', field: 'latencyMs', title: 'latency (receipt − sent_at)' },
    { ...DIST, name: 'server_latency', field: 'serverLatencyMs', title: 'server (sent_at − last_updated)' },
    {
      ...DIST,
      name: 'skew',
      field: 'skewMs',
      title: 'skew (last − first client)',
      stats: ['p50', 'p90', 'p99', 'max'],
      merge: 'worst-host',
      k6: { absent: ONE_VIEW },
    },
    { ...DIST, name: 'connect', field: 'connectMs', title: 'connect (handshake)' },
    { ...DIST, name: 'subscribe', field: 'subscribeMs', title: 'subscribe notice' },
    { ...DIST, name: 'first_frame', field: 'firstFrameMs', title: 'first frame' },
    {
      ...DIST,
      name: 'connect_time',
      field: 'connectTimeMs',
      title: 'connect time (handshake → subscribed)',
    },
    {
      name: 'lost',
      title: 'deliveries an eligible client never received',
      kind: 'count',
      unit: 'deliveries',
      ...counted('lost'),
      merge: 'sum',
      k6: { absent: ONE_VIEW },
      worse: 'up',
    },
    {
      name: 'loss_rate',
      title: 'lost deliveries / expected deliveries',
      kind: 'rate',
      unit: 'ratio',
      value: field('lossRate'),
      merge: 'worst-host',
      k6: { absent: ONE_VIEW },
      worse: 'up',
    },
    {
      name: 'errors',
      title: 'schema violations of push frames',
      kind: 'count',
      unit: 'frames',
      ...counted('errors'),
      merge: 'sum',
      k6: {},
      worse: 'up',
    },
    {
      name: 'frames_per_second',
      title: 'push frames received per second in the measured phase',
      kind: 'rate',
      unit: 'frames/s',
      value: field('framesPerSecond'),
      merge: 'sum',
      k6: { metric: 'frames', agg: 'rate' },
      worse: 'down',
    },
    {
      name: 'frames',
      title: 'push frames received in the measured phase',
      kind: 'count',
      unit: 'frames',
      ...counted('framesReceived'),
      merge: 'sum',
      k6: {},
      worse: 'down',
    },
    {
      name: 'connected',
      title: 'clients whose handshake succeeded',
      kind: 'count',
      unit: 'clients',
      ...counted('connected'),
      merge: 'sum',
      k6: {},
      worse: 'down',
    },
    {
      name: 'refused',
      title: 'handshakes refused, all status_numbers',
      kind: 'count',
      unit: 'clients',
      value: (r) => total(r.refusals),
      merge: 'sum',
      k6: {},
      worse: 'up',
    },
    {
      name: 'disconnects',
      title: 'connections closed before the measured phase ended',
      kind: 'count',
      unit: 'connections',
      value: (r) => total(r.disconnects),
      merge: 'sum',
      k6: {},
      worse: 'up',
    },
    {
      name: 'saturated',
      title: 'the generator was saturated (1) or not (0)',
      kind: 'flag',
      unit: '0/1',
      value: saturated,
      merge: 'any',
      k6: { absent: ONE_VIEW },
      worse: 'none',
    },
  ],
  rest: [
    { ...DIST, name: 'latency', field: 'latencyMs', title: 'latency (send → last byte)' },
    {
      name: 'rps',
      title: 'requests answered per second',
      kind: 'rate',
      unit: 'requests/s',
      value: field('rps'),
      merge: 'sum',
      k6: { metric: 'http_reqs', agg: 'rate' },
      worse: 'down',
    },
    {
      name: 'requests',
      title: 'requests sent',
      kind: 'count',
      unit: 'requests',
      ...counted('requests'),
      merge: 'sum',
      k6: {},
      worse: 'down',
    },
    {
      name: 'errors',
      title: 'requests without an envelope (transport errors, unreadable bodies)',
      kind: 'count',
      unit: 'requests',
      ...counted('errors'),
      merge: 'sum',
      k6: {},
      worse: 'up',
    },
    {
      name: 'timeouts',
      title: 'requests that timed out',
      kind: 'count',
      unit: 'requests',
      ...counted('timeouts'),
      merge: 'sum',
      k6: { absent: REST_ONLY },
      worse: 'up',
    },
    {
      name: 'non_2xx',
      title: 'answers with an HTTP status outside 2xx',
      kind: 'count',
      unit: 'requests',
      ...counted('non2xx'),
      merge: 'sum',
      k6: { absent: REST_ONLY },
      worse: 'up',
    },
    {
      name: 'rate_limited',
      title: 'answers with the rate-limited status_number',
      kind: 'count',
      unit: 'requests',
      field: 'rateLimited',
      value: (r) =>
        num(r.rateLimited) ??
        (r.statusNumbers ? (((r.statusNumbers as Json)[STATUS.RATE_LIMITED] as number) ?? 0) : null),
      merge: 'sum',
      k6: {},
      worse: 'up',
    },
    {
      name: 'non_200_status',
      title: 'answers whose status_number is not OK',
      kind: 'count',
      unit: 'requests',
      field: 'non200Status',
      value: (r) =>
        num(r.non200Status) ??
        (r.statusNumbers
          ? (total(r.statusNumbers) ?? 0) - (((r.statusNumbers as Json)[STATUS.OK] as number) ?? 0)
          : null),
      merge: 'sum',
      k6: {},
      worse: 'up',
    },
    {
      name: 'late',
      title: 'requests sent later than the late bound after their intended time',
      kind: 'count',
      unit: 'requests',
      ...counted('late'),
      merge: 'sum',
      k6: { absent: REST_ONLY },
      worse: 'none',
    },
    {
      name: 'dropped',
      title: 'requests never sent (no connection or VU free in time)',
      kind: 'count',
      unit: 'requests',
      ...counted('dropped'),
      merge: 'sum',
      k6: { metric: 'dropped_iterations' },
      worse: 'none',
    },
    {
      name: 'saturated',
      title: 'the generator was saturated (1) or not (0)',
      kind: 'flag',
      unit: '0/1',
      value: saturated,
      merge: 'any',
      k6: { absent: REST_ONLY },
      worse: 'none',
    },
  ],
};

/** The distributions of a load command. */
export const distributions = (kind: LoadKind): DistributionMetric[] =>
  LOAD_METRICS[kind].filter((m): m is DistributionMetric => m.kind === 'distribution');

/** The names a threshold may use: `name.stat` for a distribution, the name otherwise. */
export const thresholdNames = (kind: LoadKind): string[] =>
  LOAD_METRICS[kind].flatMap((m) => (m.kind === 'distribution' ? m.stats.map((s) => `${m.name}.${s}`) : [m.name]));

/** The metric a threshold name belongs to (`latency.p99` → latency). */
export const metricOf = (kind: LoadKind, thresholdName: string): LoadMetric | undefined => {
  const dot = thresholdName.indexOf('.');
  const base = dot > 0 ? thresholdName.slice(0, dot) : thresholdName;
  return LOAD_METRICS[kind].find((m) => m.name === base);
};

/**
 * The flat values thresholds are judged on, read from a result (a conform report or a k6
 * result): `name.stat` of each distribution, the value of every other metric.
 */
export function flatMetrics(kind: LoadKind, r: Json): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const m of LOAD_METRICS[kind]) {
    if (m.kind === 'distribution') {
      const d = (r[m.field] ?? {}) as Json;
      const counted = num(d.count) !== 0;
      for (const s of m.stats) out[`${m.name}.${s}`] = counted ? num(d[s]) : null;
    } else out[m.name] = m.value(r);
  }
  return out;
}

/** A distribution's figures as a result carries them, in ms (null: no sample). */
export interface DistributionFigures {
  count: number;
  p50: number | null;
  p90?: number | null;
  p99: number | null;
  p999?: number | null;
  max: number | null;
}

/** The distribution `name` of a result, read from its row's field; undefined when it has none. */
export function distributionOf(kind: LoadKind, r: object, name: string): DistributionFigures | undefined {
  const m = distributions(kind).find((d) => d.name === name);
  const v = m ? (r as Json)[m.field] : undefined;
  return v && typeof v === 'object' ? (v as DistributionFigures) : undefined;
}
