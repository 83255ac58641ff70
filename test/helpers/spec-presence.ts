/**
 * The unit tier's global set-up: when the spec document is not beside the clone, one line says
 * which tests skip and what they need (each test file would otherwise say it once per worker).
 */
import { SPEC_MISSING_NOTE } from './spec-file.ts';

export default function setup(): void {
  if (SPEC_MISSING_NOTE) process.stdout.write(`${SPEC_MISSING_NOTE}\n`);
}
