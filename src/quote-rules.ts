/**
 * Pure rules on a quote (a price record or a push frame), shared by the REST and stream checks and
 * by the engine's inspection of every push: the precision of decimal strings, and bid <= price <= ask
 * with price the mid of ask and bid.
 */
import { Decimal } from 'decimal.js';
import { DECIMAL_PATTERN } from './spec.ts';

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
  const asWritten = fine ? gap.lessThan(ulp) : gap.lessThanOrEqualTo(ulp.dividedBy(2));
  // Trailing zeros say nothing of the precision a service rounds at (a price padded to 8 places may
  // be a mid rounded at 2): the mid rounded at the finest precision the three values show once
  // trimmed passes too.
  const significant = Math.max(ask.decimalPlaces(), bid.decimalPlaces(), price.decimalPlaces());
  const trimmed = gap.lessThanOrEqualTo(new Decimal(10).pow(-significant).dividedBy(2));
  if (!asWritten && !trimmed)
    problems.push(`price ${price.toString()} is not the mid ${mid.toString()} of ask and bid at ${dp} decimal places`);
  return problems;
}
