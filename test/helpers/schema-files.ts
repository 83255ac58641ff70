/**
 * What schemas/ must hold: every JSON Schema rendered from its definition. `npm run gen:schemas`
 * (scripts/gen-schemas.ts) writes the files; test/unit/schemas.test.ts fails when one is stale.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DIALECT_SCHEMA } from '../../reference/dialect-schema.ts';
import { SCHEMAS, SCHEMA_NAMES, schemaFileName } from '../../src/schema-definitions.ts';

export const SCHEMA_DIR = fileURLToPath(new URL('../../schemas/', import.meta.url));

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
