/** The checks of the suite as text (`conform --list`): id, severity, tags, spec clause; one check a line. */
import type { Check } from '../src/check.ts';

/** One line per check, in the order given: id, severity, tags and spec clause, in aligned columns. */
export function checkListText(checks: readonly Check[]): string {
  const w = Math.max(...checks.map((c) => c.id.length));
  return checks
    .map(
      (c) =>
        `${c.id.padEnd(w)}  ${c.severity.padEnd(7)}  ${c.tags.join(',').padEnd(28)}` +
        `  ${c.clause.section}: ${c.clause.rule}`,
    )
    .join('\n');
}
