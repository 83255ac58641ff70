/**
 * Fails when a tracked TypeScript or JavaScript line is longer than 120 characters, and lists
 * each one as file:line. Written by hand because Biome's formatter wraps code at 120 columns but
 * leaves comments and strings alone, and Biome has no line-length rule; ESLint's max-len would
 * mean a second linter and its TypeScript parser for this one rule.
 *
 * Usage: tsx scripts/line-length.ts (from `npm run lint`).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const MAX = 120;

const files = execFileSync('git', ['ls-files', '-z', '--', '*.ts', '*.js', '*.mjs'], { encoding: 'utf8' })
  .split('\0')
  .filter((f) => f !== '');
const long: string[] = [];
for (const file of files) {
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    // Characters as a reader counts them: code points, not UTF-16 units.
    const length = [...line].length;
    if (length > MAX) long.push(`${file}:${i + 1}: ${length} characters`);
  });
}
if (long.length > 0) {
  process.stderr.write(`${long.join('\n')}\n${long.length} lines are longer than ${MAX} characters\n`);
  process.exit(1);
}
