/**
 * `conform load merge`: one report from the results of several hosts. Pure (parsed JSON in,
 * plain data out): distributions are added as histograms (conform's encoded HDR histograms, k6's
 * log-bucket counts), counts are summed, thresholds are evaluated again on the merged values.
 * Skew and loss need one view of every client: a host sees only its own, so they stay per host
 * and a threshold on them is judged on the worst host (a lower bound of the true value).
 *
 * Input format (JSON, one result per file), any of:
 * - `conform load fanout` / `conform load rest` reports: `histograms` maps a threshold metric
 *   name (`latency`, `server_latency`, …) to an hdr-histogram-js compressed base64 string in µs;
 * - k6 results written by load/k6 handleSummary (`generator: "k6"`): `histograms` maps the same
 *   names to `{ unit: "us", layout: "log-buckets-32", counts: [[bucket, count], …] }`
 *   (load/log-buckets.ts); each count is recorded at its bucket's midpoint.
 * A host whose latency is unknown (no estimate of the target's clock held) makes the merged
 * latency unknown: a threshold on it fails rather than pass on the other hosts alone.
 */
import { addEncoded, createHistogram, summarize, type Histogram, type Percentiles } from './histogram.ts';
import { BUCKET_COUNT, bucketMidUs } from './log-buckets.ts';
import { MergeInputError } from '../src/errors.ts';
import { BUCKET_LAYOUT, BUCKET_UNIT, RESULT_LINE_PREFIX } from './result-format.ts';
import { distributions, LOAD_METRICS, type LoadKind, type ValueMetric } from './metrics.ts';
import { evaluateThresholds, parseThresholds, type ThresholdResult } from './thresholds.ts';

/** One host's figures as the merged report lists them. */
export interface MergeHost {
  file: string;
  host: string;
  generator: 'conform' | 'k6';
  trustworthy: boolean | null;
  clients: number | null;
  connected: number | null;
  frames: number | null;
  requests: number | null;
  /**
   * REST: requests sent more than the late bound after their intended time, and not sent at all
   * (null: not reported).
   */
  late: number | null;
  dropped: number | null;
  errors: number;
  latencyP99Ms: number | null;
  /** Per host only (see the module comment). */
  skewP99Ms: number | null;
  lost: number | null;
  lossRate: number | null;
  startedAt: string | null;
}

export interface MergedReport {
  kind: LoadKind;
  mode: 'merge';
  hosts: MergeHost[];
  /** Distributions from the added histograms, by threshold metric name. */
  distributions: Record<string, Percentiles>;
  totals: Record<string, number>;
  refusals: Record<string, number>;
  noticeErrors: Record<string, number>;
  statusNumbers: Record<string, number>;
  trustworthy: boolean;
  thresholds: ThresholdResult[];
  observations: string[];
}

export interface MergeInput {
  file: string;
  data: unknown;
}

type Json = Record<string, unknown>;
/** Distributions whose hosts' histograms add up (load/metrics.ts: merge `histogram`). */
const added = (kind: LoadKind): string[] =>
  distributions(kind)
    .filter((m) => m.merge === 'histogram')
    .map((m) => m.name);
/**
 * Fan-out frames on a shared schedule are the frames sent inside the window, which every host
 * counts alike; the run's own `frames` (its measured phase) only without one.
 */
const mergedValue = (kind: LoadKind, m: ValueMetric, r: Json): number | null => {
  const window = r.window as Json | undefined;
  if (kind === 'fanout' && m.name === 'frames' && window && typeof window.frames === 'number') return window.frames;
  return m.value(r);
};
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const sumInto = (into: Record<string, number>, from: unknown): void => {
  if (!from || typeof from !== 'object') return;
  for (const [k, v] of Object.entries(from as Json)) if (typeof v === 'number') into[k] = (into[k] ?? 0) + v;
};
const total = (o: unknown): number =>
  o && typeof o === 'object'
    ? Object.values(o as Json).reduce<number>((a, v) => a + (typeof v === 'number' ? v : 0), 0)
    : typeof o === 'number'
      ? o
      : 0;

/** Adds one result's histogram of `name` into `into`; false when the result has none. */
function addHistogram(into: Histogram, value: unknown, where: string): boolean {
  if (typeof value === 'string') {
    try {
      addEncoded(into, value);
    } catch (err) {
      throw new MergeInputError(`${where}: not an encoded HDR histogram (${(err as Error).message})`);
    }
    return true;
  }
  if (value && typeof value === 'object' && Array.isArray((value as Json).counts)) {
    const v = value as { unit?: unknown; layout?: unknown; counts: unknown[] };
    if (v.unit !== BUCKET_UNIT || v.layout !== BUCKET_LAYOUT)
      throw new MergeInputError(
        `${where}: unknown bucket layout ${JSON.stringify(v.layout)} (unit ${JSON.stringify(v.unit)})`,
      );
    for (const pair of v.counts) {
      const [i, n] = Array.isArray(pair) ? pair : [];
      if (!Number.isInteger(i) || i < 0 || i >= BUCKET_COUNT || !Number.isInteger(n) || n < 0)
        throw new MergeInputError(`${where}: bad bucket ${JSON.stringify(pair)}`);
      if (n) into.recordValueWithCount(bucketMidUs(i), n);
    }
    return true;
  }
  return false;
}

/**
 * Reads a result file's text: JSON, or a log (k6 runner pod) with a `conform-result {…}` line,
 * as load/k6 handleSummary prints with RESULT=stdout. Returns undefined when neither.
 */
export function parseResultText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const line = text.split('\n').find((l) => l.startsWith(`${RESULT_LINE_PREFIX}{`));
    if (!line) return undefined;
    try {
      return JSON.parse(line.slice(RESULT_LINE_PREFIX.length));
    } catch {
      return undefined;
    }
  }
}

/** What the merge gathers from the results, one result at a time. */
interface Gathered {
  histograms: Map<string, Histogram>;
  /** Per distribution: the files that carried no histogram of it. */
  missing: Map<string, string[]>;
  totals: Record<string, number>;
  refusals: Record<string, number>;
  noticeErrors: Record<string, number>;
  statusNumbers: Record<string, number>;
  hosts: MergeHost[];
  windows: Set<string>;
  latencyFrom: Set<string>;
  unknownLatency: string[];
  withoutLate: string[];
  withoutDropped: string[];
  /** Every threshold a result was judged on, and those given to the merge. */
  exprs: Set<string>;
  shards: { index: number; count: number }[];
}

/** The results as JSON objects, all of one kind; a usage error names the file that is not. */
function readResults(inputs: readonly MergeInput[]): { kind: LoadKind; results: { file: string; r: Json }[] } {
  if (!inputs.length) throw new MergeInputError('conform load merge: give at least one RESULT file');
  const results = inputs.map(({ file, data }) => {
    if (!data || typeof data !== 'object' || ((data as Json).kind !== 'fanout' && (data as Json).kind !== 'rest')) {
      throw new MergeInputError(`${file}: not a load result (no "kind": "fanout" or "rest")`);
    }
    return { file, r: data as Json };
  });
  const kind = results[0]!.r.kind as LoadKind;
  const other = results.find((x) => x.r.kind !== kind);
  if (other)
    throw new MergeInputError(`${other.file}: a ${String(other.r.kind)} result cannot merge with ${kind} results`);
  return { kind, results };
}

/** Adds one result to what the merge has gathered. */
function gather(g: Gathered, kind: LoadKind, file: string, r: Json): void {
  const add = (k: string, v: unknown): void => {
    const n = num(v);
    if (n !== null) g.totals[k] = (g.totals[k] ?? 0) + n;
  };
  const generator = r.generator === 'k6' ? 'k6' : 'conform';
  // Every metric merged by sum, from the hosts that report it.
  for (const m of LOAD_METRICS[kind])
    if (m.kind !== 'distribution' && m.merge === 'sum') add(m.name, mergedValue(kind, m, r));
  const h = (r.histograms ?? {}) as Json;
  for (const name of added(kind)) {
    if (!addHistogram(g.histograms.get(name)!, h[name], `${file}: histograms.${name}`))
      (g.missing.get(name) ?? g.missing.set(name, []).get(name)!).push(file);
  }
  for (const t of (Array.isArray(r.thresholds) ? r.thresholds : []) as { expr?: unknown }[])
    if (typeof t.expr === 'string') g.exprs.add(t.expr);
  const shard = r.shard as Json | undefined;
  if (shard && num(shard.index) !== null && num(shard.count) !== null)
    g.shards.push({ index: shard.index as number, count: shard.count as number });
  const window = r.window as Json | undefined;
  const clock = r.clock as Json | null | undefined;
  if (clock && clock.status === 'unknown') g.unknownLatency.push(`${file} (${String(clock.reason)})`);
  if (kind === 'fanout') {
    add('clients', r.clients);
    add('connect_errors', total(r.connectErrors));
    sumInto(g.refusals, r.refusals);
    sumInto(g.noticeErrors, r.noticeErrors);
    if (window) g.windows.add(`${String(window.startAt)}…${String(window.endAt)}`);
  } else {
    add('scheduled', r.scheduled);
    add('waited_for_connection', r.waitedForConnection);
    if (num(r.late) === null) g.withoutLate.push(file);
    if (num(r.dropped) === null) g.withoutDropped.push(file);
    g.latencyFrom.add(
      typeof r.latencyFrom === 'string' ? r.latencyFrom : generator === 'k6' ? 'actual send time (k6)' : 'unknown',
    );
    sumInto(g.statusNumbers, r.statusNumbers);
  }
  g.hosts.push(hostOf(kind, file, r, generator));
}

/** One host's line of the merged report. */
function hostOf(kind: LoadKind, file: string, r: Json, generator: MergeHost['generator']): MergeHost {
  const skew = (r.skewMs ?? {}) as Json;
  const latency = (r.latencyMs ?? {}) as Json;
  const window = r.window as Json | undefined;
  return {
    file,
    host: typeof r.host === 'string' ? r.host : file,
    generator,
    trustworthy: typeof r.trustworthy === 'boolean' ? r.trustworthy : null,
    clients: num(r.clients),
    connected: num(r.connected),
    frames: num(window?.frames ?? r.framesReceived),
    requests: num(r.requests),
    late: kind === 'rest' ? num(r.late) : null,
    dropped: kind === 'rest' ? num(r.dropped) : null,
    errors: num(r.errors) ?? 0,
    latencyP99Ms: num(latency.p99),
    skewP99Ms: num(skew.p99),
    lost: num(r.lost),
    lossRate: num(r.lossRate),
    startedAt: typeof r.startedAt === 'string' ? r.startedAt : null,
  };
}

/** What the merged figures leave out or mix, in words. */
function mergeObservations(kind: LoadKind, g: Gathered): string[] {
  const observations: string[] = [];
  for (const [name, files] of g.missing)
    observations.push(`${files.join(', ')} carried no ${name} histogram: the merged ${name} leaves them out`);
  if (g.hosts.some((h) => h.generator === 'k6') && g.hosts.some((h) => h.generator === 'conform'))
    observations.push(
      'k6 distributions are bucket counts (at most 1/16 wide) recorded at their midpoints; ' +
        "conform's are HDR histograms with 3 significant digits",
    );
  if (g.unknownLatency.length)
    observations.push(
      `latency unknown on ${g.unknownLatency.join(', ')}: the merged latency is unknown, and a threshold on it fails`,
    );
  if (g.latencyFrom.size > 1)
    observations.push(
      `the hosts measured latency from different starts (${[...g.latencyFrom].join('; ')}): ` +
        `the merged latency mixes them`,
    );
  if (g.withoutLate.length)
    observations.push(
      `${g.withoutLate.join(', ')} report no late requests: the merged late is unknown, and a threshold on it fails`,
    );
  if (g.withoutDropped.length)
    observations.push(
      `${g.withoutDropped.join(', ')} report no dropped requests: the merged ` +
        `dropped is unknown, and a threshold on it fails`,
    );
  if (g.windows.size > 1)
    observations.push(
      `the hosts measured different windows (${[...g.windows].join('; ')}): frame totals add runs that did not overlap`,
    );
  if (kind === 'fanout') {
    observations.push(
      'skew and loss are per host (each sees only its own clients): thresholds on them ' +
        'are judged on the worst host, a lower bound of the whole run',
    );
    if (g.hosts.some((h) => h.generator === 'k6')) observations.push('k6 hosts report no skew or loss');
  }
  observations.push(...shardObservations(g.shards));
  const untrusted = g.hosts.filter((h) => h.trustworthy === false);
  if (untrusted.length)
    observations.push(`untrustworthy (generator saturated): ${untrusted.map((h) => h.host).join(', ')}`);
  return observations;
}

/** A run spread over n shards (a Job's pods) is whole only with each shard once. */
function shardObservations(shards: readonly { index: number; count: number }[]): string[] {
  if (!shards.length) return [];
  const observations: string[] = [];
  const counts = new Set(shards.map((s) => s.count));
  const n = Math.max(...counts);
  const seen = shards.map((s) => s.index);
  const missing = Array.from({ length: n }, (_, i) => i + 1).filter((i) => !seen.includes(i));
  const twice = [...new Set(seen.filter((i, k) => seen.indexOf(i) !== k))];
  if (counts.size > 1)
    observations.push(`the results name different shard counts (${[...counts].join(', ')}): not one run`);
  if (missing.length)
    observations.push(
      `shard${missing.length > 1 ? 's' : ''} ${missing.join(', ')} of ${n} missing: ` +
        `the merged run lacks their clients and frames`,
    );
  if (twice.length) observations.push(`shard ${twice.join(', ')} given more than once: its counts are added twice`);
  return observations;
}

/** The flat values the merged thresholds are judged on, by load/metrics.ts's merge rules. */
function mergedMetrics(
  kind: LoadKind,
  results: readonly { r: Json }[],
  g: Gathered,
  distributions: Record<string, Percentiles>,
): Record<string, number | null> {
  const metrics: Record<string, number | null> = { ...g.totals };
  for (const [name, p] of Object.entries(distributions))
    for (const k of ['p50', 'p90', 'p99', 'p999', 'max'] as const)
      metrics[`${name}.${k}`] = name === 'latency' && g.unknownLatency.length ? null : p[k];
  if (kind === 'rest') {
    if (g.withoutLate.length) metrics.late = null;
    if (g.withoutDropped.length) metrics.dropped = null;
  }
  const worst = (xs: (number | null)[]): number | null =>
    xs.some((x) => x !== null) ? Math.max(...xs.filter((x): x is number => x !== null)) : null;
  for (const m of LOAD_METRICS[kind]) {
    if (m.kind === 'distribution') {
      if (m.merge === 'worst-host')
        for (const k of m.stats)
          metrics[`${m.name}.${k}`] = worst(results.map(({ r }) => num(((r[m.field] ?? {}) as Json)[k])));
    } else if (m.merge === 'worst-host') metrics[m.name] = worst(results.map(({ r }) => m.value(r)));
    else if (m.merge === 'any') metrics[m.name] = results.some(({ r }) => m.value(r) === 1) ? 1 : 0;
    // A sum no host reported is unknown, not zero: a threshold on it fails.
    else if (!(m.name in g.totals)) metrics[m.name] = null;
  }
  return metrics;
}

/** Merges results of one kind; a usage error names the file when one cannot be merged. */
export function mergeResults(inputs: readonly MergeInput[], extraThresholds: readonly string[] = []): MergedReport {
  const { kind, results } = readResults(inputs);
  const g: Gathered = {
    histograms: new Map(added(kind).map((name) => [name, createHistogram()])),
    missing: new Map(),
    totals: {},
    refusals: {},
    noticeErrors: {},
    statusNumbers: {},
    hosts: [],
    windows: new Set(),
    latencyFrom: new Set(),
    unknownLatency: [],
    withoutLate: [],
    withoutDropped: [],
    exprs: new Set(extraThresholds),
    shards: [],
  };
  for (const { file, r } of results) gather(g, kind, file, r);
  const distributions: Record<string, Percentiles> = {};
  for (const [name, hist] of g.histograms) {
    distributions[name] = summarize(hist);
    hist.destroy();
  }
  const observations = mergeObservations(kind, g);
  const metrics = mergedMetrics(kind, results, g, distributions);
  return {
    kind,
    mode: 'merge',
    hosts: g.hosts,
    distributions,
    totals: g.totals,
    refusals: g.refusals,
    noticeErrors: g.noticeErrors,
    statusNumbers: g.statusNumbers,
    trustworthy: g.hosts.every((h) => h.trustworthy !== false),
    thresholds: evaluateThresholds(parseThresholds([...g.exprs], kind), metrics),
    observations,
  };
}
