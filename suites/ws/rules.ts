/**
 * Pure rules on push frames and prices (no I/O): the unit of a timestamp, the gap between two
 * prices; the quote rules (ordering of bid, price and ask, the mid's reading, precision) live in
 * src/quote-rules.ts, which the engine's push inspection shares.
 */
import { Decimal } from 'decimal.js';
import { places } from '../../src/quote-rules.ts';

export { midReading, places, priceProblems } from '../../src/quote-rules.ts';

/** The unit a timestamp's magnitude suggests, compared with now (ms since the epoch). */
export function timestampUnit(value: number, nowMs = Date.now()): 's' | 'ms' | 'us' | 'ns' | 'unknown' {
  const candidates = [
    ['s', nowMs / 1e3],
    ['ms', nowMs],
    ['us', nowMs * 1e3],
    ['ns', nowMs * 1e6],
  ] as const;
  for (const [unit, now] of candidates) if (value > now / 10 && value < now * 10) return unit;
  return 'unknown';
}

/** Relative distance |a - b| / |b| of two decimal strings; undefined when either is not one or b is zero. */
export function relativeGap(a: unknown, b: unknown): number | undefined {
  if (places(a) === undefined || places(b) === undefined) return undefined;
  const db = new Decimal(b as string);
  if (db.isZero()) return undefined;
  return new Decimal(a as string).minus(db).abs().dividedBy(db.abs()).toNumber();
}
