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
import { DIALECT_SPACE, type DialectGroup, type HTTP_MAPPING_NAMES, type OptionSpace } from './dialect-space.ts';
import { DIALECT_SCHEMA } from './dialect-schema.ts';
import { mulberry32 } from './prices.ts';

export { DIALECT_SPACE } from './dialect-space.ts';

export type HttpMapping = (typeof HTTP_MAPPING_NAMES)[number];

/** One conforming service's answers to the questions the spec leaves open. */
export interface Dialect {
  /** Seed of the dialect's own draws (per-pair choices); default 1. */
  seed: number;
  keys: {
    /** Stream connections the primary key allows; default null: as configured (8 in the default config). */
    primary: number | null;
    /** Stream connections the limited key allows; default null: as configured (1). */
    limited: number | null;
    /**
     * Stream connections every other key that has an allowance allows; default null: as configured
     * (2 for cryptoOnly and whitelisted, 10 for secondary).
     */
    others: number | null;
    /** Whether the written profile states the allowances; default true. */
    stated: boolean;
    /** Milliseconds after a close before the connection's slot is free again; default 0. */
    slotReleaseMs: number;
  };
  rest: {
    /** Unit of `ts`; default `ms`. */
    tsUnit: 'ms' | 's';
    /** HTTP status of each non-200 status number; default `conventional` (400, 403, 404, 429, 500, 503 by meaning). */
    httpStatus: HttpMapping;
    /** Largest `per_page` answered; default 100. */
    perPageMax: number;
    /** A `per_page` above the maximum: `error` (50004, default) or `clamp` (answered with the maximum). */
    perPageOver: 'error' | 'clamp';
    /** A page past the last: `empty` (an empty list, default) or `error` (50004). */
    pastEnd: 'empty' | 'error';
    /**
     * Pagination metadata of /v1/pairs: `none` (default), `meta` (`meta: {page, per_page, total}`)
     * or `top-level` (`page`, `per_page`, `total` beside `data`).
     */
    pagination: 'none' | 'meta' | 'top-level';
    /**
     * Order of the listed pairs: `catalogue` (default), `code`, `reversed` or `shuffled` (seeded by
     * `seed`, stable across requests).
     */
    order: 'catalogue' | 'code' | 'reversed' | 'shuffled';
    /**
     * Active pairs in the catalogue, the special-state pairs on top; default null: the default
     * catalogue (over 100).
     */
    catalogueSize: number | null;
    // Rate limit and network distance.
    /**
     * REST requests each key may send per window (keys with a rate of their own keep it), such as
     * 10 a minute; the written profile does not state it, so the answers have to: a 50006 with
     * `Retry-After`. Default null: as configured (1000 a second, stated).
     */
    rateLimit: { requests: number; windowMs: number } | null;
    /** Whether answers carry the IETF `RateLimit-Policy` and `RateLimit` headers; default false. */
    rateLimitHeaders: boolean;
    /** Milliseconds every REST answer is held back, as a distant service's would be; default 0. */
    latencyMs: number;
  };
  json: {
    /** Undocumented extra fields in every object sent; default false. */
    extraFields: boolean;
    /** Key order of every object sent: `spec` (default), `reversed` or `sorted`. */
    keyOrder: 'spec' | 'reversed' | 'sorted';
    /** Whitespace of JSON text: `compact` (default), `indented` (two spaces) or `tabs`. */
    whitespace: 'compact' | 'indented' | 'tabs';
  };
  stream: {
    /** Path of the WebSocket endpoint; default `/v1/ws`. */
    path: string;
    /** `shared` (default): the stream on the REST port; `separate`: on a port of its own. */
    port: 'shared' | 'separate';
    /** Milliseconds between push ticks; default 100. */
    tickMs: number;
    /**
     * `every-tick` (default): each tick pushes every subscribed priced pair; `on-change`: only
     * pairs whose price changed; `on-change-snapshot`: that, plus each pair's current price right
     * after a subscribe.
     */
    pushes: 'every-tick' | 'on-change' | 'on-change-snapshot';
    /** Whether every third pair changes at most once every few seconds; default false. */
    quietPairs: boolean;
    /** `last_updated` and `sent_at` of pushes: `ms` (default), `s`, or `absent`. */
    timestamps: 'ms' | 's' | 'absent';
    /** Unsubscribing a pair that is not subscribed: `success` (default) or `error` (50004). */
    unsubscribeNotSubscribed: 'success' | 'error';
    /** A refused subscribe: `keep` (default) the earlier subscription, or `drop` it. */
    failedSubscribe: 'keep' | 'drop';
    /**
     * The keep-alive close: `normal` (default: 1000 with a reason), `going-away` (1001, no reason),
     * `policy` (1008), `app-4000` (4000), `no-status` (a close frame without a code).
     */
    idleClose: IdleClose;
    /** Inbound messages per second per connection before the connection is closed (1008); default 200. */
    maxMessagesPerSecond: number;
    /**
     * A missing or unknown key: `handshake` (default, refused with 50005 in the HTTP phase) or
     * `after-connect` (accepted, then a 50005 notice and a close).
     */
    unauthorized: 'handshake' | 'after-connect';
  };
  socketio: {
    /** The event that carries the messages; default `price` (an explicit event of the server options wins). */
    event: string;
    /** The namespace; default `/`. */
    namespace: string;
    /** What the server emits: `object` (default) or `json-text` (each message as a JSON string). */
    payload: 'object' | 'json-text';
    /**
     * Handshake refusals: `http` (default, the JSON body in the HTTP phase) or `connect-error` (a
     * CONNECT_ERROR whose data is `{status_number, message}`, from a namespace middleware).
     */
    refusals: 'http' | 'connect-error';
  };
  numbers: {
    /** Decimals of each pair: `catalogue` (default) or `drawn` from 0 to 8 per pair with `seed`. */
    decimals: 'catalogue' | 'drawn';
    /**
     * How REST writes a price: `precision` (every decimal of the pair, default), `trim` (no
     * trailing zeros) or `pad8` (padded to 8 decimals).
     */
    restZeros: PriceZeros;
    /** How pushes write a price, apart from REST; default `precision`. */
    streamZeros: PriceZeros;
    /**
     * The mid-price: `even-spread` (default: the spread is an even number of ticks, so the mid is
     * exact at the pair's precision), `exact` (odd spread; the mid written with one more decimal)
     * or `rounded` (odd spread; the mid rounded half-up to the pair's precision).
     */
    mid: MidPrice;
  };
}

export type IdleClose = 'normal' | 'going-away' | 'policy' | 'app-4000' | 'no-status';
export type PriceZeros = 'precision' | 'trim' | 'pad8';
export type MidPrice = 'even-spread' | 'exact' | 'rounded';

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
    rateLimit: null,
    rateLimitHeaders: false,
    latencyMs: 0,
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
  }),
  socketio: Object.freeze({ event: 'price', namespace: '/', payload: 'object', refusals: 'http' }),
  numbers: Object.freeze({
    decimals: 'catalogue',
    restZeros: 'precision',
    streamZeros: 'precision',
    mid: 'even-spread',
  }),
}) as Readonly<Dialect>;

const GROUPS = Object.keys(DIALECT_SPACE) as DialectGroup[];

/** Merges a partial dialect onto the default (or onto `base`); never mutates either. */
export function mergeDialect(partial: PartialDialect = {}, base: Readonly<Dialect> = DEFAULT_DIALECT): Dialect {
  const out: Record<string, unknown> = { seed: partial.seed ?? base.seed };
  for (const g of GROUPS) out[g] = { ...base[g], ...(partial[g] ?? {}) };
  return out as unknown as Dialect;
}

/** Draws one dialect: every option of DIALECT_SPACE from the seed's PRNG, so the same seed gives the same dialect. */
export function drawDialect(seed: number): Dialect {
  const random = mulberry32(seed);
  const out: Record<string, unknown> = { seed };
  for (const g of GROUPS) {
    const group: Record<string, unknown> = {};
    for (const [name, space] of Object.entries(DIALECT_SPACE[g]) as [string, OptionSpace<unknown>][])
      group[name] = space.values[Math.floor(random() * space.values.length)];
    out[g] = group;
  }
  return out as unknown as Dialect;
}

/**
 * Seeds whose drawn dialects together take every value of every option at least once (a greedy
 * cover of DIALECT_SPACE, searched from seed 1 up), so a fixed short list of runs covers the space.
 */
export function coveringSeeds(limit = 10_000): number[] {
  const missing = new Set<string>();
  const valueKey = (g: string, name: string, v: unknown): string => `${g}.${name}=${JSON.stringify(v)}`;
  for (const g of GROUPS)
    for (const [name, space] of Object.entries(DIALECT_SPACE[g]) as [string, OptionSpace<unknown>][])
      for (const v of space.values) missing.add(valueKey(g, name, v));
  const seeds: number[] = [];
  for (let seed = 1; seed <= limit && missing.size > 0; seed++) {
    const d = drawDialect(seed) as unknown as Record<string, Record<string, unknown>>;
    const keys = GROUPS.flatMap((g) => Object.entries(d[g]!).map(([name, v]) => valueKey(g, name, v)));
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
