/** Small inline-SVG charts for the HTML reports: no script, no CDN, nothing fetched. */
import { escapeHtml as esc } from '../../reports/write.ts';

export interface Series {
  name: string;
  points: readonly { x: number; y: number | null }[];
  color: string;
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
  opts: { xLabel: string; yLabel: string; xTicks?: { x: number; label: string }[] },
): string {
  const all = series.flatMap((s) => s.points.filter((p) => p.y !== null)) as { x: number; y: number }[];
  if (!all.length) return `<figure><figcaption>${esc(title)}</figcaption><p class="empty">no data</p></figure>`;
  const xMin = Math.min(...all.map((p) => p.x));
  const xMax = Math.max(...all.map((p) => p.x));
  const yMax = niceMax(Math.max(...all.map((p) => p.y)));
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
    parts.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"><title>${esc(s.name)}</title></path>`);
  }
  const legend = series
    .map((s, i) => `<text x="${PAD.l + 8 + i * 140}" y="${PAD.t - 8}" fill="${s.color}">■ ${esc(s.name)}</text>`)
    .join('');
  return (
    `<figure><figcaption>${esc(title)}</figcaption><svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" ` +
    `role="img" aria-label="${esc(title)}">${parts.join('')}${legend}<text x="${(W + PAD.l) / 2}" ` +
    `y="${H - 6}" text-anchor="middle">${esc(opts.xLabel)}</text><text x="12" y="${H / 2}" ` +
    `transform="rotate(-90 12 ${H / 2})" text-anchor="middle">${esc(opts.yLabel)}</text></svg></figure>`
  );
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
