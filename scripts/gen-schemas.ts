/** Writes `schemas/*.schema.json` from src/schema-definitions.ts; `--check` exits 1 when they are stale. */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SCHEMAS, SCHEMA_NAMES, schemaFileName } from '../src/schema-definitions.ts';
import { DIALECT_SCHEMA } from '../reference/dialect-schema.ts';

export const SCHEMA_DIR = fileURLToPath(new URL('../schemas/', import.meta.url));

const render = (schema: unknown): string => `${JSON.stringify(schema, null, 2)}\n`;

/** The text each schema file must hold: the messages and the profile, and the reference service's dialect file. */
export function renderSchemas(): Map<string, string> {
  return new Map([
    ...SCHEMA_NAMES.map((n) => [schemaFileName(n), render(SCHEMAS[n])] as const),
    ['dialect.schema.json', render(DIALECT_SCHEMA)],
  ]);
}

/** Files that differ from what the definitions render, or that no definition renders. */
export function staleSchemaFiles(): string[] {
  const wanted = renderSchemas();
  const present = readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.json'));
  const stale = present.filter((f) => wanted.get(f) !== readFileSync(SCHEMA_DIR + f, 'utf8'));
  return [...stale, ...[...wanted.keys()].filter((f) => !present.includes(f))];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
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
}
