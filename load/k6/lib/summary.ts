/**
 * handleSummary for the k6 scripts: turns k6's end-of-test data into conform's load result (the
 * JSON `conform load merge` reads, with each distribution's bucket counts), a console summary,
 * a self-contained HTML page and JUnit XML, so a k6 run reads like a conform run.
 * Dependency-free (k6 is not Node), and free of k6 modules too: what it needs of k6's execution
 * context (the execution segment) comes in through the context, so it runs under Node in the tests.
 */
import { BUCKET_COUNT, bucketMetric, bucketPercentileUs, shiftBucketCounts } from '../../log-buckets.ts';
import { distributions, flatMetrics, LOAD_METRICS, type DistributionMetric } from '../../metrics.ts';
import { SATURATION } from '../../options.ts';
import { BUCKET_LAYOUT, BUCKET_UNIT, RESULT_LINE_PREFIX } from '../../result-format.ts';
import { evaluateThresholds, parseThresholds, type LoadKind, type ThresholdResult } from '../../thresholds.ts';

/** The part of k6's summary data the scripts read. */
export interface SummaryData {
  metrics: Record<
    string,
    { type: string; values: Record<string, number>; thresholds?: Record<string, { ok: boolean }> }
  >;
  setup_data?: unknown;
  state: { testRunDurationMs: number };
}

/** A distribution as conform reports it, in ms. */
export interface K6Percentiles {
  count: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  p999: number | null;
  max: number | null;
}

/** Bucket counts of one distribution (layout: load/log-buckets.ts), `[index, count]` pairs. */
export interface BucketCounts {
  unit: typeof BUCKET_UNIT;
  layout: typeof BUCKET_LAYOUT;
  counts: [number, number][];
}

/** The distributions a k6 run of `kind` measures: every one of load/metrics.ts that k6 can. */
export const k6Distributions = (kind: LoadKind): DistributionMetric[] =>
  distributions(kind).filter((m) => !('absent' in m.k6));
const round3 = (v: number | undefined): number | null =>
  typeof v === 'number' && Number.isFinite(v) ? Math.round(v * 1000) / 1000 : null;

export interface SummaryContext {
  kind: LoadKind;
  report: { dir: string; name: string; host: string; resultOnStdout: boolean };
  /** THRESHOLDS as given, re-evaluated here on the same values conform would use. */
  thresholds: string[];
  options: Record<string, unknown>;
  /**
   * The target's clock as judged at the end (load/clock.ts's estimate, narrowed by the frames),
   * and how latency moves to it: `shiftMs` from the estimate the VUs recorded with (0: none; null:
   * no estimate holds, latency is not reported); `belowZero` names the distribution of the
   * magnitudes of latencies that were below zero on the VUs' estimate (never clamped).
   */
  clock?: { report: Record<string, unknown>; shiftMs: number | null; belowZero: string };
  /** This instance's execution segment (`segmentOf(exec.test.options)`); `0:1` is the whole test. */
  segment: string;
}

/** The execution segment named in k6's test options (`exec.test.options`), else the whole test. */
export function segmentOf(options: unknown): string {
  const s = (options as { executionSegment?: unknown } | null | undefined)?.executionSegment;
  return s ? String(s) : '0:1';
}

/** Reads k6's summary metrics: counts, counters by code, and a distribution's bucket counts. */
function summaryReader(m: SummaryData['metrics']) {
  return {
    count: (name: string): number => m[name]?.values.count ?? 0,
    /** `refused_50009` is a code of `refused`; `refused_http_4xx` is not (a code has no underscore). */
    byPrefix: (prefix: string): Record<string, number> => {
      const out: Record<string, number> = {};
      for (const [name, metric] of Object.entries(m)) {
        if (!name.startsWith(`${prefix}_`) || metric.type !== 'counter') continue;
        const code = name.slice(prefix.length + 1);
        if (!/^(\d+|\dxx|other)$/.test(code) || !metric.values.count) continue;
        out[code] = metric.values.count;
      }
      return out;
    },
    bucketCounts: (name: string): [number, number][] => {
      const counts: [number, number][] = [];
      for (let i = 0; i < BUCKET_COUNT; i++) {
        const c = m[bucketMetric(name, i)]?.values.count;
        if (c) counts.push([i, c]);
      }
      return counts;
    },
  };
}
type SummaryReader = ReturnType<typeof summaryReader>;

const UNKNOWN: K6Percentiles = { count: 0, p50: null, p90: null, p99: null, p999: null, max: null };

/**
 * Each distribution k6 measured, under its row's field, and its bucket counts. Latency moves to
 * the target's clock as estimated at the end (at bucket precision: k6's Trend cannot be moved
 * back), and is unknown when no estimate holds.
 */
function addDistributions(
  result: Record<string, unknown>,
  m: SummaryData['metrics'],
  read: SummaryReader,
  ctx: SummaryContext,
): Record<string, BucketCounts> {
  const histograms: Record<string, BucketCounts> = {};
  for (const { name, field } of k6Distributions(ctx.kind)) {
    const v = m[name]?.values ?? {};
    let p: K6Percentiles = {
      count: v.count ?? 0,
      p50: round3(v.med),
      p90: round3(v['p(90)']),
      p99: round3(v['p(99)']),
      p999: round3(v['p(99.9)']),
      max: round3(v.max),
    };
    let counts = read.bucketCounts(name);
    const clock = name === 'latency' ? ctx.clock : undefined;
    const below = clock ? read.bucketCounts(clock.belowZero) : [];
    if (clock && clock.shiftMs === null) {
      // No estimate of the target's clock holds: latency is unknown, and a threshold on it fails.
      p = { ...UNKNOWN };
      counts = [];
    } else if (clock && (clock.shiftMs !== 0 || below.length)) {
      const moved = new Map<number, number>();
      const shiftUs = Math.round((clock.shiftMs ?? 0) * 1000);
      const stillBelow = shiftBucketCounts(moved, counts, shiftUs) + shiftBucketCounts(moved, below, shiftUs, true);
      counts = [...moved].sort((a, b) => a[0] - b[0]);
      p = bucketPercentiles(counts);
      result.latencyBelowZeroAfterCorrection = stillBelow;
      result.latencyFromBuckets = true;
    }
    result[field] = p;
    if (!clock || clock.shiftMs !== null) histograms[name] = { unit: BUCKET_UNIT, layout: BUCKET_LAYOUT, counts };
  }
  return histograms;
}

/** A distribution's figures read from its bucket counts, in ms. */
function bucketPercentiles(counts: [number, number][]): K6Percentiles {
  const at = (q: number): number | null => {
    const us = bucketPercentileUs(counts, q);
    return us === null ? null : us / 1000;
  };
  return {
    count: counts.reduce((n, [, c]) => n + c, 0),
    p50: at(50),
    p90: at(90),
    p99: at(99),
    p999: at(99.9),
    max: at(100),
  };
}

/**
 * The counts of load/metrics.ts a k6 run keeps in a Counter (a row with a result field and no
 * other k6 aggregation), each under its row's field.
 */
const k6Counts = (kind: LoadKind): { field: string; metric: string }[] =>
  LOAD_METRICS[kind].flatMap((m) =>
    m.kind === 'count' && m.field !== undefined && !('absent' in m.k6) && (m.k6.agg ?? 'count') === 'count'
      ? [{ field: m.field, metric: m.k6.metric ?? m.name }]
      : [],
  );

/** The fan-out figures of a k6 run, and whether its VUs kept up. */
function fanoutFigures(m: SummaryData['metrics'], read: SummaryReader, ctx: SummaryContext): Record<string, unknown> {
  const { count, byPrefix } = read;
  const window = ctx.options.window as { startMs: number; endMs: number };
  const measuredMs = window.endMs - window.startMs;
  // The VUs' event-loop delay (how late their once-a-second timer fires) against conform's
  // limit, and two signs of a VU that fell far behind: clients still open when the scenario
  // ended, and bucket counts that never left a VU (its flush ran too late or never).
  const reasons: string[] = [];
  const lag = m.vu_lag?.values['p(99)'];
  if (lag !== undefined && lag > SATURATION.eventLoopDelayP99Ms)
    reasons.push(`VU event-loop delay p99 ${round3(lag)} ms > ${SATURATION.eventLoopDelayP99Ms} ms`);
  if (count('closed') < count('connected'))
    reasons.push(
      `${count('connected') - count('closed')} of ${count('connected')} clients were still ` +
        `open when the scenario ended: the VUs fell behind their schedule`,
    );
  const latencyRecorded = m.latency?.values.count ?? 0;
  const latencyBucketed = read.bucketCounts('latency').reduce((n, [, c]) => n + c, 0);
  if (latencyRecorded !== latencyBucketed)
    reasons.push(
      `${latencyRecorded - latencyBucketed} latency samples never reached the bucket counts ` +
        `(a VU's flush did not run): frames and the merged distribution undercount`,
    );
  return {
    clients: count('clients'),
    subscribed: count('subscribed'),
    framesPerSecond: Math.round((count('frames') * 1000) / measuredMs),
    measuredMs,
    violations: count('violations'),
    refusals: byPrefix('refused'),
    refusalsHttp: byPrefix('refused_http'),
    connectErrors: count('connect_errors') ? { k6: count('connect_errors') } : {},
    noticeErrors: byPrefix('notice'),
    disconnects: count('disconnects'),
    trustworthy: reasons.length === 0,
    reasons,
  };
}

/** The REST figures of a k6 run. */
function restFigures(read: SummaryReader, ctx: SummaryContext): Record<string, unknown> {
  const { count, byPrefix } = read;
  const durationMs = Number(ctx.options.durationMs);
  return {
    rps: Math.round((count('requests') * 1000) / durationMs),
    statusNumbers: byPrefix('status'),
    // k6 times a request from its actual send; requests it could not start (no free VU) are
    // its dropped iterations (the `dropped` row's k6 metric). It does not know how late a send was.
    latencyFrom: 'actual send time',
  };
}

/** conform's load result of a k6 run (plain data). */
export function k6Result(data: SummaryData, ctx: SummaryContext): Record<string, unknown> {
  const m = data.metrics;
  const read = summaryReader(m);
  const result: Record<string, unknown> = {
    kind: ctx.kind,
    generator: 'k6',
    host: ctx.report.host || `k6 segment ${ctx.segment}`,
    segment: ctx.segment,
    startedAt: new Date(Date.now() - data.state.testRunDurationMs).toISOString(),
    options: ctx.options,
    clock: ctx.clock?.report ?? null,
    checks: { passes: m.checks?.values.passes ?? 0, fails: m.checks?.values.fails ?? 0 },
  };
  const histograms = addDistributions(result, m, read, ctx);
  for (const { field, metric } of k6Counts(ctx.kind)) result[field] = read.count(metric);
  Object.assign(result, ctx.kind === 'fanout' ? fanoutFigures(m, read, ctx) : restFigures(read, ctx));
  result.histograms = histograms;
  result.thresholds = evaluateThresholds(parseThresholds(ctx.thresholds, ctx.kind), flatMetrics(ctx.kind, result));
  // k6's own verdicts (what its exit code follows), including the checks threshold.
  const k6Thresholds: { metric: string; expr: string; ok: boolean }[] = [];
  for (const [name, metric] of Object.entries(m))
    for (const [expr, t] of Object.entries(metric.thresholds ?? {}))
      k6Thresholds.push({ metric: name, expr, ok: t.ok });
  result.k6Thresholds = k6Thresholds;
  return result;
}

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const fmt = (v: unknown): string =>
  v === null || v === undefined ? '—' : typeof v === 'number' ? String(Math.round(v * 1000) / 1000) : String(v);

function consoleText(r: Record<string, unknown>, ctx: SummaryContext): string {
  const lines = [`k6 load ${ctx.kind} — ${String(r.host)}`];
  lines.push(['ms'.padEnd(16), 'count', 'p50', 'p90', 'p99', 'p99.9', 'max'].join('  '));
  for (const { name, field } of k6Distributions(ctx.kind)) {
    const p = r[field] as K6Percentiles;
    lines.push([name.padEnd(16), fmt(p.count), fmt(p.p50), fmt(p.p90), fmt(p.p99), fmt(p.p999), fmt(p.max)].join('  '));
  }
  const counts = (o: unknown): string =>
    Object.entries((o ?? {}) as Record<string, number>)
      .map(([k, v]) => `${k}×${v}`)
      .join(', ') || 'none';
  if (ctx.kind === 'fanout') {
    lines.push(
      `clients ${fmt(r.clients)}, connected ${fmt(r.connected)}, subscribed ${fmt(r.subscribed)}; ` +
        `frames in the window ${fmt(r.framesReceived)} (${fmt(r.framesPerSecond)}/s)`,
    );
    lines.push(
      `errors ${fmt(r.errors)} (schema ${fmt(r.violations)}; notices ${counts(r.noticeErrors)}); ` +
        `refused ${counts(r.refusals)} (HTTP ${counts(r.refusalsHttp)}); connect ` +
        `errors ${counts(r.connectErrors)}; disconnects ${fmt(r.disconnects)}`,
    );
  } else {
    lines.push(
      `requests ${fmt(r.requests)} (${fmt(r.rps)}/s), errors ${fmt(r.errors)}, rate ` +
        `limited ${fmt(r.rateLimited)}, status_number ${counts(r.statusNumbers)}`,
    );
  }
  const clock = r.clock as {
    status?: string;
    offsetMs?: number | null;
    lowMs?: number | null;
    highMs?: number | null;
    boundMs?: number | null;
    reason?: string | null;
    samples?: number;
    narrowedByFrames?: boolean;
  } | null;
  if (r.trustworthy === false) lines.push(`verdict: UNTRUSTWORTHY — ${(r.reasons as string[]).join('; ')}`);
  if (clock) {
    const from = `${fmt(clock.samples)} REST round trips${clock.narrowedByFrames ? ' and the frames' : ''}`;
    lines.push(
      `clock: ${
        clock.status === 'unknown'
          ? `latency unknown: ${String(clock.reason)}`
          : clock.status === 'corrected'
            ? `the target's clock is ${fmt(clock.offsetMs)} ms from ours (between ${fmt(clock.lowMs)} ` +
              `and ${fmt(clock.highMs)} ms, from ${from}): latency corrected by it, true ` +
              `within ± ${fmt(clock.boundMs)} ms plus sent_at's resolution`
            : `the target's clock is ours within ${fmt(clock.lowMs)} to ${fmt(clock.highMs)} ms (${from}): ` +
              `latency not corrected, true within ± ${fmt(clock.boundMs)} ms plus sent_at's resolution`
      }`,
    );
  }
  if (typeof r.latencyBelowZeroAfterCorrection === 'number' && r.latencyBelowZeroAfterCorrection)
    lines.push(
      `${fmt(r.latencyBelowZeroAfterCorrection)} latencies still below zero after ` +
        `the correction (bucket rounding) are left out, not clamped`,
    );
  if (r.latencyFromBuckets)
    lines.push(
      'latency moved to the final clock estimate: its percentiles are bucket midpoints ' +
        "(at most 1/16 wide); k6's own thresholds judged it before the move",
    );
  const checks = r.checks as { passes: number; fails: number };
  lines.push(`checks ${checks.passes} passed, ${checks.fails} failed`);
  for (const t of r.thresholds as ThresholdResult[])
    lines.push(`  ${t.ok ? '✓' : '✗'} ${t.expr}  (actual ${fmt(t.actual)})`);
  for (const t of r.k6Thresholds as { metric: string; expr: string; ok: boolean }[])
    if (t.metric === 'checks') lines.push(`  ${t.ok ? '✓' : '✗'} checks ${t.expr}`);
  return `${lines.join('\n')}\n`;
}

function html(r: Record<string, unknown>, text: string): string {
  const failed = (r.k6Thresholds as { ok: boolean }[]).some((t) => !t.ok);
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>k6 load ${esc(String(r.kind))}</title>` +
    '<style>body{font-family:system-ui,sans-serif;margin:2em}pre{background:#f6f6f6;padding:1em}' +
    '.bad{color:#b00}.ok{color:#070}</style></head><body>' +
    `<h1>k6 load ${esc(String(r.kind))} — ${esc(String(r.host))}</h1><p ` +
    `class="${failed ? 'bad' : 'ok'}">${failed ? 'a threshold was crossed' : 'every threshold held'}</p>` +
    `<pre>${esc(text)}</pre></body></html>\n`
  );
}

function junit(r: Record<string, unknown>): string {
  const cases = [
    ...(r.thresholds as ThresholdResult[]).map((t) => ({
      name: `threshold ${t.expr}`,
      ok: t.ok,
      detail: `actual ${fmt(t.actual)}`,
    })),
    ...(r.k6Thresholds as { metric: string; expr: string; ok: boolean }[])
      .filter((t) => t.metric === 'checks')
      .map((t) => ({ name: `checks ${t.expr}`, ok: t.ok, detail: JSON.stringify(r.checks) })),
    ...(typeof r.trustworthy === 'boolean'
      ? [
          {
            name: 'k6 kept up with the frames (trustworthy)',
            ok: r.trustworthy,
            detail: ((r.reasons ?? []) as string[]).join('; '),
          },
        ]
      : []),
  ];
  const failures = cases.filter((c) => !c.ok).length;
  const body = cases
    .map(
      (c) =>
        `    <testcase classname="k6.${esc(String(r.kind))}" ` +
        `name="${esc(c.name)}">${c.ok ? '' : `<failure message="${esc(c.detail)}"/>`}</testcase>`,
    )
    .join('\n');
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n  <testsuite name="k6 ` +
    `load ${esc(String(r.kind))} (${esc(String(r.host))})" tests="${cases.length}" ` +
    `failures="${failures}">\n${body}\n  </testsuite>\n</testsuites>\n`
  );
}

/** The files handleSummary returns: JSON, HTML, JUnit under REPORT_DIR, and the console text. */
export function summaryOutputs(data: SummaryData, ctx: SummaryContext): Record<string, string> {
  const r = k6Result(data, ctx);
  const text = consoleText(r, ctx);
  const base = `${ctx.report.dir}/${ctx.report.name}`;
  return {
    stdout: ctx.report.resultOnStdout ? `${text}${RESULT_LINE_PREFIX}${JSON.stringify(r)}\n` : text,
    [`${base}.json`]: `${JSON.stringify(r, null, 2)}\n`,
    [`${base}.html`]: html(r, text),
    [`${base}.junit.xml`]: junit(r),
  };
}
