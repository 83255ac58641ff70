/**
 * Named faults of the reference service. Each switches on exactly one deviation from one rule of
 * the spec; `catches` lists the ids of the checks that must report it.
 */

export interface Fault {
  readonly name: string;
  /** Area of the spec the fault breaks. */
  readonly area: string;
  /** The rule it breaks, in the spec's words where possible. */
  readonly rule: string;
  /** Check ids that must fail when the fault is on. */
  readonly catches: readonly string[];
}

/** `rest.probe.<status>` ids: a fault of the envelope shows in every probe answer too. */
const probes = (...statuses: string[]): string[] => statuses.map((st) => `rest.probe.${st}`);

const f = (name: string, area: string, rule: string, catches: readonly string[]): Fault => ({
  name,
  area,
  rule,
  catches,
});

export const FAULTS = [
  // REST envelope
  f('envelope-status-number-integer', 'rest-envelope', 'status_number is a string', [
    'rest.price.catalogue',
    'rest.envelope.schema',
    'rest.auth.header-case.canonical',
    'rest.auth.header-case.lower',
    'rest.auth.header-case.upper',
    'rest.auth.invalid-key',
    'rest.auth.missing-key',
    'rest.auth.suspended',
    'rest.entitlements.crypto-only-pairs',
    'rest.entitlements.crypto-only-price',
    'rest.entitlements.whitelist-pairs',
    'rest.not-found.endpoint',
    'rest.pairs.code-form',
    'rest.pairs.code-search',
    'rest.pairs.defaults',
    'rest.pairs.invalid-param.page-negative',
    'rest.pairs.invalid-param.page-text',
    'rest.pairs.invalid-param.page-zero',
    'rest.pairs.invalid-param.per-page-text',
    'rest.pairs.invalid-param.per-page-zero',
    'rest.pairs.pages-disjoint',
    'rest.pairs.per-page',
    'rest.pairs.schema',
    'rest.pairs.type-filter',
    'rest.price.market.combination',
    'rest.price.market.crypto',
    'rest.price.market.equity-session',
    'rest.price.market.timezone',
    'rest.price.mid',
    'rest.price.missing-code',
    'rest.price.schema',
    'rest.price.stale',
    'rest.price.unknown-pair',
    'rest.entitlements.asset-types',
    'rest.entitlements.whitelist-price',
    'rest.envelope.error-shape',
    'ws.notice.error-shape',
    'ws.subscribe.asset-types',
    ...probes(
      '50000',
      '50001',
      '50002',
      '50003',
      '50004',
      '50005',
      '50006',
      '50007',
      '50008',
      '50010',
      '50100',
      '50101',
      '50102',
      '50103',
      '50104',
      '50105',
      '50106',
      '50107',
      '50108',
      '50109',
    ),
  ]),
  f('envelope-ts-string', 'rest-envelope', 'ts is an integer', [
    'rest.price.catalogue',
    'rest.envelope.schema',
    'rest.pairs.schema',
    'rest.price.schema',
    ...probes(
      '50000',
      '50001',
      '50002',
      '50003',
      '50004',
      '50005',
      '50006',
      '50007',
      '50008',
      '50010',
      '50100',
      '50101',
      '50103',
      '50104',
      '50105',
      '50106',
      '50107',
      '50108',
      '50109',
    ),
  ]),
  f('envelope-error-data-filled', 'rest-envelope', 'data is null on errors', [
    'rest.envelope.error-shape',
    'rest.price.unknown-pair',
    'rest.entitlements.crypto-only-price',
    'rest.envelope.schema',
    ...probes(
      '50000',
      '50001',
      '50002',
      '50003',
      '50004',
      '50005',
      '50006',
      '50007',
      '50008',
      '50010',
      '50100',
      '50101',
      '50103',
      '50104',
      '50105',
      '50106',
      '50107',
      '50108',
      '50109',
    ),
  ]),
  f('envelope-error-message-missing', 'rest-envelope', 'message is present on errors', [
    'rest.envelope.error-shape',
    'rest.envelope.schema',
    'rest.price.unknown-pair',
    ...probes(
      '50000',
      '50001',
      '50002',
      '50003',
      '50004',
      '50005',
      '50006',
      '50007',
      '50008',
      '50010',
      '50100',
      '50101',
      '50103',
      '50104',
      '50105',
      '50106',
      '50107',
      '50108',
      '50109',
    ),
  ]),
  // Auth
  f('auth-header-case-sensitive', 'auth', 'header names are case-insensitive: X-API-KEY and x-api-key are accepted', [
    'rest.auth.header-case.upper',
    'rest.auth.header-case.lower',
    'ws.handshake.header-case',
  ]),
  f('auth-canonical-header-refused', 'auth', 'the key header is accepted as written, X-API-Key', [
    'rest.price.catalogue',
    'rest.auth.header-case.canonical',
    'rest.auth.suspended',
    'rest.entitlements.crypto-only-pairs',
    'rest.entitlements.crypto-only-price',
    'rest.entitlements.whitelist-pairs',
    'rest.not-found.endpoint',
    'rest.pairs.code-form',
    'rest.pairs.code-search',
    'rest.pairs.defaults',
    'rest.pairs.invalid-param.page-negative',
    'rest.pairs.invalid-param.page-text',
    'rest.pairs.invalid-param.page-zero',
    'rest.pairs.invalid-param.per-page-text',
    'rest.pairs.invalid-param.per-page-zero',
    'rest.pairs.pages-disjoint',
    'rest.pairs.per-page',
    'rest.pairs.schema',
    'rest.pairs.type-filter',
    'rest.price.market.combination',
    'rest.price.market.crypto',
    'rest.price.market.equity-session',
    'rest.price.market.timezone',
    'rest.price.mid',
    'rest.price.missing-code',
    'rest.price.schema',
    'rest.price.stale',
    'rest.price.unknown-pair',
    'rest.entitlements.asset-types',
    'rest.entitlements.whitelist-price',
    'rest.envelope.error-shape',
    'ws.notice.error-shape',
    'ws.subscribe.asset-types',
    ...probes(
      '50000',
      '50001',
      '50002',
      '50003',
      '50004',
      '50006',
      '50007',
      '50008',
      '50010',
      '50100',
      '50101',
      '50102',
      '50103',
      '50104',
      '50105',
      '50106',
      '50107',
      '50108',
      '50109',
    ),
  ]),
  f('auth-missing-key-accepted', 'auth', 'a request without a valid key is rejected with HTTP 401 and 50005', [
    'rest.auth.missing-key',
  ]),
  f('auth-http-403', 'auth', 'a missing or invalid key gets HTTP 401 (not another status)', [
    'rest.auth.missing-key',
    'rest.auth.invalid-key',
    'rest.probe.50005',
  ]),
  f('auth-suspended-served', 'auth', 'a suspended key gets 50007', ['rest.auth.suspended', 'rest.probe.50007']),
  // Pagination and filters
  f('pairs-default-per-page-20', 'pagination', 'per_page defaults to 10', [
    'rest.pairs.defaults',
    'rest.pairs.page-default-size',
  ]),
  f(
    'pairs-page-alone-per-page-20',
    'pagination',
    'page given without per_page pages with the default size 10 (here 20)',
    ['rest.pairs.page-default-size'],
  ),
  f(
    'pairs-error-envelope',
    'rest-envelope',
    '/v1/pairs errors have data null and a message (here data [] and no message on 50004)',
    ['rest.envelope.error-shape'],
  ),
  f('pairs-pages-overlap', 'pagination', 'pages are disjoint: page n starts after page n-1 ends', [
    'rest.pairs.pages-disjoint',
  ]),
  f('pairs-per-page-ignored', 'pagination', 'per_page sets the number of items per page', [
    'rest.pairs.per-page',
    'rest.pairs.pages-disjoint',
  ]),
  f('pairs-invalid-page-accepted', 'pagination', 'an invalid page is rejected with 50004', [
    'rest.pairs.invalid-param.page-zero',
    'rest.pairs.invalid-param.page-negative',
    'rest.pairs.invalid-param.page-text',
  ]),
  f('pairs-invalid-per-page-accepted', 'pagination', 'an invalid per_page is rejected with 50004', [
    'rest.pairs.invalid-param.per-page-zero',
    'rest.pairs.invalid-param.per-page-text',
  ]),
  f('pairs-type-filter-ignored', 'filters', 'type filters by asset type', ['rest.pairs.type-filter']),
  f('pairs-code-search-ignored', 'filters', 'code searches pairs by a code or fragment', ['rest.pairs.code-search']),
  f('pairs-record-name-missing', 'pair-record', 'a pair record has code, name, base and quote', ['rest.pairs.schema']),
  f('pairs-base-mismatch', 'pair-record', 'base and quote are the symbols of the code', ['rest.pairs.code-form']),
  // Price record and market object
  f('price-ask-number', 'price-record', 'every price value is a JSON string', [
    'rest.price.catalogue',
    'rest.price.schema',
    'rest.price.stale',
  ]),
  f('price-not-mid', 'price-record', 'price is the mid of ask and bid', [
    'rest.price.catalogue',
    'rest.price.mid',
    'ws.push.mid',
    'ws.consistency.rest-agrees',
  ]),
  f('price-bid-above-ask', 'price-record', 'bid <= price <= ask', [
    'rest.price.catalogue',
    'rest.price.mid',
    'ws.push.mid',
    'ws.consistency.rest-agrees',
  ]),
  f(
    'price-deep-pair-inverted',
    'price-record',
    "bid <= price <= ask for every pair (here only the catalogue's last pair, outside every sample, breaks it)",
    ['rest.price.catalogue'],
  ),
  f('market-crypto-timezone', 'market', 'timezone is absent for Crypto', [
    'rest.price.catalogue',
    'rest.price.market.crypto',
    'rest.price.schema',
    'rest.price.stale',
  ]),
  f('market-timezone-missing', 'market', 'timezone is present for non-Crypto assets', [
    'rest.price.catalogue',
    'rest.price.market.timezone',
    'rest.price.schema',
  ]),
  f('market-timezone-invalid', 'market', 'timezone is an IANA zone name', [
    'rest.price.catalogue',
    'rest.price.market.timezone',
  ]),
  f('market-crypto-regular-session', 'market', 'Crypto reason is continuous', [
    'rest.price.catalogue',
    'rest.price.market.crypto',
    'rest.price.market.combination',
    'rest.price.schema',
  ]),
  f(
    'market-open-inverted',
    'market',
    'open is true in a session and false with market_closed (non-Crypto open flag inverted, so it shows at any hour)',
    ['rest.price.catalogue', 'rest.price.market.combination', 'rest.price.market.equity-session', 'rest.price.schema'],
  ),
  // 50102 and 50104 shapes
  f('stale-http-503', 'price-status', '50102 keeps HTTP 200', ['rest.price.stale', 'rest.probe.50102']),
  f('stale-data-null', 'price-status', '50102 still fills data', ['rest.price.stale', 'rest.probe.50102']),
  f('unknown-pair-status-50008', 'price-status', 'an unknown pair answers 50104', [
    'rest.price.unknown-pair',
    'rest.probe.50104',
  ]),
  f('missing-code-200', 'price-status', 'a missing code is an invalid request (50004)', [
    'rest.price.missing-code',
    'rest.probe.50004',
  ]),
  f('unknown-endpoint-50004', 'rest-envelope', 'an unknown endpoint answers 50008', [
    'rest.not-found.endpoint',
    'rest.probe.50008',
  ]),
  f('probe-status-swapped', 'status-numbers', 'API maintenance answers 50001 (not 50003)', ['rest.probe.50001']),
  f('probe-restricted-as-suspended', 'status-numbers', 'a restricted account answers 50100 (not 50007)', [
    'rest.probe.50100',
  ]),
  // Entitlements
  f('entitlement-asset-type-ignored', 'entitlements', 'a key limited to asset types cannot read others (50109)', [
    'rest.entitlements.crypto-only-price',
    'ws.subscribe.asset-type',
    'rest.entitlements.crypto-only-pairs',
    'rest.probe.50109',
    'rest.entitlements.asset-types',
    'ws.subscribe.asset-types',
  ]),
  f(
    'entitlement-pairs-list-unfiltered',
    'entitlements',
    'the pairs a key reads depend on the key: /v1/pairs lists only its pairs',
    ['rest.entitlements.crypto-only-pairs', 'rest.entitlements.whitelist-pairs', 'rest.probe.50107'],
  ),
  f('entitlement-whitelist-subscribe', 'entitlements', 'subscribing outside the whitelist gives 50010', [
    'ws.subscribe.whitelist',
  ]),
  f(
    'entitlement-asset-type-partial',
    'entitlements',
    'a key limited to asset types is denied every other asset type (here Metal is served on REST and the stream)',
    ['rest.entitlements.asset-types', 'ws.subscribe.asset-types'],
  ),
  f(
    'entitlement-whitelist-price-ignored',
    'entitlements',
    "REST /v1/price refuses a pair outside the key's whitelist with 50010",
    ['rest.entitlements.whitelist-price', 'rest.probe.50010'],
  ),
  // Handshake
  f('handshake-body-code', 'handshake', 'handshake refusals carry status_number and message, never code', [
    'ws.handshake.error-body',
    'ws.handshake.missing-key',
    'ws.handshake.invalid-key',
    'ws.handshake.no-stream',
    'ws.limits.connections.limited',
    'ws.limits.connections.per-key',
    'ws.limits.connections.primary',
  ]),
  f('handshake-no-stream-accepted', 'handshake', 'a key without V1 stream access is refused with 50010', [
    'ws.handshake.no-stream',
  ]),
  f(
    'handshake-missing-key-accepted',
    'handshake',
    'a connection without a key is refused with 50005 (or gets a 50005 notice)',
    ['ws.handshake.missing-key'],
  ),
  f(
    'handshake-header-case-sensitive',
    'handshake',
    'the stream handshake takes the key header in any spelling (here only X-API-Key)',
    ['ws.handshake.header-case'],
  ),
  // Connection limit
  f('limit-per-ip', 'connection-limit', 'connections are counted per key, not per IP address', [
    'ws.limits.connections.per-key',
  ]),
  f('limit-off-by-one', 'connection-limit', 'a connection beyond the allowance is refused with 50009', [
    'ws.limits.connections.limited',
    'ws.limits.connections.primary',
    'ws.limits.connections.per-key',
  ]),
  f(
    'limit-slot-not-freed',
    'connection-limit',
    "closing a connection frees its slot (here a single-connection key's slot is never freed)",
    ['ws.limits.connections.slot-freed', 'ws.limits.connections.per-key'],
  ),
  // Subscribe / unsubscribe
  f('subscribe-extends', 'subscription', 'a new subscribe replaces the earlier set', ['ws.subscribe.replaces']),
  f('subscribe-accepts-101', 'subscription', 'at most 100 pairs; 101 gives 50004', ['ws.subscribe.too-many-pairs']),
  f('subscribe-limit-99', 'subscription', 'exactly 100 pairs are accepted', ['ws.subscribe.max-pairs']),
  f('subscribe-empty-accepted', 'subscription', 'missing or invalid pairs give 50004', [
    'ws.subscribe.invalid.empty-list',
  ]),
  f('subscribe-missing-params-accepted', 'subscription', 'a subscribe without params is an invalid request (50004)', [
    'ws.subscribe.invalid.missing-params',
  ]),
  f(
    'subscribe-pairs-string-accepted',
    'subscription',
    'params.pairs that is not an array is an invalid request (50004)',
    ['ws.subscribe.invalid.pairs-not-array'],
  ),
  f('subscribe-inactive-accepted', 'subscription', 'an inactive pair gives 50104', ['ws.subscribe.inactive-pair']),
  f('subscribe-unknown-message', 'subscription', 'unknown pair message is "pair not found: <code>"', [
    'ws.subscribe.unknown-pair',
    'ws.subscribe.unknown-among-known',
  ]),
  f(
    'subscribe-unknown-among-known-dropped',
    'subscription',
    'a subscribe listing an unknown pair among known ones is an error notice 50104, ' +
      'never a success (here the unknown pair is dropped)',
    ['ws.subscribe.unknown-among-known'],
  ),
  f('unsubscribe-keeps-pushing', 'subscription', 'after unsubscribe pushes for the listed pairs stop', [
    'ws.unsubscribe.stops',
    'ws.unsubscribe.stops-several',
  ]),
  f('unsubscribe-first-pair-only', 'subscription', 'an unsubscribe stops every listed pair (here only the first)', [
    'ws.unsubscribe.stops-several',
  ]),
  f('push-first-pair-only', 'subscription', 'every pair of a subscription is pushed (here only the first listed)', [
    'ws.subscribe.pushes-every-pair',
  ]),
  f('push-unsubscribed-pair', 'subscription', 'only subscribed pairs are pushed', [
    'ws.push.only-subscribed',
    'ws.subscribe.replaces',
    'ws.unsubscribe.stops',
    'ws.unsubscribe.stops-several',
  ]),
  f('push-never-starts', 'subscription', 'after a successful subscribe pushes start without further requests', [
    'ws.subscribe.pushes-start',
  ]),
  // Notices
  f('notice-code-number', 'notice', 'notice code is a string', [
    'ws.notice.schema',
    'ws.subscribe.notice',
    'ws.unsubscribe.notice',
    'ws.notice.error-shape',
  ]),
  f('notice-id-not-echoed', 'notice', 'the client id is echoed in the reply', [
    'ws.notice.id-echo',
    'ws.subscribe.notice',
    'ws.notice.error-shape',
  ]),
  f('notice-subscribe-message-lowercase', 'notice', 'subscribe success message is "Success"', [
    'ws.subscribe.notice',
    'ws.notice.schema',
  ]),
  f('unsubscribe-message-capitalized', 'notice', 'unsubscribe success message is "success"', [
    'ws.unsubscribe.notice',
    'ws.notice.schema',
  ]),
  f('notice-status-number', 'notice', 'post-connect frames never carry status_number', [
    'ws.frames.no-status-number',
    'ws.notice.schema',
    'ws.notice.error-shape',
  ]),
  f('notice-malformed-json-ignored', 'notice', 'a malformed message gets a 50004 notice', [
    'ws.request.malformed-json',
  ]),
  f(
    'notice-denied-shape',
    'notice',
    'every error notice echoes the id and has data null (here 50010 and 50109 drop the id and fill data)',
    ['ws.notice.error-shape'],
  ),
  f('notice-unknown-method-ignored', 'notice', 'an unknown method gets a 50004 notice', ['ws.request.unknown-method']),
  // Ping and keep-alive
  f('ping-reply-json', 'ping', 'the ping reply is the plain text Pong!', [
    'ws.ping.pong.bare',
    'ws.ping.pong.with-id',
    'ws.ping.pong.with-params',
  ]),
  f('ping-reply-lowercase', 'ping', 'the ping reply is exactly Pong!', [
    'ws.ping.pong.bare',
    'ws.ping.pong.with-id',
    'ws.ping.pong.with-params',
  ]),
  f('keepalive-never', 'keepalive', 'a connection with no ping for the window is closed', ['ws.keepalive.timeout']),
  f('keepalive-early', 'keepalive', 'the connection is not closed before the ping window ends', [
    'ws.keepalive.timeout',
  ]),
  f('keepalive-ping-not-reset', 'keepalive', 'each ping restarts the window', ['ws.keepalive.ping-keeps-alive']),
  // Push frames
  f('push-missing-bid', 'push', 'push frames carry code, ask, bid, price', ['ws.push.schema']),
  f('push-price-number', 'push', 'push price values are JSON strings', ['ws.push.schema']),
  f(
    'push-changed-missing-bid',
    'push',
    'push frames carry code, ask, bid, price (here only on a connection whose ' +
      'subscription changed, which no push check makes)',
    ['ws.subscribe.replaces', 'ws.unsubscribe.stops'],
  ),
] as const satisfies readonly Fault[];

export type FaultName = (typeof FAULTS)[number]['name'];
export const FAULT_NAMES: readonly FaultName[] = FAULTS.map((x) => x.name);

/** Unknown fault names; the message lists the valid ones. */
export class UnknownFaultError extends Error {
  readonly code = 'CONFORM_REFERENCE_FAULT';
  override name = 'UnknownFaultError';
}

/** Returns the fault named `name`, or throws UnknownFaultError. */
export function findFault(name: string): Fault {
  const fault = FAULTS.find((x) => x.name === name);
  if (!fault)
    throw new UnknownFaultError(`--fault: unknown fault ${JSON.stringify(name)}; run conform serve --list-faults`);
  return fault;
}

/** One line per fault, for `conform serve --list-faults`. */
export function formatFaults(): string {
  const width = Math.max(...FAULTS.map((x) => x.name.length));
  return FAULTS.map(
    (x) => `${x.name.padEnd(width)}  [${x.area}] breaks: ${x.rule}; caught by ${x.catches.join(', ')}`,
  ).join('\n');
}
