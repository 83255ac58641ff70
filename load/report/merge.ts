/** Present: the merged load report as console text, HTML and JUnit XML. */
import { xml } from '../../reports/junit.ts';
import { escapeHtml as esc } from '../../reports/write.ts';
import type { MergedReport } from '../merge.ts';
import { n as num, table } from './console.ts';

/** Merged figures carry three decimals. */
const n = (v: number | null | undefined): string => num(v, 3);

/** The console summary of a merged report. */
export function formatMergedSummary(r: MergedReport): string {
  const counts = (m: Record<string, number>): string =>
    Object.keys(m).length
      ? Object.entries(m)
          .map(([k, v]) => `${k}×${v}`)
          .join(', ')
      : 'none';
  const t = r.totals;
  const lines = [
    `conform load merge — ${r.kind}, ${r.hosts.length} result(s)`,
    '',
    table([
      ['ms', 'count', 'p50', 'p90', 'p99', 'p99.9', 'max'],
      ...Object.entries(r.distributions).map(([name, d]) => [
        name,
        n(d.count),
        n(d.p50),
        n(d.p90),
        n(d.p99),
        n(d.p999),
        n(d.max),
      ]),
    ]),
    '',
    r.kind === 'fanout'
      ? `clients ${n(t.clients)}, connected ${n(t.connected)}, frames ${n(t.frames)} ` +
        `(${n(t.frames_per_second)}/s), errors ${n(t.errors)}; refused ${counts(r.refusals)}; ` +
        `error notices ${counts(r.noticeErrors)}; disconnects ${n(t.disconnects)}`
      : `requests ${n(t.requests)} (${n(t.rps)}/s) of ${n(t.scheduled)} scheduled, late ${n(t.late)}, ` +
        `dropped ${n(t.dropped)}, waited for a connection ${n(t.waited_for_connection)}, ` +
        `errors ${n(t.errors)}, timeouts ${n(t.timeouts)}; status_number ${counts(r.statusNumbers)}`,
    '',
    'per host',
    table([
      [
        'host',
        'generator',
        r.kind === 'fanout' ? 'clients' : 'requests',
        r.kind === 'fanout' ? 'frames' : 'errors',
        'latency p99',
        ...(r.kind === 'fanout' ? ['skew p99', 'lost'] : []),
        'trustworthy',
      ],
      ...r.hosts.map((h) => [
        h.host,
        h.generator,
        n(r.kind === 'fanout' ? h.clients : h.requests),
        n(r.kind === 'fanout' ? h.frames : h.errors),
        n(h.latencyP99Ms),
        ...(r.kind === 'fanout' ? [n(h.skewP99Ms), n(h.lost)] : []),
        h.trustworthy === null ? '—' : h.trustworthy ? 'yes' : 'NO',
      ]),
    ]),
    ...r.observations.map((o) => `  observed: ${o}`),
  ];
  if (r.thresholds.length)
    lines.push(
      '',
      'thresholds',
      ...r.thresholds.map((x) => `  ${x.ok ? '✓' : '✗'} ${x.expr}  (actual ${n(x.actual)})`),
    );
  return lines.join('\n');
}

/** The merged report as JUnit XML: one test case per threshold. */
export function mergedJunit(r: MergedReport): string {
  const cases = r.thresholds.map(
    (x) =>
      `    <testcase classname="load.merge.${r.kind}" name="${xml(`threshold ${x.expr}`)}">` +
      `${x.ok ? '' : `<failure message="${xml(`actual ${n(x.actual)}`)}"/>`}</testcase>`,
  );
  const failures = r.thresholds.filter((x) => !x.ok).length;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n  <testsuite name="conform load ` +
    `merge ${r.kind}" tests="${cases.length}" failures="${failures}">\n${cases.join('\n')}\n  ` +
    `</testsuite>\n</testsuites>\n`
  );
}

/** The merged report as a self-contained HTML page. */
export function mergedHtml(r: MergedReport): string {
  const failed = r.thresholds.some((x) => !x.ok);
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>conform load merge</title>` +
    '<style>body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}' +
    'pre{background:#f6f6f6;padding:12px;overflow:auto}' +
    '.bad{background:#fde2e2;padding:8px}.good{background:#e3f5e1;padding:8px}</style></head><body>' +
    `<h1>conform load merge — ${esc(r.kind)}</h1><p class="${failed ? 'bad' : 'good'}">` +
    `${failed ? 'A threshold was crossed.' : 'Every threshold held.'}</p>` +
    `<pre>${esc(formatMergedSummary(r))}</pre></body></html>\n`
  );
}
