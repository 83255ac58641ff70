/**
 * Named faults of the reference service, one record each: its name, the area of the spec it
 * breaks, the rule in the spec's words, the statements of the traceability matrix it breaks, its
 * effect (transformations at the seams of seams.ts, so the correct path names no fault), and the
 * dialects that mask it or widen what it shows, each with the reason. Everything that reads a
 * fault reads this record: the service (fault-effects.ts), `conform serve --fault`, the matrix,
 * the mutation driver (test/helpers/mutation.ts). Which checks must report a fault is not written
 * here: each check names the faults it catches (`Check.catches` in suites/, typed by `FaultName`
 * through src/fault-name.ts).
 *
 * A new fault is one `f(name, area, rule, breaks, effect, dialects?)` call at the end of FAULTS,
 * and the fault's name in the `catches` of each check that must fail under it.
 */
import { Decimal } from './decimal.ts';
import { UnknownFaultError } from '../src/errors.ts';
import type { StatementKey } from '../src/statements.ts';
import {
  API_KEY_HEADER,
  ASSET_TYPE,
  EXTENDED_HOURS_MARKET,
  LIMITS,
  METHOD,
  QUERY,
  STATUS,
  TEXT,
  type RestStatus,
} from '../src/spec.ts';
import { resolveConfig, type ReferenceConfig } from './config.ts';
import { applyDialect } from './dialect-config.ts';
import type { Dialect } from './dialect.ts';
import { keyHeader, keyHeaderSpelled } from './key-header.ts';
import type { KeyRecord, ServiceView } from './model.ts';
import { PriceBook, type PairEntry } from './prices.ts';
import type { Deviation, Outcome, PairsVerdict } from './seams.ts';
import { TOO_MANY_PAIRS, isObj } from './session.ts';

/** Each area of the spec a fault may break, with the area of the mutation score it counts in. */
export const FAULT_AREAS = {
  'rest-envelope': 'REST envelope',
  'status-numbers': 'REST envelope',
  auth: 'auth',
  entitlements: 'auth',
  pagination: 'pagination',
  filters: 'pagination',
  'pair-record': 'pagination',
  'price-record': 'price',
  market: 'price',
  'price-status': 'price',
  handshake: 'handshake',
  'connection-limit': 'limits',
  subscription: 'session',
  notice: 'session',
  ping: 'keep-alive',
  keepalive: 'keep-alive',
  push: 'push',
} as const;

export type FaultArea = keyof typeof FAULT_AREAS;
export type ScoreArea = (typeof FAULT_AREAS)[FaultArea];

/** How the dialects of the reference bear on a fault: each answer is a reason, or undefined when a dialect does not. */
export interface FaultDialects {
  /** Why a dialect leaves the rule unbreakable or unseen: the fault is not run under it. */
  readonly maskedBy?: (d: Readonly<Dialect>) => string | undefined;
  /**
   * Why a dialect carries the broken frame where more checks look (the fault still breaks its one
   * rule): those checks name the fault in their `catchesUnderDialects`.
   */
  readonly widenedBy?: (d: Readonly<Dialect>) => string | undefined;
}

/** A fault's record. */
export interface Fault<N extends string = string> extends FaultDialects {
  readonly name: N;
  readonly area: FaultArea;
  /** The rule it breaks, in the spec's words where possible. */
  readonly rule: string;
  /** The statements of the spec (src/matrix.ts keys) the fault breaks. */
  readonly breaks: readonly StatementKey[];
  /** What it does to the service: its transformations at the seams. */
  readonly effect: Deviation;
}

const f = <N extends string>(
  name: N,
  area: FaultArea,
  rule: string,
  breaks: readonly StatementKey[],
  effect: Deviation,
  dialects: FaultDialects = {},
): Fault<N> => ({ name, area, rule, breaks, effect, ...dialects });

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
const keyOfSpelling = (svc: ServiceView, req: Parameters<typeof keyHeader>[0], exact: boolean): KeyRecord | undefined =>
  svc.keyFor(keyHeaderSpelled(req, (name) => (name === API_KEY_HEADER) === exact));

/** `params.pairs` when it is an array of strings. */
const stringPairs = (params: unknown): string[] | undefined =>
  isObj(params) && Array.isArray(params.pairs) && params.pairs.every((c) => typeof c === 'string')
    ? (params.pairs as string[])
    : undefined;

const isInvalid = (verdict: PairsVerdict): boolean => !Array.isArray(verdict);

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
const lateTypes = new WeakMap<ServiceView, string | undefined>();

/** An internal failure in place of the answer. */
const FAILED = { status: STATUS.INTERNAL, data: null, message: 'internal error' } as const;

/** Whether the /v1/pairs parameter `name` is given and is not a positive integer. */
const invalidPaging = (params: URLSearchParams, name: string): boolean => {
  const raw = params.get(name);
  return raw !== null && !/^[1-9][0-9]*$/.test(raw);
};

/**
 * Fault market-crypto-deep-session's pair: the last listed active Crypto pair without pools (a
 * pooled pair is one the profile names), past every sample of the first.
 */
const deepCrypto = (svc: ServiceView): PairEntry | undefined =>
  svc.listing.filter((e) => e.state === 'active' && e.assetType === ASSET_TYPE.crypto && !e.config.pools).at(-1);

/** Links and other spellings of the zones the reference reports (fault market-timezone-alias). */
const ZONE_ALIASES: Readonly<Record<string, string>> = {
  'America/New_York': 'US/Eastern',
  'America/Chicago': 'US/Central',
  'Europe/London': 'GB',
};

/**
 * Fault price-deep-pair-inverted's pair: deep in the catalogue, out of reach of every sample of
 * the first pairs per asset type (the profile's sample, a check's first three of a type). The last
 * listed active pair with three of its type before it in the listing and in the catalogue, and not
 * among the catalogue's first ten; the last listed active pair when none is.
 */
function deepPair(svc: ServiceView): PairEntry | undefined {
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

/** A push interval from which checks waiting for pushes may outlast a mutation run's ping window. */
const KEEPALIVE_TIMING_TICK_MS = 500;

/** The reference's configuration under a dialect (its catalogue and allowances). */
const referenceConfig = (d: Readonly<Dialect>): ReferenceConfig => applyDialect(resolveConfig({}), d);

/** Masks a rule that needs `n` active pairs in the catalogue. */
function fewerPairsThan(d: Readonly<Dialect>, n: number): string | undefined {
  const size = referenceConfig(d).pairs.filter((p) => (p.state ?? 'active') === 'active').length;
  return size < n ? `a catalogue of ${size} active pairs has fewer than the ${n} the rule needs` : undefined;
}

/**
 * Masks a rule that needs `n` pairs that take a subscribe: listed pairs that refuse one (every fifth
 * active pair) are left out once seen, which may leave fewer than the rule needs.
 */
function fewerSubscribableThan(d: Readonly<Dialect>, n: number): string | undefined {
  if (!d.stream.suspendedListed) return undefined;
  const size = referenceConfig(d).pairs.filter((p) => (p.state ?? 'active') === 'active').length;
  const open = size - Math.ceil((size - 1) / 5);
  return open < n
    ? `about ${open} of ${size} active pairs take a subscribe, fewer than the ${n} the rule needs`
    : undefined;
}

/**
 * Masks a stop judged after a pair has shown two pushes within the stop checks' wait: pushes only
 * on change, a second or more apart (or from pairs that change seconds apart), may not show them.
 */
function rarePushes(d: Readonly<Dialect>): string | undefined {
  if (d.stream.pushes === 'every-tick') return undefined;
  if (d.stream.tickMs >= 1000)
    return (
      `pushes come only on change, at most every ${d.stream.tickMs} ms: a pair ` +
      `may not push twice within the stop checks' wait`
    );
  if (d.stream.stillPairs)
    return (
      'pushes come only on change and some pairs never move: a pair ' +
      "may not push twice within the stop checks' wait"
    );
  return d.stream.quietPairs
    ? 'pushes come only on change and some pairs change seconds apart: a pair ' +
        "may not push twice within the stop checks' wait"
    : undefined;
}

/** Masks a fault of the allowances when the profile does not state them: the run finds them instead. */
const unstatedAllowances =
  (why: string) =>
  (d: Readonly<Dialect>): string | undefined =>
    d.keys.stated ? undefined : `allowances are not stated: ${why}`;

export const FAULTS = [
  // REST envelope
  f('envelope-status-number-integer', 'rest-envelope', 'status_number is a string', ['field:envelope:status_number'], {
    envelope: { write: (out) => withBody(out, (b) => (b.status_number = Number(b.status_number))) },
  }),
  f('envelope-ts-string', 'rest-envelope', 'ts is an integer', ['field:envelope:ts'], {
    envelope: { write: (out) => withBody(out, (b) => (b.ts = String(b.ts))) },
  }),
  f('envelope-error-data-filled', 'rest-envelope', 'data is null on errors', ['field:envelope:data'], {
    envelope: { write: (out, { status }) => (isError(status) ? withBody(out, (b) => (b.data = {})) : out) },
  }),
  f('envelope-error-message-missing', 'rest-envelope', 'message is present on errors', ['field:envelope:message'], {
    envelope: { write: (out, { status }) => (isError(status) ? withBody(out, (b) => delete b.message) : out) },
  }),
  // Auth
  f(
    'auth-header-case-sensitive',
    'auth',
    'header names are case-insensitive: X-API-KEY and x-api-key are accepted',
    ['rule:auth:header'],
    {
      admission: { caller: (_key, { req, svc }) => keyOfSpelling(svc, req, true) },
    },
  ),
  f('auth-canonical-header-refused', 'auth', 'the key header is accepted as written, X-API-Key', ['rule:auth:header'], {
    admission: { caller: (key, { req, surface, svc }) => (surface === 'rest' ? keyOfSpelling(svc, req, false) : key) },
  }),
  f(
    'auth-missing-key-accepted',
    'auth',
    'a request without a valid key is rejected with HTTP 401 and 50005',
    ['rule:auth:rest-without-a-valid-key', 'status:50005'],
    {
      admission: {
        caller: (key, { req, surface, svc }) =>
          key ?? (surface === 'rest' && keyHeader(req) === undefined ? svc.primary : undefined),
      },
    },
  ),
  f(
    'auth-http-403',
    'auth',
    'a missing or invalid key gets HTTP 401 (not another status)',
    ['rule:auth:rest-without-a-valid-key'],
    {
      envelope: { write: (out, { status }) => (status === STATUS.UNAUTHORIZED ? { ...out, http: 403 } : out) },
    },
  ),
  f('auth-suspended-served', 'auth', 'a suspended key gets 50007', ['status:50007'], {
    admission: { account: (status) => (status === STATUS.SUSPENDED ? undefined : status) },
  }),
  // Pagination and filters
  f(
    'pairs-default-per-page-20',
    'pagination',
    'per_page defaults to 10',
    ['limit:per_page-default', 'parameter:pairs:per_page'],
    {
      query: { pairs: (q, { params }) => (params.has(QUERY.pairs.perPage) ? q : { ...q, perPage: 20 }) },
    },
  ),
  f(
    'pairs-page-alone-per-page-20',
    'pagination',
    'page given without per_page pages with the default size 10 (here 20)',
    ['limit:per_page-default', 'parameter:pairs:per_page'],
    {
      query: {
        pairs: (q, { params }) =>
          params.has(QUERY.pairs.page) && !params.has(QUERY.pairs.perPage) ? { ...q, perPage: 20 } : q,
      },
    },
  ),
  f(
    'pairs-error-envelope',
    'rest-envelope',
    '/v1/pairs errors have data null and a message (here data [] and no message on 50004)',
    ['field:envelope:data', 'field:envelope:message'],
    {
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
    {
      // Lenient paging, a clamped per_page and an empty page past the end leave /v1/pairs no 50004 to answer.
      maskedBy: (d) =>
        d.rest.invalidPaging === 'defaults' && d.rest.perPageOver === 'clamp' && d.rest.pastEnd === 'empty'
          ? '/v1/pairs answers every paging it is given, so it has no invalid-request error to write'
          : undefined,
    },
  ),
  f(
    'pairs-pages-overlap',
    'pagination',
    'pages are disjoint: page n starts after page n-1 ends',
    ['rule:pairs:pagination', 'parameter:pairs:page'],
    { query: { window: (w) => (w.start > 0 ? { ...w, start: w.start - 1 } : w) } },
  ),
  f(
    'pairs-per-page-ignored',
    'pagination',
    'per_page sets the number of items per page',
    ['parameter:pairs:per_page'],
    {
      query: {
        window: (_w, { page }) => ({ start: (page - 1) * LIMITS.defaultPerPage, count: LIMITS.defaultPerPage }),
      },
    },
  ),
  f(
    'pairs-invalid-page-internal-error',
    'pagination',
    'an invalid page is refused with 50004 or answered with the defaults (here a 50000)',
    ['parameter:pairs:page', 'status:50004'],
    {
      envelope: {
        answer: (a, { by, params }) => (by === 'pairs' && invalidPaging(params, QUERY.pairs.page) ? FAILED : a),
      },
    },
  ),
  f(
    'pairs-invalid-per-page-internal-error',
    'pagination',
    'an invalid per_page is refused with 50004 or answered with the defaults (here a 50000)',
    ['parameter:pairs:per_page', 'status:50004'],
    {
      envelope: {
        answer: (a, { by, params }) => (by === 'pairs' && invalidPaging(params, QUERY.pairs.perPage) ? FAILED : a),
      },
    },
  ),
  f('pairs-type-filter-ignored', 'filters', 'type filters by asset type', ['parameter:pairs:type'], {
    query: { pairs: (q) => ({ ...q, type: undefined }) },
  }),
  f('pairs-code-search-ignored', 'filters', 'code searches pairs by a code or fragment', ['parameter:pairs:code'], {
    query: { pairs: (q) => ({ ...q, code: undefined }) },
  }),
  f('pairs-record-name-missing', 'pair-record', 'a pair record has code, name, base and quote', ['field:pair:name'], {
    record: { pair: (r) => without(r, 'name') },
  }),
  f(
    'pairs-base-mismatch',
    'pair-record',
    'base and quote are the symbols of the code',
    ['field:pair:base', 'field:pair:quote'],
    { record: { pair: (r) => ({ ...r, base: r.quote }) } },
  ),
  // Price record and market object
  f(
    'price-ask-number',
    'price-record',
    'every price value is a JSON string',
    ['field:price:ask', 'rule:service:decimal-strings'],
    { record: { price: (d) => ({ ...d, ask: Number(d.ask) }) } },
  ),
  f('price-not-mid', 'price-record', 'price is the mid of ask and bid', ['field:price:price'], {
    // One tick off the quote's own mid, whatever its decimals: never the mid at any rounding.
    record: {
      quote: (q, { entry }) => ({
        ...q,
        price: new Decimal(q.price).plus(entry.tick).toFixed(q.price.split('.')[1]?.length ?? 0),
      }),
    },
  }),
  f('price-bid-above-ask', 'price-record', 'bid <= price <= ask', ['field:price:bid', 'field:price:ask'], {
    record: { quote: (q) => ({ ask: q.bid, bid: q.ask, price: q.price }) },
  }),
  f(
    'price-deep-pair-inverted',
    'price-record',
    "bid <= price <= ask for every pair (here only the catalogue's last pair, outside every sample, breaks it)",
    ['field:price:bid', 'field:price:ask'],
    {
      record: { price: (d, { entry, svc }) => (entry === deepPair(svc) ? { ...d, ask: d.bid, bid: d.ask } : d) },
    },
    {
      // The checks' samples (a few pairs per asset type, the stream's live pairs) cover much of a
      // small catalogue: no pair lies outside all of them, so the fault's pair is not a deep one.
      maskedBy: (d) =>
        fewerPairsThan(d, 30) === undefined ? undefined : 'a catalogue this small has no pair outside every sample',
    },
  ),
  f(
    'market-crypto-timezone',
    'market',
    'timezone is absent for Crypto',
    ['field:market:timezone', 'rule:market:crypto'],
    {
      record: { price: (d) => withMarket(d, (m) => (m.timezone ??= 'UTC')) },
    },
  ),
  f('market-timezone-missing', 'market', 'timezone is present for non-Crypto assets', ['field:market:timezone'], {
    record: { price: (d) => withMarket(d, (m) => delete m.timezone) },
  }),
  f('market-timezone-invalid', 'market', 'timezone is an IANA zone name', ['field:market:timezone'], {
    record: {
      price: (d) =>
        withMarket(d, (m) => {
          if (m.timezone !== undefined) m.timezone = 'America/New York';
        }),
    },
  }),
  f(
    'market-crypto-regular-session',
    'market',
    'Crypto reason is continuous',
    ['rule:market:crypto', 'field:market:reason'],
    {
      record: {
        price: (d) =>
          withMarket(d, (m) => {
            if (m.reason === 'continuous') m.reason = 'regular_session';
          }),
      },
    },
  ),
  f(
    'market-open-inverted',
    'market',
    'open is true in a session and false with market_closed (non-Crypto open flag inverted, so it shows at any hour)',
    ['field:market:open', 'rule:market:other-assets'],
    {
      record: {
        price: (d) =>
          withMarket(d, (m) => {
            if (m.timezone !== undefined) m.open = !m.open;
          }),
      },
    },
  ),
  // 50102 and 50104 shapes
  f('stale-http-503', 'price-status', '50102 keeps HTTP 200', ['rule:price:stale-keeps-data', 'status:50102'], {
    envelope: { write: (out, { status }) => (status === STATUS.PRICE_STALE ? { ...out, http: 503 } : out) },
  }),
  f('stale-data-null', 'price-status', '50102 still fills data', ['rule:price:stale-keeps-data', 'status:50102'], {
    envelope: {
      write: (out, { status }) => (status === STATUS.PRICE_STALE ? withBody(out, (b) => (b.data = null)) : out),
    },
  }),
  f(
    'unknown-pair-status-50008',
    'price-status',
    'an unknown pair answers 50104',
    ['status:50104', 'rule:price:unknown-pair-data-null'],
    {
      envelope: {
        answer: (a, { by }) =>
          by === 'price' && a.status === STATUS.PAIR_NOT_FOUND ? { ...a, status: STATUS.NOT_FOUND } : a,
      },
    },
  ),
  f(
    'missing-code-200',
    'price-status',
    'a missing code is an invalid request (50004)',
    ['parameter:price:code', 'status:50004'],
    {
      envelope: {
        answer: (a, { by, params }) =>
          by === 'price' && a.status === STATUS.INVALID_REQUEST && !params.get(QUERY.price.code)
            ? { status: STATUS.OK, data: null }
            : a,
      },
    },
  ),
  f(
    'unknown-endpoint-50004',
    'rest-envelope',
    'an unknown endpoint answers 50008',
    ['rule:endpoints:unknown-endpoint', 'status:50008'],
    {
      envelope: {
        answer: (a, { by }) =>
          by === 'router' && a.status === STATUS.NOT_FOUND ? { status: STATUS.INVALID_REQUEST, data: null } : a,
      },
    },
  ),
  f('probe-status-swapped', 'status-numbers', 'API maintenance answers 50001 (not 50003)', ['status:50001'], {
    admission: { account: (s) => (s === STATUS.API_MAINTENANCE ? STATUS.GRPC_MAINTENANCE : s) },
  }),
  f(
    'probe-restricted-as-suspended',
    'status-numbers',
    'a restricted account answers 50100 (not 50007)',
    ['status:50100'],
    {
      admission: { account: (s) => (s === STATUS.RESTRICTED_USER ? STATUS.SUSPENDED : s) },
    },
  ),
  // Entitlements
  f(
    'entitlement-asset-type-ignored',
    'entitlements',
    'a key limited to asset types cannot read others (50109)',
    ['rule:auth:entitlements', 'status:50109', 'notice:50109'],
    {
      // The asset type is not looked at; the whitelist still is.
      entitlement: (denied, { key, entry }) =>
        denied !== STATUS.ASSET_TYPE_DENIED
          ? denied
          : key.pairs && !key.pairs.includes(entry!.code)
            ? STATUS.ACCESS_DENIED
            : undefined,
    },
    {
      // With one documented denial for every refused pair, the profile's probe of that status is
      // the asset-type-limited key asking for another type.
      widenedBy: (d) =>
        d.rest.denial === 'by-cause' || d.rest.denial === STATUS.ASSET_TYPE_DENIED
          ? undefined
          : `the probe of ${d.rest.denial} asks for a pair of an asset type the key may not read`,
    },
  ),
  f(
    'entitlement-pairs-list-unfiltered',
    'entitlements',
    'the pairs a key reads depend on the key: /v1/pairs lists only its pairs',
    ['rule:auth:entitlements'],
    { entitlement: (denied, { use }) => (use === 'list' ? undefined : denied) },
  ),
  f(
    'entitlement-whitelist-subscribe',
    'entitlements',
    'subscribing outside the whitelist gives 50010',
    ['rule:auth:after-connection', 'notice:50010'],
    {
      entitlement: (denied, { use }) => (use === 'subscribe' && denied === STATUS.ACCESS_DENIED ? undefined : denied),
    },
  ),
  f(
    'entitlement-asset-type-partial',
    'entitlements',
    'a key limited to asset types is denied every other asset type (here Metal is served on REST and the stream)',
    ['rule:auth:entitlements'],
    {
      // Metal is served to a key limited to other asset types, on REST and the stream; the listing stays filtered.
      entitlement: (denied, { entry, use }) =>
        use !== 'list' && denied === STATUS.ASSET_TYPE_DENIED && entry?.assetType === ASSET_TYPE.metal
          ? undefined
          : denied,
    },
  ),
  f(
    'entitlement-whitelist-price-ignored',
    'entitlements',
    "REST /v1/price refuses a pair outside the key's whitelist with 50010",
    ['rule:auth:entitlements', 'status:50010'],
    {
      entitlement: (denied, { use }) => (use === 'price' && denied === STATUS.ACCESS_DENIED ? undefined : denied),
    },
    {
      // With one documented denial for every refused pair, the profile's probe of that status is
      // the whitelisted key asking for a pair outside its whitelist.
      widenedBy: (d) =>
        d.rest.denial === 'by-cause'
          ? undefined
          : `the probe of ${d.rest.denial} asks for a pair outside the whitelist`,
    },
  ),
  // Handshake
  f(
    'handshake-body-code',
    'handshake',
    'handshake refusals carry status_number and message, never code',
    ['rule:handshake:never-code', 'field:handshake:status_number'],
    {
      admission: { body: (_body, { refusal }) => ({ code: refusal.status, message: refusal.message }) },
    },
  ),
  f(
    'handshake-no-stream-accepted',
    'handshake',
    'a key without V1 stream access is refused with 50010',
    ['rule:auth:handshake-failures', 'status:50010'],
    {
      admission: {
        refusal: (refusal, { key }) =>
          key.stream === false && refusal?.status === STATUS.ACCESS_DENIED ? undefined : refusal,
      },
    },
  ),
  f(
    'handshake-missing-key-accepted',
    'handshake',
    'a connection without a key is refused with 50005 (or gets a 50005 notice)',
    ['rule:auth:after-connection', 'notice:50005'],
    {
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
  ),
  f(
    'handshake-header-case-sensitive',
    'handshake',
    'the stream handshake takes the key header in any spelling (here only X-API-Key)',
    ['rule:auth:header'],
    {
      admission: {
        caller: (key, { req, surface, svc }) => (surface === 'stream' ? keyOfSpelling(svc, req, true) : key),
      },
    },
  ),
  // Connection limit
  f(
    'limit-per-ip',
    'connection-limit',
    'connections are counted per key, not per IP address',
    ['limit:connections-per-key'],
    {
      admission: {
        slot: (slot, { remoteAddress }) => ({ ...slot, countKey: `${slot.countKey}\u0000${remoteAddress}` }),
      },
    },
  ),
  f(
    'limit-off-by-one',
    'connection-limit',
    'a connection beyond the allowance is refused with 50009',
    ['limit:connections-per-key', 'status:50009'],
    { admission: { slot: (slot) => ({ ...slot, allowance: slot.allowance + 1 }) } },
    {
      // Found rather than stated, the allowance is the one the target enforces, off by one or not.
      maskedBy: unstatedAllowances('the run finds the allowance the fault enforces'),
    },
  ),
  f(
    'limit-slot-not-freed',
    'connection-limit',
    "closing a connection frees its slot (here a single-connection key's slot is never freed)",
    ['limit:connections-per-key'],
    {
      // Only a single-connection key's slot (keys.limited) is never given back.
      admission: { slot: (slot, { key }) => ((key.connections ?? 1) === 1 ? { ...slot, freed: false } : slot) },
    },
    {
      // The fault keeps only a single-connection key's slot, and the slot check closes a connection of keys.limited.
      // A primary key of one connection would leak too, and every stream check after the first needs its slot.
      maskedBy: (d) => {
        const { limited, primary } = referenceConfig(d).keys;
        if (limited?.connections !== 1)
          return (
            `keys.limited allows ${String(limited?.connections)} connections, ` +
            "and the fault leaks only a single-connection key's slot"
          );
        if (primary?.connections === 1)
          return "keys.primary allows one connection, so the fault leaks the primary key's slot too";
        if (d.keys.others === 1)
          return 'the other keys allow one connection each: the fault leaks their slots too, which later checks need';
        // Unstated, the allowance is searched for before any check: the search's own connection leaks the
        // slot, and every later refusal reads as the found allowance contradicted, which a check skips.
        return unstatedAllowances('the search for them leaks the slot before any check')(d);
      },
    },
  ),
  // Subscribe / unsubscribe
  f(
    'subscribe-extends',
    'subscription',
    'a new subscribe replaces the earlier set',
    ['transition:subscribed/subscribe', 'limit:subscriptions-per-connection'],
    {
      session: {
        next: (next, { current, method }) => (method === METHOD.subscribe ? [...new Set([...current, ...next])] : next),
      },
    },
    { maskedBy: rarePushes },
  ),
  f(
    'subscribe-accepts-101',
    'subscription',
    'at most 100 pairs; 101 gives 50004',
    ['limit:pairs-per-connection', 'parameter:subscribe:params.pairs'],
    {
      session: {
        pairs: (verdict, { params }) => {
          const pairs = stringPairs(params);
          return isInvalid(verdict) && pairs?.length === LIMITS.maxPairsPerSubscribe + 1
            ? [...new Set(pairs)]
            : verdict;
        },
      },
    },
    {
      // The pair limit is broken by a subscribe of 101 pairs: a smaller catalogue has none.
      maskedBy: (d) =>
        fewerPairsThan(d, LIMITS.maxPairsPerSubscribe + 1) ?? fewerSubscribableThan(d, LIMITS.maxPairsPerSubscribe + 1),
    },
  ),
  f(
    'subscribe-limit-99',
    'subscription',
    'exactly 100 pairs are accepted',
    ['limit:pairs-per-connection'],
    {
      session: {
        pairs: (verdict, { params }) =>
          !isInvalid(verdict) && stringPairs(params)?.length === LIMITS.maxPairsPerSubscribe
            ? { invalid: TOO_MANY_PAIRS }
            : verdict,
      },
    },
    {
      // The refused 100th pair shows only in a subscribe of 100 pairs: a smaller catalogue has none.
      maskedBy: (d) =>
        fewerPairsThan(d, LIMITS.maxPairsPerSubscribe) ?? fewerSubscribableThan(d, LIMITS.maxPairsPerSubscribe),
    },
  ),
  f(
    'subscribe-empty-internal-error',
    'subscription',
    'an empty pairs list is refused with 50004 or acknowledged (here a 50000 error notice)',
    ['parameter:subscribe:params.pairs', 'notice:50004'],
    {
      notice: (n, { cause }) =>
        cause === 'empty-pairs' ? { ...n, method: METHOD.error, message: 'internal error', code: STATUS.INTERNAL } : n,
    },
  ),
  f(
    'subscribe-missing-params-accepted',
    'subscription',
    'a subscribe without params is an invalid request (50004)',
    ['parameter:subscribe:params', 'notice:50004'],
    {
      session: {
        pairs: (verdict, { params, method }) => (method === METHOD.subscribe && params === undefined ? [] : verdict),
      },
    },
  ),
  f(
    'subscribe-pairs-string-accepted',
    'subscription',
    'params.pairs that is not an array is an invalid request (50004)',
    ['parameter:subscribe:params.pairs', 'notice:50004'],
    {
      session: {
        pairs: (verdict, { params, method }) =>
          method === METHOD.subscribe && isObj(params) && typeof params.pairs === 'string' ? [params.pairs] : verdict,
      },
    },
  ),
  f(
    'subscribe-inactive-accepted',
    'subscription',
    'an inactive pair gives 50104',
    ['transition:attempt/subscribe', 'notice:50104'],
    {
      session: { subscribable: (entry, { code, svc }) => entry ?? svc.book.pairs.get(code) },
    },
  ),
  f(
    'subscribe-unknown-message',
    'subscription',
    'unknown pair message is "pair not found: <code>"',
    ['rule:subscribe:unknown-pair-message'],
    {
      notice: (n, { code, request }) =>
        request === METHOD.subscribe && code === STATUS.PAIR_NOT_FOUND ? { ...n, message: 'unknown pair' } : n,
    },
  ),
  f(
    'subscribe-unknown-among-known-dropped',
    'subscription',
    'a subscribe listing an unknown pair among known ones is an error notice 50104, ' +
      'never a success (here the unknown pair is dropped)',
    ['transition:attempt/subscribe', 'rule:subscribe:unknown-pair-message'],
    {
      // Unknown pairs listed beside known ones are dropped instead of refused.
      session: {
        select: (codes, { method, svc }) =>
          method === METHOD.subscribe && codes.some((c) => svc.livePair(c))
            ? codes.filter((c) => svc.livePair(c))
            : codes,
      },
    },
  ),
  f(
    'unsubscribe-keeps-pushing',
    'subscription',
    'after unsubscribe pushes for the listed pairs stop',
    ['transition:subscribed/unsubscribe'],
    {
      session: { next: (next, { current, method }) => (method === METHOD.unsubscribe ? [...current] : next) },
    },
    { maskedBy: rarePushes },
  ),
  f(
    'unsubscribe-first-pair-only',
    'subscription',
    'an unsubscribe stops every listed pair (here only the first)',
    ['transition:subscribed/unsubscribe'],
    {
      session: { select: (codes, { method }) => (method === METHOD.unsubscribe ? codes.slice(0, 1) : codes) },
    },
  ),
  f(
    'push-first-pair-only',
    'subscription',
    'every pair of a subscription is pushed (here only the first listed)',
    ['transition:none/subscribe', 'event:push'],
    { push: { pairs: (codes) => codes.slice(0, 1) } },
  ),
  f(
    'push-unsubscribed-pair',
    'subscription',
    'only subscribed pairs are pushed',
    ['field:push:code'],
    {
      push: {
        pairs: (codes, { svc }) => {
          const extra = [...svc.book.pairs.values()].find((e) => PriceBook.priced(e) && !codes.includes(e.code));
          return extra ? [...codes, extra.code] : codes;
        },
      },
    },
    { maskedBy: rarePushes },
  ),
  f(
    'push-never-starts',
    'subscription',
    'after a successful subscribe pushes start without further requests',
    ['rule:subscribe:pushes-without-requests'],
    { push: { pairs: () => [] } },
  ),
  // Notices
  f(
    'notice-code-number',
    'notice',
    'notice code is a string',
    ['field:notice:code'],
    { notice: (n) => ({ ...n, code: Number(n.code) }) },
    {
      widenedBy: (d) =>
        d.stream.unauthorized === 'after-connect'
          ? 'refused after the upgrade, a missing or invalid key is answered with a 50005 notice, ' +
            'whose code the fault makes a number'
          : undefined,
    },
  ),
  f('notice-id-not-echoed', 'notice', 'the client id is echoed in the reply', ['field:notice:id'], {
    notice: (n) => without(n, 'id'),
  }),
  f(
    'notice-subscribe-message-lowercase',
    'notice',
    'subscribe success message is "Success"',
    ['field:notice:message'],
    {
      notice: (n, { code }) =>
        n.method === METHOD.subscribe && code === STATUS.OK
          ? { ...n, message: TEXT.subscribeSuccess.toLowerCase() }
          : n,
    },
  ),
  f(
    'unsubscribe-message-capitalized',
    'notice',
    'unsubscribe success message is "success"',
    ['rule:unsubscribe:success-reply', 'field:notice:message'],
    {
      notice: (n, { code }) =>
        n.method === METHOD.unsubscribe && code === STATUS.OK ? { ...n, message: TEXT.subscribeSuccess } : n,
    },
  ),
  f(
    'notice-status-number',
    'notice',
    'post-connect frames never carry status_number',
    ['rule:handshake:no-status-after-connect'],
    { notice: (n, { code }) => ({ ...n, status_number: code }) },
    {
      widenedBy: (d) =>
        d.stream.unauthorized === 'after-connect'
          ? 'refused after the upgrade, a missing or invalid key is answered with a 50005 notice, ' +
            'which the fault gives a status_number'
          : undefined,
    },
  ),
  f(
    'notice-malformed-json-ignored',
    'notice',
    'a malformed message gets a 50004 notice',
    ['event:notice-error', 'notice:50004'],
    { notice: (n, { cause }) => (cause === 'malformed-json' ? undefined : n) },
  ),
  f(
    'notice-denied-shape',
    'notice',
    'every error notice echoes the id and has data null (here 50010 and 50109 drop the id and fill data)',
    ['field:notice:id', 'field:notice:data'],
    {
      // 50010 and 50109 drop the id and fill data.
      notice: (n, { code }) =>
        code === STATUS.ACCESS_DENIED || code === STATUS.ASSET_TYPE_DENIED
          ? { ...without(n, 'id'), data: { reason: n.message } }
          : n,
    },
  ),
  f(
    'notice-unknown-method-ignored',
    'notice',
    'an unknown method gets a 50004 notice',
    ['parameter:subscribe:method', 'notice:50004'],
    { notice: (n, { cause }) => (cause === 'unknown-method' ? undefined : n) },
  ),
  // Ping and keep-alive
  f('ping-reply-json', 'ping', 'the ping reply is the plain text Pong!', ['rule:ping:reply', 'event:pong'], {
    session: { pong: () => ({ method: METHOD.ping, message: TEXT.pong, code: STATUS.OK, data: null }) },
  }),
  f('ping-reply-lowercase', 'ping', 'the ping reply is exactly Pong!', ['rule:ping:reply'], {
    session: { pong: (reply) => (typeof reply === 'string' ? reply.toLowerCase() : reply) },
  }),
  f(
    'keepalive-never',
    'keepalive',
    'a connection with no ping for the window is closed',
    ['transition:connected/no-ping', 'limit:ping-interval'],
    { session: { keepAlive: (k) => ({ ...k, windowMs: undefined }) } },
  ),
  f(
    'keepalive-early',
    'keepalive',
    'the connection is not closed before the ping window ends',
    ['limit:ping-interval'],
    {
      session: {
        keepAlive: (k) => ({ ...k, windowMs: k.windowMs === undefined ? undefined : Math.floor(k.windowMs / 2) }),
      },
    },
  ),
  f(
    'keepalive-ping-not-reset',
    'keepalive',
    'each ping restarts the window',
    ['limit:ping-interval'],
    { session: { keepAlive: (k) => ({ ...k, pingResets: false }) } },
    {
      // Under every dialect: its pushes keep a check watching frames past a window, pinging to hold it.
      widenedBy: () => 'a check that pings its connection to hold it across a window sees the window closed under it',
      // At pushes this slow, which other checks wait for pushes past a window (two seconds in the
      // mutation runs) is a matter of timing: the checks that see it closed under them are no fixed set.
      maskedBy: (d) =>
        d.stream.tickMs >= KEEPALIVE_TIMING_TICK_MS
          ? `at a push every ${d.stream.tickMs} ms, checks waiting for pushes outlast a window`
          : undefined,
    },
  ),
  // Push frames
  f('push-missing-bid', 'push', 'push frames carry code, ask, bid, price', ['field:push:bid'], {
    push: { message: (p) => without(p, 'bid') },
  }),
  f(
    'push-price-number',
    'push',
    'push price values are JSON strings',
    ['field:push:price', 'rule:service:decimal-strings'],
    { push: { message: (p) => ({ ...p, price: Number(p.price) }) } },
  ),
  f(
    'push-changed-missing-bid',
    'push',
    'push frames carry code, ask, bid, price (here only on a connection whose ' +
      'subscription changed, which no push check makes)',
    ['field:push:bid'],
    {
      // Connections whose subscription changed (replaced or reduced) get pushes of their own, without bid.
      push: {
        variant: ({ resubscribed }) => (resubscribed ? 'changed' : undefined),
        message: (p, { variant }) => (variant === 'changed' ? without(p, 'bid') : p),
      },
    },
  ),
  // Market rules on every pair, not on samples
  f(
    'market-crypto-deep-session',
    'market',
    "Crypto is only ever in REG (here the catalogue's last Crypto pair, outside every sample, is CLOSED)",
    ['rule:market:crypto', 'field:market:session'],
    {
      record: {
        price: (d, { entry, svc }) =>
          entry === deepCrypto(svc)
            ? withMarket(d, (m) => Object.assign(m, { open: false, reason: 'no_price', session: 'CLOSED' }))
            : d,
      },
    },
  ),
  f(
    'market-timezone-alias',
    'market',
    'timezone is a canonical IANA zone name (here a link or another spelling: US/Eastern, GB, utc)',
    ['field:market:timezone'],
    {
      record: {
        price: (d) =>
          withMarket(d, (m) => {
            if (typeof m.timezone === 'string') m.timezone = ZONE_ALIASES[m.timezone] ?? m.timezone.toLowerCase();
          }),
      },
    },
  ),
  f(
    'market-extended-hours-non-us',
    'market',
    'pre_session and post_session belong to US equities (here an equity of another market is in PRE)',
    ['rule:market:us-extended-hours'],
    {
      record: {
        price: (d, { entry }) =>
          entry.assetType === ASSET_TYPE.equity && entry.market !== EXTENDED_HOURS_MARKET
            ? withMarket(d, (m) => Object.assign(m, { open: true, reason: 'pre_session', session: 'PRE' }))
            : d,
      },
    },
  ),
  // Requests without id, the whole post-connect auth notice, keys counted apart, malformed messages
  f(
    'request-without-id-refused',
    'subscription',
    'id is optional: a subscribe or unsubscribe without id is served (here refused with 50004)',
    ['parameter:subscribe:id', 'rule:requests:id-optional'],
    {
      session: {
        request: (verdict, { msg }) =>
          msg.id === undefined && (msg.method === METHOD.subscribe || msg.method === METHOD.unsubscribe)
            ? { invalid: 'invalid request: id is required' }
            : verdict,
      },
    },
  ),
  f(
    'auth-notice-status-number',
    'handshake',
    'post-connect frames never carry status_number (here a keyless or invalid-key connection is ' +
      'told after connecting, with a 50005 notice that also carries status_number)',
    ['rule:handshake:no-status-after-connect', 'notice:50005'],
    {
      // Told after connecting (a legitimate choice), with the handshake body's field beside code.
      admission: { unauthorized: () => 'after-connect' },
      notice: (n, { code }) => (code === STATUS.UNAUTHORIZED ? { ...n, status_number: code } : n),
    },
  ),
  f(
    'limit-pooled-across-keys',
    'connection-limit',
    'connections are counted per key, not pooled (here keys.limited and keys.secondary share one ' +
      'count, each against its own allowance)',
    ['limit:connections-per-key', 'rule:limits:keys-counted-apart'],
    {
      // Only these two share a count: no other check opens keys.secondary, so the pool shows only
      // where a check puts the two keys side by side.
      admission: {
        slot: (slot, { key }) =>
          key.name === 'limited' || key.name === 'secondary' ? { ...slot, countKey: '\u0000pooled' } : slot,
      },
    },
    {
      // The pool holds keys.limited and keys.secondary; unstated, keys.secondary's allowance is unknown,
      // so the check takes a key of a role instead, which the fault leaves counted apart.
      maskedBy: unstatedAllowances('the check pairs keys.limited with a key outside the pool'),
    },
  ),
  f(
    'unsubscribe-invalid-pairs-accepted',
    'subscription',
    'an unsubscribe without params, with pairs not an array or with pairs that are not strings ' +
      'gets 50004 (here a success that stops nothing)',
    ['rule:unsubscribe:request-fields', 'notice:50004'],
    {
      session: {
        pairs: (verdict, { params, method }) =>
          method === METHOD.unsubscribe && isInvalid(verdict) && !stringPairs(params) ? [] : verdict,
      },
    },
  ),
  f(
    'subscribe-params-without-pairs-accepted',
    'subscription',
    'a subscribe whose params holds no pairs gets 50004 (here params {} subscribes to nothing)',
    ['parameter:subscribe:params.pairs', 'notice:50004'],
    {
      session: {
        pairs: (verdict, { params, method }) =>
          method === METHOD.subscribe && isObj(params) && !('pairs' in params) ? [] : verdict,
      },
    },
  ),
  f(
    'notice-not-object-ignored',
    'notice',
    'a message that is not a JSON object (an array, a string) gets a 50004 notice (here none)',
    ['rule:connection:messages-are-objects', 'notice:50004'],
    { notice: (n, { cause }) => (cause === 'not-an-object' ? undefined : n) },
  ),
  f(
    'notice-missing-method-ignored',
    'notice',
    'an object without method gets a 50004 notice (here none)',
    ['rule:connection:messages-are-objects', 'notice:50004'],
    { notice: (n, { cause }) => (cause === 'missing-method' ? undefined : n) },
  ),
  // Catalogue reach
  f(
    'price-late-type-inverted',
    'price-record',
    'bid <= price <= ask for every pair of every asset type (here the asset type with the fewest ' +
      'pairs is listed after every other pair, and its prices are inverted)',
    ['field:price:bid', 'field:price:ask'],
    {
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
  ),
] as const satisfies readonly Fault[];

export type FaultName = (typeof FAULTS)[number]['name'];
export const FAULT_NAMES: readonly FaultName[] = FAULTS.map((x) => x.name);

/** Returns the fault named `name`, or throws UnknownFaultError. */
export function findFault(name: string): Fault {
  const fault = FAULTS.find((x) => x.name === name);
  if (!fault)
    throw new UnknownFaultError(`--fault: unknown fault ${JSON.stringify(name)}; run conform serve --list-faults`);
  return fault;
}

/** One line per fault, for `conform serve --list-faults`; `caughtBy` gives the checks that catch a fault. */
export function formatFaults(caughtBy: (fault: string) => readonly string[]): string {
  const width = Math.max(...FAULTS.map((x) => x.name.length));
  return FAULTS.map(
    (x) => `${x.name.padEnd(width)}  [${x.area}] breaks: ${x.rule}; caught by ${caughtBy(x.name).join(', ')}`,
  ).join('\n');
}
