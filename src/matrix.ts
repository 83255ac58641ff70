/**
 * The traceability matrix: every normative statement of the spec (src/statements.ts) → the checks
 * that enforce it → the reference faults that exercise those checks. Each check names the
 * statements it enforces (`Check.enforces`) and the faults it must catch (`Check.catches`), so the
 * rows are derived from the registry and no check id is written twice. Pure data and functions:
 * the registry and the fault list come in as arguments, so src/ never imports suites/ or
 * reference/. reports/matrix.ts renders it (`conform --list --matrix`, docs/COVERAGE.md).
 */
import type { Check } from './check.ts';
import { SPEC_STATEMENTS, type ClauseKind, type SpecStatement } from './statements.ts';

export {
  SPEC_STATEMENTS,
  SPEC_TABLES,
  type ClauseKind,
  type Outside,
  type SpecStatement,
  type StatementKey,
} from './statements.ts';

/** One row of the matrix: a statement, the checks that exist for it, and the faults that exercise them. */
export interface MatrixRow extends SpecStatement {
  /** Ids of the checks whose `enforces` names the statement, in registry order. */
  checkIds: string[];
  /** Profile fields the row's checks need (a check whose needs are missing skips). */
  needs: string[];
  /** Faults that one of the row's checks names in its `catches`. */
  faults: string[];
}

export interface Matrix {
  rows: MatrixRow[];
  /** Must checks that name no fault in their `catches`: the mutation suite never sees them fail. */
  neverFailed: string[];
  /** Checks of the registry that enforce no statement. */
  untraced: string[];
}

/** A fault as reference/faults/ describes it (only what the matrix reads). */
export interface MatrixFault {
  readonly name: string;
}

/** The checks that must fail when the fault is on: those naming it in their `catches`, in registry order. */
export const faultCatches = (checks: readonly Pick<Check, 'id' | 'catches'>[], fault: string): string[] =>
  checks.filter((c) => c.catches?.includes(fault)).map((c) => c.id);

/** Each fault with its expected catches: the checks of the registry that must fail when it is on. */
export const withCatches = <F extends MatrixFault>(
  faults: readonly F[],
  checks: readonly Pick<Check, 'id' | 'catches'>[],
): (F & { readonly catches: readonly string[] })[] =>
  faults.map((f) => ({ ...f, catches: faultCatches(checks, f.name) }));

/** Builds the matrix from the registry, the fault list and the statements. */
export function buildMatrix(
  checks: readonly Check[],
  faults: readonly MatrixFault[],
  statements: readonly SpecStatement[] = SPEC_STATEMENTS,
): Matrix {
  const traced = new Set<string>();
  const caughtBy = new Map(faults.map((f) => [f.name, faultCatches(checks, f.name)]));
  const rows = statements.map((st): MatrixRow => {
    const enforcing = checks.filter((c) => c.enforces.includes(st.key));
    const checkIds = enforcing.map((c) => c.id);
    for (const id of checkIds) traced.add(id);
    const needs = [...new Set(enforcing.flatMap((c) => c.needs))].sort();
    const fs = faults.filter((f) => caughtBy.get(f.name)!.some((id) => checkIds.includes(id))).map((f) => f.name);
    return { ...st, checkIds, needs, faults: fs };
  });
  const named = new Set([...caughtBy.values()].flat());
  const neverFailed = checks.filter((c) => c.severity === 'must' && !named.has(c.id)).map((c) => c.id);
  return { rows, neverFailed, untraced: checks.map((c) => c.id).filter((id) => !traced.has(id)) };
}

/** Rows whose checks no fault of the reference service exercises (candidates for new faults). */
export const unexercised = (m: Matrix): MatrixRow[] =>
  m.rows.filter((r) => r.checkIds.length > 0 && r.faults.length === 0 && CHECKS_MUST(r));
const CHECKS_MUST = (r: MatrixRow): boolean => !r.checkIds.every((id) => id.includes('.observe'));

/** Rows with neither a check nor a stated reason: what the completeness test forbids. */
export const uncovered = (m: Matrix): MatrixRow[] => m.rows.filter((r) => r.checkIds.length === 0 && !r.outside);

/** The kinds of statement in the order the matrix shows them, each with its title. */
export const KIND_TITLE: Readonly<Record<ClauseKind, string>> = {
  field: 'Frame and record fields',
  parameter: 'Request fields and query parameters',
  transition: 'State transitions',
  event: 'Events',
  limit: 'Limits',
  status: 'REST status numbers',
  notice: 'WebSocket notice codes',
  rule: 'Rules beside the tables',
};
export const KIND_ORDER: readonly ClauseKind[] = [
  'status',
  'notice',
  'field',
  'parameter',
  'limit',
  'transition',
  'event',
  'rule',
];
