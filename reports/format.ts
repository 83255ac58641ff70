/** Text shared by every report: how a failure, an error and a way to reproduce read, and the coverage. */
import type { CheckResult, Evidence } from '../src/check.ts';
import type { Coverage } from '../src/coverage.ts';
import { causesHeadline, type Cause, evidenceShowing } from './causes.ts';

/** `Section: rule`. */
export const clauseText = (r: Pick<CheckResult, 'clause'>): string => `${r.clause.section}: ${r.clause.rule}`;

/** How to reproduce a result: curl lines for REST, the frame transcript for the stream. */
export function reproduceLines(evidence: readonly Evidence[]): string[] {
  const lines: string[] = [];
  for (const e of evidence) {
    switch (e.kind) {
      case 'http':
        lines.push(e.curl);
        if (e.response) lines.push(`  -> HTTP ${e.response.status} ${truncate(e.response.body, 300)}`);
        if (e.error) lines.push(`  -> ${e.error}`);
        break;
      case 'ws-open':
        lines.push(`open ${e.url}${e.localAddress ? ` from ${e.localAddress}` : ''} -> ${e.outcome}`);
        break;
      case 'frame':
        lines.push(`${e.direction === 'out' ? '>' : '<'} ${truncate(e.data, 300)}`);
        break;
      case 'close':
        lines.push(`closed by ${e.by}: ${e.code}${e.reason ? ` ${e.reason}` : ''}`);
        break;
      case 'note':
        lines.push(`# ${e.text}`);
        break;
    }
  }
  return lines;
}

/** Every line a failed or errored result shows: Received / Expected (spec: …) per violation, then Reproduce. */
export function failureLines(r: CheckResult, maxEvidence = 40): string[] {
  const lines: string[] = [];
  if (r.outcome === 'error') lines.push(`Error ${r.errorCode ?? ''}: ${r.reason ?? ''}`.replace(/ +:/, ':'));
  for (const v of r.violations) {
    lines.push(`Received: ${v.received}`);
    lines.push(`Expected (spec: ${clauseText(r)}): ${v.expected}`);
  }
  const showing = evidenceShowing(r);
  const repro = reproduceLines(showing);
  if (repro.length > 0) {
    lines.push('Reproduce with:');
    const shown = repro.slice(0, maxEvidence);
    for (const l of shown) lines.push(`  ${l}`);
    if (repro.length > shown.length) lines.push(`  … ${repro.length - shown.length} more lines in the JSON report`);
    const hidden = r.evidence.length - showing.length;
    if (hidden > 0)
      lines.push(`  (${hidden} other exchanges, which show no violation: all of them in the JSON and HTML reports)`);
  }
  return lines;
}

/** The lines that lead a report with the causes: the headline, then each cause with its checks under it. */
export function causeLines(results: readonly CheckResult[], causes: readonly Cause[]): string[] {
  const headline = causesHeadline(results, causes);
  if (!headline) return [];
  const lines = [headline];
  for (const c of causes) {
    lines.push(`  ${c.cause} (${c.ids.length} checks), for example: ${truncate(c.example, 200)}`);
    for (const id of c.ids) lines.push(`    ${id}`);
  }
  return lines;
}

export function truncate(text: string, limit: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat;
}

/** A value of an observation as one short line. */
export function valueText(value: unknown, limit = 200): string {
  let s: string;
  try {
    s = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    s = String(value);
  }
  return truncate(s, limit);
}

/** Ids as a short list: the first three, then how many more. */
const someIds = (ids: readonly string[]): string =>
  ids.length <= 3 ? ids.join(', ') : `${ids.slice(0, 3).join(', ')} and ${ids.length - 3} more`;

/**
 * `74 of 83 must checks ran (89.1 %); 9 skipped: profile has no keys.cryptoOnly (3: …); …`, and the
 * minimum when one was set.
 */
export function coverageLine(c: Coverage): string {
  const head = `${c.mustRan} of ${c.mustTotal} must checks ran (${c.percent} %)`;
  const skipped =
    c.mustSkipped === 0
      ? ''
      : `; ${c.mustSkipped} ` +
        `skipped: ${c.skipped.map((g) => `${g.reason} (${g.ids.length}: ${someIds(g.ids)})`).join('; ')}`;
  const gate =
    c.minimum === undefined
      ? ''
      : c.met
        ? `; minimum ${c.minimum} %: met`
        : `; BELOW THE MINIMUM of ${c.minimum} %: the run fails`;
  return `${head}${skipped}${gate}`;
}

/** The warning of a run where the target gave the harness nothing to judge, or undefined. */
export function nothingToJudgeLine(c: Coverage): string | undefined {
  if (c.nothingToJudge.length === 0) return undefined;
  const what = c.nothingToJudge.map((n) => `${n.what} (${n.ids.length} checks skipped: ${someIds(n.ids)})`).join('; ');
  return (
    `NOTHING TO JUDGE: the target gave the harness ${what}. Those rules were ` +
    `not tested: a pass does not cover them.`
  );
}
