/** Present: the console summary of a trend judgement (`conform load trend`, `--judge`). */
import type { MetricTrend, Shift, TrendResult } from '../trend/judge.ts';
import { n } from './console.ts';

/** A relative change as a signed percentage. */
export const pct = (v: number | null): string =>
  v === null ? '—' : `${v >= 0 ? '+' : '−'}${Math.abs(v * 100).toFixed(1)} %`;

/** The run a shift began at: its time, line and labels. */
export const runName = (s: Shift): string => {
  const labels = Object.entries(s.run.labels)
    .filter(([, v]) => v !== '')
    .map(([k, v]) => `${k}=${v}`);
  return `the run of ${s.run.time} (line ${s.run.line}${labels.length ? `, ${labels.join(', ')}` : ''})`;
};

/** One shift in words: its size with the interval, the means, where it began and how it was found. */
export function shiftLine(m: Pick<MetricTrend, 'unit'>, s: Shift, confidence: number): string {
  const size =
    s.change === null
      ? `from 0 to ${n(s.after.mean, 3)} ${m.unit}`
      : `${pct(s.change)} [${pct(s.low)}, ${pct(s.high)}] (${Math.round(confidence * 100)} % interval), ` +
        `${n(s.before.mean, 3)} → ${n(s.after.mean, 3)} ${m.unit}`;
  return `${size} since ${runName(s)}, p=${s.p === 0 ? '0' : s.p.toPrecision(2)} (${s.by})`;
}

/** Line numbers as ranges: 2, 4–8, 11. */
export function lineRanges(lines: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
    let j = i;
    while (j + 1 < lines.length && lines[j + 1] === lines[j]! + 1) j++;
    out.push(j > i ? `${lines[i]}–${lines[j]}` : String(lines[i]));
    i = j + 1;
  }
  return out.join(', ');
}

const smallShift = (m: MetricTrend): string => `${m.metric} ${pct(m.shifts.at(-1)!.change)}`;

/** The console summary: the verdict, then each regression and improvement, then what was left out. */
export function formatTrendSummary(t: TrendResult, file: string): string {
  const conf = t.options.confidence;
  const by = t.options.groupBy;
  const lines = [
    `conform load trend — ${file}: ${t.runs} runs of ${t.kind ?? 'no kind yet'}, ${t.trusted} trusted` +
      (t.untrustworthy.length
        ? `; left out, untrustworthy: ${t.untrustworthy.length} ` +
          `(lines ${lineRanges(t.untrustworthy.map((u) => u.line))})`
        : ''),
    `judged: E-divisive means (p ≤ ${t.options.maxPValue}, window ${t.options.windowLength}) and the newest ` +
      `2–${t.options.tailRuns} ${by === undefined ? 'runs' : 'points'}; ` +
      `an alarm at p ≤ ${t.options.verdictPValue} over ${t.metrics.length} metrics ` +
      `(each ${(t.options.verdictPValue / Math.max(1, t.metrics.length)).toPrecision(2)}); ` +
      `minimum effect ${pct(t.options.minEffect)}`,
  ];
  if (by !== undefined) {
    const points = Math.max(0, ...t.metrics.map((m) => m.points.length));
    lines.push(
      `each point the mean of the trusted runs with the same ${by} label ` +
        `(a run without one stands alone): ${points} points`,
    );
  }
  for (const m of t.metrics) {
    const newest = m.shifts.at(-1);
    if (m.verdict === 'regression' || m.verdict === 'improvement')
      lines.push(
        `  ${m.verdict === 'regression' ? 'REGRESSION' : 'improvement'} ${m.metric}: ${shiftLine(m, newest!, conf)}`,
      );
  }
  const steady = t.metrics.filter((m) => m.verdict === 'steady');
  const few = t.metrics.filter((m) => m.verdict === 'too-few-runs');
  const small = steady.filter((m) => m.shifts.at(-1)?.kind === 'within-minimum');
  if (small.length) lines.push(`  shifted less than the minimum effect: ${small.map(smallShift).join(', ')}`);
  lines.push(`  steady: ${steady.length} metrics${few.length ? `; too few trusted runs to judge: ${few.length}` : ''}`);
  lines.push(
    t.regressions.length
      ? `verdict: REGRESSION in ${t.regressions.join(', ')}`
      : 'verdict: no regression in the newest runs',
  );
  return lines.join('\n');
}
