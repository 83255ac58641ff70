/**
 * The HTML report: one self-contained file (inline CSS, no scripts, no external resources): the
 * verdict, failures first with their evidence, the spec clause of every check, and the observed
 * behaviour where the spec is silent.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CheckResult } from '../src/check.ts';
import type { RunEvent, RunHandler } from '../src/runner.ts';
import { clauseText, coverageLine, failureLines, nothingToJudgeLine, valueText } from './format.ts';
import { printable } from '../src/redact.ts';

export const HTML_REPORT_FILE = 'conform-report.html';

const esc = (s: string): string => printable(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const CSS = `body{font:14px/1.45 system-ui,sans-serif;margin:2rem;max-width:72rem;color:#222}
h1{margin:.2rem 0}.verdict{font-size:1.4rem;font-weight:700;padding:.4rem .8rem;border-radius:4px;display:inline-block}
.v-pass{background:#dcf5dc;color:#125212}.v-fail{background:#fde0e0;color:#8a1010}
table{border-collapse:collapse;width:100%;margin:.6rem 0}td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
.o-pass{color:#125212}.o-fail,.o-error{color:#8a1010;font-weight:700}.o-skip{color:#777}
pre{background:#f6f6f6;padding:.6rem;overflow:auto;white-space:pre-wrap;word-break:break-all}
section.failure{border-left:4px solid #c33;padding-left:1rem;margin:1rem 0}code{font-size:.95em}`;

function failureSection(r: CheckResult): string {
  return `<section class="failure" id="${esc(r.id)}"><h3><code>${esc(r.id)}</code> <span class="o-${r.outcome}">${r.outcome.toUpperCase()}</span></h3>
<p>${esc(r.title)}<br>Spec: <em>${esc(clauseText(r))}</em></p>
<pre>${esc(failureLines(r, 200).join('\n'))}</pre></section>`;
}

/** The whole page of a finished run. */
export function htmlReport(e: Extract<RunEvent, { type: 'run-end' }>): string {
  const s = e.summary;
  const failed = e.results.filter((r) => r.outcome === 'fail' || r.outcome === 'error');
  const observations = e.results.flatMap((r) => r.observations.map((o) => ({ r, o })));
  const rows = e.results.map((r) => `<tr><td><code>${esc(r.id)}</code></td><td class="o-${r.outcome}">${r.outcome}</td><td>${esc(r.severity)}</td><td>${esc(clauseText(r))}</td><td>${esc(r.reason ?? r.expectation)}</td></tr>`);
  const changes = e.changes && e.changes.length > 0
    ? `<h2>Changes against the baseline</h2><table><tr><th>check</th><th>what</th><th>before</th><th>after</th></tr>${e.changes.map((c) => `<tr><td><code>${esc(c.id)}</code></td><td>${esc(c.kind)}${c.name ? ` ${esc(c.name)}` : ''}</td><td>${esc(valueText(c.before))}</td><td>${esc(valueText(c.after))}</td></tr>`).join('')}</table>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>conform report: ${esc(e.target.name ?? e.target.rest)}</title><style>${CSS}</style></head>
<body>
<h1>conform report</h1>
<p>Target: <code>${esc(e.target.rest)}</code>${e.target.ws ? ` and <code>${esc(e.target.ws)}</code>` : ''}${e.target.embedded ? ' (embedded reference service)' : ''}<br>Run: ${esc(e.startedAt)} to ${esc(e.finishedAt)}</p>
<p class="verdict v-${s.verdict}">${s.verdict === 'pass' ? 'PASS' : 'FAIL'}: ${s.pass} passed, ${s.fail} failed, ${s.error} errors, ${s.skip} skipped of ${s.total}</p>
<p class="coverage">Coverage: ${esc(coverageLine(s.coverage))}</p>
${nothingToJudgeLine(s.coverage) ? `<p class="verdict v-fail nothing-to-judge">${esc(nothingToJudgeLine(s.coverage)!)}</p>` : ''}
<h2>Failures and errors (${failed.length})</h2>
${failed.length ? failed.map(failureSection).join('\n') : '<p>None.</p>'}
${changes}
<h2>Observed behaviour (${observations.length})</h2>
<p>What the target did where the spec says "not shown": recorded, never failing.</p>
<table><tr><th>check</th><th>observation</th><th>value</th><th>note</th></tr>
${observations.map(({ r, o }) => `<tr><td><code>${esc(r.id)}</code></td><td>${esc(o.name)}</td><td><code>${esc(valueText(o.value, 400))}</code></td><td>${esc(o.note ?? '')}</td></tr>`).join('\n')}
</table>
<h2>Every check</h2>
<table><tr><th>check</th><th>verdict</th><th>severity</th><th>spec clause</th><th>expectation / reason</th></tr>
${rows.join('\n')}
</table>
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
