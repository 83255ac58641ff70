/** `npm run gen:coverage`: writes docs/COVERAGE.md (test/helpers/coverage-doc.ts says what it holds). */
import { writeFile } from 'node:fs/promises';
import { COVERAGE_FILE, coverageMarkdown } from '../test/helpers/coverage-doc.ts';

await writeFile(COVERAGE_FILE, coverageMarkdown());
process.stdout.write(`wrote ${COVERAGE_FILE.pathname}\n`);
