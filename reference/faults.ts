/**
 * Named faults of the reference service. Each switches on exactly one deviation from one rule of
 * the spec, and names the statements of the traceability matrix (src/matrix.ts) it breaks. Which
 * checks must report it is not written here: each check names the faults it catches
 * (`Check.catches` in suites/), and src/matrix.ts `faultCatches` gathers them.
 */
import { UnknownFaultError } from '../src/errors.ts';
import type { StatementKey } from '../src/matrix.ts';

export interface Fault {
  readonly name: string;
  /** Area of the spec the fault breaks. */
  readonly area: string;
  /** The rule it breaks, in the spec's words where possible. */
  readonly rule: string;
  /** The statements of the spec (src/matrix.ts keys) the fault breaks. */
  readonly breaks: readonly StatementKey[];
}

const f = (name: string, area: string, rule: string, breaks: readonly StatementKey[]): Fault => ({
  name,
  area,
  rule,
  breaks,
});

export const FAULTS = [
  // REST envelope
  f('envelope-status-number-integer', 'rest-envelope', 'status_number is a string', ['field:envelope:status_number']),
  f('envelope-ts-string', 'rest-envelope', 'ts is an integer', ['field:envelope:ts']),
  f('envelope-error-data-filled', 'rest-envelope', 'data is null on errors', ['field:envelope:data']),
  f('envelope-error-message-missing', 'rest-envelope', 'message is present on errors', ['field:envelope:message']),
  // Auth
  f('auth-header-case-sensitive', 'auth', 'header names are case-insensitive: X-API-KEY and x-api-key are accepted', [
    'rule:auth:header',
  ]),
  f('auth-canonical-header-refused', 'auth', 'the key header is accepted as written, X-API-Key', ['rule:auth:header']),
  f('auth-missing-key-accepted', 'auth', 'a request without a valid key is rejected with HTTP 401 and 50005', [
    'rule:auth:rest-without-a-valid-key',
    'status:50005',
  ]),
  f('auth-http-403', 'auth', 'a missing or invalid key gets HTTP 401 (not another status)', [
    'rule:auth:rest-without-a-valid-key',
  ]),
  f('auth-suspended-served', 'auth', 'a suspended key gets 50007', ['status:50007']),
  // Pagination and filters
  f('pairs-default-per-page-20', 'pagination', 'per_page defaults to 10', [
    'limit:per_page-default',
    'parameter:pairs:per_page',
  ]),
  f(
    'pairs-page-alone-per-page-20',
    'pagination',
    'page given without per_page pages with the default size 10 (here 20)',
    ['limit:per_page-default', 'parameter:pairs:per_page'],
  ),
  f(
    'pairs-error-envelope',
    'rest-envelope',
    '/v1/pairs errors have data null and a message (here data [] and no message on 50004)',
    ['field:envelope:data', 'field:envelope:message'],
  ),
  f('pairs-pages-overlap', 'pagination', 'pages are disjoint: page n starts after page n-1 ends', [
    'rule:pairs:pagination',
    'parameter:pairs:page',
  ]),
  f('pairs-per-page-ignored', 'pagination', 'per_page sets the number of items per page', ['parameter:pairs:per_page']),
  f('pairs-invalid-page-accepted', 'pagination', 'an invalid page is rejected with 50004', [
    'parameter:pairs:page',
    'status:50004',
  ]),
  f('pairs-invalid-per-page-accepted', 'pagination', 'an invalid per_page is rejected with 50004', [
    'parameter:pairs:per_page',
    'status:50004',
  ]),
  f('pairs-type-filter-ignored', 'filters', 'type filters by asset type', ['parameter:pairs:type']),
  f('pairs-code-search-ignored', 'filters', 'code searches pairs by a code or fragment', ['parameter:pairs:code']),
  f('pairs-record-name-missing', 'pair-record', 'a pair record has code, name, base and quote', ['field:pair:name']),
  f('pairs-base-mismatch', 'pair-record', 'base and quote are the symbols of the code', [
    'field:pair:base',
    'field:pair:quote',
  ]),
  // Price record and market object
  f('price-ask-number', 'price-record', 'every price value is a JSON string', [
    'field:price:ask',
    'rule:service:decimal-strings',
  ]),
  f('price-not-mid', 'price-record', 'price is the mid of ask and bid', ['field:price:price']),
  f('price-bid-above-ask', 'price-record', 'bid <= price <= ask', ['field:price:bid', 'field:price:ask']),
  f(
    'price-deep-pair-inverted',
    'price-record',
    "bid <= price <= ask for every pair (here only the catalogue's last pair, outside every sample, breaks it)",
    ['field:price:bid', 'field:price:ask'],
  ),
  f('market-crypto-timezone', 'market', 'timezone is absent for Crypto', [
    'field:market:timezone',
    'rule:market:crypto',
  ]),
  f('market-timezone-missing', 'market', 'timezone is present for non-Crypto assets', ['field:market:timezone']),
  f('market-timezone-invalid', 'market', 'timezone is an IANA zone name', ['field:market:timezone']),
  f('market-crypto-regular-session', 'market', 'Crypto reason is continuous', [
    'rule:market:crypto',
    'field:market:reason',
  ]),
  f(
    'market-open-inverted',
    'market',
    'open is true in a session and false with market_closed (non-Crypto open flag inverted, so it shows at any hour)',
    ['field:market:open', 'rule:market:other-assets'],
  ),
  // 50102 and 50104 shapes
  f('stale-http-503', 'price-status', '50102 keeps HTTP 200', ['rule:price:stale-keeps-data', 'status:50102']),
  f('stale-data-null', 'price-status', '50102 still fills data', ['rule:price:stale-keeps-data', 'status:50102']),
  f('unknown-pair-status-50008', 'price-status', 'an unknown pair answers 50104', [
    'status:50104',
    'rule:price:unknown-pair-data-null',
  ]),
  f('missing-code-200', 'price-status', 'a missing code is an invalid request (50004)', [
    'parameter:price:code',
    'status:50004',
  ]),
  f('unknown-endpoint-50004', 'rest-envelope', 'an unknown endpoint answers 50008', [
    'rule:endpoints:unknown-endpoint',
    'status:50008',
  ]),
  f('probe-status-swapped', 'status-numbers', 'API maintenance answers 50001 (not 50003)', ['status:50001']),
  f('probe-restricted-as-suspended', 'status-numbers', 'a restricted account answers 50100 (not 50007)', [
    'status:50100',
  ]),
  // Entitlements
  f('entitlement-asset-type-ignored', 'entitlements', 'a key limited to asset types cannot read others (50109)', [
    'rule:auth:entitlements',
    'status:50109',
    'notice:50109',
  ]),
  f(
    'entitlement-pairs-list-unfiltered',
    'entitlements',
    'the pairs a key reads depend on the key: /v1/pairs lists only its pairs',
    ['rule:auth:entitlements'],
  ),
  f('entitlement-whitelist-subscribe', 'entitlements', 'subscribing outside the whitelist gives 50010', [
    'rule:auth:after-connection',
    'notice:50010',
  ]),
  f(
    'entitlement-asset-type-partial',
    'entitlements',
    'a key limited to asset types is denied every other asset type (here Metal is served on REST and the stream)',
    ['rule:auth:entitlements'],
  ),
  f(
    'entitlement-whitelist-price-ignored',
    'entitlements',
    "REST /v1/price refuses a pair outside the key's whitelist with 50010",
    ['rule:auth:entitlements', 'status:50010'],
  ),
  // Handshake
  f('handshake-body-code', 'handshake', 'handshake refusals carry status_number and message, never code', [
    'rule:handshake:never-code',
    'field:handshake:status_number',
  ]),
  f('handshake-no-stream-accepted', 'handshake', 'a key without V1 stream access is refused with 50010', [
    'rule:auth:handshake-failures',
    'status:50010',
  ]),
  f(
    'handshake-missing-key-accepted',
    'handshake',
    'a connection without a key is refused with 50005 (or gets a 50005 notice)',
    ['rule:auth:after-connection', 'notice:50005'],
  ),
  f(
    'handshake-header-case-sensitive',
    'handshake',
    'the stream handshake takes the key header in any spelling (here only X-API-Key)',
    ['rule:auth:header'],
  ),
  // Connection limit
  f('limit-per-ip', 'connection-limit', 'connections are counted per key, not per IP address', [
    'limit:connections-per-key',
  ]),
  f('limit-off-by-one', 'connection-limit', 'a connection beyond the allowance is refused with 50009', [
    'limit:connections-per-key',
    'status:50009',
  ]),
  f(
    'limit-slot-not-freed',
    'connection-limit',
    "closing a connection frees its slot (here a single-connection key's slot is never freed)",
    ['limit:connections-per-key'],
  ),
  // Subscribe / unsubscribe
  f('subscribe-extends', 'subscription', 'a new subscribe replaces the earlier set', [
    'transition:subscribed/subscribe',
    'limit:subscriptions-per-connection',
  ]),
  f('subscribe-accepts-101', 'subscription', 'at most 100 pairs; 101 gives 50004', [
    'limit:pairs-per-connection',
    'parameter:subscribe:params.pairs',
  ]),
  f('subscribe-limit-99', 'subscription', 'exactly 100 pairs are accepted', ['limit:pairs-per-connection']),
  f('subscribe-empty-accepted', 'subscription', 'missing or invalid pairs give 50004', [
    'parameter:subscribe:params.pairs',
    'notice:50004',
  ]),
  f('subscribe-missing-params-accepted', 'subscription', 'a subscribe without params is an invalid request (50004)', [
    'parameter:subscribe:params',
    'notice:50004',
  ]),
  f(
    'subscribe-pairs-string-accepted',
    'subscription',
    'params.pairs that is not an array is an invalid request (50004)',
    ['parameter:subscribe:params.pairs', 'notice:50004'],
  ),
  f('subscribe-inactive-accepted', 'subscription', 'an inactive pair gives 50104', [
    'transition:attempt/subscribe',
    'notice:50104',
  ]),
  f('subscribe-unknown-message', 'subscription', 'unknown pair message is "pair not found: <code>"', [
    'rule:subscribe:unknown-pair-message',
  ]),
  f(
    'subscribe-unknown-among-known-dropped',
    'subscription',
    'a subscribe listing an unknown pair among known ones is an error notice 50104, ' +
      'never a success (here the unknown pair is dropped)',
    ['transition:attempt/subscribe', 'rule:subscribe:unknown-pair-message'],
  ),
  f('unsubscribe-keeps-pushing', 'subscription', 'after unsubscribe pushes for the listed pairs stop', [
    'transition:subscribed/unsubscribe',
  ]),
  f('unsubscribe-first-pair-only', 'subscription', 'an unsubscribe stops every listed pair (here only the first)', [
    'transition:subscribed/unsubscribe',
  ]),
  f('push-first-pair-only', 'subscription', 'every pair of a subscription is pushed (here only the first listed)', [
    'transition:none/subscribe',
    'event:push',
  ]),
  f('push-unsubscribed-pair', 'subscription', 'only subscribed pairs are pushed', ['field:push:code']),
  f('push-never-starts', 'subscription', 'after a successful subscribe pushes start without further requests', [
    'rule:subscribe:pushes-without-requests',
  ]),
  // Notices
  f('notice-code-number', 'notice', 'notice code is a string', ['field:notice:code']),
  f('notice-id-not-echoed', 'notice', 'the client id is echoed in the reply', ['field:notice:id']),
  f('notice-subscribe-message-lowercase', 'notice', 'subscribe success message is "Success"', ['field:notice:message']),
  f('unsubscribe-message-capitalized', 'notice', 'unsubscribe success message is "success"', [
    'rule:unsubscribe:success-reply',
    'field:notice:message',
  ]),
  f('notice-status-number', 'notice', 'post-connect frames never carry status_number', [
    'rule:handshake:no-status-after-connect',
  ]),
  f('notice-malformed-json-ignored', 'notice', 'a malformed message gets a 50004 notice', [
    'event:notice-error',
    'notice:50004',
  ]),
  f(
    'notice-denied-shape',
    'notice',
    'every error notice echoes the id and has data null (here 50010 and 50109 drop the id and fill data)',
    ['field:notice:id', 'field:notice:data'],
  ),
  f('notice-unknown-method-ignored', 'notice', 'an unknown method gets a 50004 notice', [
    'parameter:subscribe:method',
    'notice:50004',
  ]),
  // Ping and keep-alive
  f('ping-reply-json', 'ping', 'the ping reply is the plain text Pong!', ['rule:ping:reply', 'event:pong']),
  f('ping-reply-lowercase', 'ping', 'the ping reply is exactly Pong!', ['rule:ping:reply']),
  f('keepalive-never', 'keepalive', 'a connection with no ping for the window is closed', [
    'transition:connected/no-ping',
    'limit:ping-interval',
  ]),
  f('keepalive-early', 'keepalive', 'the connection is not closed before the ping window ends', [
    'limit:ping-interval',
  ]),
  f('keepalive-ping-not-reset', 'keepalive', 'each ping restarts the window', ['limit:ping-interval']),
  // Push frames
  f('push-missing-bid', 'push', 'push frames carry code, ask, bid, price', ['field:push:bid']),
  f('push-price-number', 'push', 'push price values are JSON strings', [
    'field:push:price',
    'rule:service:decimal-strings',
  ]),
  f(
    'push-changed-missing-bid',
    'push',
    'push frames carry code, ask, bid, price (here only on a connection whose ' +
      'subscription changed, which no push check makes)',
    ['field:push:bid'],
  ),
  // Catalogue reach
  f(
    'price-late-type-inverted',
    'price-record',
    'bid <= price <= ask for every pair of every asset type (here the asset type with the fewest ' +
      'pairs is listed after every other pair, and its prices are inverted)',
    ['field:price:bid', 'field:price:ask'],
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
