/**
 * One strict ajv instance with every schema of `schema-definitions.ts`, each compiled once, on its
 * first use: a run needs only some of them (the profile's, the largest, only for a profile file),
 * and every run waits for its start. Pure: no I/O. Errors come back as one readable line each:
 * pointer, rule broken, value.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { isDecimalString } from './quote-rules.ts';
import { SCHEMAS, SCHEMA_NAMES, type SchemaName } from './schema-definitions.ts';

export interface ValidationResult {
  readonly ok: boolean;
  /** One line per violation: `/data/ask: must match format "decimal" (got "1e5")`. */
  readonly errors: readonly string[];
}

const VALUE_LIMIT = 80;
const OK: ValidationResult = Object.freeze({ ok: true, errors: Object.freeze([]) });

/** Renders a value for an error line, cut to a readable length. */
export function preview(value: unknown, limit = VALUE_LIMIT): string {
  let text: string;
  try {
    text = value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

function valueAt(root: unknown, pointer: string): unknown {
  let node: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function describe(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `must have required property "${String(p.missingProperty)}"`;
    case 'enum':
      return `must be one of ${preview(p.allowedValues, 200)}`;
    case 'const':
      return `must equal ${preview(p.allowedValue)}`;
    case 'false schema':
      return 'must be absent here';
    case 'not':
      return 'value not allowed here';
    default:
      return error.message ?? error.keyword;
  }
}

/** One line per error: JSON pointer, the rule broken, the offending value (truncated). */
export function formatErrors(errors: readonly ErrorObject[] | null | undefined, root: unknown): string[] {
  if (!errors) return [];
  const lines: string[] = [];
  for (const e of errors) {
    // if/then failures only repeat the inner error that ajv already reports.
    if (e.keyword === 'if') continue;
    const pointer = e.instancePath || '/';
    lines.push(`${pointer}: ${describe(e)} (got ${preview(valueAt(root, e.instancePath))})`);
  }
  return [...new Set(lines)];
}

export interface Validator {
  /** Validates and renders every violation; use `is` on hot paths. */
  validate(name: SchemaName, value: unknown): ValidationResult;
  /** Boolean only, for hot paths such as push frames under load. */
  is(name: SchemaName, value: unknown): boolean;
  /** The compiled function, for callers that keep it. */
  compiled(name: SchemaName): ValidateFunction;
  /** Names of every compiled schema. */
  readonly names: readonly SchemaName[];
}

/** Builds the validator: one ajv instance, every schema added now and compiled on its first use. */
export function createValidator(): Validator {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  // DECIMAL_PATTERN, and an exponent within what a decimal type holds.
  ajv.addFormat('decimal', { type: 'string', validate: isDecimalString });
  for (const name of SCHEMA_NAMES) ajv.addSchema(SCHEMAS[name]);
  const compiled = new Map<SchemaName, ValidateFunction>();
  const get = (name: SchemaName): ValidateFunction => {
    let fn = compiled.get(name);
    if (fn) return fn;
    if (!SCHEMAS[name]) throw new Error(`unknown schema ${name}`);
    fn = ajv.getSchema(SCHEMAS[name].$id);
    if (!fn) throw new Error(`schema ${name} did not compile`);
    compiled.set(name, fn);
    return fn;
  };
  return {
    names: SCHEMA_NAMES,
    compiled: get,
    is: (name, value) => get(name)(value) === true,
    validate(name, value) {
      const fn = get(name);
      return fn(value) ? OK : { ok: false, errors: formatErrors(fn.errors, value) };
    },
  };
}

/** The process-wide validator. */
export const validator: Validator = createValidator();
