/**
 * The part of a dialect that is configuration rather than wire shape: the stream's path, cadence
 * and flood limit (defaults an explicit config overrides), each key's connection allowance (null
 * keeps the configured one), the catalogue's size and each pair's decimals. Never mutates a config.
 */
import { Decimal } from './decimal.ts';
import type { KeyConfig, ReferenceConfig } from './config.ts';
import type { PairConfig } from './catalogue.ts';
import type { Dialect } from './dialect.ts';
import { mulberry32 } from '../src/random.ts';
import { ASSET_TYPE, EXTENDED_HOURS_MARKET } from '../src/spec.ts';
import { zoneOf } from './market.ts';

/** Most decimals a drawn pair gets. */
const MAX_DRAWN_DECIMALS = 8;

/** The config with the dialect's allowances: primary, limited, and (when set) every other key that has one. */
function withAllowances(config: ReferenceConfig, dialect: Readonly<Dialect>): Record<string, KeyConfig> {
  const { primary, limited, others } = dialect.keys;
  const keys: Record<string, KeyConfig> = {};
  for (const [name, k] of Object.entries(config.keys)) {
    const chosen =
      name === 'primary' ? primary : name === 'limited' ? limited : k.connections === undefined ? null : others;
    const connections = chosen ?? k.connections;
    keys[name] = connections === undefined ? k : { ...k, connections };
  }
  return keys;
}

/** Each pair with decimals drawn from 0 to 8 (seeded by the dialect), its starting price rounded to them. */
function withDrawnDecimals(pairs: readonly PairConfig[], seed: number): PairConfig[] {
  const random = mulberry32(seed);
  return pairs.map((pair) => {
    const precision = Math.floor(random() * (MAX_DRAWN_DECIMALS + 1));
    let price = new Decimal(pair.price).toDecimalPlaces(precision, Decimal.ROUND_HALF_UP);
    // A price that rounds to nothing starts at one unit of the last place; the walk keeps it positive.
    if (price.isZero()) price = new Decimal(10).pow(-precision);
    return { ...pair, precision, price: price.toFixed(precision) };
  });
}

/**
 * Each pair written with `digits` significant digits: its precision widened (or narrowed) to them,
 * its starting price given seeded digits down to the new last place, so long prices carry digits
 * that are not zeros.
 */
function withSignificantDigits(pairs: readonly PairConfig[], digits: number, seed: number): PairConfig[] {
  const random = mulberry32(seed);
  return pairs.map((pair) => {
    const start = new Decimal(pair.price);
    // Digits before the point (0 for a price under 1, whose leading zeros are not significant).
    const whole = start.isZero() ? 1 : start.e + 1;
    const precision = Math.max(0, digits - whole);
    let tail = '';
    while (tail.length < precision) tail += String(Math.floor(random() * 10));
    let price = start.plus(new Decimal(`0.${tail || '0'}`).times(new Decimal(10).pow(-pair.precision)));
    price = price.toDecimalPlaces(precision, Decimal.ROUND_DOWN);
    if (price.isZero()) price = new Decimal(10).pow(-precision);
    return { ...pair, precision, price: price.toFixed(precision) };
  });
}

/**
 * The catalogue with `size` active pairs: pairs the keys name, one pair of each asset type and
 * market and a pooled pair first, then the rest in order; past the catalogue, generated crypto pairs. The pairs
 * in special states stay, so every status a pair answers is still served.
 */
function withSize(config: ReferenceConfig, size: number): PairConfig[] {
  const active = config.pairs.filter((p) => (p.state ?? 'active') === 'active');
  const special = config.pairs.filter((p) => (p.state ?? 'active') !== 'active');
  const named = new Set(Object.values(config.keys).flatMap((k) => k.pairs ?? []));
  const first: PairConfig[] = [];
  const take = (p: PairConfig | undefined): void => {
    if (p && !first.includes(p)) first.push(p);
  };
  for (const p of active) if (named.has(p.code)) take(p);
  // One of each asset type and market: the rules of one market (US equities' extended hours) stay in reach.
  const kind = (code: string): string => code.split(':').slice(0, 2).join(':');
  for (const p of active) if (!first.some((q) => kind(q.code) === kind(p.code))) take(p);
  take(active.find((p) => p.pools && Object.keys(p.pools).length > 0));
  for (const p of active) if (first.length < size) take(p);
  const kept = first.length > size ? first : first.slice(0, size);
  for (let i = 1; kept.length < size; i++) {
    const base = `SYN${String(i).padStart(3, '0')}`;
    kept.push({
      code: `${ASSET_TYPE.crypto}:ALL:${base}/USD`,
      name: `Synthetic ${i}`,
      precision: 4,
      price: `${(i % 90) + 10}.${String(i % 10_000).padStart(4, '0')}`,
    });
  }
  // Catalogue order is kept: the dialect's listing order is applied where the pairs are listed.
  const order = new Map(config.pairs.map((p, i) => [p.code, i]));
  kept.sort((a, b) => (order.get(a.code) ?? Infinity) - (order.get(b.code) ?? Infinity));
  return [...kept, ...special];
}

/** Links of the tz database for the zones the reference reports (the dialect's `links` zone names). */
const ZONE_LINKS: Readonly<Record<string, string>> = {
  'America/New_York': 'US/Eastern',
  'America/Chicago': 'US/Central',
  'Europe/London': 'GB',
};

/** Every non-Crypto pair reporting the tz database's link for its zone, where there is one. */
function withZoneLinks(pairs: readonly PairConfig[]): PairConfig[] {
  return pairs.map((pair) => {
    const assetType = pair.code.split(':')[0]!;
    const zone = zoneOf(assetType, pair.timezone);
    const link = zone === undefined ? undefined : ZONE_LINKS[zone];
    return link ? { ...pair, timezone: link } : pair;
  });
}

/** Exchanges the US equities are labelled with in turn under the dialect's `exchanges`. */
const US_EXCHANGES = ['NASDAQ', 'NYSE'] as const;

/**
 * The US equities no key names labelled with their exchange instead of `US`, keeping their extended
 * hours: the spec calls the market "a scope label such as ALL or US", so the label says nothing of them.
 */
function withExchangeLabels(config: ReferenceConfig, pairs: readonly PairConfig[]): PairConfig[] {
  const named = new Set(Object.values(config.keys).flatMap((k) => k.pairs ?? []));
  const prefix = `${ASSET_TYPE.equity}:${EXTENDED_HOURS_MARKET}:`;
  let n = 0;
  return pairs.map((pair) => {
    if (!pair.code.startsWith(prefix) || named.has(pair.code)) return pair;
    const exchange = US_EXCHANGES[n++ % US_EXCHANGES.length]!;
    return {
      ...pair,
      code: `${ASSET_TYPE.equity}:${exchange}:${pair.code.slice(prefix.length)}`,
      extendedHours: true,
    };
  });
}

/** Pairs whose codes hold a space or a `/` in the base, each listed first of its asset type. */
const SPACED_PAIRS: readonly PairConfig[] = [
  { code: `${ASSET_TYPE.commodity}:ALL:Crude Oil/USD`, name: 'Crude Oil (WTI)', precision: 2, price: '80.90' },
  {
    code: `${ASSET_TYPE.equity}:${EXTENDED_HOURS_MARKET}:BF/B/USD`,
    name: 'Brown-Forman Class B',
    precision: 2,
    price: '31.40',
  },
];

/** A pair whose name names the symbol of the catalogue's first pair, so a search that reads names finds it. */
const NAMED_AFTER: PairConfig = {
  code: `${ASSET_TYPE.equity}:${EXTENDED_HOURS_MARKET}:MSTR/USD`,
  name: 'Strategy Inc. (holds BTC)',
  precision: 2,
  price: '310.20',
};

/** `extra` pairs each put before the first pair of its asset type (at the end when there is none). */
function withFirstOfType(pairs: readonly PairConfig[], extra: readonly PairConfig[]): PairConfig[] {
  const out = [...pairs];
  for (const pair of extra) {
    if (out.some((p) => p.code === pair.code)) continue;
    const type = `${pair.code.split(':')[0]}:`;
    const at = out.findIndex((p) => p.code.startsWith(type));
    out.splice(at < 0 ? out.length : at, 0, pair);
  }
  return out;
}

/** Config fields the dialect chooses unless the caller's config sets them: stream path, push cadence, flood limit. */
export function dialectDefaults(dialect: Readonly<Dialect>): Partial<ReferenceConfig> {
  const { path, tickMs, maxMessagesPerSecond } = dialect.stream;
  return { wsPath: path, tickMs, maxMessagesPerSecond };
}

/** The resolved config under `dialect`: allowances, catalogue size, decimals, significant digits. */
export function applyDialect(config: ReferenceConfig, dialect: Readonly<Dialect>): ReferenceConfig {
  let pairs = dialect.rest.catalogueSize === null ? config.pairs : withSize(config, dialect.rest.catalogueSize);
  if (dialect.numbers.decimals === 'drawn') pairs = withDrawnDecimals(pairs, dialect.seed);
  if (dialect.numbers.significantDigits !== null)
    pairs = withSignificantDigits(pairs, dialect.numbers.significantDigits, dialect.seed);
  if (dialect.rest.codeSpelling === 'spaced') pairs = withFirstOfType(pairs, SPACED_PAIRS);
  if (dialect.rest.codeSearch === 'code-or-name') pairs = withFirstOfType(pairs, [NAMED_AFTER]);
  if (dialect.rest.equityMarkets === 'exchanges') pairs = withExchangeLabels(config, pairs);
  if (dialect.rest.zoneNames === 'links') pairs = withZoneLinks(pairs);
  const restRateLimit = dialect.rest.rateLimit ?? config.restRateLimit;
  return { ...config, keys: withAllowances(config, dialect), pairs, restRateLimit };
}
