/**
 * Reads the spec from ../shared beside the repository, where CI lays it out. A clone alone has no
 * spec: the tests that compare the code with it then skip (`withSpec`), and the unit tier says so
 * in one line (`spec-presence.ts`).
 */
import { readFileSync } from 'node:fs';
import { it } from 'vitest';
import { SPEC_PATH, SPEC_PRESENT } from './spec-file.ts';

export { SPEC_MISSING_NOTE, SPEC_PATH, SPEC_PRESENT, SPEC_SHOWN } from './spec-file.ts';
/** `it` for a test that reads the spec document: skipped when the document is absent. */
export const withSpec = it.skipIf(!SPEC_PRESENT);

export const specText = (): string => readFileSync(SPEC_PATH, 'utf8');

/** Rows of the first markdown table after `heading`, as arrays of trimmed cells (header row dropped). */
export function tableAfter(heading: string): string[][] {
  const text = specText();
  const start = text.indexOf(heading);
  if (start < 0) throw new Error(`heading not in spec: ${heading}`);
  const lines = text.slice(start).split('\n');
  const rows: string[][] = [];
  let inTable = false;
  for (const line of lines.slice(1)) {
    if (line.startsWith('|')) {
      inTable = true;
      rows.push(
        line
          .split('|')
          .slice(1, -1)
          .map((c) => c.trim()),
      );
    } else if (inTable) break;
  }
  return rows.slice(2);
}

/** Every `## ` and `### ` heading of the spec, without the hashes. */
export function specHeadings(): string[] {
  return specText()
    .split('\n')
    .filter((l) => /^#{2,4} /.test(l))
    .map((l) => l.replace(/^#+ /, '').trim());
}
