/**
 * The traceability matrix (src/matrix.ts) as text: plain for the terminal (`conform --list
 * --matrix`), Markdown for docs/COVERAGE.md (scripts/gen-coverage.ts).
 */
import { KIND_ORDER, KIND_TITLE, type Matrix, type MatrixRow, unexercised, uncovered } from '../src/matrix.ts';

const itemLabel = (r: MatrixRow): string =>
  r.kind === 'field' || r.kind === 'parameter' ? `${r.section.split(' (')[0]}: ${r.item}` : r.item;

/** Plain-text matrix for the terminal (`conform --list --matrix`). */
export function formatMatrix(m: Matrix): string {
  const out: string[] = [];
  for (const kind of KIND_ORDER) {
    const rows = m.rows.filter((r) => r.kind === kind);
    out.push(`${KIND_TITLE[kind]}`);
    for (const r of rows) {
      out.push(`  ${itemLabel(r)} — ${r.statement}`);
      out.push(
        `      checks: ${r.checkIds.length ? r.checkIds.join(', ') : 'none'}` +
          `${r.needs.length ? `  (needs ${r.needs.join(', ')})` : ''}`,
      );
      if (r.faults.length) out.push(`      faults: ${r.faults.join(', ')}`);
      if (r.outside) out.push(`      outside: ${r.outside.reason}; probe: ${r.outside.probe}`);
      if (r.operatorState) out.push(`      operator state: ${r.operatorState} (counted apart)`);
    }
    out.push('');
  }
  const gaps = uncovered(m);
  out.push(
    `${m.rows.length} statements: ${m.rows.filter((r) => r.checkIds.length > 0).length} ` +
      `with checks, ${m.rows.filter((r) => r.outside).length} with a reason why (part of) ` +
      `it cannot be checked from outside, ${gaps.length} with neither; ` +
      `${m.rows.filter((r) => r.operatorState).length} reached only through an operator state`,
  );
  const idle = unexercised(m);
  if (idle.length)
    out.push(
      `${idle.length} ${idle.length === 1 ? 'statement has' : 'statements have'} checks that no ` +
        `reference fault exercises: ${idle.map((r) => `${r.section}: ${r.item}`).join('; ')}`,
    );
  if (m.neverFailed.length) out.push(`must checks no fault names: ${m.neverFailed.join(', ')}`);
  if (m.untraced.length) out.push(`checks no statement names: ${m.untraced.join(', ')}`);
  return `${out.join('\n')}\n`;
}

const cell = (t: string): string => t.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (ids: readonly string[]): string => (ids.length ? ids.map((i) => `\`${i}\``).join(', ') : '—');

/** The matrix as Markdown (docs/COVERAGE.md), one table per kind of statement. */
export function matrixMarkdown(m: Matrix, header: string): string {
  const out: string[] = [header.trimEnd(), ''];
  const withChecks = m.rows.filter((r) => r.checkIds.length > 0).length;
  out.push(
    `${m.rows.length} statements; ${withChecks} traced to ` +
      `checks; ${m.rows.filter((r) => r.outside).length} say why (part of) the statement cannot be checked ` +
      `from outside and which profile probe would make it checkable; ${uncovered(m).length} have neither. ` +
      `${m.rows.filter((r) => r.operatorState).length} are reached only through a state the target's operator ` +
      'stages: the rule figure of a run counts them apart, and `--min-coverage` leaves them out.',
    '',
  );
  for (const kind of KIND_ORDER) {
    out.push(
      `## ${KIND_TITLE[kind]}`,
      '',
      '| Spec | Statement | Checks | Faults | Cannot be checked from outside because / probe |',
      '|---|---|---|---|---|',
    );
    for (const r of m.rows.filter((x) => x.kind === kind)) {
      const staged = r.operatorState ? ` Operator state: ${r.operatorState}.` : '';
      const outside = r.outside
        ? `${r.outside.reason}. Probe: ${r.outside.probe}${staged && `.${staged}`}`
        : staged.trim();
      const needs = r.needs.length ? ` (needs ${r.needs.map((n) => `\`${n}\``).join(', ')})` : '';
      out.push(
        `| ${cell(`${r.section}: ${r.item}`)} | ${cell(r.statement)} | ${cell(code(r.checkIds) + needs)} ` +
          `| ${cell(code(r.faults))} | ${cell(outside)} |`,
      );
    }
    out.push('');
  }
  const idle = unexercised(m);
  if (idle.length)
    out.push(
      '## Statements no fault exercises yet',
      '',
      'Their checks exist, but no fault of the reference service breaks them, so ' +
        'the mutation suite does not prove those checks can fail:',
      '',
      ...idle.map((r) => `- ${r.section}: ${r.item} (${code(r.checkIds)})`),
      '',
    );
  if (m.neverFailed.length) out.push('## Must checks no fault names', '', code(m.neverFailed), '');
  if (m.untraced.length) out.push('## Checks no statement names', '', code(m.untraced), '');
  return `${out.join('\n').trimEnd()}\n`;
}
