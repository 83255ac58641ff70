/** Small inline-SVG charts for the HTML reports: no script, no CDN, nothing fetched. */
import { escapeHtml as esc } from '../../reports/write.ts';

export interface Series {
  name: string;
  points: readonly { x: number; y: number | null }[];
  color: string;
  /** Drawn dashed (figures outside what the summary covers). */
  dashed?: boolean;
  /** Each point also drawn as a dot (few points, each a measurement of its own). */
  dots?: boolean;
}

/** What a chart marks besides its series: spans of x, and lines across it. */
export interface ChartMarks {
  /** Shaded spans of x, e.g. the measured phase. */
  bands?: { from: number; to: number; label: string }[];
  /** Vertical lines at an x, e.g. a change point or the newest run. */
  vlines?: { x: number; label: string; color: string }[];
  /** Horizontal lines at a y, e.g. a threshold or an SLO. */
  hlines?: { y: number; label: string; color: string }[];
}

const W = 640;
const H = 240;
const PAD = { l: 56, r: 16, t: 24, b: 40 };

const fmt = (v: number): string =>
  Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : String(Math.round(v * 100) / 100);

function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/** A line chart; `xLabels` maps x values to tick labels (for the percentile axis). */
export function lineChart(
  title: string,
  series: readonly Series[],
  opts: { xLabel: string; yLabel: string; xTicks?: { x: number; label: string }[] } & ChartMarks,
): string {
  const all = series.flatMap((s) => s.points.filter((p) => p.y !== null)) as { x: number; y: number }[];
  if (!all.length) return `<figure><figcaption>${esc(title)}</figcaption><p class="empty">no data</p></figure>`;
  const xs = [...all.map((p) => p.x), ...(opts.bands ?? []).flatMap((b) => [b.from, b.to])];
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs);
  const yMax = niceMax(Math.max(...all.map((p) => p.y), ...(opts.hlines ?? []).map((h) => h.y)));
  const sx = (x: number): number => PAD.l + ((x - xMin) / (xMax - xMin || 1)) * (W - PAD.l - PAD.r);
  const sy = (y: number): number => H - PAD.b - (y / yMax) * (H - PAD.t - PAD.b);
  const parts: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const y = (yMax * i) / 4;
    parts.push(
      `<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${sy(y).toFixed(1)}" ` +
        `y2="${sy(y).toFixed(1)}" class="grid"/><text x="${PAD.l - 6}" ` +
        `y="${(sy(y) + 4).toFixed(1)}" text-anchor="end">${fmt(y)}</text>`,
    );
  }
  const ticks =
    opts.xTicks ??
    Array.from({ length: 6 }, (_, i) => {
      const x = xMin + ((xMax - xMin) * i) / 5;
      return { x, label: fmt(x) };
    });
  for (const t of ticks)
    parts.push(`<text x="${sx(t.x).toFixed(1)}" y="${H - PAD.b + 16}" text-anchor="middle">${esc(t.label)}</text>`);
  parts.unshift(...marks(opts, sx, sy));
  for (const s of series) {
    let d = '';
    let pen = false;
    for (const p of s.points) {
      if (p.y === null) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`;
      pen = true;
    }
    const dash = s.dashed ? ' stroke-dasharray="4 3"' : '';
    parts.push(
      `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${dash}><title>${esc(s.name)}</title></path>`,
    );
    if (s.dots)
      for (const p of s.points)
        if (p.y !== null)
          parts.push(
            `<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="3" fill="${s.color}">` +
              `<title>${esc(s.name)}: ${fmt(p.x)}, ${fmt(p.y)}</title></circle>`,
          );
  }
  const legend = series
    .map((s, i) => `<text x="${PAD.l + 8 + i * 140}" y="${PAD.t - 8}" style="fill:${s.color}">■ ${esc(s.name)}</text>`)
    .join('');
  return (
    `<figure><figcaption>${esc(title)}</figcaption><svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" ` +
    `role="img" aria-label="${esc(title)}">${parts.join('')}${legend}<text x="${(W + PAD.l) / 2}" ` +
    `y="${H - 6}" text-anchor="middle">${esc(opts.xLabel)}</text><text x="12" y="${H / 2}" ` +
    `transform="rotate(-90 12 ${H / 2})" text-anchor="middle">${esc(opts.yLabel)}</text></svg></figure>`
  );
}

/** The marks of a chart, drawn under its series: shaded bands, then vertical and horizontal lines. */
function marks(m: ChartMarks, sx: (x: number) => number, sy: (y: number) => number): string[] {
  const out: string[] = [];
  for (const b of m.bands ?? [])
    out.push(
      `<rect class="band" x="${sx(b.from).toFixed(1)}" y="${PAD.t}" width="${(sx(b.to) - sx(b.from)).toFixed(1)}" ` +
        `height="${H - PAD.t - PAD.b}" fill="#eef4fb"><title>${esc(b.label)}</title></rect>` +
        `<text x="${(sx(b.from) + 4).toFixed(1)}" y="${PAD.t + 12}">${esc(b.label)}</text>`,
    );
  for (const v of m.vlines ?? [])
    out.push(
      `<line class="vline" x1="${sx(v.x).toFixed(1)}" x2="${sx(v.x).toFixed(1)}" y1="${PAD.t}" y2="${H - PAD.b}" ` +
        `stroke="${v.color}" stroke-dasharray="3 3"><title>${esc(v.label)}</title></line>`,
    );
  for (const h of m.hlines ?? [])
    out.push(
      `<line class="hline" x1="${PAD.l}" x2="${W - PAD.r}" y1="${sy(h.y).toFixed(1)}" y2="${sy(h.y).toFixed(1)}" ` +
        `stroke="${h.color}" stroke-dasharray="6 3"><title>${esc(h.label)}</title></line>` +
        `<text x="${W - PAD.r - 4}" y="${(sy(h.y) - 4).toFixed(1)}" text-anchor="end" style="fill:${h.color}">` +
        `${esc(h.label)}</text>`,
    );
  return out;
}

/** A bar chart of buckets (for the skew histogram). */
export function barChart(
  title: string,
  bars: readonly { label: string; value: number }[],
  opts: { xLabel: string; yLabel: string },
): string {
  if (!bars.length) return `<figure><figcaption>${esc(title)}</figcaption><p class="empty">no data</p></figure>`;
  const yMax = niceMax(Math.max(...bars.map((b) => b.value)));
  const bw = (W - PAD.l - PAD.r) / bars.length;
  const sy = (y: number): number => H - PAD.b - (y / yMax) * (H - PAD.t - PAD.b);
  const parts: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const y = (yMax * i) / 4;
    parts.push(
      `<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${sy(y).toFixed(1)}" ` +
        `y2="${sy(y).toFixed(1)}" class="grid"/><text x="${PAD.l - 6}" ` +
        `y="${(sy(y) + 4).toFixed(1)}" text-anchor="end">${fmt(y)}</text>`,
    );
  }
  bars.forEach((b, i) => {
    const x = PAD.l + i * bw;
    parts.push(
      `<rect x="${(x + 1).toFixed(1)}" y="${sy(b.value).toFixed(1)}" ` +
        `width="${Math.max(1, bw - 2).toFixed(1)}" height="${(H - PAD.b - sy(b.value)).toFixed(1)}" ` +
        `fill="#4a7bd0"><title>${esc(b.label)}: ${b.value}</title></rect>`,
    );
    if (i % Math.ceil(bars.length / 6) === 0)
      parts.push(
        `<text x="${(x + bw / 2).toFixed(1)}" y="${H - PAD.b + 16}" text-anchor="middle">${esc(b.label)}</text>`,
      );
  });
  return (
    `<figure><figcaption>${esc(title)}</figcaption><svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" ` +
    `role="img" aria-label="${esc(title)}">${parts.join('')}<text x="${(W + PAD.l) / 2}" y="${H - 6}" ` +
    `text-anchor="middle">${esc(opts.xLabel)}</text><text x="12" y="${H / 2}" transform="rotate(-90 ` +
    `12 ${H / 2})" text-anchor="middle">${esc(opts.yLabel)}</text></svg></figure>`
  );
}
