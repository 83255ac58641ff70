/**
 * Configuration of the reference service: keys with their entitlements, the catalogue, and the
 * timing. One typed default, merged and never mutated; a JSON config replaces whole sections.
 */
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../src/errors.ts';
import { LIMITS, parsePairCode } from '../src/spec.ts';
import { DEFAULT_PAIRS, PAIR_STATES, type PairConfig } from './catalogue.ts';

/** Account state of a key; each non-active state answers its own status number. */
export const KEY_STATES = [
  'active',
  'suspended',
  'restricted',
  'api-maintenance',
  'stream-maintenance',
  'grpc-maintenance',
] as const;
export type KeyState = (typeof KEY_STATES)[number];

export interface KeyConfig {
  /** The key value sent in `X-API-Key`. Never logged. */
  key: string;
  /** WebSocket connection allowance, counted per key across source addresses; default 1. */
  connections?: number;
  /** Asset types the key may read; absent: all. */
  assetTypes?: string[];
  /** Pair whitelist; absent: every pair; empty: none (50107). */
  pairs?: string[];
  /** V1 stream access; default true. */
  stream?: boolean;
  /** Default `active`. */
  state?: KeyState;
  /** REST requests allowed per window for this key; default `restRateLimit`. */
  rateLimit?: { requests: number; windowMs: number };
}

export interface ReferenceConfig {
  /** Keys by profile name; `primary` is required. */
  keys: Record<string, KeyConfig>;
  pairs: PairConfig[];
  /** Keep-alive window (spec: 30 s). Default 30000. */
  pingTimeoutMs: number;
  /** Push interval; the spec does not show one. Default 100. */
  tickMs: number;
  /** Path of the WebSocket endpoint; the spec does not show one. Default `/v1/ws`. */
  wsPath: string;
  /** Largest inbound WebSocket message in bytes; bigger ones close the connection (1009). Default 65536. */
  maxPayload: number;
  /** Bytes a client may have unsent before its pushes are skipped. Default 1 MiB. */
  maxBacklogBytes: number;
  /** Consecutive ticks over the backlog bound after which a slow client is dropped. Default 50. */
  dropAfterTicks: number;
  /** Inbound messages per second per connection before the connection is closed (1008). Default 200. */
  maxMessagesPerSecond: number;
  /** Default REST rate limit per key. Default 1000 requests per 1000 ms. */
  restRateLimit: { requests: number; windowMs: number };
  /** Chance per tick that a pair's price moves. Default 0.5. */
  moveProbability: number;
  /** Seed of the price walk, so runs repeat. Default 1. */
  seed: number;
  /**
   * `batched` (default): one socket write per client per tick of pre-framed shared bytes.
   * `per-frame`: one `ws.send` per frame per client, kept only as the benchmark's baseline.
   */
  fanOut: 'batched' | 'per-frame';
  /**
   * REST requests answered per second, one at a time in arrival order; 0 (default): as fast as
   * it can. A capacity known in advance: past this rate requests queue and latency grows without
   * bound, the knee `conform load capacity rest` must find.
   */
  restServiceRate: number;
}

/** Test keys of the default config: any strings serve, they guard nothing. */
export const DEFAULT_KEYS: Readonly<Record<string, KeyConfig>> = {
  primary: { key: 'ref-primary-3f9c2a', connections: 8 },
  limited: { key: 'ref-limited-8d21e7', connections: 1 },
  cryptoOnly: { key: 'ref-crypto-only-5b7a10', connections: 2, assetTypes: ['Crypto'] },
  whitelisted: {
    key: 'ref-whitelist-c4e9f3',
    connections: 2,
    pairs: ['Crypto:ALL:BTC/USD', 'Forex:ALL:EUR/USD', 'Equity:US:AAPL/USD'],
  },
  noStream: { key: 'ref-no-stream-a0b6d2', stream: false },
  suspended: { key: 'ref-suspended-7e3f41', state: 'suspended' },
  restricted: { key: 'ref-restricted-19ad5c', state: 'restricted' },
  noPairs: { key: 'ref-no-pairs-6c2f80', pairs: [] },
  apiMaintenance: { key: 'ref-api-maint-2b8e93', state: 'api-maintenance' },
  streamMaintenance: { key: 'ref-stream-maint-4f1d07', state: 'stream-maintenance' },
  grpcMaintenance: { key: 'ref-grpc-maint-d93a6e', state: 'grpc-maintenance' },
  throttled: { key: 'ref-throttled-0e57b4', rateLimit: { requests: 0, windowMs: 60_000 } },
  burst: { key: 'ref-burst-71c3aa', rateLimit: { requests: 5, windowMs: 1000 } },
  secondary: { key: 'ref-secondary-e2a4c9', connections: 10 },
};

export const DEFAULT_CONFIG: Readonly<ReferenceConfig> = {
  keys: DEFAULT_KEYS as Record<string, KeyConfig>,
  pairs: DEFAULT_PAIRS as PairConfig[],
  pingTimeoutMs: LIMITS.pingTimeoutMs,
  tickMs: 100,
  wsPath: '/v1/ws',
  maxPayload: 64 * 1024,
  maxBacklogBytes: 1024 * 1024,
  dropAfterTicks: 50,
  maxMessagesPerSecond: 200,
  restRateLimit: { requests: 1000, windowMs: 1000 },
  moveProbability: 0.5,
  seed: 1,
  fanOut: 'batched',
  restServiceRate: 0,
};

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const posInt = (v: unknown): boolean => Number.isInteger(v) && (v as number) > 0;
const nonNegInt = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 0;

function checkRate(v: unknown, field: string): void {
  if (!isObj(v)) throw new ConfigError(field, 'must be an object { requests, windowMs }');
  if (!nonNegInt(v.requests)) throw new ConfigError(`${field}.requests`, 'must be an integer >= 0');
  if (!posInt(v.windowMs)) throw new ConfigError(`${field}.windowMs`, 'must be an integer > 0');
}

function checkKeys(keys: unknown): void {
  if (!isObj(keys)) throw new ConfigError('keys', 'must be an object of named keys');
  if (!isObj(keys.primary)) throw new ConfigError('keys.primary', 'is required');
  const seen = new Set<string>();
  for (const [name, k] of Object.entries(keys)) {
    const f = `keys.${name}`;
    if (!isObj(k)) throw new ConfigError(f, 'must be an object');
    if (typeof k.key !== 'string' || k.key.length === 0)
      throw new ConfigError(`${f}.key`, 'must be a non-empty string');
    if (seen.has(k.key)) throw new ConfigError(`${f}.key`, 'repeats the value of another key');
    seen.add(k.key);
    if (k.connections !== undefined && !posInt(k.connections))
      throw new ConfigError(`${f}.connections`, 'must be an integer >= 1');
    if (k.assetTypes !== undefined && (!Array.isArray(k.assetTypes) || k.assetTypes.some((t) => typeof t !== 'string')))
      throw new ConfigError(`${f}.assetTypes`, 'must be an array of strings');
    if (
      k.pairs !== undefined &&
      (!Array.isArray(k.pairs) || k.pairs.some((c) => typeof c !== 'string' || !parsePairCode(c)))
    )
      throw new ConfigError(`${f}.pairs`, 'must be an array of pair codes <asset_type>:<market>:<base>/<quote>');
    if (k.stream !== undefined && typeof k.stream !== 'boolean')
      throw new ConfigError(`${f}.stream`, 'must be a boolean');
    if (k.state !== undefined && !(KEY_STATES as readonly unknown[]).includes(k.state))
      throw new ConfigError(`${f}.state`, `must be one of ${KEY_STATES.join(', ')}`);
    if (k.rateLimit !== undefined) checkRate(k.rateLimit, `${f}.rateLimit`);
  }
}

function checkPairs(pairs: unknown): void {
  if (!Array.isArray(pairs) || pairs.length === 0) throw new ConfigError('pairs', 'must be a non-empty array');
  const seen = new Set<string>();
  pairs.forEach((pair: unknown, i) => {
    const f = `pairs[${i}]`;
    if (!isObj(pair)) throw new ConfigError(f, 'must be an object');
    if (typeof pair.code !== 'string' || !parsePairCode(pair.code))
      throw new ConfigError(`${f}.code`, 'must be a pair code <asset_type>:<market>:<base>/<quote>');
    if (seen.has(pair.code)) throw new ConfigError(`${f}.code`, `repeats ${pair.code}`);
    seen.add(pair.code);
    if (typeof pair.name !== 'string' || pair.name.length === 0)
      throw new ConfigError(`${f}.name`, 'must be a non-empty string');
    if (!nonNegInt(pair.precision) || (pair.precision as number) > 18)
      throw new ConfigError(`${f}.precision`, 'must be an integer from 0 to 18');
    const places = pair.precision as number;
    const re = new RegExp(places === 0 ? '^[0-9]+$' : `^[0-9]+(\\.[0-9]{1,${places}})?$`);
    if (typeof pair.price !== 'string' || !re.test(pair.price) || /^0*(\.0*)?$/.test(pair.price))
      throw new ConfigError(`${f}.price`, `must be a positive decimal string with at most ${places} decimal places`);
    if (pair.halfSpreadTicks !== undefined && !posInt(pair.halfSpreadTicks))
      throw new ConfigError(`${f}.halfSpreadTicks`, 'must be an integer >= 1');
    if (pair.state !== undefined && !(PAIR_STATES as readonly unknown[]).includes(pair.state))
      throw new ConfigError(`${f}.state`, `must be one of ${PAIR_STATES.join(', ')}`);
    if (pair.timezone !== undefined) {
      if (typeof pair.timezone !== 'string') throw new ConfigError(`${f}.timezone`, 'must be an IANA zone name');
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: pair.timezone });
      } catch {
        throw new ConfigError(`${f}.timezone`, `is not an IANA zone: ${pair.timezone}`);
      }
    }
    if (pair.pools !== undefined) {
      if (!isObj(pair.pools))
        throw new ConfigError(`${f}.pools`, 'must be an object of pool address -> "ok" | "unavailable"');
      for (const [addr, state] of Object.entries(pair.pools))
        if (state !== 'ok' && state !== 'unavailable')
          throw new ConfigError(`${f}.pools.${addr}`, 'must be "ok" or "unavailable"');
    }
  });
}

const TOP_LEVEL = [
  'keys',
  'pairs',
  'pingTimeoutMs',
  'tickMs',
  'wsPath',
  'maxPayload',
  'maxBacklogBytes',
  'dropAfterTicks',
  'maxMessagesPerSecond',
  'restRateLimit',
  'moveProbability',
  'seed',
  'fanOut',
  'restServiceRate',
  '$schema',
];

/**
 * Validates a partial config and merges it over the default (each given section replaces the
 * default's). Throws ConfigError naming the first bad field.
 */
export function resolveConfig(partial: unknown = {}): ReferenceConfig {
  if (!isObj(partial)) throw new ConfigError('(root)', 'must be a JSON object');
  for (const name of Object.keys(partial))
    if (!TOP_LEVEL.includes(name)) throw new ConfigError(name, 'is not a config field');
  const merged = { ...DEFAULT_CONFIG, ...partial } as Record<string, unknown>;
  delete merged.$schema;
  checkKeys(merged.keys);
  checkPairs(merged.pairs);
  for (const f of [
    'pingTimeoutMs',
    'tickMs',
    'maxPayload',
    'maxBacklogBytes',
    'dropAfterTicks',
    'maxMessagesPerSecond',
  ] as const)
    if (!posInt(merged[f])) throw new ConfigError(f, 'must be an integer >= 1');
  if (typeof merged.wsPath !== 'string' || !/^\/[^?#\s]*$/.test(merged.wsPath))
    throw new ConfigError('wsPath', 'must be a path starting with /');
  checkRate(merged.restRateLimit, 'restRateLimit');
  const mp = merged.moveProbability;
  if (typeof mp !== 'number' || !(mp >= 0 && mp <= 1))
    throw new ConfigError('moveProbability', 'must be a number from 0 to 1');
  if (!Number.isInteger(merged.seed)) throw new ConfigError('seed', 'must be an integer');
  if (merged.fanOut !== 'batched' && merged.fanOut !== 'per-frame')
    throw new ConfigError('fanOut', 'must be "batched" or "per-frame"');
  const rate = merged.restServiceRate;
  if (typeof rate !== 'number' || !(rate >= 0) || !Number.isFinite(rate))
    throw new ConfigError('restServiceRate', 'must be a number of requests per second >= 0 (0: unlimited)');
  const config = merged as unknown as ReferenceConfig;
  const codes = new Set(config.pairs.map((pair) => pair.code));
  for (const [name, k] of Object.entries(config.keys))
    for (const [i, code] of (k.pairs ?? []).entries())
      if (!codes.has(code)) throw new ConfigError(`keys.${name}.pairs[${i}]`, `is not in the catalogue: ${code}`);
  return config;
}

/** Reads a JSON config file and resolves it; ConfigError names the file and the field. */
export async function loadConfigFile(file: string): Promise<ReferenceConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError('--config', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ConfigError('--config', `${file} is not valid JSON: ${(err as Error).message}`);
  }
  try {
    return resolveConfig(value);
  } catch (err) {
    if (err instanceof ConfigError)
      throw new ConfigError(err.field, `${err.message.slice(err.field.length + 2)} (in ${file})`);
    throw err;
  }
}
