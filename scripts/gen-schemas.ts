/**
 * Writes `schemas/*.schema.json` from their definitions (test/helpers/schema-files.ts); `--check`
 * exits 1 when they are stale.
 */
import { writeFileSync } from 'node:fs';
import { SCHEMA_NAMES } from '../src/schema-definitions.ts';
import { SCHEMA_DIR, renderSchemas, staleSchemaFiles } from '../test/helpers/schema-files.ts';

if (process.argv.includes('--check')) {
  const stale = staleSchemaFiles();
  if (stale.length) {
    console.error(`stale schema files (run npm run gen:schemas): ${stale.join(', ')}`);
    process.exit(1);
  }
} else {
  for (const [file, text] of renderSchemas()) writeFileSync(SCHEMA_DIR + file, text);
  console.log(`wrote ${SCHEMA_NAMES.length + 1} schemas to schemas/`);
}
