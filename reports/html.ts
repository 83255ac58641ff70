/**
 * The HTML report: one self-contained file (inline CSS, no scripts, no external resources).
 * An overview comes first (verdict, outcomes by spec section and by tag, must-check coverage,
 * changes against a baseline); then views picked with CSS-only tabs: the failures, each folded to
 * one Received/Expected line with its reproduction behind a disclosure; every check with a filter
 * by outcome; the observed behaviour; and the traceability matrix of this run.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CheckResult, Outcome } from '../src/check.ts';
import type { RunEvent, RunHandler } from '../src/runner.ts';
import { type Coverage, uncheckedLabel } from '../src/coverage.ts';
import { ruleOf, SPEC_STATEMENTS, statement } from '../src/statements.ts';
import { causeName, causesHeadline, causesOf, evidenceShowing } from './causes.ts';
import {
  coverageLine,
  nothingToJudgeLine,
  reproduceLines,
  ruleLine,
  ruleText,
  truncate,
  valueText,
  verdictWord,
  explorationLines,
} from './format.ts';
import { escapeHtml as esc } from './write.ts';

export const HTML_REPORT_FILE = 'conform-report.html';
type RunEnd = Extract<RunEvent, { type: 'run-end' }>;

/** Filter and bar order: what needs attention first. */
const OUTCOMES: readonly Outcome[] = ['fail', 'error', 'skip', 'pass'];
/** Column order of the count tables, as the verdict line reads. */
const COLUMNS: readonly Outcome[] = ['pass', 'fail', 'error', 'skip'];
const VIEWS = [
  ['failures', 'Failures'],
  ['checks', 'Every check'],
  ['observed', 'Observed behaviour'],
  ['matrix', 'Traceability matrix'],
] as const;

// The tabs and the outcome filter are radio inputs placed before <main>, so `:checked ~ main …`
// selectors show one view and hide filtered rows without a script.
const CSS = [
  'body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:76rem;padding:0 1rem;color:#222}',
  'h1{margin:.2rem 0 .4rem}h2{margin:1.4rem 0 .4rem;font-size:1.15rem}',
  '.verdict{font-size:1.3rem;font-weight:700;padding:.4rem .8rem;border-radius:4px;display:inline-block;' +
    'margin:.3rem 0}',
  '.v-pass{background:#dcf5dc;color:#125212}.v-fail{background:#fde0e0;color:#8a1010}' +
    '.v-inconclusive{background:#fff3cd;color:#6b4e00}',
  '.cards{display:flex;gap:.6rem;flex-wrap:wrap;margin:.6rem 0}' +
    '.card{border:1px solid #ddd;border-radius:4px;padding:.4rem .8rem;min-width:6rem}',
  '.card b{display:block;font-size:1.3rem}' +
    '.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(22rem,1fr));gap:1rem}',
  'table{border-collapse:collapse;width:100%;margin:.4rem 0}' +
    'td,th{border:1px solid #ddd;padding:.2rem .45rem;text-align:left;vertical-align:top}',
  'th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}',
  '.o-pass{color:#125212}.o-fail,.o-error{color:#8a1010;font-weight:700}.o-skip{color:#777}',
  '.bar{display:flex;height:.6rem;min-width:8rem;border-radius:2px;overflow:hidden;background:#eee}' +
    '.bar i{display:block}',
  '.b-pass{background:#3a9a3a}.b-fail{background:#c33}.b-error{background:#e08a00}.b-skip{background:#bbb}',
  'pre{background:#f6f6f6;padding:.5rem;overflow-x:auto;white-space:pre;margin:.3rem 0;font-size:12.5px}',
  'details.failure{border-left:4px solid #c33;margin:.5rem 0;padding:.2rem .6rem;background:#fffafa}',
  'details.failure.is-error{border-left-color:#e08a00;background:#fffbf3}',
  'details.failure summary{cursor:pointer;font-weight:400;color:#222}details.failure summary code.id{font-weight:700}',
  '.line{font-family:ui-monospace,monospace;font-size:12.5px;color:#444}',
  'input.ctl{position:absolute;opacity:0;pointer-events:none}',
  // "show all" of a reproduction: a checkbox, not a nested <details>, so a failure keeps one <summary>.
  'pre.repro-all{display:none}input.ctl:checked+label+pre.repro-all{display:block}' +
    'label.show-all{cursor:pointer;color:#06c}',
  'nav.tabs{display:flex;gap:.3rem;border-bottom:2px solid #ccc;margin-top:1.6rem}',
  'nav.tabs label,.filter label{cursor:pointer;padding:.3rem .8rem;border:1px solid #ccc;border-bottom:none;' +
    'border-radius:4px 4px 0 0;background:#f4f4f4}',
  '.filter label{border-radius:4px;border-bottom:1px solid #ccc;padding:.15rem .6rem}',
  '.view{display:none;padding-top:.6rem}',
  `${VIEWS.map(([v]) => `#t-${v}:checked~main #${v}`).join(',')}{display:block}`,
  `${VIEWS.map(([v]) => `#t-${v}:checked~main label[for=t-${v}]`).join(',')}` +
    '{background:#fff;font-weight:700;border-color:#888}',
  `${OUTCOMES.map((o) => `#f-${o}:checked~main #checks tr.row:not(.o-${o})`).join(',')}{display:none}`,
  `${['all', ...OUTCOMES].map((o) => `#f-${o}:checked~main label[for=f-${o}]`).join(',')}` +
    '{background:#fff;font-weight:700;border-color:#888}',
].join('\n');

interface Counts {
  pass: number;
  fail: number;
  error: number;
  skip: number;
  total: number;
  /** The first failed or errored check of the group, where its counts link to. */
  firstFailed?: string;
}
const emptyCounts = (): Counts => ({ pass: 0, fail: 0, error: 0, skip: 0, total: 0 });

function countBy(results: readonly CheckResult[], keys: (r: CheckResult) => readonly string[]): Map<string, Counts> {
  const m = new Map<string, Counts>();
  for (const r of results) {
    for (const k of keys(r)) {
      const c = m.get(k) ?? emptyCounts();
      c[r.outcome]++;
      c.total++;
      if ((r.outcome === 'fail' || r.outcome === 'error') && c.firstFailed === undefined) c.firstFailed = r.id;
      m.set(k, c);
    }
  }
  return m;
}

const bar = (c: Counts): string =>
  `<span class="bar" title="${OUTCOMES.map((o) => `${c[o]} ${o}`).join(', ')}">` +
  `${OUTCOMES.map((o) => (c[o] ? `<i class="b-${o}" style="width:${(100 * c[o]) / c.total}%"></i>` : '')).join('')}` +
  `</span>`;

function countsTable(title: string, m: Map<string, Counts>): string {
  const rows = [...m.entries()].sort(
    (a, b) => b[1].fail + b[1].error - (a[1].fail + a[1].error) || a[0].localeCompare(b[0]),
  );
  const head = '<th>pass</th><th>fail</th><th>error</th><th>skip</th><th></th></tr>';
  // A count of failures, and a group that has some, link to the group's first failure.
  const toFailure = (c: Counts, text: string): string =>
    c.firstFailed ? `<a href="#${esc(c.firstFailed)}">${text}</a>` : text;
  const cell = (c: Counts, o: Outcome): string =>
    c[o] && (o === 'fail' || o === 'error')
      ? `<td class="n o-${o}">${toFailure(c, String(c[o]))}</td>`
      : `<td class="n">${c[o]}</td>`;
  const row = ([k, c]: [string, Counts]): string =>
    `<tr><td>${toFailure(c, esc(k))}</td>${COLUMNS.map((o) => cell(c, o)).join('')}<td>${bar(c)}</td></tr>`;
  return `<div><h2>${esc(title)}</h2><table><tr><th>${esc(title.replace(/^By /, ''))}</th>${head}
${rows.map(row).join('\n')}</table></div>`;
}

/** The run's rule and must-check coverage (src/coverage.ts), in the words every report uses. */
const mustCoverage = (c: Coverage): string =>
  `<h2>Coverage</h2><p class="rules">${esc(ruleLine(c))}</p>` +
  `<p class="coverage">Checks: ${esc(coverageLine(c))}</p>`;

function changesSection(e: RunEnd): string {
  if (!e.changes)
    return '<h2>Changes against the baseline</h2><p>No baseline given (<code>--baseline FILE</code>).</p>';
  if (e.changes.length === 0)
    return '<h2>Changes against the baseline</h2><p>None: every verdict and observation is as before.</p>';
  const rows = e.changes.map(
    (c) =>
      `<tr><td><code>${esc(c.id)}</code></td><td>${esc(c.kind)}${c.name ? ` ${esc(c.name)}` : ''}</td>` +
      `<td>${esc(valueText(c.before))}</td><td>${esc(valueText(c.after))}</td></tr>`,
  );
  return (
    `<h2>Changes against the baseline (${e.changes.length})</h2>` +
    `<table><tr><th>check</th><th>what</th><th>before</th><th>after</th></tr>${rows.join('')}</table>`
  );
}

/** The one line a folded failure shows: the first violation (or the error), and how many more there are. */
function foldedLine(r: CheckResult): string {
  if (r.outcome === 'error') return `Error ${r.errorCode ?? ''}: ${r.reason ?? ''}`;
  const v = r.violations[0];
  if (!v) return r.reason ?? '';
  const more = r.violations.length > 1 ? ` (+${r.violations.length - 1} more)` : '';
  return `Received ${truncate(v.received, 110)} · Expected ${truncate(v.expected, 110)}${more}`;
}

function failureDetails(r: CheckResult): string {
  const showing = evidenceShowing(r);
  const repro = reproduceLines(showing);
  const all =
    showing.length < r.evidence.length
      ? `<input class="ctl" type="checkbox" id="all-${esc(r.id)}">` +
        `<label class="show-all" for="all-${esc(r.id)}">show all ${r.evidence.length} exchanges</label>` +
        `<pre class="repro-all">${esc(reproduceLines(r.evidence).join('\n'))}</pre>`
      : '';
  const violations = r.violations
    .map(
      (v) =>
        `<tr><td>${esc(v.received)}</td><td>${esc(v.expected)}</td>` +
        `<td>${v.rule ? esc(ruleText(v.rule)) : ''}` +
        `${v.seenBy ? ` (seen by <code>${esc(v.seenBy)}</code>)` : ''}</td></tr>`,
    )
    .join('');
  const summary =
    `<summary><code class="id">${esc(r.id)}</code> <span class="o-${r.outcome}">${r.outcome.toUpperCase()}</span>` +
    `<br><span class="line">${esc(foldedLine(r))}</span></summary>`;
  return `<details class="failure is-${r.outcome}" id="${esc(r.id)}">${summary}
<p>${esc(r.title)}<br>Spec: <em>${esc(r.clause.section)}</em>: ${esc(r.clause.rule)}</p>
${violations ? `<table><tr><th>Received</th><th>Expected</th><th>Breaks</th></tr>${violations}</table>` : ''}
${repro.length ? `<p>Reproduce with:</p><pre class="repro">${esc(repro.join('\n'))}</pre>${all}` : ''}</details>`;
}

/** The broken rules, each with the checks that failed on it (links to their failures) and how many met it. */
function causesBlock(results: readonly CheckResult[]): string {
  const causes = causesOf(results);
  const headline = causesHeadline(results, causes);
  if (!headline) return '';
  const items = causes.map(
    (c) =>
      `<li>${esc(causeName(c))}: failed ` +
      `${c.failed.map((id) => `<a href="#${esc(id)}"><code>${esc(id)}</code></a>`).join(', ')}` +
      `${c.alsoSeen.length ? `; also seen by ${c.alsoSeen.length} checks` : ''}</li>`,
  );
  return `<section id="causes"><h2>${esc(headline)}</h2><ul>${items.join('')}</ul></section>`;
}

/**
 * The spec statements of the traceability matrix: whether this run checked each, the outcome of
 * the checks that enforce it, and for a rule not checked in full why and what would check it.
 */
function matrixView(results: readonly CheckResult[], c: Coverage): string {
  const byId = new Map(results.map((r) => [r.id, r]));
  const statement = new Map(SPEC_STATEMENTS.map((st) => [st.key as string, st]));
  const rows = c.rules.rules.map((rule) => {
    const st = statement.get(rule.key) ?? { section: '', item: rule.name, statement: '' };
    const checks = rule.checks.map((id) => `<code class="o-${byId.get(id)!.outcome}">${esc(id)}</code>`).join(' ');
    const state =
      rule.state === 'checked'
        ? '<span class="o-pass">checked</span>'
        : `<span class="o-skip">${rule.state === 'partly' ? 'partly' : esc(uncheckedLabel(rule.kind!))}</span>`;
    const why = [rule.reason, rule.unlock ? `unlock: ${rule.unlock}` : undefined].filter(Boolean).join('; ');
    return (
      `<tr class="rule-${rule.state}"><td>${esc(st.section)}</td><td>${esc(st.item)}</td>` +
      `<td>${esc(st.statement)}</td><td>${state}</td>` +
      `<td>${checks}${why ? ` <span class="o-skip">${esc(why)}</span>` : ''}</td></tr>`
    );
  });
  return `<p>${esc(ruleLine(c))}</p>
<p>Each statement of the spec, whether this run checked it, and the checks that enforce it, coloured by outcome.</p>
<table><tr><th>section</th><th>item</th><th>statement</th><th>rule</th><th>checks</th></tr>${rows.join('\n')}</table>`;
}

/**
 * The spec sections a result counts under: a failure under the sections of the rules it broke (a
 * rule stated on both channels under its first statement's), anything else under its clause.
 */
function sectionsOf(r: CheckResult): string[] {
  if (r.outcome !== 'fail') return [r.clause.section];
  const broken = r.violations.flatMap((v) => (v.rule ? [statement(ruleOf(v.rule))?.section ?? r.clause.section] : []));
  return broken.length ? [...new Set(broken)] : [r.clause.section];
}

/** What the explorer ran, judged and found, one block per result that explored. */
const explorations = (e: RunEnd): string =>
  e.results
    .filter((r) => r.exploration)
    .map((r) => `<h2>Exploration: <code>${esc(r.id)}</code></h2><pre>${esc(explorationLines(r).join('\n'))}</pre>`)
    .join('\n');

/** The whole page of a finished run. */
export function htmlReport(e: RunEnd): string {
  const s = e.summary;
  const failed = e.results.filter((r) => r.outcome === 'fail' || r.outcome === 'error');
  const observations = e.results.flatMap((r) => r.observations.map((o) => ({ r, o })));
  const total: Counts = { pass: s.pass, fail: s.fail, error: s.error, skip: s.skip, total: s.total };
  const checkRows = e.results.map(
    (r) =>
      `<tr class="row o-${r.outcome}"><td><code>${esc(r.id)}</code></td><td ` +
      `class="o-${r.outcome}">${r.outcome}</td><td>${esc(r.severity)}</td><td>${esc(r.clause.section)}` +
      `: ${esc(r.clause.rule)}</td><td>${esc(r.reason ?? r.expectation)}</td></tr>`,
  );
  const controls = [
    ...VIEWS.map(
      ([v], i) =>
        `<input class="ctl" type="radio" name="view" id="t-${v}"${i === (failed.length ? 0 : 1) ? ' checked' : ''}>`,
    ),
    ...['all', ...OUTCOMES].map(
      (o) => `<input class="ctl" type="radio" name="outcome" id="f-${o}"${o === 'all' ? ' checked' : ''}>`,
    ),
  ].join('');
  const count = (v: string): number =>
    v === 'failures'
      ? failed.length
      : v === 'checks'
        ? s.total
        : v === 'observed'
          ? observations.length
          : SPEC_STATEMENTS.length;
  const head =
    '<meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">' +
    `<title>conform report: ${esc(e.target.name ?? e.target.rest)}</title><style>${CSS}</style>`;
  const target =
    `<code>${esc(e.target.rest)}</code>${e.target.ws ? ` and <code>${esc(e.target.ws)}</code>` : ''}` +
    `${e.target.embedded ? ' (embedded reference service)' : ''}`;
  const run = `${esc(e.startedAt)} to ${esc(e.finishedAt)} (${(s.durationMs / 1000).toFixed(1)} s)`;
  const counts = `${s.pass} passed, ${s.fail} failed, ${s.error} errors, ${s.skip} skipped of ${s.total}`;
  const verdict = `${verdictWord(s)}: ${counts}`;
  const nothing = nothingToJudgeLine(s.coverage);
  const cards =
    OUTCOMES.map((o) => {
      const first = (o === 'fail' || o === 'error') && e.results.find((r) => r.outcome === o);
      const n = first ? `<a href="#${esc(first.id)}">${total[o]}</a>` : String(total[o]);
      return `<div class="card"><b class="o-${o}">${n}</b>${o}</div>`;
    }).join('') + `<div class="card"><b>${s.observations}</b>observations</div>`;
  const failures = failed.length
    ? '<p>Each failure folded to its first Received / Expected; open it for every violation, the spec clause and ' +
      `how to reproduce it.</p>${failed.map(failureDetails).join('\n')}`
    : '<p>None.</p>';
  const filters = ['all', ...OUTCOMES]
    .map((o) => `<label for="f-${o}">${o}${o === 'all' ? '' : ` (${total[o as Outcome]})`}</label>`)
    .join(' ');
  const observedRows = observations.map(
    ({ r, o }) =>
      `<tr><td><code>${esc(r.id)}</code></td><td>${esc(o.name)}</td>` +
      `<td><code>${esc(valueText(o.value, 400))}</code></td><td>${esc(o.note ?? '')}</td></tr>`,
  );
  return `<!doctype html>
<html lang="en"><head>${head}</head>
<body>
${controls}
<main>
<h1>conform report</h1>
<p>Target: ${target}<br>Run: ${run}</p>
<p class="verdict v-${s.verdict}" id="verdict">${verdict}</p>
<p class="rules">${esc(ruleLine(s.coverage))}</p>
${nothing ? `<p class="verdict v-fail nothing-to-judge">${esc(nothing)}</p>` : ''}
${causesBlock(e.results)}
<div class="cards">${cards}</div>
<section id="overview">
<div class="grid">${countsTable('By spec section', countBy(e.results, sectionsOf))}${countsTable(
    'By tag',
    countBy(e.results, (r) => r.tags),
  )}</div>
<div class="grid"><div>${mustCoverage(s.coverage)}</div><div>${changesSection(e)}</div></div>
</section>
<nav class="tabs">${VIEWS.map(([v, label]) => `<label for="t-${v}">${label} (${count(v)})</label>`).join('')}</nav>
<section class="view" id="failures">
${failures}
</section>
<section class="view" id="checks">
${explorations(e)}
<p class="filter">Show: ${filters}</p>
<table><tr><th>check</th><th>verdict</th><th>severity</th><th>spec clause</th><th>expectation / reason</th></tr>
${checkRows.join('\n')}
</table>
</section>
<section class="view" id="observed">
<p>What the target did where the spec says "not shown": recorded, never failing.</p>
<table><tr><th>check</th><th>observation</th><th>value</th><th>note</th></tr>
${observedRows.join('\n')}
</table>
</section>
<section class="view" id="matrix">
${matrixView(e.results, s.coverage)}
</section>
</main>
</body></html>
`;
}

/** Writes `conform-report.html` into `outDir` when the run ends. */
export function htmlHandler(outDir: string, written: (file: string) => void = () => {}): RunHandler {
  return {
    async handle(e) {
      if (e.type !== 'run-end') return;
      await mkdir(outDir, { recursive: true });
      const file = path.join(outDir, HTML_REPORT_FILE);
      await writeFile(file, htmlReport(e));
      written(file);
    },
  };
}
