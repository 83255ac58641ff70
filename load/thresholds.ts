/**
 * k6-style thresholds: `latency.p99<50`, `lost==0`. Pure and dependency-free, so the k6 scripts
 * bundle it too and both tools share one set of names. An unknown metric is an error, never
 * ignored (unlike grafana/k6#1526).
 */
import { ThresholdError } from '../src/errors.ts';

export type ThresholdOp = '<' | '<=' | '>' | '>=' | '==' | '!=';

export interface Threshold {
  /** The expression as given. */
  expr: string;
  metric: string;
  op: ThresholdOp;
  value: number;
}

export interface ThresholdResult extends Threshold {
  /** The measured value; null when the run produced none (which crosses the threshold). */
  actual: number | null;
  ok: boolean;
}

const PERCENTILES = ['p50', 'p90', 'p99', 'p999', 'max'] as const;
const dist = (name: string): string[] => PERCENTILES.map((p) => `${name}.${p}`);

/** Metric names a threshold may use, per load command. */
export const METRICS = {
  fanout: [
    ...dist('latency'),
    ...dist('server_latency'),
    'skew.p50',
    'skew.p90',
    'skew.p99',
    'skew.max',
    ...dist('connect'),
    ...dist('subscribe'),
    ...dist('first_frame'),
    'lost',
    'loss_rate',
    'errors',
    'frames_per_second',
    'frames',
    'connected',
    'refused',
    'disconnects',
    'saturated',
  ],
  rest: [
    ...dist('latency'),
    'rps',
    'requests',
    'errors',
    'timeouts',
    'non_2xx',
    'rate_limited',
    'non_200_status',
    'late',
    'dropped',
    'saturated',
  ],
} as const satisfies Record<string, readonly string[]>;
export type LoadKind = keyof typeof METRICS;

const EXPR = /^\s*([a-z_][a-z0-9_.]*)\s*(<=|>=|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/i;

/** Parses one expression; throws ThresholdError naming the expression and the problem. */
export function parseThreshold(expr: string, kind: LoadKind): Threshold {
  const m = EXPR.exec(expr);
  if (!m)
    throw new ThresholdError(
      `--threshold '${expr}': expected METRIC OP NUMBER, e.g. 'latency.p99<50' (OP is <, <=, >, >=, ==, !=)`,
    );
  const metric = m[1]!.toLowerCase();
  const known: readonly string[] = METRICS[kind];
  if (!known.includes(metric)) {
    throw new ThresholdError(
      `--threshold '${expr}': unknown metric "${metric}" for load ${kind}; known: ${known.join(', ')}`,
    );
  }
  return { expr, metric, op: m[2] as ThresholdOp, value: Number(m[3]) };
}

/** Parses every expression (repeated options and comma lists); the first bad one throws. */
export function parseThresholds(exprs: readonly string[] | undefined, kind: LoadKind): Threshold[] {
  const list = (exprs ?? [])
    .flatMap((e) => e.split(','))
    .map((e) => e.trim())
    .filter(Boolean);
  return list.map((e) => parseThreshold(e, kind));
}

function holds(actual: number, op: ThresholdOp, value: number): boolean {
  switch (op) {
    case '<':
      return actual < value;
    case '<=':
      return actual <= value;
    case '>':
      return actual > value;
    case '>=':
      return actual >= value;
    case '==':
      return actual === value;
    case '!=':
      return actual !== value;
  }
}

/** Evaluates thresholds against a flat metric map; a missing or NaN value crosses the threshold. */
export function evaluateThresholds(
  thresholds: readonly Threshold[],
  metrics: Readonly<Record<string, number | null | undefined>>,
): ThresholdResult[] {
  return thresholds.map((t) => {
    const v = metrics[t.metric];
    const actual = typeof v === 'number' && !Number.isNaN(v) ? v : null;
    return { ...t, actual, ok: actual !== null && holds(actual, t.op, t.value) };
  });
}

/**
 * The same thresholds in k6's form: `latency.p99<50` becomes `{ latency: ['p(99)<50'] }`, and a
 * plain counter such as `lost==0` becomes `{ lost: ['count==0'] }`. Names stay the same in both tools.
 */
export function toK6Thresholds(thresholds: readonly Threshold[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const t of thresholds) {
    const dot = t.metric.lastIndexOf('.');
    let name = t.metric;
    let agg = 'count';
    if (dot > 0) {
      name = t.metric.slice(0, dot);
      const stat = t.metric.slice(dot + 1);
      agg = stat === 'max' ? 'max' : stat === 'p999' ? 'p(99.9)' : `p(${stat.slice(1)})`;
    } else if (t.metric.endsWith('_rate')) {
      agg = 'rate';
    } else if (t.metric === 'frames_per_second' || t.metric === 'rps') {
      name = t.metric === 'rps' ? 'http_reqs' : 'frames';
      agg = 'rate';
    } else if (t.metric === 'dropped') {
      // Requests the constant-arrival-rate executor could not start: k6's dropped iterations.
      name = 'dropped_iterations';
    }
    out[name] ??= [];
    out[name].push(`${agg}${t.op}${t.value}`);
  }
  return out;
}
