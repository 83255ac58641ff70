/**
 * Present: the report of a capacity search: the console's table of steps and verdict, and the
 * HTML page with the latency-against-load curve (each step's p50 and p99, the SLOs on latency as
 * lines, the capacity found marked).
 */
import { escapeHtml as esc } from '../../reports/write.ts';
import type { CapacityReport } from '../capacity/run.ts';
import { n, table } from './console.ts';
import { page } from './html.ts';
import { lineChart } from './svg.ts';

const OUTCOME = {
  knee: 'KNEE FOUND',
  'max-held': 'HELD UP TO THE MAXIMUM',
  'generator-limit': 'NO KNEE: THE GENERATOR WAS THE LIMIT',
  'none-held': 'NO LOAD HELD',
  budget: 'STOPPED: STEPS OR TIME RAN OUT',
} as const;

/** The table of steps. */
function stepTable(r: CapacityReport): string {
  return table([
    ['step', 'phase', r.unit, 'achieved', 'p50 ms', 'p99 ms', 'SLOs', 'generator', 's'],
    ...r.steps.map((s) => [
      String(s.index),
      s.phase,
      n(s.load, 1),
      n(s.achieved, 1),
      n(s.latencyP50Ms, 3),
      n(s.latencyP99Ms, 3),
      s.slos.every((x) => x.ok)
        ? 'held'
        : `failed: ${s.slos
            .filter((x) => !x.ok)
            .map((x) => `${x.metric}=${n(x.actual, 3)}`)
            .join(', ')}`,
      s.generatorLimits.length ? 'LIMIT' : 'kept up',
      n(s.ms / 1000, 1),
    ]),
  ]);
}

/** The console summary: the verdict, the capacity, the steps. */
export function formatCapacitySummary(r: CapacityReport): string {
  const where = r.target.embedded ? 'embedded reference service (own process)' : r.target.rest;
  return [
    `conform load capacity ${r.kind} — ${where}; SLOs: ${r.slos.join(', ')}`,
    `search: from ${r.options.start} to at most ${r.options.max} ${r.unit}, ${r.options.warmupMs / 1000} s warm-up + ` +
      `${r.options.stepMs / 1000} s measured per step, at most ${r.options.maxSteps} steps and ` +
      `${Math.round(r.options.maxTimeMs / 60_000)} min`,
    '',
    stepTable(r),
    '',
    `verdict: ${OUTCOME[r.outcome]} — ${r.reason}`,
    r.capacity === null
      ? 'capacity: not reported'
      : `capacity: ${n(r.capacity, 1)} ${r.unit}, the highest load at which every SLO held` +
        (r.failedAt === null ? '' : ` (one failed at ${n(r.failedAt, 1)})`),
  ].join('\n');
}

/** The SLOs on latency (`latency.p99<50`): drawn as lines on the curve. */
const latencySlos = (r: CapacityReport): { y: number; label: string; color: string }[] =>
  r.slos
    .map((e) => /^\s*latency\.(p\d+|max)\s*<=?\s*(\d+(?:\.\d+)?)\s*$/.exec(e))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ y: Number(m[2]), label: `SLO ${m[0].trim()}`, color: '#e67e22' }));

/** The capacity search's page. */
export function renderCapacityHtml(r: CapacityReport): string {
  const byLoad = [...r.steps].sort((a, b) => a.load - b.load);
  const curve = lineChart(
    'Latency against load',
    [
      { name: 'p50 ms', color: '#2e86c1', dots: true, points: byLoad.map((s) => ({ x: s.load, y: s.latencyP50Ms })) },
      { name: 'p99 ms', color: '#c0392b', dots: true, points: byLoad.map((s) => ({ x: s.load, y: s.latencyP99Ms })) },
    ],
    {
      xLabel: r.unit,
      yLabel: 'ms',
      hlines: latencySlos(r),
      vlines: [
        ...(r.capacity === null ? [] : [{ x: r.capacity, label: `capacity ${r.capacity}`, color: '#27ae60' }]),
        ...r.steps
          .filter((s) => s.generatorLimits.length)
          .map((s) => ({ x: s.load, label: `generator limit: ${s.generatorLimits.join('; ')}`, color: '#8e44ad' })),
      ],
    },
  );
  const cls = r.outcome === 'knee' || r.outcome === 'max-held' ? 'good' : 'bad';
  return page(
    `conform load capacity ${r.kind}`,
    `<h1>conform load capacity ${esc(r.kind)}</h1>` +
      `<p class="${cls}"><b>${OUTCOME[r.outcome]}</b>: ${esc(r.reason)}</p>` +
      `${curve}<pre>${esc(formatCapacitySummary(r))}</pre>` +
      `<details><summary>Report data (JSON)</summary><pre>${esc(JSON.stringify(r, null, 2))}</pre></details>`,
  );
}
