/**
 * Present: the trend report of a load history (`conform load trend`, `--judge`): one chart per
 * metric (every trusted run, the segments' means, the change points, the run's thresholds and the
 * newest run marked), the console summary, and a Markdown job summary for GitHub Actions.
 */
import { escapeHtml as esc } from '../../reports/write.ts';
import type { GithubEnvironment } from '../../src/conform.ts';
import type { MetricTrend, TrendResult } from '../trend/judge.ts';
import { page } from './html.ts';
import type { LoadKind } from '../metrics.ts';
import { parseThreshold } from '../thresholds.ts';
import { lineChart, type ChartMarks, type Series } from './svg.ts';
import { formatTrendSummary, shiftLine } from './trend-console.ts';

/** A judged history as the reports take it: the judgement, the file, and the thresholds the newest run gave. */
export interface TrendReport extends TrendResult {
  file: string;
  generatedAt: string;
  /** The newest trusted run's thresholds (`latency.p99<250`), drawn on their metric's chart. */
  thresholds: string[];
}

const SHIFT_COLOR = {
  regression: '#c0392b',
  improvement: '#27ae60',
  'within-minimum': '#999',
  'not-significant': '#999',
  change: '#999',
};

/** A threshold's number when it names this metric (`latency.p99<250` on latency.p99 → 250). */
function thresholdOn(expr: string, metric: string, kind: LoadKind): number | null {
  try {
    const t = parseThreshold(expr, kind);
    return t.metric === metric ? t.value : null;
  } catch {
    // A threshold this version does not know (the history is older or newer): not drawn.
    return null;
  }
}

/** The segments' means as a stepped series: each segment's mean over its runs. */
function segmentMeans(m: MetricTrend): Series {
  const cuts = [0, ...m.shifts.map((s) => s.at), m.points.length];
  const points: { x: number; y: number | null }[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const seg = m.points.slice(cuts[i], cuts[i + 1]);
    const mean = seg.reduce((a, p) => a + p.value, 0) / Math.max(1, seg.length);
    points.push({ x: cuts[i]! + 1, y: mean }, { x: cuts[i + 1]!, y: mean }, { x: cuts[i + 1]! + 0.5, y: null });
  }
  return { name: 'segment mean', color: '#555', points };
}

/** One metric's chart: runs by their number in the history's trusted runs. */
function metricChart(m: MetricTrend, thresholds: readonly string[], kind: LoadKind): string {
  const marks: ChartMarks = {
    vlines: [
      ...m.shifts.map((s) => ({
        x: s.at + 0.5,
        label: `${s.kind}: ${shiftLine(m, s, 0.95)}`,
        color: SHIFT_COLOR[s.kind],
      })),
      ...(m.points.length
        ? [{ x: m.points.length, label: `newest run: ${m.points.at(-1)!.time}`, color: '#2e86c1' }]
        : []),
    ],
    hlines: thresholds
      .map((t) => ({ t, y: thresholdOn(t, m.metric, kind) }))
      .filter((h): h is { t: string; y: number } => h.y !== null)
      .map((h) => ({ y: h.y, label: `threshold ${h.t}`, color: '#e67e22' })),
  };
  const runs: Series = {
    name: `${m.metric} (${m.unit})`,
    color: '#2e86c1',
    dots: true,
    points: m.points.map((p, i) => ({ x: i + 1, y: p.value })),
  };
  const title = `${m.metric}: ${m.verdict}${m.excluded ? ` (${m.excluded} runs left out)` : ''}`;
  // Runs are counted whole: ticks at whole runs, about six of them.
  const step = Math.max(1, Math.ceil(m.points.length / 6));
  const xTicks = Array.from({ length: Math.ceil(m.points.length / step) }, (_, i) => i * step + 1).map((x) => ({
    x,
    label: String(x),
  }));
  return lineChart(title, [runs, segmentMeans(m)], { xLabel: 'trusted run', yLabel: m.unit, xTicks, ...marks });
}

/** The trend page: the summary, then a chart per metric, regressions first. */
export function renderTrendHtml(r: TrendReport): string {
  const order = { regression: 0, improvement: 1, steady: 2, 'too-few-runs': 3 };
  const metrics = [...r.metrics].sort((a, b) => order[a.verdict] - order[b.verdict]);
  const verdict = r.regressions.length
    ? `<p class="bad"><b>Regression</b> in the newest runs: ${esc(r.regressions.join(', '))}</p>`
    : '<p class="good">No regression in the newest runs.</p>';
  const untrusted = r.untrustworthy.length
    ? `<p class="empty">Left out of every judgement, untrustworthy: ${r.untrustworthy
        .map((u) => `line ${u.line} (${esc(u.time)}: ${esc(u.reasons)})`)
        .join('; ')}</p>`
    : '';
  return page(
    `conform load trend — ${r.file}`,
    `<h1>conform load trend</h1>${verdict}<pre>${esc(formatTrendSummary(r, r.file))}</pre>${untrusted}` +
      `<p class="empty">Each chart: ${
        r.options.groupBy === undefined
          ? 'the trusted runs in order (dots)'
          : `each ${esc(r.options.groupBy)} in order, the mean of its trusted runs (dots)`
      }, the mean of each segment between change ` +
      `points, the change points (red: regression, green: improvement, grey: smaller than the minimum effect), ` +
      `the newest run (blue) and the thresholds of the newest run (orange).</p>` +
      metrics.map((m) => metricChart(m, r.thresholds, r.kind ?? 'rest')).join(''),
  );
}

/** The Markdown job summary of a trend: the verdict and each regression or improvement. */
export function trendSummaryMarkdown(r: TrendReport, env: GithubEnvironment): string {
  const lines = [
    `## conform load trend: ${r.regressions.length ? `REGRESSION in ${r.regressions.join(', ')}` : 'no regression'}`,
    '',
    `${r.runs} runs in \`${r.file}\`, ${r.trusted} trusted.`,
    '',
  ];
  const moved = r.metrics.filter((m) => m.verdict === 'regression' || m.verdict === 'improvement');
  if (moved.length) {
    lines.push('| Metric | Verdict | Shift |', '|---|---|---|');
    for (const m of moved)
      lines.push(`| \`${m.metric}\` | ${m.verdict} | ${shiftLine(m, m.shifts.at(-1)!, r.options.confidence)} |`);
    lines.push('');
  }
  lines.push('```', formatTrendSummary(r, r.file).replace(/```/g, "'''"), '```');
  if (env.runUrl) lines.push('', `The trend report: ${env.runUrl}#artifacts`);
  return `${lines.join('\n')}\n`;
}
