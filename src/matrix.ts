/**
 * The traceability matrix: every normative statement of the spec's tables (and the prose rules
 * beside them) → the checks that enforce it → the reference faults that exercise those checks.
 * A statement no check can see from outside says why, and which profile probe would make it
 * checkable. Pure data and functions: the registry and the fault list come in as arguments, so
 * src/ never imports suites/ or reference/. `conform --list --matrix` prints it; scripts/gen-coverage.ts
 * writes docs/COVERAGE.md from it.
 */
import type { Check } from './check.ts';
import {
  LIMITS,
  NOTICE_CODE,
  NOTICE_CODES,
  REST_STATUS,
  REST_STATUSES,
  STATUS,
  TEXT,
  type NoticeCode,
  type RestStatus,
} from './spec.ts';

export type ClauseKind = 'status' | 'notice' | 'field' | 'parameter' | 'limit' | 'transition' | 'event' | 'rule';

/** Why a statement cannot be checked from outside, and what would make it checkable. */
export interface Outside {
  reason: string;
  /** The profile probe (or profile field) that would let a check see it. */
  probe: string;
}

/** One normative statement of the spec. */
export interface SpecStatement {
  /** Stable key: `<kind>:<table or topic>:<item>`. */
  key: string;
  kind: ClauseKind;
  /** The spec heading the statement sits under, without the hashes (for table rows: the table's heading). */
  section: string;
  /** The table row it comes from (first cell, backticks removed), or a short name for a prose rule. */
  item: string;
  /** The statement, in the spec's words where possible. */
  statement: string;
  /** Check ids that enforce it; an id ending in `.` selects every check under that prefix (a family). */
  checks: readonly string[];
  /** Set when no check can see it from outside, or only with a profile probe. */
  outside?: Outside;
}

const H = {
  pair: 'Pair record (element of `data` in the pairs response)',
  price: 'Price record (`data` in the price response)',
  market: 'Market object',
  envelope: 'REST envelope',
  push: 'WebSocket push data frame',
  notice: 'WebSocket notice frame',
  handshake: 'Handshake error body (HTTP phase before the WebSocket upgrade)',
  subscription: 'Subscription on one WebSocket connection',
  pairs: 'GET /v1/pairs',
  priceEndpoint: 'GET /v1/price',
  subscribe: 'Method subscribe',
  events: 'Events',
  restStatus: 'REST `status_number` values',
  noticeCode: 'WebSocket notice `code` values after connection',
  limits: 'Limits',
} as const;

/** The headings of the spec whose tables the matrix must cover row by row. */
export const SPEC_TABLES: readonly string[] = Object.values(H);

const s = (
  kind: ClauseKind,
  section: string,
  item: string,
  statement: string,
  checks: readonly string[],
  outside?: Outside,
): SpecStatement => ({
  key: `${kind}:${section}:${item}`,
  kind,
  section,
  item,
  statement,
  checks,
  ...(outside ? { outside } : {}),
});

/** Probe entry of the profile: `probes[]` with this status, a request and the key that provokes it. */
const restProbe = (status: RestStatus, how: string): string =>
  `a profile probe { status: "${status}", path, query, key } that ${how} (checked by rest.probe.${status})`;

/** REST status numbers: the checks that provoke each from outside, or why only a profile probe can. */
const REST_STATUS_ROWS: Readonly<Record<RestStatus, { checks: readonly string[]; outside?: Outside }>> = {
  [STATUS.OK]: { checks: ['rest.envelope.schema', 'rest.pairs.schema', 'rest.price.schema'] },
  [STATUS.INTERNAL]: {
    checks: ['rest.probe.50000'],
    outside: {
      reason: 'an internal failure is not something a correct request can provoke',
      probe: restProbe(STATUS.INTERNAL, 'names a pair whose price source fails (pairs.broken)'),
    },
  },
  [STATUS.API_MAINTENANCE]: {
    checks: ['rest.probe.50001'],
    outside: {
      reason: 'maintenance is an operator state, invisible until the operator sets it',
      probe: restProbe(STATUS.API_MAINTENANCE, 'uses a key served by an API in maintenance'),
    },
  },
  [STATUS.WS_MAINTENANCE]: {
    checks: ['rest.probe.50002'],
    outside: {
      reason: 'maintenance is an operator state, invisible until the operator sets it',
      probe: restProbe(STATUS.WS_MAINTENANCE, 'uses a key whose stream is in maintenance'),
    },
  },
  [STATUS.GRPC_MAINTENANCE]: {
    checks: ['rest.probe.50003'],
    outside: {
      reason: 'gRPC is an internal backend: its maintenance has no outside trigger',
      probe: restProbe(STATUS.GRPC_MAINTENANCE, 'uses a key served by a gRPC backend in maintenance'),
    },
  },
  [STATUS.INVALID_REQUEST]: { checks: ['rest.pairs.invalid-param.', 'rest.price.missing-code', 'rest.probe.50004'] },
  [STATUS.UNAUTHORIZED]: {
    checks: [
      'rest.auth.missing-key',
      'rest.auth.invalid-key',
      'rest.probe.50005',
      'ws.handshake.missing-key',
      'ws.handshake.invalid-key',
    ],
  },
  [STATUS.RATE_LIMITED]: {
    checks: ['rest.rate-limit', 'rest.probe.50006'],
    outside: {
      reason:
        'request counts and windows are not shown, so a bounded burst may never reach the ' +
        'limit; rest.rate-limit is disruptive and runs only with --only',
      probe: restProbe(STATUS.RATE_LIMITED, 'uses a key with a rate limit of zero requests (keys.throttled)'),
    },
  },
  [STATUS.SUSPENDED]: { checks: ['rest.auth.suspended', 'rest.probe.50007'] },
  [STATUS.NOT_FOUND]: { checks: ['rest.not-found.endpoint', 'rest.probe.50008'] },
  [STATUS.CONNECTION_LIMIT]: {
    checks: [
      'ws.limits.connections.limited',
      'ws.limits.connections.primary',
      'ws.limits.connections.per-key',
      'rest.probe.50009',
    ],
  },
  [STATUS.ACCESS_DENIED]: {
    checks: [
      'ws.handshake.no-stream',
      'ws.subscribe.whitelist',
      'rest.entitlements.whitelist-price',
      'rest.probe.50010',
    ],
  },
  [STATUS.RESTRICTED_USER]: {
    checks: ['rest.probe.50100'],
    outside: {
      reason: 'a restricted account is an account state the target sets; no request makes one',
      probe: restProbe(STATUS.RESTRICTED_USER, "uses a restricted account's key"),
    },
  },
  [STATUS.PRICE_NOT_FOUND]: {
    checks: ['rest.probe.50101'],
    outside: {
      reason: "which listed pair has no price depends on the target's data",
      probe: restProbe(STATUS.PRICE_NOT_FOUND, 'names a pair without a price (pairs.noPrice)'),
    },
  },
  [STATUS.PRICE_STALE]: { checks: ['rest.price.stale', 'rest.probe.50102'] },
  [STATUS.POOL_UNAVAILABLE]: {
    checks: ['rest.probe.50103'],
    outside: {
      reason: 'the format and effect of pool are not shown, and which pool is down depends on the target',
      probe: restProbe(STATUS.POOL_UNAVAILABLE, 'names a pooled pair and an unavailable pool (pairs.pooled)'),
    },
  },
  [STATUS.PAIR_NOT_FOUND]: {
    checks: [
      'rest.price.unknown-pair',
      'rest.probe.50104',
      'ws.subscribe.unknown-pair',
      'ws.subscribe.unknown-among-known',
      'ws.subscribe.inactive-pair',
    ],
  },
  [STATUS.PAIR_UNAVAILABLE]: {
    checks: ['rest.probe.50105'],
    outside: {
      reason: "a temporarily unavailable pair is a state of the target's data",
      probe: restProbe(STATUS.PAIR_UNAVAILABLE, 'names a temporarily unavailable pair (pairs.unavailable)'),
    },
  },
  [STATUS.PAIR_MAINTENANCE]: {
    checks: ['rest.probe.50106'],
    outside: {
      reason: 'pair maintenance is an operator state',
      probe: restProbe(STATUS.PAIR_MAINTENANCE, 'names a pair in maintenance (pairs.maintenance)'),
    },
  },
  [STATUS.NO_PAIRS_ALLOWED]: {
    checks: ['rest.probe.50107'],
    outside: {
      reason: 'needs a key whose whitelist is empty, which only the operator can issue',
      probe: restProbe(STATUS.NO_PAIRS_ALLOWED, 'uses a key with no pairs allowed'),
    },
  },
  [STATUS.POOL_NOT_FOUND]: {
    checks: ['rest.probe.50108'],
    outside: {
      reason: 'the format of pool is not shown, so a generic unknown pool may be rejected as malformed (50004) instead',
      probe: restProbe(STATUS.POOL_NOT_FOUND, 'names a pooled pair and a well-formed unknown pool'),
    },
  },
  [STATUS.ASSET_TYPE_DENIED]: {
    checks: [
      'rest.entitlements.crypto-only-price',
      'rest.entitlements.asset-types',
      'ws.subscribe.asset-type',
      'ws.subscribe.asset-types',
      'rest.probe.50109',
    ],
  },
};

/** Notice codes after connection: the checks that provoke each, or why none can. */
const NOTICE_ROWS: Readonly<Record<NoticeCode, { checks: readonly string[]; outside?: Outside }>> = {
  '200': { checks: ['ws.subscribe.notice', 'ws.unsubscribe.notice', 'ws.notice.schema'] },
  '50000': {
    checks: [],
    outside: {
      reason:
        'an unclassified server or connection-manager error has no outside trigger, ' +
        'and no stream request is known to provoke it',
      probe:
        'a profile stream probe { method: "subscribe", pairs: [pairs.broken], code: ' +
        '"50000" } (the profile has no stream probes yet)',
    },
  },
  '50004': {
    checks: [
      'ws.request.malformed-json',
      'ws.request.unknown-method',
      'ws.subscribe.invalid.',
      'ws.subscribe.too-many-pairs',
      'ws.notice.error-shape',
    ],
  },
  '50005': {
    checks: ['ws.handshake.missing-key', 'ws.handshake.invalid-key'],
    outside: {
      reason:
        'the handshake checks accept 50005 in the handshake or as a notice; a key that ' +
        'turns invalid while connected (expiry, revocation) cannot be provoked',
      probe: 'a profile key that expires a stated time after its first use (keys.expiring)',
    },
  },
  '50010': { checks: ['ws.subscribe.whitelist', 'ws.handshake.no-stream', 'ws.notice.error-shape'] },
  '50104': {
    checks: [
      'ws.subscribe.unknown-pair',
      'ws.subscribe.unknown-among-known',
      'ws.subscribe.inactive-pair',
      'ws.notice.error-shape',
    ],
    outside: {
      reason: "a suspended pair is a state of the target's data; unknown and inactive pairs are checked",
      probe: 'a suspended pair in the profile (pairs.suspended)',
    },
  },
  '50109': { checks: ['ws.subscribe.asset-type', 'ws.subscribe.asset-types', 'ws.notice.error-shape'] },
};

/** Every normative statement the matrix traces. */
export const SPEC_STATEMENTS: readonly SpecStatement[] = [
  // Resources and their fields.
  s('field', H.pair, 'code', 'Pair code, of the form <asset_type>:<market>:<base>/<quote>.', [
    'rest.pairs.schema',
    'rest.pairs.code-form',
  ]),
  s('field', H.pair, 'name', 'Display name of the instrument (string).', ['rest.pairs.schema']),
  s('field', H.pair, 'base', 'Base symbol (string), the base of the code.', [
    'rest.pairs.schema',
    'rest.pairs.code-form',
  ]),
  s('field', H.pair, 'quote', 'Quote currency symbol (string), the quote of the code.', [
    'rest.pairs.schema',
    'rest.pairs.code-form',
  ]),
  s('field', H.price, 'code', 'Pair code (string): the pair asked for.', [
    'rest.price.schema',
    'rest.price.catalogue',
    'ws.consistency.rest-agrees',
  ]),
  s('field', H.price, 'ask', 'Ask price, a decimal string.', [
    'rest.price.schema',
    'rest.price.mid',
    'rest.price.catalogue',
  ]),
  s('field', H.price, 'bid', 'Bid price, a decimal string.', [
    'rest.price.schema',
    'rest.price.mid',
    'rest.price.catalogue',
  ]),
  s('field', H.price, 'price', 'The mid-price, a decimal string.', [
    'rest.price.schema',
    'rest.price.mid',
    'rest.price.catalogue',
  ]),
  s('field', H.price, 'market', 'Market-session object.', [
    'rest.price.schema',
    'rest.price.market.combination',
    'rest.price.catalogue',
  ]),
  s('field', H.market, 'open', 'Whether the market is open (boolean).', [
    'rest.price.market.combination',
    'rest.price.market.crypto',
    'rest.price.market.equity-session',
  ]),
  s(
    'field',
    H.market,
    'reason',
    'One of continuous, regular_session, pre_session, post_session, market_closed, no_price.',
    ['rest.price.schema', 'rest.price.market.combination'],
  ),
  s('field', H.market, 'session', 'One of REG, PRE, POST, CLOSED.', [
    'rest.price.schema',
    'rest.price.market.combination',
  ]),
  s('field', H.market, 'timezone', 'IANA zone name; present for non-Crypto assets, absent for Crypto.', [
    'rest.price.market.timezone',
    'rest.price.market.crypto',
  ]),
  s('field', H.envelope, 'status_number', 'Result code, a string from the Errors table.', [
    'rest.envelope.schema',
    'rest.envelope.error-shape',
  ]),
  s('field', H.envelope, 'ts', 'Response timestamp, an integer (unit not shown: observed).', [
    'rest.envelope.schema',
    'rest.observe.ts-unit',
  ]),
  s('field', H.envelope, 'data', 'Object, array or null; null on errors.', [
    'rest.envelope.schema',
    'rest.envelope.error-shape',
  ]),
  s('field', H.envelope, 'message', 'Present on errors and on non-200 price results.', [
    'rest.envelope.error-shape',
    'rest.price.stale',
  ]),
  s('field', H.push, 'code', 'Pair code, required; pushes come only for subscribed pairs.', [
    'ws.push.schema',
    'ws.push.only-subscribed',
  ]),
  s('field', H.push, 'ask', 'Ask price, a decimal string, required.', ['ws.push.schema', 'ws.push.mid']),
  s('field', H.push, 'bid', 'Bid price, a decimal string, required.', ['ws.push.schema', 'ws.push.mid']),
  s('field', H.push, 'price', 'Mid-price, a decimal string, required.', [
    'ws.push.schema',
    'ws.push.mid',
    'ws.consistency.rest-agrees',
  ]),
  s(
    'field',
    H.push,
    'last_updated',
    'Integer time of the last price update (appears in the example; unit not shown: observed).',
    ['ws.push.schema', 'ws.push.observe-timestamps'],
  ),
  s('field', H.push, 'sent_at', 'Integer time the frame was sent (appears in the example; unit not shown: observed).', [
    'ws.push.schema',
    'ws.push.observe-timestamps',
  ]),
  s('field', H.notice, 'method', 'The request method answered, or error for failures; required.', [
    'ws.notice.schema',
    'ws.subscribe.notice',
    'ws.unsubscribe.notice',
    'ws.notice.error-shape',
  ]),
  s('field', H.notice, 'message', 'Success or error text; required.', [
    'ws.notice.schema',
    'ws.subscribe.notice',
    'ws.unsubscribe.notice',
    'ws.subscribe.unknown-pair',
    'ws.subscribe.unknown-among-known',
    'ws.notice.error-shape',
  ]),
  s('field', H.notice, 'code', 'Domain status code, a string (not an HTTP status); required.', [
    'ws.notice.schema',
    'ws.subscribe.notice',
    'ws.notice.error-shape',
  ]),
  s('field', H.notice, 'id', 'Echo of the client-provided id; optional.', [
    'ws.notice.id-echo',
    'ws.notice.error-shape',
  ]),
  s('field', H.notice, 'data', 'Object or null; null in the shown cases.', [
    'ws.notice.schema',
    'ws.subscribe.notice',
    'ws.notice.error-shape',
  ]),
  s('field', H.handshake, 'status_number', 'Result code of a refused handshake.', ['ws.handshake.error-body']),
  s('field', H.handshake, 'message', 'Error text of a refused handshake.', ['ws.handshake.error-body']),
  // Request fields and query parameters.
  s('parameter', H.pairs, 'code', 'Search pairs by a code or a fragment of it.', ['rest.pairs.code-search']),
  s('parameter', H.pairs, 'type', 'Filter by asset type.', ['rest.pairs.type-filter']),
  s('parameter', H.pairs, 'page', `Page number; default ${LIMITS.defaultPage}.`, [
    'rest.pairs.defaults',
    'rest.pairs.page-default-size',
    'rest.pairs.pages-disjoint',
    'rest.pairs.invalid-param.',
    'rest.envelope.error-shape',
  ]),
  s(
    'parameter',
    H.pairs,
    'per_page',
    `Items per page; default ${LIMITS.defaultPerPage}, also when only page is given.`,
    [
      'rest.pairs.defaults',
      'rest.pairs.page-default-size',
      'rest.pairs.per-page',
      'rest.pairs.invalid-param.',
      'rest.envelope.error-shape',
    ],
  ),
  s('parameter', H.priceEndpoint, 'code', 'Pair code; required.', ['rest.price.schema', 'rest.price.missing-code']),
  s(
    'parameter',
    H.priceEndpoint,
    'pool',
    'Pool address for specific crypto assets; format and effect not shown.',
    ['rest.probe.50103', 'rest.probe.50108'],
    {
      reason: 'format and effect are not shown; only its error statuses are documented',
      probe: 'profile probes naming pairs.pooled with an unavailable and an unknown pool',
    },
  ),
  s('parameter', H.subscribe, 'id', 'Client identifier, echoed in the reply; optional.', ['ws.notice.id-echo']),
  s('parameter', H.subscribe, 'method', `subscribe (required); an unknown method gets ${STATUS.INVALID_REQUEST}.`, [
    'ws.subscribe.notice',
    'ws.request.unknown-method',
  ]),
  s('parameter', H.subscribe, 'params', 'Holds pairs; required.', ['ws.subscribe.invalid.missing-params']),
  s('parameter', H.subscribe, 'params.pairs', `Authorized pair codes, at most ${LIMITS.maxPairsPerSubscribe}.`, [
    'ws.subscribe.invalid.pairs-not-array',
    'ws.subscribe.invalid.empty-list',
    'ws.subscribe.max-pairs',
    'ws.subscribe.too-many-pairs',
  ]),
  // State transitions of a subscription.
  s(
    'transition',
    H.subscription,
    'no subscription / subscribe',
    `All pairs valid and permitted, at most ${LIMITS.maxPairsPerSubscribe}: subscribed to exactly the ` +
      `listed pairs; notice code ${STATUS.OK}; pushes start automatically (for every listed pair).`,
    ['ws.subscribe.notice', 'ws.subscribe.pushes-start', 'ws.subscribe.pushes-every-pair', 'ws.push.only-subscribed'],
  ),
  s(
    'transition',
    H.subscription,
    'subscribed / subscribe',
    'Subscribed to exactly the newly listed pairs: the earlier set is replaced, not extended.',
    ['ws.subscribe.replaces'],
  ),
  s(
    'transition',
    H.subscription,
    'subscribed / unsubscribe',
    `Pairs valid: pushes for the listed pairs stop (every one of them, the rest go on); notice code ${STATUS.OK}.`,
    ['ws.unsubscribe.stops', 'ws.unsubscribe.stops-several', 'ws.unsubscribe.notice'],
  ),
  s(
    'transition',
    H.subscription,
    'subscribe attempt / subscribe',
    `A pair unknown, inactive or suspended: error notice ${STATUS.PAIR_NOT_FOUND}; the next state ` +
      `is not stated (observed). One unknown pair among known ones fails the whole subscribe.`,
    [
      'ws.subscribe.unknown-pair',
      'ws.subscribe.unknown-among-known',
      'ws.subscribe.inactive-pair',
      'ws.subscribe.observe-failed-keeps-previous',
    ],
  ),
  s('transition', H.subscription, 'connected / no ping received for 30 seconds', 'The connection is closed.', [
    'ws.keepalive.timeout',
    'ws.keepalive.ping-keeps-alive',
  ]),
  // Events.
  s(
    'event',
    H.events,
    'Push data frame',
    'Sent when price data is available for a subscribed pair (interval and trigger not ' +
      'shown: observed); every subscribed pair, not only the first.',
    [
      'ws.subscribe.pushes-start',
      'ws.subscribe.pushes-every-pair',
      'ws.push.schema',
      'ws.push.observe-interval',
      'ws.consistency.observe-market-live',
    ],
  ),
  s('event', H.events, 'Notice, method subscribe', `A subscribe request succeeds: notice code ${STATUS.OK}.`, [
    'ws.subscribe.notice',
  ]),
  s('event', H.events, 'Notice, method unsubscribe', `An unsubscribe request succeeds: notice code ${STATUS.OK}.`, [
    'ws.unsubscribe.notice',
    'ws.unsubscribe.observe-not-subscribed',
  ]),
  s(
    'event',
    H.events,
    'Notice, method error',
    'A request fails: notice with an error code (method error, code a string, id echoed, data null, a message).',
    ['ws.notice.schema', 'ws.notice.error-shape', 'ws.request.malformed-json', 'ws.request.unknown-method'],
  ),
  s('event', H.events, `Plain text ${TEXT.pong}`, 'A ping arrives: the plain text reply.', ['ws.ping.pong.']),
  // Limits.
  s(
    'limit',
    H.limits,
    'WebSocket connections per API key',
    `Counted per key, not per IP address; beyond the key's allowance a connection is refused from any ` +
      `address (${STATUS.CONNECTION_LIMIT}); the allowance for a key is not shown (the profile states it).`,
    [
      'ws.limits.connections.limited',
      'ws.limits.connections.primary',
      'ws.limits.connections.per-key',
      'ws.limits.connections.slot-freed',
    ],
  ),
  s('limit', H.limits, 'Active subscriptions per connection', 'One; a new subscribe replaces the earlier one.', [
    'ws.subscribe.replaces',
  ]),
  s(
    'limit',
    H.limits,
    'Pairs per connection',
    `${LIMITS.maxPairsPerSubscribe} maximum; exceeding it gives ${STATUS.INVALID_REQUEST}.`,
    ['ws.subscribe.max-pairs', 'ws.subscribe.too-many-pairs'],
  ),
  s(
    'limit',
    H.limits,
    'Ping interval',
    `The connection is closed if no ping arrives within ${LIMITS.pingTimeoutMs / 1000} ` +
      `seconds (the profile may declare a shorter window for a test target).`,
    ['ws.keepalive.timeout', 'ws.keepalive.ping-keeps-alive', 'ws.keepalive.observe-other-traffic'],
  ),
  s(
    'limit',
    H.limits,
    'per_page default',
    `${LIMITS.defaultPerPage}, with or without page; maximum not shown (observed).`,
    ['rest.pairs.defaults', 'rest.pairs.page-default-size', 'rest.observe.max-per-page'],
  ),
  s('limit', H.limits, 'page default', `${LIMITS.defaultPage}.`, ['rest.pairs.defaults']),
  s(
    'limit',
    H.limits,
    'REST rate limit',
    `Exists (${STATUS.RATE_LIMITED}); request counts and windows not shown.`,
    ['rest.rate-limit', 'rest.probe.50006'],
    REST_STATUS_ROWS[STATUS.RATE_LIMITED].outside,
  ),
  // Status numbers and notice codes, one row each.
  ...REST_STATUSES.map((code) =>
    s('status', H.restStatus, code, REST_STATUS[code], REST_STATUS_ROWS[code].checks, REST_STATUS_ROWS[code].outside),
  ),
  ...NOTICE_CODES.map((code) =>
    s('notice', H.noticeCode, code, NOTICE_CODE[code], NOTICE_ROWS[code].checks, NOTICE_ROWS[code].outside),
  ),
  // Prose rules beside the tables.
  s('rule', 'Pair code', 'form', 'A string <asset_type>:<market>:<base>/<quote>.', ['rest.pairs.code-form']),
  s(
    'rule',
    'What the service does',
    'decimal strings',
    'Every price value is a JSON string (to be parsed with a decimal-capable type).',
    ['rest.price.schema', 'ws.push.schema', 'ws.consistency.rest-agrees'],
  ),
  s(
    'rule',
    'What the service does',
    'JSON bodies',
    'All request and response bodies are JSON, except the plain-text ping reply.',
    ['rest.envelope.schema', 'ws.notice.schema', 'ws.ping.pong.'],
  ),
  s('rule', H.market, 'Crypto', 'Crypto is continuously open: open true, continuous, REG, no timezone.', [
    'rest.price.market.crypto',
  ]),
  s(
    'rule',
    H.market,
    'other assets',
    'open true with regular_session and REG in regular hours; open false with market_closed and CLOSED when closed.',
    ['rest.price.market.combination'],
  ),
  s('rule', H.market, 'US extended hours', 'pre_session with PRE and post_session with POST, both open true.', [
    'rest.price.market.equity-session',
  ]),
  s(
    'rule',
    H.market,
    'no_price',
    `Used when the price is stale or illiquid (open true, REG in the example); see ${STATUS.PRICE_STALE}.`,
    ['rest.price.stale', 'rest.price.market.combination'],
  ),
  s(
    'rule',
    'Market session states',
    'transitions',
    'States REG, PRE, POST, CLOSED; Crypto only REG; transitions not shown (observed).',
    ['rest.price.market.crypto', 'ws.consistency.observe-market-live'],
  ),
  s(
    'rule',
    H.priceEndpoint,
    'stale keeps data',
    `Stale or delayed: status_number ${STATUS.PRICE_STALE}, message, data still filled, HTTP 200.`,
    ['rest.price.stale'],
  ),
  s(
    'rule',
    H.priceEndpoint,
    'unknown pair data null',
    `Pair does not exist: ${STATUS.PAIR_NOT_FOUND}, data null, message.`,
    ['rest.price.unknown-pair'],
  ),
  s(
    'rule',
    H.priceEndpoint,
    'client checks status_number',
    'A client must check status_number and not only the HTTP status.',
    ['rest.observe.http-status'],
    {
      reason:
        'an obligation of clients, not of the service; the HTTP status per ' +
        'status_number is not shown, so it is observed',
      probe: 'none needed: it binds clients',
    },
  ),
  s(
    'rule',
    'Authentication',
    '1. header',
    'The key goes in X-API-Key (also X-API-KEY); header names are case-insensitive, ' +
      'for REST and the stream handshake alike.',
    ['rest.auth.header-case.', 'ws.handshake.header-case'],
  ),
  s('rule', 'Authentication', '2. REST without a valid key', `HTTP 401 and status_number ${STATUS.UNAUTHORIZED}.`, [
    'rest.auth.missing-key',
    'rest.auth.invalid-key',
  ]),
  s(
    'rule',
    'Authentication',
    '3. handshake failures',
    `Failures before the connection is established come back in the HTTP handshake as JSON with ` +
      `status_number and message (${STATUS.CONNECTION_LIMIT}, ${STATUS.ACCESS_DENIED}).`,
    ['ws.handshake.error-body', 'ws.handshake.no-stream', 'ws.limits.connections.limited'],
  ),
  s(
    'rule',
    'Authentication',
    '4. after connection',
    `Absent or invalid key state: notice ${STATUS.UNAUTHORIZED}; no V1 or whitelist ` +
      `access: ${STATUS.ACCESS_DENIED}; no access to the asset type: ${STATUS.ASSET_TYPE_DENIED}.`,
    [
      'ws.handshake.missing-key',
      'ws.subscribe.whitelist',
      'ws.subscribe.asset-type',
      'ws.subscribe.asset-types',
      'ws.notice.error-shape',
    ],
    NOTICE_ROWS['50005'].outside,
  ),
  s(
    'rule',
    'Authentication',
    '5. entitlements',
    'A key can be limited to asset types and to a whitelist of pairs; the data it reads depends on ' +
      'the key: denied every other asset type or pair, served its own, on REST and the stream.',
    ['rest.entitlements.', 'ws.subscribe.asset-types', 'ws.subscribe.whitelist'],
  ),
  s('rule', 'Handshake errors', 'never code', 'The handshake returns status_number and message, never code.', [
    'ws.handshake.error-body',
  ]),
  s('rule', 'Handshake errors', 'no status_number after connect', 'Post-connect frames never carry status_number.', [
    'ws.frames.no-status-number',
    'ws.notice.error-shape',
  ]),
  s(
    'rule',
    'Method subscribe',
    'pushes without requests',
    'After success the server pushes data frames without further requests.',
    ['ws.subscribe.pushes-start'],
  ),
  s(
    'rule',
    'Method subscribe',
    'unknown pair message',
    `Error notice method error, message ${TEXT.pairNotFoundPrefix}<pair_code>, id ` +
      `echoed, data null; an unknown pair among known ones is named.`,
    ['ws.subscribe.unknown-pair', 'ws.subscribe.unknown-among-known', 'ws.notice.id-echo', 'ws.notice.error-shape'],
  ),
  s(
    'rule',
    'Method unsubscribe',
    'success reply',
    `Notice method unsubscribe, message ${TEXT.unsubscribeSuccess}, code ${STATUS.OK}; ` +
      `pairs not subscribed: not shown (observed).`,
    ['ws.unsubscribe.notice', 'ws.unsubscribe.observe-not-subscribed'],
  ),
  s('rule', 'Method ping', 'reply', `The reply is the plain text ${TEXT.pong}; id and params are optional.`, [
    'ws.ping.pong.',
  ]),
  s(
    'rule',
    'Resources and their fields',
    'price agrees across transports',
    "The push frame and the price record carry the same pair's ask, bid and mid-price as decimal strings.",
    ['ws.consistency.rest-agrees'],
  ),
  s('rule', 'Endpoints', 'unknown endpoint', `An endpoint that does not exist: ${STATUS.NOT_FOUND}.`, [
    'rest.not-found.endpoint',
  ]),
  s('rule', 'GET /v1/pairs', 'pagination', 'A paginated list; pagination metadata not shown (observed).', [
    'rest.pairs.pages-disjoint',
    'rest.observe.pagination-metadata',
    'rest.observe.page-past-end',
  ]),
  s('rule', 'Versioning', '/v1 prefix', 'REST paths carry the prefix /v1; other versions not shown.', [
    'rest.pairs.schema',
    'rest.price.schema',
  ]),
];

/** One row of the matrix: a statement, the checks that exist for it, and the faults that exercise them. */
export interface MatrixRow extends SpecStatement {
  /** Registry ids the row's selectors resolve to, in registry order. */
  checkIds: string[];
  /** Selectors that resolve to no check of the registry (a stale row). */
  unresolved: string[];
  /** Profile fields the row's checks need (a check whose needs are missing skips). */
  needs: string[];
  /** Faults whose `catches` name one of the row's checks. */
  faults: string[];
}

export interface Matrix {
  rows: MatrixRow[];
  /** Must checks that no fault's `catches` names: the mutation suite never sees them fail. */
  neverFailed: string[];
  /** Checks of the registry that no statement names. */
  untraced: string[];
}

/** A fault as reference/faults.ts describes it (only what the matrix reads). */
export interface MatrixFault {
  readonly name: string;
  readonly catches: readonly string[];
}

/** Resolves a selector (`id`, or `prefix.` for a family) against the registry. */
export function resolveSelector(checks: readonly Pick<Check, 'id'>[], selector: string): string[] {
  return checks
    .filter((c) => (selector.endsWith('.') ? c.id.startsWith(selector) : c.id === selector))
    .map((c) => c.id);
}

/** Builds the matrix from the registry, the fault list and the statements. */
export function buildMatrix(
  checks: readonly Check[],
  faults: readonly MatrixFault[],
  statements: readonly SpecStatement[] = SPEC_STATEMENTS,
): Matrix {
  const traced = new Set<string>();
  const rows = statements.map((st): MatrixRow => {
    const checkIds: string[] = [];
    const unresolved: string[] = [];
    for (const sel of st.checks) {
      const ids = resolveSelector(checks, sel);
      if (ids.length === 0) unresolved.push(sel);
      for (const id of ids) if (!checkIds.includes(id)) checkIds.push(id);
    }
    for (const id of checkIds) traced.add(id);
    const needs = [...new Set(checks.filter((c) => checkIds.includes(c.id)).flatMap((c) => c.needs))].sort();
    const fs = faults.filter((f) => f.catches.some((id) => checkIds.includes(id))).map((f) => f.name);
    return { ...st, checkIds, unresolved, needs, faults: fs };
  });
  const named = new Set(faults.flatMap((f) => f.catches));
  const neverFailed = checks.filter((c) => c.severity === 'must' && !named.has(c.id)).map((c) => c.id);
  return { rows, neverFailed, untraced: checks.map((c) => c.id).filter((id) => !traced.has(id)) };
}

/** Rows whose checks no fault of the reference service exercises (candidates for new faults). */
export const unexercised = (m: Matrix): MatrixRow[] =>
  m.rows.filter((r) => r.checkIds.length > 0 && r.faults.length === 0 && CHECKS_MUST(r));
const CHECKS_MUST = (r: MatrixRow): boolean => !r.checkIds.every((id) => id.includes('.observe'));

/** Rows with neither a check nor a stated reason: what the completeness test forbids. */
export const uncovered = (m: Matrix): MatrixRow[] => m.rows.filter((r) => r.checkIds.length === 0 && !r.outside);

const KIND_TITLE: Record<ClauseKind, string> = {
  field: 'Frame and record fields',
  parameter: 'Request fields and query parameters',
  transition: 'State transitions',
  event: 'Events',
  limit: 'Limits',
  status: 'REST status numbers',
  notice: 'WebSocket notice codes',
  rule: 'Rules beside the tables',
};
const KIND_ORDER: readonly ClauseKind[] = [
  'status',
  'notice',
  'field',
  'parameter',
  'limit',
  'transition',
  'event',
  'rule',
];

const itemLabel = (r: MatrixRow): string =>
  r.kind === 'field' || r.kind === 'parameter'
    ? `${r.section.split(' (')[0]}: ${r.item}`
    : r.kind === 'transition'
      ? r.item
      : r.item;

/** Plain-text matrix for the terminal (`conform --list --matrix`). */
export function formatMatrix(m: Matrix): string {
  const out: string[] = [];
  for (const kind of KIND_ORDER) {
    const rows = m.rows.filter((r) => r.kind === kind);
    out.push(`${KIND_TITLE[kind]}`);
    for (const r of rows) {
      out.push(`  ${itemLabel(r)} — ${r.statement}`);
      out.push(
        `      checks: ${r.checkIds.length ? r.checkIds.join(', ') : 'none'}` +
          `${r.needs.length ? `  (needs ${r.needs.join(', ')})` : ''}`,
      );
      if (r.faults.length) out.push(`      faults: ${r.faults.join(', ')}`);
      if (r.outside) out.push(`      outside: ${r.outside.reason}; probe: ${r.outside.probe}`);
      if (r.unresolved.length) out.push(`      STALE: no check matches ${r.unresolved.join(', ')}`);
    }
    out.push('');
  }
  const gaps = uncovered(m);
  out.push(
    `${m.rows.length} statements: ${m.rows.filter((r) => r.checkIds.length > 0).length} ` +
      `with checks, ${m.rows.filter((r) => r.outside).length} with a reason why (part of) ` +
      `it cannot be checked from outside, ${gaps.length} with neither`,
  );
  const idle = unexercised(m);
  if (idle.length)
    out.push(
      `${idle.length} ${idle.length === 1 ? 'statement has' : 'statements have'} checks that no ` +
        `reference fault exercises: ${idle.map((r) => `${r.section}: ${r.item}`).join('; ')}`,
    );
  if (m.neverFailed.length) out.push(`must checks no fault names: ${m.neverFailed.join(', ')}`);
  if (m.untraced.length) out.push(`checks no statement names: ${m.untraced.join(', ')}`);
  return `${out.join('\n')}\n`;
}

const cell = (t: string): string => t.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (ids: readonly string[]): string => (ids.length ? ids.map((i) => `\`${i}\``).join(', ') : '—');

/** The matrix as Markdown (docs/COVERAGE.md), one table per kind of statement. */
export function matrixMarkdown(m: Matrix, header: string): string {
  const out: string[] = [header.trimEnd(), ''];
  const withChecks = m.rows.filter((r) => r.checkIds.length > 0).length;
  out.push(
    `${m.rows.length} statements; ${withChecks} traced to ` +
      `checks; ${m.rows.filter((r) => r.outside).length} say why (part of) the statement cannot be checked ` +
      `from outside and which profile probe would make it checkable; ${uncovered(m).length} have neither.`,
    '',
  );
  for (const kind of KIND_ORDER) {
    out.push(
      `## ${KIND_TITLE[kind]}`,
      '',
      '| Spec | Statement | Checks | Faults | Cannot be checked from outside because / probe |',
      '|---|---|---|---|---|',
    );
    for (const r of m.rows.filter((x) => x.kind === kind)) {
      const outside = r.outside ? `${r.outside.reason}. Probe: ${r.outside.probe}` : '';
      const needs = r.needs.length ? ` (needs ${r.needs.map((n) => `\`${n}\``).join(', ')})` : '';
      out.push(
        `| ${cell(`${r.section}: ${r.item}`)} | ${cell(r.statement)} | ${cell(code(r.checkIds) + needs)} ` +
          `| ${cell(code(r.faults))} | ${cell(outside)} |`,
      );
    }
    out.push('');
  }
  const idle = unexercised(m);
  if (idle.length)
    out.push(
      '## Statements no fault exercises yet',
      '',
      'Their checks exist, but no fault of the reference service breaks them, so ' +
        'the mutation suite does not prove those checks can fail:',
      '',
      ...idle.map((r) => `- ${r.section}: ${r.item} (${code(r.checkIds)})`),
      '',
    );
  if (m.neverFailed.length) out.push('## Must checks no fault names', '', code(m.neverFailed), '');
  if (m.untraced.length) out.push('## Checks no statement names', '', code(m.untraced), '');
  return `${out.join('\n').trimEnd()}\n`;
}
