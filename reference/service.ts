/**
 * The state the REST and stream sides share: keys, entitlements, the price book, the market at
 * the injected clock, and the seams where it departs from the spec. No sockets here.
 */
import { STATUS, type RestStatus } from '../src/spec.ts';
import type { ReferenceConfig } from './config.ts';
import { marketAt, staleMarket, type MarketInfo } from './market.ts';
import { PriceBook, type PairEntry } from './prices.ts';
import { mulberry32 } from '../src/random.ts';
import type { IncomingMessage } from 'node:http';
import { DEFAULT_DIALECT, type Dialect } from './dialect.ts';
import { Wire } from './wire.ts';
import { keyHeader } from './key-header.ts';
import { CORRECT, type Seams, type Surface, type Use } from './seams.ts';
import type { KeyRecord, ServiceView } from './model.ts';

export type { KeyRecord } from './model.ts';

/** Messages of the status numbers this service answers with (the spec's meanings, as sentences). */
export const MESSAGES: Readonly<Partial<Record<RestStatus, string>>> = {
  [STATUS.INTERNAL]: 'Internal server error',
  [STATUS.API_MAINTENANCE]: 'API maintenance',
  [STATUS.WS_MAINTENANCE]: 'WebSocket maintenance',
  [STATUS.GRPC_MAINTENANCE]: 'gRPC maintenance',
  [STATUS.INVALID_REQUEST]: 'Invalid request',
  [STATUS.UNAUTHORIZED]: 'Unauthorized: API key missing, invalid or expired',
  [STATUS.RATE_LIMITED]: 'Too many requests',
  [STATUS.SUSPENDED]: 'Suspended: API key suspended',
  [STATUS.NOT_FOUND]: 'Resource not found',
  [STATUS.CONNECTION_LIMIT]: 'Connection limit exceeded: the maximum number of connections was reached',
  [STATUS.ACCESS_DENIED]: 'Access denied',
  [STATUS.RESTRICTED_USER]: 'Restricted user',
  [STATUS.PRICE_NOT_FOUND]: 'Price not found',
  [STATUS.PRICE_STALE]: 'The price may not reflect real-time conditions',
  [STATUS.POOL_UNAVAILABLE]: 'Price pool unavailable',
  [STATUS.PAIR_NOT_FOUND]: 'Pair not found',
  [STATUS.PAIR_UNAVAILABLE]: 'Pair temporarily unavailable',
  [STATUS.PAIR_MAINTENANCE]: 'Pair in maintenance',
  [STATUS.NO_PAIRS_ALLOWED]: 'No pairs allowed for this request',
  [STATUS.POOL_NOT_FOUND]: 'Pool not found',
  [STATUS.ASSET_TYPE_DENIED]: 'No access to the asset type',
};
/** The message sent with a status number. */
export const messageOf = (status: RestStatus): string => MESSAGES[status] ?? status;

/** The catalogue in the dialect's listing order; `shuffled` is seeded, so every request sees the same order. */
function listingOrder(entries: PairEntry[], dialect: Readonly<Dialect>): PairEntry[] {
  switch (dialect.rest.order) {
    case 'code':
      return entries.sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
    case 'reversed':
      return entries.reverse();
    case 'shuffled': {
      const random = mulberry32(dialect.seed);
      for (let i = entries.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [entries[i], entries[j]] = [entries[j]!, entries[i]!];
      }
      return entries;
    }
    default:
      return entries;
  }
}

/** Keys, entitlements, prices, the dialect and the seams of one running service. */
export class Service implements ServiceView {
  readonly book: PriceBook;
  private readonly byValue = new Map<string, KeyRecord>();
  private readonly windows = new Map<string, { start: number; count: number }>();
  /** How this service writes what it sends, under its dialect. */
  readonly wire: Wire;
  /** The pairs in the order /v1/pairs lists them (the spec shows no order). */
  readonly listing: readonly PairEntry[];

  /**
   * `seams`: where the service departs from the spec (fault-effects.ts), the correct seams by default;
   * `dialect`: its answers where the spec is silent.
   */
  constructor(
    readonly config: ReferenceConfig,
    readonly clock: () => number,
    readonly seams: Readonly<Seams> = CORRECT,
    readonly dialect: Readonly<Dialect> = DEFAULT_DIALECT,
  ) {
    this.wire = new Wire(dialect);
    this.book = new PriceBook(config.pairs, config.seed, clock(), dialect.numbers.mid, dialect.stream.quietPairs);
    this.listing = seams.query.listing(listingOrder([...this.book.pairs.values()], dialect));
    for (const [name, k] of Object.entries(config.keys)) this.byValue.set(k.key, { ...k, name });
    const every = (n: number, from: number, on: boolean): ReadonlySet<string> =>
      on ? everyNth([...this.book.pairs.values()], config, n, from) : new Set();
    this.suspended = every(5, 1, dialect.stream.suspendedListed);
    this.delayed = every(5, 3, dialect.rest.delayedPrices);
    this.book.hold(every(4, 2, dialect.stream.stillPairs));
  }

  /** Listed pairs a subscribe refuses with 50104 (the dialect's `suspendedListed`). */
  readonly suspended: ReadonlySet<string>;
  /** Pairs whose every second REST price read comes from a delayed feed (the dialect's `delayedPrices`). */
  readonly delayed: ReadonlySet<string>;
  private readonly delayedReads = new Map<string, number>();

  /** Whether this REST read of a delayed pair comes from the delayed feed: every second one does. */
  delayedRead(entry: PairEntry): boolean {
    if (!this.delayed.has(entry.code)) return false;
    const n = (this.delayedReads.get(entry.code) ?? 0) + 1;
    this.delayedReads.set(entry.code, n);
    return n % 2 === 0;
  }

  /** The key record for a header value, or undefined for a missing or unknown key. */
  keyFor(value: string | undefined): KeyRecord | undefined {
    return value === undefined ? undefined : this.byValue.get(value);
  }

  /** The key a request (rest) or handshake (stream) names, or undefined for a missing or unknown key. */
  caller(req: IncomingMessage, surface: Surface): KeyRecord | undefined {
    return this.seams.admission.caller(this.keyFor(keyHeader(req)), { req, surface, svc: this });
  }

  /** The primary key's record (faults that accept a missing key act as primary). */
  get primary(): KeyRecord {
    return { ...this.config.keys.primary!, name: 'primary' };
  }

  /** Account-state refusal of a REST request, before routing; undefined when the key may go on. */
  restAccountStatus(key: KeyRecord): RestStatus | undefined {
    return this.seams.admission.account(accountStatus(key), { key });
  }

  /** Counts one REST request of `key` in its fixed window; true when over the limit. */
  throttled(key: KeyRecord, now: number): boolean {
    return this.rateWindow(key, now).over;
  }

  /** Counts one REST request of `key` in its fixed window: whether it is over, what is left, when the window ends. */
  rateWindow(
    key: KeyRecord,
    now: number,
  ): { over: boolean; requests: number; windowMs: number; remaining: number; resetMs: number } {
    const limit = key.rateLimit ?? this.config.restRateLimit;
    let w = this.windows.get(key.key);
    if (!w || now - w.start >= limit.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(key.key, w);
    }
    w.count++;
    return {
      over: w.count > limit.requests,
      requests: limit.requests,
      windowMs: limit.windowMs,
      remaining: Math.max(0, limit.requests - w.count),
      resetMs: w.start + limit.windowMs - now,
    };
  }

  private readonly keylessWindows = new Map<string, { start: number; count: number }>();

  /**
   * Counts one request without a valid key from `address` against the dialect's gateway limit:
   * whether it is over and when the window ends; undefined when the dialect sets no such limit.
   */
  keylessWindow(address: string, now: number): { over: boolean; resetMs: number } | undefined {
    const limit = this.dialect.rest.keylessLimit;
    if (!limit) return undefined;
    let w = this.keylessWindows.get(address);
    if (!w || now - w.start >= limit.windowMs) {
      w = { start: now, count: 0 };
      this.keylessWindows.set(address, w);
    }
    w.count++;
    return { over: w.count > limit.requests, resetMs: w.start + limit.windowMs - now };
  }

  /** The pair if it exists and is not inactive (spec: 50104 covers inactive and suspended pairs). */
  livePair(code: string): PairEntry | undefined {
    const entry = this.book.pairs.get(code);
    return entry && entry.state !== 'inactive' ? entry : undefined;
  }

  /**
   * Whether `key` may read `entry` for `use`: undefined when allowed, else 50107 (no pairs at all),
   * 50109 (asset type) or 50010 (whitelist). No `entry`: whether the key may read any pair.
   */
  access(key: KeyRecord, entry: PairEntry | undefined, use: Use): RestStatus | undefined {
    let denied = entitlement(key, entry);
    // Spec, Authentication 4: lacking pair-whitelist access yields 50010 after connection.
    if (use === 'subscribe' && denied === STATUS.NO_PAIRS_ALLOWED) denied = STATUS.ACCESS_DENIED;
    const chosen = this.seams.entitlement(denied, { key, entry, use });
    // The REST code refusing a pair outside the key's whitelist or asset types is not stated: the
    // dialect picks among the documented refusals.
    return use === 'price' && (chosen === STATUS.ACCESS_DENIED || chosen === STATUS.ASSET_TYPE_DENIED)
      ? this.wire.restDenial(chosen)
      : chosen;
  }

  /** Whether a pair is listed in /v1/pairs: priced pairs only, and only those the key may read. */
  listable(key: KeyRecord, entry: PairEntry): boolean {
    if (entry.state !== 'active' && entry.state !== 'stale') return false;
    return this.access(key, entry, 'list') === undefined;
  }

  /** The market object of a pair now. */
  market(entry: PairEntry, now = this.clock()): MarketInfo {
    if (entry.state === 'stale') return staleMarket(entry.assetType, entry.config.timezone);
    return marketAt(now, entry.assetType, entry.market, entry.config.timezone, entry.config.extendedHours);
  }
}

/** The refusal of a REST request for the key's account state; undefined when the account is active. */
function accountStatus(key: KeyRecord): RestStatus | undefined {
  switch (key.state ?? 'active') {
    case 'suspended':
      return STATUS.SUSPENDED;
    case 'restricted':
      return STATUS.RESTRICTED_USER;
    case 'api-maintenance':
      return STATUS.API_MAINTENANCE;
    case 'grpc-maintenance':
      return STATUS.GRPC_MAINTENANCE;
    default:
      return undefined;
  }
}

/** What `key` is entitled to read of `entry` (no entry: whether it may read any pair). */
function entitlement(key: KeyRecord, entry: PairEntry | undefined): RestStatus | undefined {
  if (key.pairs && key.pairs.length === 0) return STATUS.NO_PAIRS_ALLOWED;
  if (!entry) return undefined;
  if (key.assetTypes && !key.assetTypes.includes(entry.assetType)) return STATUS.ASSET_TYPE_DENIED;
  if (key.pairs && !key.pairs.includes(entry.code)) return STATUS.ACCESS_DENIED;
  return undefined;
}

/**
 * Every `n`th active pair of the catalogue from index `from`, leaving out the pairs a key's
 * whitelist names (a profile's own pairs stay plain): the pairs a dialect gives a peculiarity.
 */
function everyNth(entries: PairEntry[], config: ReferenceConfig, n: number, from: number): ReadonlySet<string> {
  const named = new Set(Object.values(config.keys).flatMap((k) => k.pairs ?? []));
  const active = entries.filter((e) => e.state === 'active');
  return new Set(active.filter((e, i) => i % n === from && !named.has(e.code)).map((e) => e.code));
}
