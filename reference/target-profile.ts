/**
 * The target profile that describes a running reference service: its URLs, the key for each
 * entitlement case, the special pairs, a probe for each status it answers on demand, and timing.
 */
import type { Probe, Profile, ProfileKeys } from '../src/profile.ts';
import { PATHS, QUERY, STATUS, type RestStatus } from '../src/spec.ts';
import type { ReferenceConfig } from './config.ts';
import type { PairConfig, PairState } from './catalogue.ts';
import { DEFAULT_DIALECT, type Dialect } from './dialect.ts';
import { Wire } from './wire.ts';
import { QUIET_PAIR_MS } from './prices.ts';

/** Slack after the ping window before a close counts as late; the spec shows none. */
export const PING_GRACE_MS = 2000;

/** Name of the extra profile key that the service does not know (for the 50005 probe). */
const UNKNOWN_KEY_NAME = 'unknown';
const UNKNOWN_KEY_VALUE = 'ref-unknown-key-000000';

const byState = (pairs: readonly PairConfig[], state: PairState): PairConfig | undefined =>
  pairs.find((p) => (p.state ?? 'active') === state);

/**
 * Builds the profile of a reference service with `config` and `dialect` at `restUrl` / `wsUrl`:
 * what an operator of that service would know, so under a dialect that does not state the
 * allowances the keys carry none.
 */
export function buildProfile(
  config: ReferenceConfig,
  restUrl: string,
  wsUrl: string,
  dialect: Readonly<Dialect> = DEFAULT_DIALECT,
): Profile {
  const wire = new Wire(dialect);
  const keys: ProfileKeys = { primary: { key: config.keys.primary!.key } };
  const names = Object.keys(config.keys);
  for (const name of names) {
    const k = config.keys[name]!;
    const entry: { key: string; [field: string]: unknown } = { key: k.key };
    if (k.connections !== undefined && k.stream !== false && dialect.keys.stated) entry.connections = k.connections;
    if (k.assetTypes) entry.assetTypes = k.assetTypes;
    if (k.pairs && k.pairs.length > 0) entry.pairs = k.pairs;
    // A key's REST rate is declared, so the harness paces its requests within it, unless the
    // dialect's limit is one the operator was never told.
    if (k.rateLimit || dialect.rest.rateLimit === null) entry.rateLimit = k.rateLimit ?? config.restRateLimit;
    keys[name] = entry;
  }
  if (keys[UNKNOWN_KEY_NAME] === undefined && !names.some((n) => config.keys[n]!.key === UNKNOWN_KEY_VALUE))
    keys[UNKNOWN_KEY_NAME] = { key: UNKNOWN_KEY_VALUE };
  // The named cases of the profile need their exact fields.
  if (keys.cryptoOnly && !Array.isArray(keys.cryptoOnly.assetTypes)) delete keys.cryptoOnly;
  if (keys.whitelisted && !Array.isArray(keys.whitelisted.pairs)) delete keys.whitelisted;

  const pairs = config.pairs;
  const active = pairs.filter((p) => (p.state ?? 'active') === 'active');
  // A sample across asset types: first active pair of each type, then the rest in order.
  const sample: string[] = [];
  for (const p of active) if (!sample.some((c) => c.split(':')[0] === p.code.split(':')[0])) sample.push(p.code);
  for (const p of active) if (sample.length < 10 && !sample.includes(p.code)) sample.push(p.code);
  const profilePairs: NonNullable<Profile['pairs']> = { sample };
  const special: [string, PairState][] = [
    ['stale', 'stale'],
    ['inactive', 'inactive'],
    ['noPrice', 'no-price'],
    ['unavailable', 'unavailable'],
    ['maintenance', 'maintenance'],
    ['broken', 'broken'],
  ];
  for (const [name, state] of special) {
    const p = byState(pairs, state);
    if (p) profilePairs[name] = p.code;
  }
  const pooled = active.find((p) => p.pools && Object.keys(p.pools).length > 0);
  if (pooled) profilePairs.pooled = pooled.code;

  const probes: Probe[] = [];
  const probe = (
    status: RestStatus,
    path: string,
    query: Record<string, string> | undefined,
    key: string | undefined,
    note: string,
  ): void => {
    const pr: Probe = { status, path, httpStatus: wire.restHttp(status), note };
    if (query) pr.query = query;
    if (key && key !== 'primary') pr.key = key;
    probes.push(pr);
  };
  const keyNamed = (pred: (name: string) => boolean): string | undefined => names.find(pred);
  const withState = (state: string): string | undefined => keyNamed((n) => config.keys[n]!.state === state);
  const price = (code: string, extra: Record<string, string> = {}): Record<string, string> => ({
    [QUERY.price.code]: code,
    ...extra,
  });
  const first = active[0]!;

  probe(STATUS.OK, PATHS.pairs, undefined, 'primary', 'list pairs');
  probe(STATUS.OK, PATHS.price, price(first.code), 'primary', 'price of an active pair');
  if (profilePairs.broken)
    probe(
      STATUS.INTERNAL,
      PATHS.price,
      price(profilePairs.broken as string),
      'primary',
      'pair whose price source fails',
    );
  const apiM = withState('api-maintenance');
  if (apiM) probe(STATUS.API_MAINTENANCE, PATHS.pairs, undefined, apiM, 'key served by an API in maintenance');
  const wsM = withState('stream-maintenance');
  if (wsM)
    probe(
      STATUS.WS_MAINTENANCE,
      config.wsPath,
      undefined,
      wsM,
      'plain GET of the stream path; the same key is refused with 50002 in the WebSocket handshake',
    );
  const grpcM = withState('grpc-maintenance');
  if (grpcM)
    probe(STATUS.GRPC_MAINTENANCE, PATHS.pairs, undefined, grpcM, 'key served by a gRPC backend in maintenance');
  probe(STATUS.INVALID_REQUEST, PATHS.price, undefined, 'primary', 'price without code');
  probe(STATUS.UNAUTHORIZED, PATHS.pairs, undefined, UNKNOWN_KEY_NAME, 'a key the service does not know');
  const throttled = keyNamed((n) => config.keys[n]!.rateLimit?.requests === 0);
  if (throttled)
    probe(STATUS.RATE_LIMITED, PATHS.pairs, undefined, throttled, 'key with a rate limit of zero requests');
  const suspended = withState('suspended');
  if (suspended) probe(STATUS.SUSPENDED, PATHS.pairs, undefined, suspended, 'suspended key');
  probe(STATUS.NOT_FOUND, '/v1/does-not-exist', undefined, 'primary', 'unknown endpoint');
  const wl = config.keys.whitelisted;
  const outside = wl?.pairs
    ? active.find(
        (p) => !wl.pairs!.includes(p.code) && (!wl.assetTypes || wl.assetTypes.includes(p.code.split(':')[0]!)),
      )
    : undefined;
  if (outside && keys.whitelisted)
    probe(
      wire.restDenial(STATUS.ACCESS_DENIED),
      PATHS.price,
      price(outside.code),
      'whitelisted',
      "pair outside the key's whitelist",
    );
  const restricted = withState('restricted');
  if (restricted) probe(STATUS.RESTRICTED_USER, PATHS.pairs, undefined, restricted, 'restricted account');
  if (profilePairs.noPrice)
    probe(
      STATUS.PRICE_NOT_FOUND,
      PATHS.price,
      price(profilePairs.noPrice as string),
      'primary',
      'pair without a price',
    );
  if (profilePairs.stale)
    probe(STATUS.PRICE_STALE, PATHS.price, price(profilePairs.stale as string), 'primary', 'stale, illiquid pair');
  const unavailablePool = pooled && Object.entries(pooled.pools!).find(([, s]) => s === 'unavailable')?.[0];
  if (pooled && unavailablePool)
    probe(
      STATUS.POOL_UNAVAILABLE,
      PATHS.price,
      price(pooled.code, { [QUERY.price.pool]: unavailablePool }),
      'primary',
      'pool that is unavailable',
    );
  probe(STATUS.PAIR_NOT_FOUND, PATHS.price, price('Crypto:ALL:NOPE/USD'), 'primary', 'unknown pair');
  if (profilePairs.unavailable)
    probe(
      STATUS.PAIR_UNAVAILABLE,
      PATHS.price,
      price(profilePairs.unavailable as string),
      'primary',
      'pair temporarily unavailable',
    );
  if (profilePairs.maintenance)
    probe(
      STATUS.PAIR_MAINTENANCE,
      PATHS.price,
      price(profilePairs.maintenance as string),
      'primary',
      'pair in maintenance',
    );
  const noPairs = keyNamed((n) => config.keys[n]!.pairs?.length === 0);
  if (noPairs) probe(STATUS.NO_PAIRS_ALLOWED, PATHS.pairs, undefined, noPairs, 'key with no pairs allowed');
  if (pooled)
    probe(
      STATUS.POOL_NOT_FOUND,
      PATHS.price,
      price(pooled.code, { [QUERY.price.pool]: '0xunknownpool' }),
      'primary',
      'unknown pool',
    );
  const co = config.keys.cryptoOnly;
  const otherType = co?.assetTypes ? active.find((p) => !co.assetTypes!.includes(p.code.split(':')[0]!)) : undefined;
  if (otherType && keys.cryptoOnly)
    probe(
      wire.restDenial(STATUS.ASSET_TYPE_DENIED),
      PATHS.price,
      price(otherType.code),
      'cryptoOnly',
      'asset type the key cannot read',
    );

  return {
    name: 'conform reference service',
    rest: restUrl,
    ws: wsUrl,
    transport: 'ws',
    keys,
    pairs: profilePairs,
    probes,
    timing: {
      pingTimeoutMs: config.pingTimeoutMs,
      pingGraceMs: PING_GRACE_MS,
      ...(dialect.keys.stated ? statedTiming(config, dialect) : {}),
    },
  };
}

/**
 * Ticks within which a pair that pushes only on change has moved, all but certainly: each tick
 * moves it with config.moveProbability (one half by default), so eight still ticks in a row
 * happen once in 256 gaps, and the harness's wait of twice the interval once in 65,536.
 */
const ON_CHANGE_TICKS = 8;
/** How soon the service answers a request: at once, so this covers its own timers on a busy machine. */
const NOTICE_MS = 500;

/**
 * What the operator of this service can state of its timing: the push interval of a pair whose
 * price moves (every tick, or within a few ticks when only changes are pushed, and a quiet pair's
 * seconds on top), how soon it answers, and how soon it frees a closed connection's slot.
 */
function statedTiming(config: ReferenceConfig, dialect: Readonly<Dialect>): Profile['timing'] {
  const { pushes, quietPairs } = dialect.stream;
  const interval =
    pushes === 'every-tick' ? config.tickMs : ON_CHANGE_TICKS * config.tickMs + (quietPairs ? QUIET_PAIR_MS : 0);
  return { pushIntervalMs: interval, noticeMs: NOTICE_MS, slotReleaseMs: dialect.keys.slotReleaseMs };
}
