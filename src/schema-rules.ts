/**
 * Which statement of the spec a schema error breaks: the field at the error's JSON pointer, in
 * the table of the message the schema describes (`/data/ask` of a price response: the price
 * record's ask; `/code` of a handshake refusal: "never code"). A schema error so becomes a
 * violation of that statement, owned by the check that judges it (src/ownership.ts), whichever
 * check validated the message. Pure: the validator's lines in, statement keys out.
 */
import type { SchemaName } from './schema-definitions.ts';
import { SPEC_STATEMENTS, type StatementKey } from './statements.ts';

const KEYS = new Set<string>(SPEC_STATEMENTS.map((s) => s.key));

/** The pointer's parts of a validator line (`/data/0/code: must be string (got 1)`), and a missing property's name. */
function pathOf(line: string): string[] {
  const at = line.indexOf(': ');
  const pointer = at < 0 ? '' : line.slice(0, at);
  const parts = pointer
    .split('/')
    .slice(1)
    .filter((p) => p !== '')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const missing = MISSING.exec(line)?.[1];
  return missing === undefined ? parts : [...parts, missing];
}

const MISSING = /must have required property "([^"]+)"/;

/** Statement of a field of a table, when the statements have it. */
const field = (table: string, name: string | undefined): StatementKey | undefined => {
  const key = `field:${table}:${name}`;
  return KEYS.has(key) ? (key as StatementKey) : undefined;
};

/** Fields that carry a price: present but not a decimal string, they break "every price value is a JSON string". */
const PRICES = new Set(['ask', 'bid', 'price']);

/** A price field that is there but malformed breaks the decimal-string rule; one that is missing, its own row. */
const priceValue = (table: string, name: string | undefined, missing: boolean): StatementKey | undefined =>
  name !== undefined && PRICES.has(name) && !missing ? 'rule:service:decimal-strings' : field(table, name);

/** A price record's fields, from the parts below it. */
function priceField(parts: readonly string[], missing: boolean): StatementKey | undefined {
  const [name, inner] = parts;
  if (name === 'market' && inner !== undefined) return field('market', inner);
  return parts.length === 1 ? priceValue('price', name, missing) : field('price', name);
}

/** An envelope's fields, and what its `data` holds. */
function envelopeField(schema: SchemaName, parts: readonly string[], missing: boolean): StatementKey | undefined {
  const [name, ...below] = parts;
  if (name !== 'data' || below.length === 0) return field('envelope', name);
  if (schema === 'price-response') return priceField(below, missing);
  // A pair record's fields lie below its index in the list.
  if (schema === 'pairs-response') return below.length > 1 ? field('pair', below[1]) : undefined;
  return undefined;
}

/** A frame after connection carries no status_number; any other property is a field of its table. */
function frameField(table: string, parts: readonly string[], missing: boolean): StatementKey | undefined {
  const [name] = parts;
  if (name === 'status_number') return 'rule:handshake:no-status-after-connect';
  return parts.length === 1 ? priceValue(table, name, missing) : field(table, name);
}

/**
 * The statement a schema error breaks, as a violation's `rule`; empty when the error names no
 * field of a table (it then breaks the validating check's own rule).
 */
export function schemaErrorRule(schema: SchemaName, line: string): { rule?: StatementKey } {
  const parts = pathOf(line);
  const missing = MISSING.test(line);
  const rule = ((): StatementKey | undefined => {
    switch (schema) {
      case 'price-response':
      case 'pairs-response':
      case 'rest-envelope':
      case 'rest-error':
        return envelopeField(schema, parts, missing);
      case 'price-record':
        return priceField(parts, missing);
      case 'pair-record':
        return field('pair', parts[0]);
      case 'market':
        return field('market', parts[0]);
      case 'push-frame':
        return frameField('push', parts, missing);
      case 'notice-success':
      case 'notice-error':
        return frameField('notice', parts, missing);
      case 'handshake-error':
        return parts[0] === 'code' ? 'rule:handshake:never-code' : field('handshake', parts[0]);
      default:
        return undefined;
    }
  })();
  return rule ? { rule } : {};
}
