/**
 * What each fault of faults.ts does to the service: one entry per fault, its transformations at the
 * seams of seams.ts. Reading an entry is reading the whole of that fault's effect; the correct path
 * (admission.ts, session.ts, fanout.ts, rest.ts, service.ts) names no fault.
 */
import { Decimal } from 'decimal.js';
import { API_KEY_HEADER, ASSET_TYPE, LIMITS, METHOD, QUERY, STATUS, TEXT, type RestStatus } from '../src/spec.ts';
import type { FaultName } from './faults.ts';
import { keyHeader, keyHeaderSpelled } from './key-header.ts';
import { PriceBook, type PairEntry } from './prices.ts';
import { deviate, type Deviation, type Outcome, type PairsVerdict, type Seams } from './seams.ts';
import type { KeyRecord, Service } from './service.ts';
import { TOO_MANY_PAIRS, isObj } from './session.ts';

/** `out` with its envelope changed by `change` (a copy: key order kept, fields replaced in place). */
const withBody = (out: Outcome, change: (body: Record<string, unknown>) => void): Outcome => {
  const body = { ...out.body };
  change(body);
  return { ...out, body };
};

/** `value` without its field `field` (a copy). */
const without = (value: Record<string, unknown>, field: string): Record<string, unknown> => {
  const { [field]: _dropped, ...rest } = value;
  return rest;
};

/** Whether an answer with `status` is an error (neither 200 nor 50102, the two that carry data). */
const isError = (status: RestStatus): boolean => status !== STATUS.OK && status !== STATUS.PRICE_STALE;

/** `/v1/price` data with its market object changed by `change`. */
const withMarket = (
  data: Record<string, unknown>,
  change: (market: Record<string, unknown>) => void,
): Record<string, unknown> => {
  const market = { ...(data.market as Record<string, unknown>) };
  change(market);
  return { ...data, market };
};

/** The key of the header spelled exactly `X-API-Key` (`exact`) or spelled any other way. */
const keyOfSpelling = (svc: Service, req: Parameters<typeof keyHeader>[0], exact: boolean): KeyRecord | undefined =>
  svc.keyFor(keyHeaderSpelled(req, (name) => (name === API_KEY_HEADER) === exact));

/** `params.pairs` when it is an array of strings. */
const stringPairs = (params: unknown): string[] | undefined =>
  isObj(params) && Array.isArray(params.pairs) && params.pairs.every((c) => typeof c === 'string')
    ? (params.pairs as string[])
    : undefined;

const isInvalid = (verdict: PairsVerdict): boolean => !Array.isArray(verdict);

/**
 * Fault price-deep-pair-inverted's pair: deep in the catalogue, out of reach of every sample of
 * the first pairs per asset type (the profile's sample, a check's first three of a type). The last
 * listed active pair with three of its type before it in the listing and in the catalogue, and not
 * among the catalogue's first ten; the last listed active pair when none is.
 */
function deepPair(svc: Service): PairEntry | undefined {
  const active = (entries: readonly PairEntry[]): PairEntry[] => entries.filter((e) => e.state === 'active');
  const deepIn = (entries: readonly PairEntry[]): Set<PairEntry> => {
    const seen = new Map<string, number>();
    const out = new Set<PairEntry>();
    for (const e of entries) {
      const n = seen.get(e.assetType) ?? 0;
      if (n >= 3) out.add(e);
      seen.set(e.assetType, n + 1);
    }
    return out;
  };
  const listed = active(svc.listing);
  const catalogue = active([...svc.book.pairs.values()]);
  const [inListing, inCatalogue, first] = [deepIn(listed), deepIn(catalogue), new Set(catalogue.slice(0, 10))];
  return listed.filter((e) => inListing.has(e) && inCatalogue.has(e) && !first.has(e)).at(-1) ?? listed.at(-1);
}

/**
 * Fault price-late-type-inverted's asset type: the one with the fewest active pairs (the later
 * listed of equals), which the fault lists last.
 */
function scarceType(entries: readonly PairEntry[]): string | undefined {
  const counts = new Map<string, number>();
  for (const e of entries) if (e.state === 'active') counts.set(e.assetType, (counts.get(e.assetType) ?? 0) + 1);
  let scarce: string | undefined;
  for (const [type, n] of counts) if (scarce === undefined || n <= counts.get(scarce)!) scarce = type;
  return scarce;
}
const lateTypes = new WeakMap<Service, string | undefined>();

/** Every fault's effect. A record over every fault name, so a fault without an effect does not type-check. */
export const FAULT_EFFECTS: Readonly<Record<FaultName, Deviation>> = {
  // REST envelope
  'envelope-status-number-integer': {
    envelope: { write: (out) => withBody(out, (b) => (b.status_number = Number(b.status_number))) },
  },
  'envelope-ts-string': { envelope: { write: (out) => withBody(out, (b) => (b.ts = String(b.ts))) } },
  'envelope-error-data-filled': {
    envelope: { write: (out, { status }) => (isError(status) ? withBody(out, (b) => (b.data = {})) : out) },
  },
  'envelope-error-message-missing': {
    envelope: { write: (out, { status }) => (isError(status) ? withBody(out, (b) => delete b.message) : out) },
  },
  // Auth
  'auth-header-case-sensitive': {
    admission: { caller: (_key, { req, svc }) => keyOfSpelling(svc, req, true) },
  },
  'auth-canonical-header-refused': {
    admission: { caller: (key, { req, surface, svc }) => (surface === 'rest' ? keyOfSpelling(svc, req, false) : key) },
  },
  'auth-missing-key-accepted': {
    admission: {
      caller: (key, { req, surface, svc }) =>
        key ?? (surface === 'rest' && keyHeader(req) === undefined ? svc.primary : undefined),
    },
  },
  'auth-http-403': {
    envelope: { write: (out, { status }) => (status === STATUS.UNAUTHORIZED ? { ...out, http: 403 } : out) },
  },
  'auth-suspended-served': {
    admission: { account: (status) => (status === STATUS.SUSPENDED ? undefined : status) },
  },
  // Pagination and filters
  'pairs-default-per-page-20': {
    query: { pairs: (q, { params }) => (params.has(QUERY.pairs.perPage) ? q : { ...q, perPage: 20 }) },
  },
  'pairs-page-alone-per-page-20': {
    query: {
      pairs: (q, { params }) =>
        params.has(QUERY.pairs.page) && !params.has(QUERY.pairs.perPage) ? { ...q, perPage: 20 } : q,
    },
  },
  'pairs-error-envelope': {
    // The pairs endpoint's invalid-request errors carry an empty list and no message.
    envelope: {
      write: (out, { status, by }) =>
        by === 'pairs' && status === STATUS.INVALID_REQUEST
          ? withBody(out, (b) => {
              b.data = [];
              delete b.message;
            })
          : out,
    },
  },
  'pairs-pages-overlap': { query: { window: (w) => (w.start > 0 ? { ...w, start: w.start - 1 } : w) } },
  'pairs-per-page-ignored': {
    query: {
      window: (_w, { page }) => ({ start: (page - 1) * LIMITS.defaultPerPage, count: LIMITS.defaultPerPage }),
    },
  },
  'pairs-invalid-page-accepted': {
    query: { pairs: (q) => (typeof q.page === 'string' ? { ...q, page: LIMITS.defaultPage } : q) },
  },
  'pairs-invalid-per-page-accepted': {
    query: { pairs: (q) => (typeof q.perPage === 'string' ? { ...q, perPage: LIMITS.defaultPerPage } : q) },
  },
  'pairs-type-filter-ignored': { query: { pairs: (q) => ({ ...q, type: undefined }) } },
  'pairs-code-search-ignored': { query: { pairs: (q) => ({ ...q, code: undefined }) } },
  'pairs-record-name-missing': { record: { pair: (r) => without(r, 'name') } },
  'pairs-base-mismatch': { record: { pair: (r) => ({ ...r, base: r.quote }) } },
  // Price record and market object
  'price-ask-number': { record: { price: (d) => ({ ...d, ask: Number(d.ask) }) } },
  'price-not-mid': {
    // One tick off the quote's own mid, whatever its decimals: never the mid at any rounding.
    record: {
      quote: (q, { entry }) => ({
        ...q,
        price: new Decimal(q.price).plus(entry.tick).toFixed(q.price.split('.')[1]?.length ?? 0),
      }),
    },
  },
  'price-bid-above-ask': { record: { quote: (q) => ({ ask: q.bid, bid: q.ask, price: q.price }) } },
  'price-deep-pair-inverted': {
    record: { price: (d, { entry, svc }) => (entry === deepPair(svc) ? { ...d, ask: d.bid, bid: d.ask } : d) },
  },
  'market-crypto-timezone': {
    record: { price: (d) => withMarket(d, (m) => (m.timezone ??= 'UTC')) },
  },
  'market-timezone-missing': { record: { price: (d) => withMarket(d, (m) => delete m.timezone) } },
  'market-timezone-invalid': {
    record: {
      price: (d) =>
        withMarket(d, (m) => {
          if (m.timezone !== undefined) m.timezone = 'America/New York';
        }),
    },
  },
  'market-crypto-regular-session': {
    record: {
      price: (d) =>
        withMarket(d, (m) => {
          if (m.reason === 'continuous') m.reason = 'regular_session';
        }),
    },
  },
  'market-open-inverted': {
    record: {
      price: (d) =>
        withMarket(d, (m) => {
          if (m.timezone !== undefined) m.open = !m.open;
        }),
    },
  },
  // 50102 and 50104 shapes
  'stale-http-503': {
    envelope: { write: (out, { status }) => (status === STATUS.PRICE_STALE ? { ...out, http: 503 } : out) },
  },
  'stale-data-null': {
    envelope: {
      write: (out, { status }) => (status === STATUS.PRICE_STALE ? withBody(out, (b) => (b.data = null)) : out),
    },
  },
  'unknown-pair-status-50008': {
    envelope: {
      answer: (a, { by }) =>
        by === 'price' && a.status === STATUS.PAIR_NOT_FOUND ? { ...a, status: STATUS.NOT_FOUND } : a,
    },
  },
  'missing-code-200': {
    envelope: {
      answer: (a, { by, params }) =>
        by === 'price' && a.status === STATUS.INVALID_REQUEST && !params.get(QUERY.price.code)
          ? { status: STATUS.OK, data: null }
          : a,
    },
  },
  'unknown-endpoint-50004': {
    envelope: {
      answer: (a, { by }) =>
        by === 'router' && a.status === STATUS.NOT_FOUND ? { status: STATUS.INVALID_REQUEST, data: null } : a,
    },
  },
  'probe-status-swapped': {
    admission: { account: (s) => (s === STATUS.API_MAINTENANCE ? STATUS.GRPC_MAINTENANCE : s) },
  },
  'probe-restricted-as-suspended': {
    admission: { account: (s) => (s === STATUS.RESTRICTED_USER ? STATUS.SUSPENDED : s) },
  },
  // Entitlements
  'entitlement-asset-type-ignored': {
    // The asset type is not looked at; the whitelist still is.
    entitlement: (denied, { key, entry }) =>
      denied !== STATUS.ASSET_TYPE_DENIED
        ? denied
        : key.pairs && !key.pairs.includes(entry!.code)
          ? STATUS.ACCESS_DENIED
          : undefined,
  },
  'entitlement-pairs-list-unfiltered': { entitlement: (denied, { use }) => (use === 'list' ? undefined : denied) },
  'entitlement-whitelist-subscribe': {
    entitlement: (denied, { use }) => (use === 'subscribe' && denied === STATUS.ACCESS_DENIED ? undefined : denied),
  },
  'entitlement-asset-type-partial': {
    // Metal is served to a key limited to other asset types, on REST and the stream; the listing stays filtered.
    entitlement: (denied, { entry, use }) =>
      use !== 'list' && denied === STATUS.ASSET_TYPE_DENIED && entry?.assetType === ASSET_TYPE.metal
        ? undefined
        : denied,
  },
  'entitlement-whitelist-price-ignored': {
    entitlement: (denied, { use }) => (use === 'price' && denied === STATUS.ACCESS_DENIED ? undefined : denied),
  },
  // Handshake
  'handshake-body-code': {
    admission: { body: (_body, { refusal }) => ({ code: refusal.status, message: refusal.message }) },
  },
  'handshake-no-stream-accepted': {
    admission: {
      refusal: (refusal, { key }) =>
        key.stream === false && refusal?.status === STATUS.ACCESS_DENIED ? undefined : refusal,
    },
  },
  'handshake-missing-key-accepted': {
    // A keyless connection gets the primary key's entitlements but its own count, so it breaks only
    // the missing-key rule and not primary's allowance.
    admission: {
      caller: (key, { req, surface, svc }) =>
        key ??
        (surface === 'stream' && keyHeader(req) === undefined
          ? { ...svc.primary, name: 'anonymous', key: '\u0000anonymous', connections: Number.MAX_SAFE_INTEGER }
          : undefined),
    },
  },
  'handshake-header-case-sensitive': {
    admission: { caller: (key, { req, surface, svc }) => (surface === 'stream' ? keyOfSpelling(svc, req, true) : key) },
  },
  // Connection limit
  'limit-per-ip': {
    admission: { slot: (slot, { remoteAddress }) => ({ ...slot, countKey: `${slot.countKey}\u0000${remoteAddress}` }) },
  },
  'limit-off-by-one': { admission: { slot: (slot) => ({ ...slot, allowance: slot.allowance + 1 }) } },
  'limit-slot-not-freed': {
    // Only a single-connection key's slot (keys.limited) is never given back.
    admission: { slot: (slot, { key }) => ((key.connections ?? 1) === 1 ? { ...slot, freed: false } : slot) },
  },
  // Subscribe / unsubscribe
  'subscribe-extends': {
    session: {
      next: (next, { current, method }) => (method === METHOD.subscribe ? [...new Set([...current, ...next])] : next),
    },
  },
  'subscribe-accepts-101': {
    session: {
      pairs: (verdict, { params }) => {
        const pairs = stringPairs(params);
        return isInvalid(verdict) && pairs?.length === LIMITS.maxPairsPerSubscribe + 1 ? [...new Set(pairs)] : verdict;
      },
    },
  },
  'subscribe-limit-99': {
    session: {
      pairs: (verdict, { params }) =>
        !isInvalid(verdict) && stringPairs(params)?.length === LIMITS.maxPairsPerSubscribe
          ? { invalid: TOO_MANY_PAIRS }
          : verdict,
    },
  },
  'subscribe-empty-accepted': {
    session: { pairs: (verdict, { params }) => (stringPairs(params)?.length === 0 ? [] : verdict) },
  },
  'subscribe-missing-params-accepted': {
    session: { pairs: (verdict, { params }) => (params === undefined ? [] : verdict) },
  },
  'subscribe-pairs-string-accepted': {
    session: {
      pairs: (verdict, { params }) => (isObj(params) && typeof params.pairs === 'string' ? [params.pairs] : verdict),
    },
  },
  'subscribe-inactive-accepted': {
    session: { subscribable: (entry, { code, svc }) => entry ?? svc.book.pairs.get(code) },
  },
  'subscribe-unknown-message': {
    notice: (n, { code, request }) =>
      request === METHOD.subscribe && code === STATUS.PAIR_NOT_FOUND ? { ...n, message: 'unknown pair' } : n,
  },
  'subscribe-unknown-among-known-dropped': {
    // Unknown pairs listed beside known ones are dropped instead of refused.
    session: {
      select: (codes, { method, svc }) =>
        method === METHOD.subscribe && codes.some((c) => svc.livePair(c))
          ? codes.filter((c) => svc.livePair(c))
          : codes,
    },
  },
  'unsubscribe-keeps-pushing': {
    session: { next: (next, { current, method }) => (method === METHOD.unsubscribe ? [...current] : next) },
  },
  'unsubscribe-first-pair-only': {
    session: { select: (codes, { method }) => (method === METHOD.unsubscribe ? codes.slice(0, 1) : codes) },
  },
  'push-first-pair-only': { push: { pairs: (codes) => codes.slice(0, 1) } },
  'push-unsubscribed-pair': {
    push: {
      pairs: (codes, { svc }) => {
        const extra = [...svc.book.pairs.values()].find((e) => PriceBook.priced(e) && !codes.includes(e.code));
        return extra ? [...codes, extra.code] : codes;
      },
    },
  },
  'push-never-starts': { push: { pairs: () => [] } },
  // Notices
  'notice-code-number': { notice: (n) => ({ ...n, code: Number(n.code) }) },
  'notice-id-not-echoed': { notice: (n) => without(n, 'id') },
  'notice-subscribe-message-lowercase': {
    notice: (n, { code }) =>
      n.method === METHOD.subscribe && code === STATUS.OK ? { ...n, message: TEXT.subscribeSuccess.toLowerCase() } : n,
  },
  'unsubscribe-message-capitalized': {
    notice: (n, { code }) =>
      n.method === METHOD.unsubscribe && code === STATUS.OK ? { ...n, message: TEXT.subscribeSuccess } : n,
  },
  'notice-status-number': { notice: (n, { code }) => ({ ...n, status_number: code }) },
  'notice-malformed-json-ignored': { notice: (n, { cause }) => (cause === 'malformed-json' ? undefined : n) },
  'notice-denied-shape': {
    // 50010 and 50109 drop the id and fill data.
    notice: (n, { code }) =>
      code === STATUS.ACCESS_DENIED || code === STATUS.ASSET_TYPE_DENIED
        ? { ...without(n, 'id'), data: { reason: n.message } }
        : n,
  },
  'notice-unknown-method-ignored': { notice: (n, { cause }) => (cause === 'unknown-method' ? undefined : n) },
  // Ping and keep-alive
  'ping-reply-json': {
    session: { pong: () => ({ method: METHOD.ping, message: TEXT.pong, code: STATUS.OK, data: null }) },
  },
  'ping-reply-lowercase': {
    session: { pong: (reply) => (typeof reply === 'string' ? reply.toLowerCase() : reply) },
  },
  'keepalive-never': { session: { keepAlive: (k) => ({ ...k, windowMs: undefined }) } },
  'keepalive-early': {
    session: {
      keepAlive: (k) => ({ ...k, windowMs: k.windowMs === undefined ? undefined : Math.floor(k.windowMs / 2) }),
    },
  },
  'keepalive-ping-not-reset': { session: { keepAlive: (k) => ({ ...k, pingResets: false }) } },
  // Push frames
  'push-missing-bid': { push: { message: (p) => without(p, 'bid') } },
  'push-price-number': { push: { message: (p) => ({ ...p, price: Number(p.price) }) } },
  'push-changed-missing-bid': {
    // Connections whose subscription changed (replaced or reduced) get pushes of their own, without bid.
    push: {
      variant: ({ resubscribed }) => (resubscribed ? 'changed' : undefined),
      message: (p, { variant }) => (variant === 'changed' ? without(p, 'bid') : p),
    },
  },
  // Catalogue reach
  'price-late-type-inverted': {
    query: {
      listing: (entries) => {
        const late = scarceType(entries);
        return [...entries.filter((e) => e.assetType !== late), ...entries.filter((e) => e.assetType === late)];
      },
    },
    record: {
      price: (d, { entry, svc }) => {
        if (!lateTypes.has(svc)) lateTypes.set(svc, scarceType(svc.listing));
        return entry.assetType === lateTypes.get(svc) ? { ...d, ask: d.bid, bid: d.ask } : d;
      },
    },
  },
};

/** The seams of a service running `fault` (none: the correct seams). */
export function faultSeams(fault: FaultName | undefined): Readonly<Seams> {
  return deviate(fault === undefined ? undefined : FAULT_EFFECTS[fault]);
}
