/** Present: self-contained HTML reports with inline SVG charts (no script, no CDN). */
import type { FanoutReport } from '../fanout/run.ts';
import type { RestReport } from '../rest/run.ts';
import { escapeHtml as esc } from '../../reports/write.ts';
import { barChart, lineChart, type Series } from './svg.ts';
import { formatFanoutSummary, formatRestSummary } from './console.ts';

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1360px}
figure{display:inline-block;margin:8px;vertical-align:top}figcaption{font-weight:600;margin-bottom:4px}
svg text{font-size:11px;fill:#444}.grid{stroke:#ddd}pre{background:#f6f6f6;padding:12px;overflow:auto}
.bad{background:#fde2e2;border:1px solid #e99;padding:8px}.good{background:#e3f5e1;border:1px solid #9c9;padding:8px}
.empty{color:#888}`;

/** A self-contained page: the shared style, no script. */
export function page(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}` +
    `</title><style>${STYLE}</style></head><body>${body}</body></html>\n`
  );
}

// Percentiles spread on a log scale of 1/(1 − p), so the tail gets room (as in HdrHistogram plots).
const pctX = (p: number): number => Math.log10(1 / Math.max(1e-5, 1 - p / 100));
const PCT_TICKS = [0, 90, 99, 99.9, 99.99, 99.999].map((p) => ({ x: pctX(p), label: `${p}%` }));

/** Says which seconds lack a worker's sample: the charts leave them as gaps, not as drops. */
function missingSamples(timeline: FanoutReport['timeline']): string {
  const gaps = timeline.filter((p) => p.missingWorkers.length);
  if (!gaps.length) return '';
  const items = gaps.map((p) => `<li>t = ${p.t} s: no sample from worker ${p.missingWorkers.join(', ')}</li>`).join('');
  return (
    `<p class="empty">Frames per second and connections are unknown in these seconds (gaps in ` +
    `the charts, not zeros); the late samples are counted in the next second over the time they cover:</p>` +
    `<ul class="empty">${items}</ul>`
  );
}

/** The measured phase as a chart's band: the seconds the summary's figures come from. */
const measured = (r: FanoutReport): { from: number; to: number; label: string } => ({
  from: r.measuredPhase.fromS,
  to: r.measuredPhase.toS,
  label: 'measured phase',
});

/**
 * A per-second series split at the measured phase: the seconds inside it solid, the ramp, warm-up
 * and close dashed and grey, named as outside the summary, so a ramp's tail never reads as a
 * figure the summary left out. A point covers the second before its t; it belongs to the phase
 * when the middle of that second lies inside it.
 */
function inPhase(
  r: FanoutReport,
  name: string,
  color: string,
  y: (p: FanoutReport['timeline'][number]) => number | null,
): Series[] {
  const inside = (t: number): boolean => t - 0.5 >= r.measuredPhase.fromS && t - 0.5 <= r.measuredPhase.toS;
  return [
    { name, color, points: r.timeline.map((p) => ({ x: p.t, y: inside(p.t) ? y(p) : null })) },
    {
      name: `${name.replace(/ ms$/, '')} outside`,
      color: '#aaa',
      dashed: true,
      points: r.timeline.map((p) => ({ x: p.t, y: inside(p.t) ? null : y(p) })),
    },
  ];
}

/** The fan-out report page. */
export function renderFanoutHtml(r: FanoutReport): string {
  const verdict = r.trustworthy
    ? '<p class="good">Trustworthy: the generator was not saturated.</p>'
    : `<p class="bad"><b>Untrustworthy:</b> the generator was saturated ` +
      `(${esc(r.generator.reasons.join('; '))}); latency below reflects the ` +
      `generator's lag as much as the server's.</p>`;
  const charts = [
    lineChart(
      'Latency by percentile (receipt − sent_at)',
      [
        {
          name: 'latency ms',
          color: '#c0392b',
          points: r.latencyCurve.map((p) => ({ x: pctX(p.percentile), y: p.ms })),
        },
      ],
      { xLabel: 'percentile', yLabel: 'ms', xTicks: PCT_TICKS },
    ),
    lineChart(
      'Latency over time',
      [
        ...inPhase(r, 'p50 ms', '#2e86c1', (p) => p.latencyP50Ms),
        ...inPhase(r, 'p99 ms', '#c0392b', (p) => p.latencyP99Ms),
      ],
      { xLabel: 'seconds since ramp start', yLabel: 'ms', bands: [measured(r)] },
    ),
    lineChart(
      'Frames per second',
      [{ name: 'frames/s', color: '#27ae60', points: r.timeline.map((p) => ({ x: p.t, y: p.framesPerSecond })) }],
      { xLabel: 'seconds since ramp start', yLabel: 'frames/s', bands: [measured(r)] },
    ),
    lineChart(
      'Connections',
      [{ name: 'open', color: '#8e44ad', points: r.timeline.map((p) => ({ x: p.t, y: p.connections })) }],
      { xLabel: 'seconds since ramp start', yLabel: 'connections', bands: [measured(r)] },
    ),
    barChart(
      'Skew per update (last − first client)',
      r.skewHistogram.map((b) => ({ label: `${b.fromMs}`, value: b.count })),
      { xLabel: 'ms', yLabel: 'updates' },
    ),
  ];
  const data = { ...r, timeline: undefined, skewHistogram: undefined, latencyCurve: undefined, histograms: undefined };
  return page(
    'conform load fanout',
    `<h1>conform load fanout</h1>${verdict}<pre>${esc(formatFanoutSummary(r))}</pre>` +
      `<p class="empty">Over time: the shaded band is the measured phase (${r.measuredPhase.fromS} s to ` +
      `${r.measuredPhase.toS} s), where every figure of the summary comes from; the dashed grey lines ` +
      `(“outside”) are the ramp, warm-up and close seconds, which no figure above includes.</p>${charts.join('')}
${missingSamples(r.timeline)}` +
      `<details><summary>Report data (JSON)</summary><pre>${esc(JSON.stringify(data, null, 2))}</pre></details>`,
  );
}

/** The REST report page. */
export function renderRestHtml(r: RestReport): string {
  const verdict = r.trustworthy
    ? '<p class="good">Trustworthy: the generator was not saturated.</p>'
    : `<p class="bad"><b>Untrustworthy:</b> ${esc(r.generator.reasons.join('; '))}</p>`;
  const charts = [
    lineChart(
      'Requests per second',
      [{ name: 'req/s', color: '#27ae60', points: r.timeline.map((p) => ({ x: p.t, y: p.rps })) }],
      { xLabel: 'seconds', yLabel: 'req/s' },
    ),
    ...(r.model === 'open'
      ? [
          lineChart(
            'Latency from the intended send time',
            [
              {
                name: 'p50',
                color: '#2980b9',
                points: r.timeline.filter((p) => p.latencyP50Ms !== null).map((p) => ({ x: p.t, y: p.latencyP50Ms! })),
              },
              {
                name: 'p99',
                color: '#c0392b',
                points: r.timeline.filter((p) => p.latencyP99Ms !== null).map((p) => ({ x: p.t, y: p.latencyP99Ms! })),
              },
            ],
            { xLabel: 'seconds', yLabel: 'ms' },
          ),
        ]
      : []),
    barChart(
      'status_number',
      Object.entries(r.statusNumbers).map(([k, v]) => ({ label: k, value: v })),
      { xLabel: 'status_number', yLabel: 'responses' },
    ),
  ];
  return page(
    'conform load rest',
    `<h1>conform load rest</h1>${verdict}<pre>${esc(formatRestSummary(r))}</pre>${charts.join('')}`,
  );
}
