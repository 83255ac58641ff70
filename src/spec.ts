/**
 * Every literal of the Real-Time Price Service spec (../shared/spec/price-service-v1.md):
 * status numbers, notice codes, limits, enums, paths and fixed texts. No other module repeats
 * one; the schemas, the checks and the reference service all import them from here.
 */

/** REST `status_number` values (spec: Errors, REST `status_number` values). */
export const REST_STATUS = {
  '200': 'Success.',
  '50000': 'Internal server error.',
  '50001': 'API maintenance.',
  '50002': 'WebSocket maintenance.',
  '50003': 'gRPC maintenance.',
  '50004': 'Invalid request: malformed or invalid parameters.',
  '50005': 'Unauthorized: key missing, invalid or expired.',
  '50006': 'Too many requests: throttled by rate limiting.',
  '50007': 'Suspended: key suspended.',
  '50008': 'Resource not found: endpoint or resource does not exist.',
  '50009': 'Connection limit exceeded.',
  '50010': 'Access denied: key lacks permission.',
  '50100': 'Restricted user: account restricted.',
  '50101': 'Price not found for the pair.',
  '50102':
    'Price unavailable or possibly stale (for example market closed, low liquidity); data may still be returned.',
  '50103': 'Price pool unavailable.',
  '50104': 'Pair not found.',
  '50105': 'Pair temporarily unavailable.',
  '50106': 'Pair in maintenance.',
  '50107': 'No pairs allowed for this request.',
  '50108': 'Pool not found.',
  '50109': 'No access to the asset type.',
} as const;
export type RestStatus = keyof typeof REST_STATUS;
export const REST_STATUSES = Object.keys(REST_STATUS) as RestStatus[];

/** Named REST status numbers, so code reads `STATUS.PAIR_NOT_FOUND` rather than a bare string. */
export const STATUS = {
  OK: '200',
  INTERNAL: '50000',
  API_MAINTENANCE: '50001',
  WS_MAINTENANCE: '50002',
  GRPC_MAINTENANCE: '50003',
  INVALID_REQUEST: '50004',
  UNAUTHORIZED: '50005',
  RATE_LIMITED: '50006',
  SUSPENDED: '50007',
  NOT_FOUND: '50008',
  CONNECTION_LIMIT: '50009',
  ACCESS_DENIED: '50010',
  RESTRICTED_USER: '50100',
  PRICE_NOT_FOUND: '50101',
  PRICE_STALE: '50102',
  POOL_UNAVAILABLE: '50103',
  PAIR_NOT_FOUND: '50104',
  PAIR_UNAVAILABLE: '50105',
  PAIR_MAINTENANCE: '50106',
  NO_PAIRS_ALLOWED: '50107',
  POOL_NOT_FOUND: '50108',
  ASSET_TYPE_DENIED: '50109',
} as const satisfies Record<string, RestStatus>;

/** REST results whose `data` is still filled: success and the stale-price warning. */
export const REST_STATUSES_WITH_DATA: readonly RestStatus[] = [STATUS.OK, STATUS.PRICE_STALE];

/** WebSocket notice `code` values after connection (spec: Errors, WebSocket notice `code` values). */
export const NOTICE_CODE = {
  '200': 'Success: subscription or unsubscription accepted.',
  '50000': 'Internal server error: unclassified server or connection-manager error.',
  '50004': 'Invalid request: malformed message, unknown method, missing or invalid pairs, or pair-limit violation.',
  '50005': 'Invalid API key: API-key data absent or invalid after connection.',
  '50010': 'Access denied: key lacks V1/source-stream access or pair-whitelist access.',
  '50104': 'Pair not found: pair does not exist, is inactive or is suspended.',
  '50109': "Asset type access denied: key cannot access the pair's asset type.",
} as const;
export type NoticeCode = keyof typeof NOTICE_CODE;
export const NOTICE_CODES = Object.keys(NOTICE_CODE) as NoticeCode[];
export const NOTICE_ERROR_CODES = NOTICE_CODES.filter((c) => c !== STATUS.OK);

/** Limits (spec: Limits; Method ping; Endpoints GET /v1/pairs). */
export const LIMITS = {
  /** Pairs in one subscribe request and per connection. */
  maxPairsPerSubscribe: 100,
  /** The connection is closed if no ping arrives within this window. */
  pingTimeoutMs: 30_000,
  defaultPage: 1,
  defaultPerPage: 10,
} as const;

/**
 * The least `page` and `per_page` (spec: Endpoints GET /v1/pairs): pages count from 1, the
 * default, and a page holds at least one item. Not a stated limit, a reading of the defaults.
 */
export const PAGING_MINIMUM = { page: 1, perPage: 1 } as const;

/** REST paths (spec: Endpoints). */
export const PATHS = { pairs: '/v1/pairs', price: '/v1/price' } as const;

/** The key header; HTTP header names are case-insensitive (spec: Authentication 1). */
export const API_KEY_HEADER = 'X-API-Key';

/** Query parameters (spec: Endpoints). */
export const QUERY = {
  pairs: { code: 'code', type: 'type', page: 'page', perPage: 'per_page' },
  price: { code: 'code', pool: 'pool' },
} as const;

/** Request methods (spec: Method subscribe / unsubscribe / ping) and the error notice method. */
export const METHOD = { subscribe: 'subscribe', unsubscribe: 'unsubscribe', ping: 'ping', error: 'error' } as const;
export type Method = (typeof METHOD)[keyof typeof METHOD];

/** Fixed texts of the stream (spec: Method subscribe / unsubscribe / ping). */
export const TEXT = {
  subscribeSuccess: 'Success',
  unsubscribeSuccess: 'success',
  pong: 'Pong!',
  pairNotFoundPrefix: 'pair not found: ',
} as const;

/** `message` of the error notice for an unknown pair: `pair not found: <pair_code>`. */
export const pairNotFoundMessage = (code: string): string => `${TEXT.pairNotFoundPrefix}${code}`;

/** Market object enums (spec: Market object). */
export const MARKET_REASONS = [
  'continuous',
  'regular_session',
  'pre_session',
  'post_session',
  'market_closed',
  'no_price',
] as const;
export type MarketReason = (typeof MARKET_REASONS)[number];
export const MARKET_SESSIONS = ['REG', 'PRE', 'POST', 'CLOSED'] as const;
export type MarketSession = (typeof MARKET_SESSIONS)[number];

/** Asset types the spec names; "and others" may exist, so this list is not closed. */
export const ASSET_TYPE = {
  crypto: 'Crypto',
  equity: 'Equity',
  forex: 'Forex',
  commodity: 'Commodity',
  metal: 'Metal',
} as const;
export const KNOWN_ASSET_TYPES = Object.values(ASSET_TYPE);

/**
 * Market combinations the spec fixes, by `reason` (spec: Market object bullets).
 * `no_price` is absent on purpose: the spec shows `open` true and `REG` only "in the example".
 */
export const MARKET_COMBINATIONS = {
  continuous: { open: true, session: 'REG' },
  regular_session: { open: true, session: 'REG' },
  market_closed: { open: false, session: 'CLOSED' },
  pre_session: { open: true, session: 'PRE' },
  post_session: { open: true, session: 'POST' },
} as const satisfies Partial<Record<MarketReason, { open: boolean; session: MarketSession }>>;

/** "Crypto is only ever in `REG`" (States and transitions, Market session states). */
export const CRYPTO_SESSION: MarketSession = 'REG';
/** Crypto: continuously open, never a timezone; it may also report a stale price (`no_price`). */
export const CRYPTO_REASONS: readonly MarketReason[] = ['continuous', 'no_price'];
/** Extended hours (`pre_session`, `post_session`) belong to equities. */
export const EXTENDED_HOURS_REASONS: readonly MarketReason[] = ['pre_session', 'post_session'];

/**
 * Pair code `<asset_type>:<market>:<base>/<quote>` (spec: Pair code). The spec states only the four
 * parts and that the code identifies the quote: so the quote is what follows the last `/`, the base
 * may hold a space or a `/` of its own (`Commodity:ALL:Crude Oil/USD`, `Equity:US:BF/B/USD`), and no
 * part is empty, holds a `:`, or starts or ends with white space.
 */
export const PAIR_CODE_PATTERN =
  '^[^:\\s](?:[^:]*[^:\\s])?:[^:\\s](?:[^:]*[^:\\s])?:[^:\\s](?:[^:]*[^:\\s])?/[^:/\\s](?:[^:/]*[^:/\\s])?$';
const PAIR_CODE_RE = new RegExp(PAIR_CODE_PATTERN);

export interface PairCodeParts {
  assetType: string;
  market: string;
  base: string;
  quote: string;
}
/** Splits a pair code into its four parts, or null when it is not of the documented form. */
export function parsePairCode(code: string): PairCodeParts | null {
  if (!PAIR_CODE_RE.test(code)) return null;
  const [assetType, market, rest] = code.split(':') as [string, string, string];
  const slash = rest.lastIndexOf('/');
  return { assetType, market, base: rest.slice(0, slash), quote: rest.slice(slash + 1) };
}

/**
 * A decimal string: what a decimal type (decimal.js, Python's `Decimal`, Java's `BigDecimal`) reads
 * without loss. An optional `-`, digits with an optional point (`1.50`, `1.`, `.5`), and an optional
 * exponent (`1.234E-8`, as `Decimal` and `BigDecimal` print small values). No leading `+`, no
 * spaces, no NaN or Infinity, no hex, binary or octal: those are not written by a decimal type's
 * plain or scientific notation, and the spec wants prices read as decimals.
 */
export const DECIMAL_PATTERN = '^-?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]+)?$';

/**
 * The scope label of the spec's example US equities ("a scope label such as ALL or US", Pair code). A
 * label, not a rule: equities of any label may have extended hours, so no check reads it.
 */
export const EXTENDED_HOURS_MARKET = 'US';

/**
 * The documented refusals of a pair to a key on REST: the spec maps 50010 and 50109 for the stream
 * (Authentication 4) but states no code for `/v1/price`, so any refusal the REST table documents
 * for a pair a key may not read conforms: access denied, no pairs allowed, no access to the asset
 * type, or pair not found (the pair hidden from the key).
 */
export const REST_PAIR_DENIALS: readonly RestStatus[] = [
  STATUS.ACCESS_DENIED,
  STATUS.NO_PAIRS_ALLOWED,
  STATUS.ASSET_TYPE_DENIED,
  STATUS.PAIR_NOT_FOUND,
];

/** Path of the spec inside the shared folder, for tests that trace clauses back to it. */
export const SPEC_FILE = 'spec/price-service-v1.md';
