/**
 * The part of a dialect that is configuration rather than wire shape: each key's connection
 * allowance (null keeps the configured one) and the decimals of each pair. Applied over the
 * resolved config, never mutating it.
 */
import { Decimal } from 'decimal.js';
import type { KeyConfig, ReferenceConfig } from './config.ts';
import type { PairConfig } from './catalogue.ts';
import type { Dialect } from './dialect.ts';
import { mulberry32 } from './prices.ts';

/** Most decimals a drawn pair gets. */
const MAX_DRAWN_DECIMALS = 8;

/** The config with the dialect's allowances: primary, limited, and (when set) every other key that has one. */
function withAllowances(config: ReferenceConfig, dialect: Readonly<Dialect>): Record<string, KeyConfig> {
  const { primary, limited, others } = dialect.keys;
  const keys: Record<string, KeyConfig> = {};
  for (const [name, k] of Object.entries(config.keys)) {
    const chosen = name === 'primary' ? primary : name === 'limited' ? limited : k.connections === undefined ? null : others;
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

/** The resolved config under `dialect`. */
export function applyDialect(config: ReferenceConfig, dialect: Readonly<Dialect>): ReferenceConfig {
  const pairs = dialect.numbers.decimals === 'drawn' ? withDrawnDecimals(config.pairs, dialect.seed) : config.pairs;
  return { ...config, keys: withAllowances(config, dialect), pairs };
}
