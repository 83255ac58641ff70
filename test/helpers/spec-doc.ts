/** Reads the spec from ../shared beside the repo, as CI lays it out. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SPEC_FILE } from '../../src/spec.ts';

export const SPEC_PATH = fileURLToPath(new URL(`../../../shared/${SPEC_FILE}`, import.meta.url));
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
