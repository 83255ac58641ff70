/**
 * Fails when a tracked TypeScript or JavaScript line is longer than 120 characters, or a file of
 * product code is longer than 500 lines, and lists each as file:line or file. Written by hand
 * because Biome's formatter wraps code at 120 columns but leaves comments and strings alone, and
 * Biome has a rule for a function's length but none for a line's or a file's; ESLint's max-len and
 * max-lines would mean a second linter and its TypeScript parser for these two rules. Functions
 * are held to 80 lines by Biome (`complexity/noExcessiveLinesPerFunction` in biome.json).
 *
 * Usage: tsx scripts/lengths.ts (from `npm run lint`).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const MAX_LINE = 120;
/** A file longer than this holds several kinds of thing: split it by kind (CONTRIBUTING.md). */
const MAX_FILE_LINES = 500;
/** The folders of product code; tests, scripts and docs are not held to a file length. */
const PRODUCT = /^(bin|src|suites|reference|load|reports)\//;
/** Tables of data, one record a few lines each, which read best whole; each says why it is long. */
const DATA_TABLES = new Set([
  // The spec's stated rules, one record each, in the spec's order.
  'src/statements.ts',
]);

const files = execFileSync('git', ['ls-files', '-z', '--', '*.ts', '*.js', '*.mjs'], { encoding: 'utf8' })
  .split('\0')
  .filter((f) => f !== '');
const long: string[] = [];
for (const file of files) {
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    // Characters as a reader counts them: code points, not UTF-16 units.
    const length = [...line].length;
    if (length > MAX_LINE) long.push(`${file}:${i + 1}: ${length} characters`);
  });
  // A file's lines as `wc -l` counts them: its final newline ends the last line.
  const count = lines.length - (lines.at(-1) === '' ? 1 : 0);
  if (PRODUCT.test(file) && !DATA_TABLES.has(file) && count > MAX_FILE_LINES)
    long.push(`${file}: ${count} lines, over ${MAX_FILE_LINES}`);
}
if (long.length > 0) {
  process.stderr.write(
    `${long.join('\n')}\n${long.length} over the limits: a line ${MAX_LINE} characters, ` +
      `a file of product code ${MAX_FILE_LINES} lines\n`,
  );
  process.exit(1);
}
