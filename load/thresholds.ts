/**
 * k6-style thresholds: `latency.p99<50`, `lost==0`. Pure and dependency-free, so the k6 scripts
 * bundle it too and both tools share one set of names. An unknown metric is an error, never
 * ignored (unlike grafana/k6#1526).
 */
import { ThresholdError } from '../src/errors.ts';
import { metricOf, thresholdNames, type LoadKind } from './metrics.ts';

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

/** Metric names a threshold may use, per load command (load/metrics.ts). */
export const METRICS: Readonly<Record<LoadKind, readonly string[]>> = {
  fanout: thresholdNames('fanout'),
  rest: thresholdNames('rest'),
};
export type { LoadKind };

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
 * plain counter such as `errors==0` becomes `{ errors: ['count==0'] }`; a metric k6 names or
 * aggregates otherwise says so in its row of load/metrics.ts. Names stay the same in both tools.
 */
export function toK6Thresholds(thresholds: readonly Threshold[], kind: LoadKind): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const t of thresholds) {
    const m = metricOf(kind, t.metric);
    if (!m || 'absent' in m.k6) throw new ThresholdError(`--threshold '${t.expr}': k6 does not measure ${t.metric}`);
    let name = m.k6.metric ?? m.name;
    let agg = m.k6.agg ?? 'count';
    if (m.kind === 'distribution') {
      name = m.k6.metric ?? m.name;
      const stat = t.metric.slice(m.name.length + 1);
      agg = stat === 'max' ? 'max' : stat === 'p999' ? 'p(99.9)' : `p(${stat.slice(1)})`;
    }
    out[name] ??= [];
    out[name].push(`${agg}${t.op}${t.value}`);
  }
  return out;
}
