/**
 * Where the spec document is looked for, and the line that says it is missing. Free of vitest, so a
 * global set-up reads it.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SPEC_FILE } from '../../src/spec.ts';

export const SPEC_PATH = fileURLToPath(new URL(`../../../shared/${SPEC_FILE}`, import.meta.url));
/** Where the spec is looked for, as a reader at the repository's root names it. */
export const SPEC_SHOWN = path.join('..', 'shared', SPEC_FILE);
/** Whether the spec document is there to compare the code with. */
export const SPEC_PRESENT = existsSync(SPEC_PATH);
/** The one line that says which tests skipped and what they need, or undefined when the spec is there. */
export const SPEC_MISSING_NOTE = SPEC_PRESENT
  ? undefined
  : `skipped: the tests that compare the code with the spec document (${SPEC_SHOWN} is not beside this clone; ` +
    'README.md, "The spec", says where it comes from)';
