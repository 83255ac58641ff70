/**
 * Pure rules on push frames and prices (no I/O): ordering of bid, price and ask, the mid, the
 * precision of decimal strings, the unit of a timestamp.
 */
import { Decimal } from 'decimal.js';
import { DECIMAL_PATTERN } from '../../src/spec.ts';

const DECIMAL_RE = new RegExp(DECIMAL_PATTERN);

/** Decimal places of a decimal string (`"1.50"` → 2), or undefined when it is not one. */
export function places(value: unknown): number | undefined {
  if (typeof value !== 'string' || !DECIMAL_RE.test(value)) return undefined;
  const dot = value.indexOf('.');
  return dot < 0 ? 0 : value.length - dot - 1;
}

/**
 * What is wrong with the prices of one frame: bid <= price <= ask, and price the mid of ask and bid
 * at the price's precision (the rounding mode is not shown, so any rounding of the exact mid passes).
 * Returns nothing when the values are not decimal strings: the schema check reports those.
 */
export function priceProblems(frame: { ask?: unknown; bid?: unknown; price?: unknown }): string[] {
  const dp = places(frame.price);
  if (places(frame.ask) === undefined || places(frame.bid) === undefined || dp === undefined) return [];
  const ask = new Decimal(frame.ask as string);
  const bid = new Decimal(frame.bid as string);
  const price = new Decimal(frame.price as string);
  const problems: string[] = [];
  if (bid.greaterThan(price)) problems.push(`bid ${bid.toString()} > price ${price.toString()}`);
  if (price.greaterThan(ask)) problems.push(`price ${price.toString()} > ask ${ask.toString()}`);
  const mid = ask.plus(bid).dividedBy(2);
  const ulp = new Decimal(10).pow(-dp);
  const gap = price.minus(mid).abs();
  // With ask and bid at the price's precision the mid has at most one more digit (a 5), so any
  // rounding mode lands within half a unit; with finer ask and bid, truncation may reach just under one.
  const fine = Math.max(places(frame.ask)!, places(frame.bid)!) > dp;
  if (fine ? gap.greaterThanOrEqualTo(ulp) : gap.greaterThan(ulp.dividedBy(2))) problems.push(`price ${price.toString()} is not the mid ${mid.toString()} of ask and bid at ${dp} decimal places`);
  return problems;
}

/** The unit a timestamp's magnitude suggests, compared with now (ms since the epoch). */
export function timestampUnit(value: number, nowMs = Date.now()): 's' | 'ms' | 'us' | 'ns' | 'unknown' {
  const candidates = [['s', nowMs / 1e3], ['ms', nowMs], ['us', nowMs * 1e3], ['ns', nowMs * 1e6]] as const;
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
