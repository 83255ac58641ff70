/**
 * The target profile that describes a running reference service: its URLs, the key for each
 * entitlement case, the special pairs, a probe for each status it answers on demand, and timing.
 */
import type { Probe, Profile, ProfileKeys } from '../src/profile.ts';
import { PATHS, QUERY, STATUS, type RestStatus } from '../src/spec.ts';
import type { KeyConfig, ReferenceConfig } from './config.ts';
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
  const keys = profileKeys(config, dialect);
  const active = config.pairs.filter((p) => (p.state ?? 'active') === 'active');
  const pooled = active.find((p) => p.pools && Object.keys(p.pools).length > 0);
  const pairs = profilePairs(config.pairs, active, pooled);
  return {
    name: 'conform reference service',
    rest: restUrl,
    ws: wsUrl,
    transport: 'ws',
    keys,
    pairs,
    probes: profileProbes({ config, wire: new Wire(dialect), keys, pairs, active, pooled }),
    timing: {
      pingTimeoutMs: config.pingTimeoutMs,
      // A close that comes late (the dialect's idle sweep) is stated with the lateness on top.
      pingGraceMs: PING_GRACE_MS + Math.ceil(config.pingTimeoutMs * (dialect.stream.idleCloseWindows - 1)),
      ...(dialect.keys.stated ? statedTiming(config, dialect) : {}),
    },
  };
}

/**
 * The profile's keys: each key of the config with what its operator states of it (the connection
 * allowance only when the dialect states allowances), and a key the service does not know.
 */
function profileKeys(config: ReferenceConfig, dialect: Readonly<Dialect>): ProfileKeys {
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
  return keys;
}

/** The profile's pairs: a sample across asset types, the pair of each special state, and a pooled pair. */
function profilePairs(
  pairs: readonly PairConfig[],
  active: readonly PairConfig[],
  pooled: PairConfig | undefined,
): NonNullable<Profile['pairs']> {
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
  if (pooled) profilePairs.pooled = pooled.code;
  return profilePairs;
}

/** What the probes are chosen from: the service's config, its keys and pairs as the profile names them. */
interface ProbeSource {
  config: ReferenceConfig;
  /** How the service writes a status (its HTTP status, the denial it answers with). */
  wire: Wire;
  keys: ProfileKeys;
  pairs: NonNullable<Profile['pairs']>;
  active: readonly PairConfig[];
  pooled: PairConfig | undefined;
}

/** One probe: the status it provokes, the path and query, the name of the key it sends, a note. */
type ProbeRow = readonly [RestStatus, string, Record<string, string> | undefined, string | undefined, string];

const price = (code: string, extra: Record<string, string> = {}): Record<string, string> => ({
  [QUERY.price.code]: code,
  ...extra,
});
/** The name of the first key of the config that passes `pred`. */
const keyWhere = (s: ProbeSource, pred: (key: KeyConfig) => boolean): string | undefined =>
  Object.keys(s.config.keys).find((n) => pred(s.config.keys[n]!));
const keyInState = (s: ProbeSource, state: string): string | undefined => keyWhere(s, (k) => k.state === state);
/** A probe of `path` (default /v1/pairs) sent with the key named `key`; none when there is no such key. */
const withKey = (status: RestStatus, key: string | undefined, note: string, path: string = PATHS.pairs) =>
  key ? ([status, path, undefined, key, note] as const) : undefined;
/** A probe of the price of the pair `code` with the primary key; none when there is no such pair. */
const ofPair = (status: RestStatus, code: unknown, note: string) =>
  code ? ([status, PATHS.price, price(code as string), 'primary', note] as const) : undefined;

/**
 * A probe for each status the service answers on demand, in the profile's order, each from what
 * provokes it (undefined: this service has nothing that does).
 */
const PROBES: readonly ((s: ProbeSource) => ProbeRow | undefined)[] = [
  () => [STATUS.OK, PATHS.pairs, undefined, 'primary', 'list pairs'],
  (s) => [STATUS.OK, PATHS.price, price(s.active[0]!.code), 'primary', 'price of an active pair'],
  (s) => ofPair(STATUS.INTERNAL, s.pairs.broken, 'pair whose price source fails'),
  (s) => withKey(STATUS.API_MAINTENANCE, keyInState(s, 'api-maintenance'), 'key served by an API in maintenance'),
  (s) =>
    withKey(
      STATUS.WS_MAINTENANCE,
      keyInState(s, 'stream-maintenance'),
      'plain GET of the stream path; the same key is refused with 50002 in the WebSocket handshake',
      s.config.wsPath,
    ),
  (s) =>
    withKey(STATUS.GRPC_MAINTENANCE, keyInState(s, 'grpc-maintenance'), 'key served by a gRPC backend in maintenance'),
  () => [STATUS.INVALID_REQUEST, PATHS.price, undefined, 'primary', 'price without code'],
  () => [STATUS.UNAUTHORIZED, PATHS.pairs, undefined, UNKNOWN_KEY_NAME, 'a key the service does not know'],
  (s) =>
    withKey(
      STATUS.RATE_LIMITED,
      keyWhere(s, (k) => k.rateLimit?.requests === 0),
      'key with a rate limit of zero requests',
    ),
  (s) => withKey(STATUS.SUSPENDED, keyInState(s, 'suspended'), 'suspended key'),
  () => [STATUS.NOT_FOUND, '/v1/does-not-exist', undefined, 'primary', 'unknown endpoint'],
  (s) => {
    const wl = s.config.keys.whitelisted;
    const outside = wl?.pairs
      ? s.active.find(
          (p) => !wl.pairs!.includes(p.code) && (!wl.assetTypes || wl.assetTypes.includes(p.code.split(':')[0]!)),
        )
      : undefined;
    if (!outside || !s.keys.whitelisted) return undefined;
    const status = s.wire.restDenial(STATUS.ACCESS_DENIED);
    return [status, PATHS.price, price(outside.code), 'whitelisted', "pair outside the key's whitelist"];
  },
  (s) => withKey(STATUS.RESTRICTED_USER, keyInState(s, 'restricted'), 'restricted account'),
  (s) => ofPair(STATUS.PRICE_NOT_FOUND, s.pairs.noPrice, 'pair without a price'),
  (s) => ofPair(STATUS.PRICE_STALE, s.pairs.stale, 'stale, illiquid pair'),
  ({ pooled }) => {
    const pool = pooled && Object.entries(pooled.pools!).find(([, state]) => state === 'unavailable')?.[0];
    if (!pooled || !pool) return undefined;
    return [
      STATUS.POOL_UNAVAILABLE,
      PATHS.price,
      price(pooled.code, { [QUERY.price.pool]: pool }),
      'primary',
      'pool that is unavailable',
    ];
  },
  () => [STATUS.PAIR_NOT_FOUND, PATHS.price, price('Crypto:ALL:NOPE/USD'), 'primary', 'unknown pair'],
  (s) => ofPair(STATUS.PAIR_UNAVAILABLE, s.pairs.unavailable, 'pair temporarily unavailable'),
  (s) => ofPair(STATUS.PAIR_MAINTENANCE, s.pairs.maintenance, 'pair in maintenance'),
  (s) =>
    withKey(
      STATUS.NO_PAIRS_ALLOWED,
      keyWhere(s, (k) => k.pairs?.length === 0),
      'key with no pairs allowed',
    ),
  ({ pooled }) =>
    pooled
      ? [
          STATUS.POOL_NOT_FOUND,
          PATHS.price,
          price(pooled.code, { [QUERY.price.pool]: '0xunknownpool' }),
          'primary',
          'unknown pool',
        ]
      : undefined,
  (s) => {
    const co = s.config.keys.cryptoOnly;
    const otherType = co?.assetTypes
      ? s.active.find((p) => !co.assetTypes!.includes(p.code.split(':')[0]!))
      : undefined;
    if (!otherType || !s.keys.cryptoOnly) return undefined;
    const status = s.wire.restDenial(STATUS.ASSET_TYPE_DENIED);
    return [status, PATHS.price, price(otherType.code), 'cryptoOnly', 'asset type the key cannot read'];
  },
];

/** The profile's probes: each row of PROBES that this service can answer, with the HTTP status it answers with. */
function profileProbes(s: ProbeSource): Probe[] {
  const probes: Probe[] = [];
  for (const row of PROBES) {
    const probe = row(s);
    if (!probe) continue;
    const [status, path, query, key, note] = probe;
    const pr: Probe = { status, path, httpStatus: s.wire.restHttp(status), note };
    if (query) pr.query = query;
    if (key && key !== 'primary') pr.key = key;
    probes.push(pr);
  }
  return probes;
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
  const { stopLagTicks, stopLagMs } = dialect.stream;
  // A dropped pair is pushed for as long as the fan-out lags, and at most one tick more.
  const stopMs = Math.max(stopLagTicks * config.tickMs, stopLagMs) + config.tickMs;
  return { pushIntervalMs: interval, noticeMs: NOTICE_MS, slotReleaseMs: dialect.keys.slotReleaseMs, stopMs };
}
