/**
 * Dialects of the reference service: one conforming service per choice of what the spec leaves
 * open. `DEFAULT_DIALECT` is the reference as it always was; `drawDialect(seed)` picks one at
 * random from `DIALECT_SPACE`, the same dialect for the same seed; `parseDialect` reads a dialect
 * file (any subset of fields, merged onto the default). The service applies a dialect at a few
 * seams only (wire.ts: how an envelope, a notice, a push and a handshake body are written;
 * admission.ts: how a connection is admitted and its slot freed).
 */
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { DialectError } from '../src/errors.ts';
import {
  DIALECT_SPACE,
  type DialectGroup,
  type DialectSpace,
  type HTTP_MAPPING_NAMES,
  type OptionSpace,
} from './dialect-space.ts';
import { DIALECT_SCHEMA } from './dialect-schema.ts';
import { mulberry32 } from '../src/random.ts';

export { DIALECT_SPACE } from './dialect-space.ts';

export type HttpMapping = (typeof HTTP_MAPPING_NAMES)[number];

/** The type of every value an option may hold (a dialect file's, not only the drawn ones). */
type OptionValue<S> = S extends OptionSpace<infer T> ? T : never;

/**
 * One conforming service's answers to the questions the spec leaves open: one value of each option
 * of DIALECT_SPACE (whose `doc`s say what each chooses; DEFAULT_DIALECT holds the defaults), and the
 * seed of its own per-pair draws. Mapped from the space, so an option added there is a field here.
 */
export type Dialect = { seed: number } & {
  -readonly [G in DialectGroup]: { -readonly [O in keyof DialectSpace[G]]: OptionValue<DialectSpace[G][O]> };
};

export type IdleClose = Dialect['stream']['idleClose'];
export type PriceZeros = Dialect['numbers']['restZeros'];
export type MidPrice = Dialect['numbers']['mid'];
export type RestDenial = Dialect['rest']['denial'];

/** A dialect with any subset of fields; what is absent is the default's. */
export type PartialDialect = { seed?: number } & { [G in keyof Omit<Dialect, 'seed'>]?: Partial<Dialect[G]> };

/** The reference as it always was: every existing test runs under it. */
export const DEFAULT_DIALECT: Readonly<Dialect> = Object.freeze({
  seed: 1,
  keys: Object.freeze({ primary: null, limited: null, others: null, stated: true, slotReleaseMs: 0 }),
  rest: Object.freeze({
    tsUnit: 'ms',
    httpStatus: 'conventional',
    perPageMax: 100,
    perPageOver: 'error',
    pastEnd: 'empty',
    pagination: 'none',
    order: 'catalogue',
    catalogueSize: null,
    delayedPrices: false,
    invalidPaging: 'error',
    denial: 'by-cause',
    gatewayTs: 'present',
    rateLimit: null,
    rateLimitHeaders: false,
    latencyMs: 0,
    zoneNames: 'canonical',
    equityMarkets: 'US',
    codeSpelling: 'plain',
    codeSearch: 'code',
    closedMarket: '200',
    keylessLimit: null,
  }),
  json: Object.freeze({ extraFields: false, keyOrder: 'spec', whitespace: 'compact' }),
  stream: Object.freeze({
    path: '/v1/ws',
    port: 'shared',
    tickMs: 100,
    pushes: 'every-tick',
    quietPairs: false,
    timestamps: 'ms',
    unsubscribeNotSubscribed: 'success',
    failedSubscribe: 'keep',
    idleClose: 'normal',
    maxMessagesPerSecond: 200,
    unauthorized: 'handshake',
    suspendedListed: false,
    stillPairs: false,
    stopLagTicks: 0,
    stopLagMs: 0,
    subscribeErrors: 'limit-first',
    idleCloseWindows: 1,
    emptySubscribe: 'error',
    noticeData: 'null',
  }),
  socketio: Object.freeze({ event: 'price', namespace: '/', payload: 'object', refusals: 'http' }),
  numbers: Object.freeze({
    decimals: 'catalogue',
    restZeros: 'precision',
    streamZeros: 'precision',
    mid: 'even-spread',
    notation: 'plain',
    significantDigits: null,
  }),
});

/** A dialect's groups, each built by `build`: listed once, and checked against the space by the type. */
const eachGroup = (build: <G extends DialectGroup>(g: G) => Dialect[G]): Omit<Dialect, 'seed'> => ({
  keys: build('keys'),
  rest: build('rest'),
  json: build('json'),
  stream: build('stream'),
  socketio: build('socketio'),
  numbers: build('numbers'),
});

/** Merges a partial dialect onto the default (or onto `base`); never mutates either. */
export function mergeDialect(partial: PartialDialect = {}, base: Readonly<Dialect> = DEFAULT_DIALECT): Dialect {
  return { seed: partial.seed ?? base.seed, ...eachGroup((g) => ({ ...base[g], ...partial[g] })) };
}

/** Draws one dialect: every option of DIALECT_SPACE from the seed's PRNG, so the same seed gives the same dialect. */
export function drawDialect(seed: number): Dialect {
  const random = mulberry32(seed);
  const draw = <T>(space: OptionSpace<T>): T => space.values[Math.floor(random() * space.values.length)]!;
  return { seed, ...eachGroup((g) => optionsOf(g, draw)) };
}

/**
 * Group `g` with each option's value given by `value`. Object.entries and Object.fromEntries drop
 * the option names' types, so the typed signature states them again over the untyped body.
 */
function optionsOf<G extends DialectGroup>(g: G, value: <T>(space: OptionSpace<T>) => T): Dialect[G];
function optionsOf(g: DialectGroup, value: (space: OptionSpace<unknown>) => unknown): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries<OptionSpace<unknown>>(DIALECT_SPACE[g]).map(([name, space]) => [name, value(space)]),
  );
}

/**
 * Seeds whose drawn dialects together take every value of every option at least once (a greedy
 * cover of DIALECT_SPACE, searched from seed 1 up), so a fixed short list of runs covers the space.
 */
export function coveringSeeds(limit = 10_000): number[] {
  const missing = new Set<string>();
  const valueKey = (g: string, name: string, v: unknown): string => `${g}.${name}=${JSON.stringify(v)}`;
  for (const [g, options] of Object.entries(DIALECT_SPACE))
    for (const [name, space] of Object.entries<OptionSpace<unknown>>(options))
      for (const v of space.values) missing.add(valueKey(g, name, v));
  const seeds: number[] = [];
  for (let seed = 1; seed <= limit && missing.size > 0; seed++) {
    const { seed: _drawnFrom, ...groups } = drawDialect(seed);
    const keys = Object.entries(groups).flatMap(([g, options]) =>
      Object.entries<unknown>(options).map(([name, v]) => valueKey(g, name, v)),
    );
    // Keep a seed only when it covers a value no earlier seed did.
    if (keys.some((k) => missing.has(k))) {
      seeds.push(seed);
      for (const k of keys) missing.delete(k);
    }
  }
  return seeds;
}

// The dialect file is the reference's own input, so it gets its own ajv instance rather than the harness's validator.
const validateDialect = new Ajv2020({ strict: true, allErrors: false, allowUnionTypes: true }).compile(DIALECT_SCHEMA);

function errorLine(e: ErrorObject): string {
  const at = e.instancePath || '/';
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return `${at === '/' ? '' : at}/${String(p.additionalProperty)}: is not a dialect field`;
    case 'enum':
      return `${at}: must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${at}: ${e.message ?? e.keyword}`;
  }
}

/** Validates a parsed dialect document against schemas/dialect.schema.json and merges it onto the default. */
export function parseDialect(json: unknown, source: string): Dialect {
  if (!validateDialect(json)) throw new DialectError(`${source}: ${errorLine(validateDialect.errors![0]!)}`);
  const { $schema: _ignored, ...partial } = json as PartialDialect & { $schema?: string };
  return mergeDialect(partial);
}

/** The one-line command that serves the dialect drawn from `seed` again. */
export function replayCommand(seed: number): string {
  return `conform serve --dialect random --seed ${seed}`;
}
