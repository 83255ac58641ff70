/** Present: the console summaries of load reports (plain text; the CLI prints them). */
import type { FanoutReport } from '../fanout/run.ts';
import type { RestReport } from '../rest/run.ts';
import { distributions } from '../metrics.ts';
import type { ThresholdResult } from '../thresholds.ts';

/** A measured value for a table: thousands grouped, `digits` decimals, a dash when nothing was measured. */
export const n = (v: number | null | undefined, digits = 2): string =>
  v === null || v === undefined || Number.isNaN(v)
    ? '—'
    : Number.isInteger(v)
      ? v.toLocaleString('en-US')
      : v.toFixed(digits);

/** Rows as aligned columns: the first left-aligned, the rest right-aligned. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '))
    .join('\n');
}

function thresholdLines(ts: readonly ThresholdResult[]): string[] {
  if (!ts.length) return [];
  return ['', 'thresholds', ...ts.map((t) => `  ${t.ok ? '✓' : '✗'} ${t.expr}  (actual ${n(t.actual, 3)})`)];
}

const counts = (m: Record<string, number>): string =>
  Object.keys(m).length
    ? Object.entries(m)
        .map(([k, v]) => `${k}×${v}`)
        .join(', ')
    : 'none';

type Dist = { p50: number | null; p90?: number | null; p99: number | null; p999?: number | null; max: number | null };
const NONE: Dist = { p50: null, p99: null, max: null };

/** The fan-out summary table, the generator's verdict and the thresholds. */
export function formatFanoutSummary(r: FanoutReport): string {
  const d = (name: string, x: Dist): string[] => [
    name,
    n(x.p50, 3),
    n(x.p90 ?? null, 3),
    n(x.p99, 3),
    n(x.p999 ?? null, 3),
    n(x.max, 3),
  ];
  const c = r.clock;
  const correction =
    c.status === 'corrected'
      ? `target ${c.offsetMs! > 0 ? 'ahead' : 'behind'} by ${n(Math.abs(c.offsetMs!), 3)} ms, latency corrected`
      : 'same clock as ours within the bound, latency not corrected';
  const bound =
    c.status === 'unknown'
      ? `UNKNOWN — latency not measured: ${c.reason}`
      : `${correction}; offset in [${n(c.lowMs, 3)}, ${n(c.highMs, 3)}] ms, ` +
        `latency ± ${n(c.latencyBoundMs, 3)} ms ` +
        `(${c.samples} REST ts round trips${c.narrowedByFrames ? ', narrowed by frames' : ''})`;
  const perConnection = r.generator.memoryPerConnectionBytes;
  const kbPerConnection = perConnection === null ? '—' : n(Math.round(perConnection / 1024));
  const lines = [
    r.mode === 'calibrate'
      ? "conform load calibrate — the generator's own floor against a trivial in-process broadcast server"
      : `conform load fanout — ${r.target.embedded ? 'embedded reference service (own process)' : r.target.ws}`,
    `${r.clients} clients × ${r.options.pairs.length} pairs, ${r.options.workers} ` +
      `workers, ${r.options.keys} key(s); ramp ${n(r.rampMs / 1000, 1)} s ` +
      `at ${n(r.achievedRampRate)} conn/s (first to last connection); measured ${n(r.measuredMs / 1000, 1)} s, ` +
      `from ${n(r.measuredPhase.fromS, 1)} s to ${n(r.measuredPhase.toS, 1)} s after the ramp began`,
    '',
    table([
      ['ms', 'p50', 'p90', 'p99', 'p99.9', 'max'],
      // Every distribution of load/metrics.ts, under its title, in the table's order.
      ...distributions('fanout').map((m) =>
        d(m.title, ((r as unknown as Record<string, Dist | undefined>)[m.field] ?? NONE) as Dist),
      ),
    ]),
    '',
    `frames ${n(r.framesReceived)} (${n(r.framesPerSecond)}/s), updates ` +
      `judged ${n(r.updates)}, lost ${n(r.lost)} (rate ${n(r.lossRate * 100, 4)}%), ` +
      `validation errors ${n(r.errors)} of ${n(r.validated)} validated`,
    `connected ${n(r.connected)}/${n(r.clients)}; refused ${counts(r.refusals)}; ` +
      `connect errors ${counts(r.connectErrors)}; disconnects ${counts(r.disconnects)}; ` +
      `error notices ${counts(r.noticeErrors)}`,
    ...(r.shard
      ? [`shard ${r.shard.index}/${r.shard.count}: ${n(r.shard.clients)} of the run's ${n(r.options.clients)} clients`]
      : []),
    ...(r.window
      ? [`shared window ${r.window.startAt} – ${r.window.endAt}: ${n(r.window.frames)} frames sent inside it`]
      : []),
    `clock: ${bound}`,
    `generator: event-loop p99 ${n(r.generator.eventLoopDelayP99Ms)} ms, busiest ` +
      `worker ${n(r.generator.cpuPercent, 1)}%, process CPU ${n(r.generator.processCpuPercent, 1)}% ` +
      `of a core, ${n(r.generator.cpuMicrosPerFrame)} µs CPU/frame, ` +
      `${kbPerConnection} KB/connection`,
    r.trustworthy
      ? 'verdict: trustworthy (generator not saturated)'
      : `verdict: UNTRUSTWORTHY — generator saturated: ${r.generator.reasons.join('; ')}`,
    ...r.violationSamples.slice(0, 3).map((s) => `  violation: ${s}`),
    ...r.observations.map((o) => `  observed: ${o}`),
    ...thresholdLines(r.thresholds),
  ];
  return lines.join('\n');
}

/** The REST summary. */
export function formatRestSummary(r: RestReport): string {
  const l = r.latencyMs;
  const open = r.model === 'open';
  const row = (
    name: string,
    x: { p50: number | null; p90: number | null; p99: number | null; p999: number | null; max: number | null },
  ): string[] => [name, n(x.p50, 3), n(x.p90, 3), n(x.p99, 3), n(x.p999, 3), n(x.max, 3)];
  return [
    `conform load rest ` +
      `— ${r.target.embedded ? 'embedded reference service (own process)' : r.target.rest} ` +
      `— GET /v1/${r.options.endpoint}`,
    open
      ? `open model: ${n(r.options.rate as number)} req/s, ` +
        `${r.options.arrival === 'poisson' ? `Poisson arrivals (seed ${r.options.seed})` : 'evenly spaced'}` +
        `, at most ${r.options.connections} connections, ${n(r.options.durationMs / 1000, 1)} ` +
        `s (warm-up ${n(r.options.warmupMs / 1000, 1)} s excluded)`
      : `closed model (--rate max): ${r.options.connections} connections back to back, ` +
        `${n(r.options.durationMs / 1000, 1)} s (warm-up ${n(r.options.warmupMs / 1000, 1)} s excluded)`,
    '',
    table([
      ['ms', 'p50', 'p90', 'p99', 'p99.9', 'max'],
      row(open ? 'latency (intended send → last byte)' : 'latency (send → last byte)', l),
      ...(r.sendLagMs ? [row('generator send lag (actual − intended)', r.sendLagMs)] : []),
    ]),
    '',
    `requests ${n(r.requests)}${open ? ` of ${n(r.scheduled)} scheduled` : ''} (${n(r.rps)}/s), ` +
      `errors ${n(r.errors)}, timeouts ${n(r.timeouts)}, non-2xx ${n(r.non2xx)}`,
    ...(open
      ? [
          `late (sent > ${r.lateMs} ms after the intended time) ${n(r.late)}, waited for ` +
            `a connection ${n(r.waitedForConnection)}, dropped ${n(r.dropped)}`,
        ]
      : []),
    `HTTP status: ${counts(r.httpStatus)}`,
    `status_number: ${counts(r.statusNumbers)}`,
    `generator: event-loop p99 ${n(r.generator.eventLoopDelayP99Ms)} ms, busy ${n(r.generator.cpuPercent, 1)}%, ` +
      `${n(r.generator.cpuMicrosPerRequest)} µs CPU/request` +
      `${r.options.workers > 1 ? ` (${r.options.workers} worker threads)` : ''}`,
    r.trustworthy
      ? 'verdict: trustworthy (generator kept its schedule)'
      : `verdict: UNTRUSTWORTHY — ${r.generator.reasons.join('; ')}`,
    ...r.observations.map((o) => `  observed: ${o}`),
    ...thresholdLines(r.thresholds),
  ].join('\n');
}

/** One live progress line (for a TTY, rewritten in place by the caller). */
/** The time a load run plans: the ramp at its rate (fan-out), the warm-up and the measured phase, in s. */
export function plannedSeconds(
  mode: 'fanout' | 'rest' | 'calibrate',
  o: { clients?: number; rampRate?: number; warmupMs?: number; durationMs?: number },
  defaults: { clients?: number; rampRate?: number; warmupMs: number; durationMs: number },
): number {
  const ramp =
    mode === 'rest' ? 0 : (o.clients ?? defaults.clients ?? 0) / (o.rampRate ?? defaults.rampRate ?? Infinity);
  return ramp + ((o.warmupMs ?? defaults.warmupMs) + (o.durationMs ?? defaults.durationMs)) / 1000;
}

export function formatProgress(p: {
  phase: string;
  elapsedS: number;
  /** What the run planned (ramp, warm-up, measured phase), shown against the elapsed time. */
  plannedS?: number;
  connections?: number;
  subscribed?: number;
  clients?: number;
  frames?: number;
  requests?: number;
  rps?: number;
}): string {
  const planned = p.plannedS === undefined ? '' : ` of ~${Math.ceil(p.plannedS)} s`;
  const parts = [`${p.phase.padEnd(7)} ${p.elapsedS.toFixed(1).padStart(6)} s${planned}`];
  if (p.clients !== undefined)
    parts.push(`conn ${p.connections}/${p.clients}`, `subscribed ${p.subscribed}`, `frames ${n(p.frames ?? 0)}`);
  if (p.requests !== undefined) parts.push(`requests ${n(p.requests)}`, `${n(p.rps ?? 0)}/s`);
  return parts.join('  ');
}
