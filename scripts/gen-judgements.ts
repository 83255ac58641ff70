/** `npm run gen:judgements`: writes docs/judgements.md (test/helpers/judgements-doc.ts says what it holds). */
import { writeFile } from 'node:fs/promises';
import { JUDGEMENTS_FILE, judgementsDoc } from '../test/helpers/judgements-doc.ts';

await writeFile(JUDGEMENTS_FILE, judgementsDoc());
process.stdout.write(`wrote ${JUDGEMENTS_FILE.pathname}\n`);
