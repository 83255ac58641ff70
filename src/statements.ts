/**
 * The normative statements of the spec: every row of its tables and the prose rules beside them,
 * one record each, in the order of the traceability matrix (src/matrix.ts). A statement no check
 * can see from outside says why, and what would make it checkable. Pure data: it imports only the
 * spec's literals, so the check type can name statement keys without loading the matrix.
 */
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
export interface SpecStatement<K extends string = StatementKey> {
  /** Stable key, `<kind>:<topic>:<item>`: what a check's `enforces` names. */
  key: K;
  kind: ClauseKind;
  /** The spec heading the statement sits under, without the hashes (for table rows: the table's heading). */
  section: string;
  /** The table row it comes from (first cell, backticks removed), or a short name for a prose rule. */
  item: string;
  /** The statement, in the spec's words where possible. */
  statement: string;
  /** Set when no check can see it from outside, or only with a profile probe. */
  outside?: Outside;
  /**
   * The state only the target's operator can stage (maintenance, a restricted account) through
   * which alone the statement can be reached: the rule coverage counts such statements apart.
   */
  operatorState?: string;
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

// The key's literal type is kept, so that StatementKey lists every key and a check naming an unknown
// one does not compile.
const s = <K extends string>(
  key: K,
  kind: ClauseKind,
  section: string,
  item: string,
  statement: string,
  outside?: Outside,
  operatorState?: string,
): SpecStatement<K> => ({
  key,
  kind,
  section,
  item,
  statement,
  ...(outside ? { outside } : {}),
  ...(operatorState ? { operatorState } : {}),
});

/** Probe entry of the profile: `probes[]` with this status, a request and the key that provokes it. */
const restProbe = (status: RestStatus, how: string): string =>
  `a profile probe { status: "${status}", path, query, key } that ${how} (checked by rest.probe.${status})`;

/** REST status numbers that only a profile probe can provoke (or not every check can): why, and the probe. */
const REST_STATUS_OUTSIDE: Readonly<Partial<Record<RestStatus, Outside>>> = {
  [STATUS.INTERNAL]: {
    reason: 'an internal failure is not something a correct request can provoke',
    probe: restProbe(STATUS.INTERNAL, 'names a pair whose price source fails (pairs.broken)'),
  },
  [STATUS.API_MAINTENANCE]: {
    reason: 'maintenance is an operator state, invisible until the operator sets it',
    probe: restProbe(STATUS.API_MAINTENANCE, 'uses a key served by an API in maintenance'),
  },
  [STATUS.WS_MAINTENANCE]: {
    reason: 'maintenance is an operator state, invisible until the operator sets it',
    probe: restProbe(STATUS.WS_MAINTENANCE, 'uses a key whose stream is in maintenance'),
  },
  [STATUS.GRPC_MAINTENANCE]: {
    reason: 'gRPC is an internal backend: its maintenance has no outside trigger',
    probe: restProbe(STATUS.GRPC_MAINTENANCE, 'uses a key served by a gRPC backend in maintenance'),
  },
  [STATUS.RATE_LIMITED]: {
    reason:
      'request counts and windows are not shown, so a bounded burst may never reach the ' +
      'limit; rest.rate-limit is disruptive and runs only with --only',
    probe: restProbe(STATUS.RATE_LIMITED, 'uses a key with a rate limit of zero requests (keys.throttled)'),
  },
  [STATUS.RESTRICTED_USER]: {
    reason: 'a restricted account is an account state the target sets; no request makes one',
    probe: restProbe(STATUS.RESTRICTED_USER, "uses a restricted account's key"),
  },
  [STATUS.PRICE_NOT_FOUND]: {
    reason: "which listed pair has no price depends on the target's data",
    probe: restProbe(STATUS.PRICE_NOT_FOUND, 'names a pair without a price (pairs.noPrice)'),
  },
  [STATUS.POOL_UNAVAILABLE]: {
    reason: 'the format and effect of pool are not shown, and which pool is down depends on the target',
    probe: restProbe(STATUS.POOL_UNAVAILABLE, 'names a pooled pair and an unavailable pool (pairs.pooled)'),
  },
  [STATUS.PAIR_UNAVAILABLE]: {
    reason: "a temporarily unavailable pair is a state of the target's data",
    probe: restProbe(STATUS.PAIR_UNAVAILABLE, 'names a temporarily unavailable pair (pairs.unavailable)'),
  },
  [STATUS.PAIR_MAINTENANCE]: {
    reason: 'pair maintenance is an operator state',
    probe: restProbe(STATUS.PAIR_MAINTENANCE, 'names a pair in maintenance (pairs.maintenance)'),
  },
  [STATUS.NO_PAIRS_ALLOWED]: {
    reason: 'needs a key whose whitelist is empty, which only the operator can issue',
    probe: restProbe(STATUS.NO_PAIRS_ALLOWED, 'uses a key with no pairs allowed'),
  },
  [STATUS.POOL_NOT_FOUND]: {
    reason: 'the format of pool is not shown, so a generic unknown pool may be rejected as malformed (50004) instead',
    probe: restProbe(STATUS.POOL_NOT_FOUND, 'names a pooled pair and a well-formed unknown pool'),
  },
};

/**
 * REST status numbers reached only through a state the target's operator stages: a probe with the
 * key or pair in that state checks them, no request of the harness can make one.
 */
const REST_OPERATOR_STATE: Readonly<Partial<Record<RestStatus, string>>> = {
  [STATUS.INTERNAL]: 'a failing price source',
  [STATUS.API_MAINTENANCE]: 'maintenance',
  [STATUS.WS_MAINTENANCE]: 'maintenance',
  [STATUS.GRPC_MAINTENANCE]: 'maintenance',
  [STATUS.RESTRICTED_USER]: 'a restricted account',
  [STATUS.POOL_UNAVAILABLE]: 'an unavailable pool',
  [STATUS.PAIR_UNAVAILABLE]: 'a temporarily unavailable pair',
  [STATUS.PAIR_MAINTENANCE]: 'pair maintenance',
  [STATUS.NO_PAIRS_ALLOWED]: 'a key with no pairs allowed',
  [STATUS.POOL_NOT_FOUND]: 'a pooled pair',
};

/** Notice codes after connection reached only through an operator-staged state. */
const NOTICE_OPERATOR_STATE: Readonly<Partial<Record<NoticeCode, string>>> = {
  '50000': 'a failing price source',
  '50005': 'a key that expires while connected',
};

/** Notice codes after connection that no request provokes (or not every way they arise): why, and the probe. */
const NOTICE_OUTSIDE: Readonly<Partial<Record<NoticeCode, Outside>>> = {
  '50000': {
    reason:
      'an unclassified server or connection-manager error has no outside trigger, ' +
      'and no stream request is known to provoke it',
    probe:
      'a profile stream probe { method: "subscribe", pairs: [pairs.broken], code: ' +
      '"50000" } (the profile has no stream probes yet)',
  },
  '50005': {
    reason:
      'the handshake checks accept 50005 in the handshake or as a notice; a key that ' +
      'turns invalid while connected (expiry, revocation) cannot be provoked',
    probe: 'a profile key that expires a stated time after its first use (keys.expiring)',
  },
  '50104': {
    reason: "a suspended pair is a state of the target's data; unknown and inactive pairs are checked",
    probe: 'a suspended pair in the profile (pairs.suspended)',
  },
};

/** Every normative statement the matrix traces; the checks that enforce each name it in their `enforces`. */
const STATEMENTS = [
  // Resources and their fields.
  s('field:pair:code', 'field', H.pair, 'code', 'Pair code, of the form <asset_type>:<market>:<base>/<quote>.'),
  s('field:pair:name', 'field', H.pair, 'name', 'Display name of the instrument (string).'),
  s('field:pair:base', 'field', H.pair, 'base', 'Base symbol (string), the base of the code.'),
  s('field:pair:quote', 'field', H.pair, 'quote', 'Quote currency symbol (string), the quote of the code.'),
  s('field:price:code', 'field', H.price, 'code', 'Pair code (string): the pair asked for.'),
  s('field:price:ask', 'field', H.price, 'ask', 'Ask price, a decimal string.'),
  s('field:price:bid', 'field', H.price, 'bid', 'Bid price, a decimal string.'),
  s('field:price:price', 'field', H.price, 'price', 'The mid-price, a decimal string.'),
  s('field:price:market', 'field', H.price, 'market', 'Market-session object.'),
  s('field:market:open', 'field', H.market, 'open', 'Whether the market is open (boolean).'),
  s(
    'field:market:reason',
    'field',
    H.market,
    'reason',
    'One of continuous, regular_session, pre_session, post_session, market_closed, no_price.',
  ),
  s('field:market:session', 'field', H.market, 'session', 'One of REG, PRE, POST, CLOSED.'),
  s(
    'field:market:timezone',
    'field',
    H.market,
    'timezone',
    'IANA zone name; present for non-Crypto assets, absent for Crypto.',
  ),
  s(
    'field:envelope:status_number',
    'field',
    H.envelope,
    'status_number',
    'Result code, a string from the Errors table.',
  ),
  s('field:envelope:ts', 'field', H.envelope, 'ts', 'Response timestamp, an integer (unit not shown: observed).'),
  s('field:envelope:data', 'field', H.envelope, 'data', 'Object, array or null; null on errors.'),
  s('field:envelope:message', 'field', H.envelope, 'message', 'Present on errors and on non-200 price results.'),
  s('field:push:code', 'field', H.push, 'code', 'Pair code, required; pushes come only for subscribed pairs.'),
  s('field:push:ask', 'field', H.push, 'ask', 'Ask price, a decimal string, required.'),
  s('field:push:bid', 'field', H.push, 'bid', 'Bid price, a decimal string, required.'),
  s('field:push:price', 'field', H.push, 'price', 'Mid-price, a decimal string, required.'),
  s(
    'field:push:last_updated',
    'field',
    H.push,
    'last_updated',
    'Integer time of the last price update (appears in the example; unit not shown: observed).',
  ),
  s(
    'field:push:sent_at',
    'field',
    H.push,
    'sent_at',
    'Integer time the frame was sent (appears in the example; unit not shown: observed).',
  ),
  s(
    'field:notice:method',
    'field',
    H.notice,
    'method',
    'The request method answered, or error for failures; required.',
  ),
  s('field:notice:message', 'field', H.notice, 'message', 'Success or error text; required.'),
  s('field:notice:code', 'field', H.notice, 'code', 'Domain status code, a string (not an HTTP status); required.'),
  s('field:notice:id', 'field', H.notice, 'id', 'Echo of the client-provided id; optional.'),
  s('field:notice:data', 'field', H.notice, 'data', 'Object or null; null in the shown cases.'),
  s('field:handshake:status_number', 'field', H.handshake, 'status_number', 'Result code of a refused handshake.'),
  s('field:handshake:message', 'field', H.handshake, 'message', 'Error text of a refused handshake.'),
  // Request fields and query parameters.
  s('parameter:pairs:code', 'parameter', H.pairs, 'code', 'Search pairs by a code or a fragment of it.'),
  s('parameter:pairs:type', 'parameter', H.pairs, 'type', 'Filter by asset type.'),
  s('parameter:pairs:page', 'parameter', H.pairs, 'page', `Page number; default ${LIMITS.defaultPage}.`),
  s(
    'parameter:pairs:per_page',
    'parameter',
    H.pairs,
    'per_page',
    `Items per page; default ${LIMITS.defaultPerPage}, also when only page is given.`,
  ),
  s('parameter:price:code', 'parameter', H.priceEndpoint, 'code', 'Pair code; required.'),
  s(
    'parameter:price:pool',
    'parameter',
    H.priceEndpoint,
    'pool',
    'Pool address for specific crypto assets; format and effect not shown.',
    {
      reason: 'format and effect are not shown; only its error statuses are documented',
      probe: 'profile probes naming pairs.pooled with an unavailable and an unknown pool',
    },
    'a pooled pair',
  ),
  s('parameter:subscribe:id', 'parameter', H.subscribe, 'id', 'Client identifier, echoed in the reply; optional.'),
  s(
    'parameter:subscribe:method',
    'parameter',
    H.subscribe,
    'method',
    `subscribe (required); an unknown method gets ${STATUS.INVALID_REQUEST}.`,
  ),
  s('parameter:subscribe:params', 'parameter', H.subscribe, 'params', 'Holds pairs; required.'),
  s(
    'parameter:subscribe:params.pairs',
    'parameter',
    H.subscribe,
    'params.pairs',
    `Authorized pair codes, at most ${LIMITS.maxPairsPerSubscribe}.`,
  ),
  // State transitions of a subscription.
  s(
    'transition:none/subscribe',
    'transition',
    H.subscription,
    'no subscription / subscribe',
    `All pairs valid and permitted, at most ${LIMITS.maxPairsPerSubscribe}: subscribed to exactly the ` +
      `listed pairs; notice code ${STATUS.OK}; pushes start automatically (for every listed pair).`,
  ),
  s(
    'transition:subscribed/subscribe',
    'transition',
    H.subscription,
    'subscribed / subscribe',
    'Subscribed to exactly the newly listed pairs: the earlier set is replaced, not extended.',
  ),
  s(
    'transition:subscribed/unsubscribe',
    'transition',
    H.subscription,
    'subscribed / unsubscribe',
    `Pairs valid: pushes for the listed pairs stop (every one of them, the rest go on); notice code ${STATUS.OK}.`,
  ),
  s(
    'transition:attempt/subscribe',
    'transition',
    H.subscription,
    'subscribe attempt / subscribe',
    `A pair unknown, inactive or suspended: error notice ${STATUS.PAIR_NOT_FOUND}; the next state ` +
      `is not stated (observed). One unknown pair among known ones fails the whole subscribe.`,
  ),
  s(
    'transition:connected/no-ping',
    'transition',
    H.subscription,
    'connected / no ping received for 30 seconds',
    'The connection is closed.',
  ),
  // Events.
  s(
    'event:push',
    'event',
    H.events,
    'Push data frame',
    'Sent when price data is available for a subscribed pair (interval and trigger not ' +
      'shown: observed); every subscribed pair, not only the first.',
  ),
  s(
    'event:notice-subscribe',
    'event',
    H.events,
    'Notice, method subscribe',
    `A subscribe request succeeds: notice code ${STATUS.OK}.`,
  ),
  s(
    'event:notice-unsubscribe',
    'event',
    H.events,
    'Notice, method unsubscribe',
    `An unsubscribe request succeeds: notice code ${STATUS.OK}.`,
  ),
  s(
    'event:notice-error',
    'event',
    H.events,
    'Notice, method error',
    'A request fails: notice with an error code (method error, code a string, id echoed, data null, a message).',
  ),
  s('event:pong', 'event', H.events, `Plain text ${TEXT.pong}`, 'A ping arrives: the plain text reply.'),
  // Limits.
  s(
    'limit:connections-per-key',
    'limit',
    H.limits,
    'WebSocket connections per API key',
    `Counted per key, not per IP address; beyond the key's allowance a connection is refused from any ` +
      `address (${STATUS.CONNECTION_LIMIT}); the allowance for a key is not shown (the profile states it).`,
  ),
  s(
    'limit:subscriptions-per-connection',
    'limit',
    H.limits,
    'Active subscriptions per connection',
    'One; a new subscribe replaces the earlier one.',
  ),
  s(
    'limit:pairs-per-connection',
    'limit',
    H.limits,
    'Pairs per connection',
    `${LIMITS.maxPairsPerSubscribe} maximum; exceeding it gives ${STATUS.INVALID_REQUEST}.`,
  ),
  s(
    'limit:ping-interval',
    'limit',
    H.limits,
    'Ping interval',
    `The connection is closed if no ping arrives within ${LIMITS.pingTimeoutMs / 1000} ` +
      `seconds (the profile may declare a shorter window for a test target).`,
  ),
  s(
    'limit:per_page-default',
    'limit',
    H.limits,
    'per_page default',
    `${LIMITS.defaultPerPage}, with or without page; maximum not shown (observed).`,
  ),
  s('limit:page-default', 'limit', H.limits, 'page default', `${LIMITS.defaultPage}.`),
  s(
    'limit:rest-rate-limit',
    'limit',
    H.limits,
    'REST rate limit',
    `Exists (${STATUS.RATE_LIMITED}); request counts and windows not shown.`,
    REST_STATUS_OUTSIDE[STATUS.RATE_LIMITED],
  ),
  // Status numbers and notice codes, one row each.
  ...REST_STATUSES.map((code) =>
    s(
      `status:${code}`,
      'status',
      H.restStatus,
      code,
      REST_STATUS[code],
      REST_STATUS_OUTSIDE[code],
      REST_OPERATOR_STATE[code],
    ),
  ),
  ...NOTICE_CODES.map((code) =>
    s(
      `notice:${code}`,
      'notice',
      H.noticeCode,
      code,
      NOTICE_CODE[code],
      NOTICE_OUTSIDE[code],
      NOTICE_OPERATOR_STATE[code],
    ),
  ),
  // Prose rules beside the tables.
  s('rule:pair-code:form', 'rule', 'Pair code', 'form', 'A string <asset_type>:<market>:<base>/<quote>.'),
  s(
    'rule:service:decimal-strings',
    'rule',
    'What the service does',
    'decimal strings',
    'Every price value is a JSON string (to be parsed with a decimal-capable type).',
  ),
  s(
    'rule:service:json-bodies',
    'rule',
    'What the service does',
    'JSON bodies',
    'All request and response bodies are JSON, except the plain-text ping reply.',
  ),
  s(
    'rule:market:crypto',
    'rule',
    H.market,
    'Crypto',
    'Crypto is continuously open: open true, continuous, REG, no timezone.',
  ),
  s(
    'rule:market:other-assets',
    'rule',
    H.market,
    'other assets',
    'open true with regular_session and REG in regular hours; open false with market_closed and CLOSED when closed.',
  ),
  s(
    'rule:market:us-extended-hours',
    'rule',
    H.market,
    'US extended hours',
    'pre_session with PRE and post_session with POST, both open true.',
  ),
  s(
    'rule:market:no_price',
    'rule',
    H.market,
    'no_price',
    `Used when the price is stale or illiquid (open true, REG in the example); see ${STATUS.PRICE_STALE}.`,
  ),
  s(
    'rule:market-session:transitions',
    'rule',
    'Market session states',
    'transitions',
    'States REG, PRE, POST, CLOSED; Crypto only REG; transitions not shown (observed).',
  ),
  s(
    'rule:price:stale-keeps-data',
    'rule',
    H.priceEndpoint,
    'stale keeps data',
    `Stale or delayed: status_number ${STATUS.PRICE_STALE}, message, data still filled, HTTP 200.`,
  ),
  s(
    'rule:price:unknown-pair-data-null',
    'rule',
    H.priceEndpoint,
    'unknown pair data null',
    `Pair does not exist: ${STATUS.PAIR_NOT_FOUND}, data null, message.`,
  ),
  s(
    'rule:price:client-checks-status',
    'rule',
    H.priceEndpoint,
    'client checks status_number',
    'A client must check status_number and not only the HTTP status.',
    {
      reason:
        'an obligation of clients, not of the service; the HTTP status per ' +
        'status_number is not shown, so it is observed',
      probe: 'none needed: it binds clients',
    },
  ),
  s(
    'rule:auth:header',
    'rule',
    'Authentication',
    '1. header',
    'The key goes in X-API-Key (also X-API-KEY); header names are case-insensitive, ' +
      'for REST and the stream handshake alike.',
  ),
  s(
    'rule:auth:rest-without-a-valid-key',
    'rule',
    'Authentication',
    '2. REST without a valid key',
    `HTTP 401 and status_number ${STATUS.UNAUTHORIZED}.`,
  ),
  s(
    'rule:auth:handshake-failures',
    'rule',
    'Authentication',
    '3. handshake failures',
    `Failures before the connection is established come back in the HTTP handshake as JSON with ` +
      `status_number and message (${STATUS.CONNECTION_LIMIT}, ${STATUS.ACCESS_DENIED}).`,
  ),
  s(
    'rule:auth:after-connection',
    'rule',
    'Authentication',
    '4. after connection',
    `Absent or invalid key state: notice ${STATUS.UNAUTHORIZED}; no V1 or whitelist ` +
      `access: ${STATUS.ACCESS_DENIED}; no access to the asset type: ${STATUS.ASSET_TYPE_DENIED}.`,
    NOTICE_OUTSIDE['50005'],
  ),
  s(
    'rule:auth:entitlements',
    'rule',
    'Authentication',
    '5. entitlements',
    'A key can be limited to asset types and to a whitelist of pairs; the data it reads depends on ' +
      'the key: denied every other asset type or pair, served its own, on REST and the stream.',
  ),
  s(
    'rule:handshake:never-code',
    'rule',
    'Handshake errors',
    'never code',
    'The handshake returns status_number and message, never code.',
  ),
  s(
    'rule:handshake:no-status-after-connect',
    'rule',
    'Handshake errors',
    'no status_number after connect',
    'Post-connect frames never carry status_number.',
  ),
  s(
    'rule:subscribe:pushes-without-requests',
    'rule',
    'Method subscribe',
    'pushes without requests',
    'After success the server pushes data frames without further requests.',
  ),
  s(
    'rule:subscribe:unknown-pair-message',
    'rule',
    'Method subscribe',
    'unknown pair message',
    `Error notice method error, message ${TEXT.pairNotFoundPrefix}<pair_code>, id ` +
      `echoed, data null; an unknown pair among known ones is named.`,
  ),
  s(
    'rule:unsubscribe:success-reply',
    'rule',
    'Method unsubscribe',
    'success reply',
    `Notice method unsubscribe, message ${TEXT.unsubscribeSuccess}, code ${STATUS.OK}; ` +
      `pairs not subscribed: not shown (observed).`,
  ),
  s(
    'rule:ping:reply',
    'rule',
    'Method ping',
    'reply',
    `The reply is the plain text ${TEXT.pong}; id and params are optional.`,
  ),
  s(
    'rule:resources:price-agrees-across-transports',
    'rule',
    'Resources and their fields',
    'price agrees across transports',
    "The push frame and the price record carry the same pair's ask, bid and mid-price as decimal strings.",
  ),
  s(
    'rule:endpoints:unknown-endpoint',
    'rule',
    'Endpoints',
    'unknown endpoint',
    `An endpoint that does not exist: ${STATUS.NOT_FOUND}.`,
  ),
  s(
    'rule:pairs:pagination',
    'rule',
    'GET /v1/pairs',
    'pagination',
    'A paginated list; pagination metadata not shown (observed).',
  ),
  s(
    'rule:versioning:v1-prefix',
    'rule',
    'Versioning',
    '/v1 prefix',
    'REST paths carry the prefix /v1; other versions not shown.',
  ),
  // Requests without id, malformed messages of every shape, and keys counted apart.
  s(
    'rule:requests:id-optional',
    'rule',
    'Method subscribe',
    'id optional',
    'id is optional on subscribe, unsubscribe and ping: a request without one is served like one with it.',
  ),
  s(
    'rule:connection:messages-are-objects',
    'rule',
    'WebSocket connection',
    'messages are objects with a method',
    `Messages are JSON objects with a method field: a JSON array, a JSON string or an object without ` +
      `method is a malformed message, answered with error notice ${STATUS.INVALID_REQUEST}.`,
  ),
  s(
    'rule:unsubscribe:request-fields',
    'rule',
    'Method unsubscribe',
    'request fields',
    `Same fields as subscribe: params holds pairs, an array of pair codes (strings); missing or invalid ` +
      `pairs give ${STATUS.INVALID_REQUEST}.`,
  ),
  s(
    'rule:limits:keys-counted-apart',
    'rule',
    H.limits,
    'keys counted apart',
    "Counted per key: one key at its allowance does not stop another key's connections within its own.",
  ),
] as const;

/** The key of a statement of SPEC_STATEMENTS. */
export type StatementKey = (typeof STATEMENTS)[number]['key'];

export const SPEC_STATEMENTS: readonly SpecStatement[] = STATEMENTS;

/**
 * Statements that state one rule on both channels: the price record's and the push frame's ask,
 * bid and mid-price. A service that breaks the rule breaks it on each channel it serves, and the
 * run counts one broken rule (each channel's owner still fails on it once).
 */
const ACROSS_CHANNELS: readonly (readonly [StatementKey, StatementKey])[] = [
  ['field:price:ask', 'field:push:ask'],
  ['field:price:bid', 'field:push:bid'],
  ['field:price:price', 'field:push:price'],
];

/** The rule a statement states, as the broken rules are counted: the first statement of its pair across channels. */
export function ruleOf(key: StatementKey): StatementKey {
  return ACROSS_CHANNELS.find((pair) => pair.includes(key))?.[0] ?? key;
}

/** A statement by key; undefined for a key that is none. */
export function statement(key: string): SpecStatement | undefined {
  return SPEC_STATEMENTS.find((s) => s.key === key);
}

/**
 * Statements that state nothing a service can break: an obligation of clients (the HTTP status per
 * status_number is not shown, so it is observed), and a parameter whose format and effect are not
 * shown. No verdict fails on them; observing the target's answer is all a run can do of them, so
 * an observation that saw one is what checks them.
 */
export const OBSERVED_ONLY: ReadonlySet<StatementKey> = new Set([
  'rule:price:client-checks-status',
  'parameter:price:pool',
]);
