/** Text shared by every report: how a failure, an error and a way to reproduce read, and the coverage. */
import type { CheckResult, Evidence } from '../src/check.ts';
import { type Coverage, type RuleCoverage, type RuleStatus, uncheckedLabel } from '../src/coverage.ts';
import type { RunSummary } from '../src/runner.ts';
import { causeName, causesHeadline, type Cause, evidenceShowing } from './causes.ts';
import { statement } from '../src/statements.ts';
import { REPLAY_FILE } from '../src/explore/index.ts';

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

/** A statement as a failure names it: `field:price:price (Price record…: The mid-price, a decimal string.)`. */
export function ruleText(key: string): string {
  const st = statement(key);
  return st ? `${key} (${st.section}: ${st.item}: ${st.statement})` : key;
}

/**
 * What the explorer ran and found, as lines: its seed and counts, the model's transitions it
 * exercised and judged, and a failure's shrunk transcript with how to replay it. Empty for any
 * other check.
 */
export function explorationLines(r: Pick<CheckResult, 'exploration'>): string[] {
  const e = r.exploration;
  if (!e) return [];
  const lines =
    e.mode === 'replay'
      ? [`Replay: ${e.steps} steps run again; the failure ${e.reproduced ? 'reproduced' : 'did not reproduce'}`]
      : [
          `Exploration: seed ${e.seed}, ${e.budgetMs / 1000} s budget, ${e.sequences} sequences, ${e.steps} steps ` +
            `(the same sequences again: --seed ${e.seed})`,
        ];
  lines.push('Model transitions exercised (judged):');
  for (const t of e.transitions) lines.push(`  ${t.transition}: ${t.exercised} (${t.judged})`);
  const f = e.failure;
  if (!f) return lines;
  lines.push(
    `Failure after ${f.stepsToCatch} steps (sequence ${f.sequence}), shrunk from ${f.foundSteps} to ` +
      `${f.shrunkSteps} steps in ${f.shrinkRuns} runs, ` +
      `${f.confirmed ? 'confirmed by a run of its own' : 'NOT confirmed by a last run'}:`,
    ...f.transcript.map((l) => `  ${l}`),
    `Replay it: conform replay ${REPLAY_FILE} with the same target options (the file is in the report directory)`,
  );
  return lines;
}

/** Every line a failed or errored result shows: Received / Expected (spec: …) per violation, then Reproduce. */
export function failureLines(r: CheckResult, maxEvidence = 40): string[] {
  const lines: string[] = [];
  if (r.outcome === 'error') lines.push(`Error ${r.errorCode ?? ''}: ${r.reason ?? ''}`.replace(/ +:/, ':'));
  for (const v of r.violations) {
    lines.push(`Received: ${v.received}`);
    lines.push(`Expected (spec: ${clauseText(r)}): ${v.expected}`);
    if (v.rule) lines.push(`Breaks ${ruleText(v.rule)}${v.seenBy ? `; seen by ${v.seenBy}` : ''}`);
  }
  lines.push(...explorationLines(r));
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

/**
 * The lines that lead a report with the broken rules: the headline, then each rule with the checks
 * that failed on it under it, and how many more met it.
 */
export function causeLines(results: readonly CheckResult[], causes: readonly Cause[]): string[] {
  const headline = causesHeadline(results, causes);
  if (!headline) return [];
  const lines = [headline];
  for (const c of causes) {
    lines.push(`  ${causeName(c)}, for example: ${truncate(c.example, 200)}`);
    for (const id of c.failed) lines.push(`    ${id}`);
    if (c.alsoSeen.length) lines.push(`    (also seen by ${c.alsoSeen.join(', ')})`);
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
 * `74 of 83 must checks ran (89.1 %); 9 skipped: profile has no keys.cryptoOnly (3: …); …`: what
 * the checks did, beside the rule figure.
 */
export function coverageLine(c: Coverage): string {
  const head = `${c.mustRan} of ${c.mustTotal} must checks ran (${c.mustPercent} %)`;
  const skipped =
    c.mustSkipped === 0
      ? ''
      : `; ${c.mustSkipped} ` +
        `skipped: ${c.skipped.map((g) => `${g.reason} (${g.ids.length}: ${someIds(g.ids)})`).join('; ')}`;
  return `${head}${skipped}`;
}

/** Kinds of unchecked rules whose groups list what would unlock them; the others are counted only. */
const UNLOCKED_BY = new Set(['key', 'stream', 'profile', 'operator']);

/**
 * The rule figure every report states, word for word: `Rules: 84 of 97 stated rules checked, 3
 * partly; 10 need another key (keys.cryptoOnly: 3, …); 13 need an operator state (maintenance: 3,
 * …); 72 of the 84 rules that need no operator state (85.7 %)`, then the minimum when one was set.
 */
export function ruleLine(c: Coverage): string {
  const r = c.rules;
  const parts = [
    `Rules: ${r.checked - r.partly} of ${r.total} stated rules checked${r.partly ? `, ${r.partly} partly` : ''}`,
  ];
  for (const g of r.unchecked) {
    const what = UNLOCKED_BY.has(g.kind) ? ` (${g.what.map((w) => `${w.label}: ${w.count}`).join(', ')})` : '';
    // The other kinds have no short need: --list-unchecked gives each rule's reason.
    parts.push(`${g.count} ${uncheckedLabel(g.kind)}${what}`);
  }
  parts.push(`${r.gateChecked} of the ${r.gateTotal} rules that need no operator state (${r.percent} %)`);
  const gate =
    c.minimum === undefined
      ? ''
      : c.met
        ? `, minimum ${c.minimum} %: met`
        : `, BELOW THE MINIMUM of ${c.minimum} %: the run fails`;
  return `${parts.join('; ')}${gate}`;
}

/** Whether some stated rule was not checked in full: a pass then reads as partial. */
export const partialRun = (r: RuleCoverage): boolean => r.checked - r.partly < r.total;

/**
 * `FAIL`, `INCONCLUSIVE: network`, `PASS (partial)` or `PASS`: a pass that left rules unchecked
 * never reads as a full one, and a run the network kept from a verdict never reads as failed.
 */
export function verdictWord(s: RunSummary): string {
  if (s.verdict === 'fail') return 'FAIL';
  if (s.verdict === 'inconclusive') return `INCONCLUSIVE: ${(s.inconclusive ?? ['network']).join(', ')}`;
  return partialRun(s.coverage.rules) ? 'PASS (partial)' : 'PASS';
}

/**
 * The closing line: `PASS (partial): 84 of 97 stated rules checked — 30 passed, …`; a partial pass
 * says how to list the rest.
 */
export function verdictLine(s: RunSummary, target: string): string {
  const r = s.coverage.rules;
  const word = verdictWord(s);
  const counts =
    `${s.pass} passed, ${s.fail} failed, ${s.error} errors, ${s.skip} skipped of ${s.total} checks ` +
    `in ${(s.durationMs / 1000).toFixed(1)} s (target ${target})`;
  if (word !== 'PASS (partial)') return `${word}: ${counts}`;
  const left = r.total - (r.checked - r.partly);
  return (
    `${word}: ${r.checked - r.partly} of ${r.total} stated rules checked — ${counts}; ` +
    `${left} not checked in full: run with --list-unchecked, or see the JSON or HTML report`
  );
}

/** One line per rule not checked in full: `name (key): why; unlock: what`. */
export function uncheckedLines(r: RuleCoverage): string[] {
  const line = (x: RuleStatus): string =>
    `${x.state === 'partly' ? 'partly' : uncheckedLabel(x.kind!)}: ${x.name} (${x.key})` +
    `${x.reason ? ` — ${x.reason}` : ''}${x.unlock ? `; unlock: ${x.unlock}` : ''}`;
  return r.rules.filter((x) => x.state !== 'checked').map(line);
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
