/**
 * The space of conforming services: every choice the spec leaves open ("not shown") or does not
 * mention, with the values a dialect may take. One table feeds the dialect schema, the random draw
 * and a covering set of seeds, so an option added here is drawn, validated and covered at once.
 */

type Schema = Record<string, unknown>;

/** One option: the values a draw picks from, the JSON Schema a dialect file is checked against, and what it means. */
export interface OptionSpace<T> {
  /** Values a random dialect takes, each equally likely. */
  readonly values: readonly T[];
  /** What a dialect file may hold (wider than `values` where any value in a range conforms). */
  readonly schema: Schema;
  /** What the option chooses, for the schema's description. */
  readonly doc: string;
}

const oneOf = <T extends string | number | boolean>(values: readonly T[], doc: string): OptionSpace<T> => ({ values, schema: { enum: [...values] }, doc });
const range = (values: readonly number[], minimum: number, maximum: number, doc: string): OptionSpace<number> =>
  ({ values, schema: { type: 'integer', minimum, maximum }, doc });

/** A key's stream connection allowance; null keeps the configured one. */
const allowance = (values: readonly number[], whose: string): OptionSpace<number> =>
  ({ values, schema: { type: ['integer', 'null'], minimum: 1, maximum: 1000 }, doc: `WebSocket connection allowance of ${whose}; null: as configured.` });

/** Named mappings of non-200 status numbers to HTTP statuses (dialect.ts HTTP_MAPPINGS). */
export const HTTP_MAPPING_NAMES = ['conventional', 'status-in-body', 'client-errors-400', 'gateway'] as const;

/** Every option of a dialect by group; a dialect holds one value of each. */
export const DIALECT_SPACE = {
  keys: {
    primary: allowance([1, 2, 3, 8], 'the primary key'),
    limited: allowance([1, 2, 3], 'the limited key'),
    others: allowance([1, 2, 3, 10], 'every other key that has one'),
    stated: oneOf([true, false], 'Whether the written profile states each key\'s allowance (an operator may not know it).'),
    slotReleaseMs: range([0, 500, 1500, 3000], 0, 10_000, 'How long after a stream connection closes its slot of the key\'s allowance is free again.'),
  },
  rest: {
    tsUnit: oneOf(['ms', 's'] as const, 'Unit of the envelope\'s ts.'),
    httpStatus: oneOf(HTTP_MAPPING_NAMES, 'How each non-200 status_number maps to an HTTP status (50005 stays 401, 50102 stays 200).'),
    perPageMax: range([50, 100, 200, 500], 10, 100_000, 'Largest per_page answered.'),
    perPageOver: oneOf(['error', 'clamp'] as const, 'A per_page above the maximum: 50004, or answered with the maximum.'),
    pastEnd: oneOf(['empty', 'error'] as const, 'A page past the last: an empty list, or 50004.'),
  },
  numbers: {
    decimals: oneOf(['catalogue', 'drawn'] as const, 'Decimals of each pair: the catalogue\'s, or drawn per pair from 0 to 8.'),
    restZeros: oneOf(['precision', 'trim', 'pad8'] as const, 'REST prices: every decimal of the pair\'s precision, trailing zeros trimmed, or padded to 8 decimals.'),
    streamZeros: oneOf(['precision', 'trim', 'pad8'] as const, 'Push prices, chosen apart from REST: the same price may read differently on each.'),
    mid: oneOf(['even-spread', 'exact', 'rounded'] as const, 'The mid-price: exact at the precision (an even spread), exact with one more decimal (an odd spread), or that rounded to the precision.'),
  },
} as const satisfies Record<string, Record<string, OptionSpace<unknown>>>;

export type DialectSpace = typeof DIALECT_SPACE;
export type DialectGroup = keyof DialectSpace;
