/**
 * The JSON Schema of a dialect file, built from DIALECT_SPACE; `npm run gen:schemas` writes it to
 * `schemas/dialect.schema.json` beside the message schemas. Every field is optional: a dialect
 * file names only what differs from the default.
 */
import { SCHEMA_BASE } from '../src/schema-definitions.ts';
import { DIALECT_SPACE, type OptionSpace } from './dialect-space.ts';

const groups = Object.fromEntries(
  Object.entries(DIALECT_SPACE).map(([group, options]) => [
    group,
    {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(
        Object.entries(options as Record<string, OptionSpace<unknown>>).map(([name, o]) => [
          name,
          { ...o.schema, description: o.doc },
        ]),
      ),
    },
  ]),
);

export const DIALECT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: `${SCHEMA_BASE}dialect.schema.json`,
  title: 'conform reference service dialect',
  type: 'object',
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    seed: { type: 'integer', description: "Seed of the dialect's own draws (per-pair choices)." },
    ...groups,
  },
} as const;
