/**
 * Pure rules on a quote (a price record or a push frame), shared by the REST and stream checks and
 * by the engine's inspection of every push: what a decimal string is, its precision as written,
 * bid <= price <= ask, and how the price relates to the mid of ask and bid, computed exactly.
 */
import { Decimal } from 'decimal.js';
import { DECIMAL_PATTERN } from './spec.ts';

const DECIMAL_RE = new RegExp(DECIMAL_PATTERN);

/**
 * The largest exponent a decimal string may carry: decimal.js holds exponents up to 9e15, so a
 * larger one would not be read without loss. No price comes near it.
 */
const MAX_EXPONENT = 1e15;

/**
 * Digits the mid is computed with at most. Ask, bid and price spanning more digits than this
 * (a price of 1E+6000 beside one of 1E-6000) are no price a service writes; their mid is not
 * judged rather than computed at a cost a hostile target could choose.
 */
const MAX_EXACT_DIGITS = 10_000;

/** How a decimal string is written: plain digits, or with an exponent (`1.234E-8`). */
export type Notation = 'plain' | 'exponent';

/** The exponent part of a decimal string (0 without one), or undefined when it is out of range. */
function exponentOf(value: string): number | undefined {
  const at = value.search(/[eE]/);
  if (at < 0) return 0;
  const exponent = Number(value.slice(at + 1));
  return Math.abs(exponent) <= MAX_EXPONENT ? exponent : undefined;
}

/**
 * Whether `value` is a decimal string: one that a decimal type reads without loss, in plain or
 * exponent notation (the `decimal` format of the schemas).
 */
export function isDecimalString(value: unknown): value is string {
  return typeof value === 'string' && DECIMAL_RE.test(value) && exponentOf(value) !== undefined;
}

/** How a decimal string is written, or undefined when it is not one. */
export function notation(value: unknown): Notation | undefined {
  if (!isDecimalString(value)) return undefined;
  return /[eE]/.test(value) ? 'exponent' : 'plain';
}

/**
 * Decimal places of a decimal string as written: the power of ten of its last digit, negated
 * (`"1.50"` → 2, `"1.5E-3"` → 4, `"15"` → 0, `"1.5E+3"` → -2), or undefined when it is not one.
 */
export function places(value: unknown): number | undefined {
  if (!isDecimalString(value)) return undefined;
  const at = value.search(/[eE]/);
  const mantissa = at < 0 ? value : value.slice(0, at);
  const dot = mantissa.indexOf('.');
  const fraction = dot < 0 ? 0 : mantissa.length - dot - 1;
  // An integer mantissa with an exponent (`15E+2`) is written to its last digit, a power above the units.
  return fraction - exponentOf(value)!;
}

const exactConstructors = new Map<number, Decimal.Constructor>();

/**
 * A decimal.js constructor whose precision holds every sum, difference and half of `values` exactly:
 * decimal.js rounds each result to its precision (20 significant digits by default), which
 * misjudges long prices. Undefined when the values span more than MAX_EXACT_DIGITS digits.
 */
function exactFor(values: readonly Decimal[], finest: number): Decimal.Constructor | undefined {
  // Highest digit any result reaches (a sum carries one place up), lowest (a half adds one place down).
  const highest = Math.max(...values.map((d) => d.e)) + 1;
  const lowest = -Math.max(finest, ...values.map((d) => d.decimalPlaces())) - 1;
  const digits = highest - lowest + 1;
  if (digits > MAX_EXACT_DIGITS) return undefined;
  let D = exactConstructors.get(digits);
  if (!D) {
    D = Decimal.clone({ precision: Math.max(digits, 20) });
    exactConstructors.set(digits, D);
  }
  return D;
}

/**
 * What is wrong with the prices of one frame: bid <= price <= ask. The spec calls `price` "the
 * service's mid-price", so a mid of the service's own making passes: the exact mid of ask and bid,
 * its rounding at any precision, a mid rounded to a tick coarser than the last decimal (0.25), or one
 * weighted between them (`midReading` says which, for an observation); a price outside the spread
 * is no mid of any service. Every comparison is exact, however many digits the prices carry.
 * Returns nothing when the values are not decimal strings: the schema check reports those.
 */
export function priceProblems(frame: { ask?: unknown; bid?: unknown; price?: unknown }): string[] {
  if ([frame.ask, frame.bid, frame.price].some((v) => places(v) === undefined)) return [];
  const problems: string[] = [];
  // Reading a string is exact at any precision; comparisons are too.
  const [a, b, p] = [frame.ask, frame.bid, frame.price].map((v) => new Decimal(v as string)) as [
    Decimal,
    Decimal,
    Decimal,
  ];
  if (b.greaterThan(p)) problems.push(`bid ${b.toString()} > price ${p.toString()}`);
  if (p.greaterThan(a)) problems.push(`price ${p.toString()} > ask ${a.toString()}`);
  return problems;
}

/** How a price relates to the mid of its ask and bid: what the service's mid-price is, recorded, never judged. */
export type MidReading = 'exact' | 'rounded' | 'other';

/**
 * How `price` relates to the exact mid of ask and bid: `exact` (equal to it), `rounded` (it rounded,
 * in any mode, at the price's precision as written or once padding zeros are trimmed), or `other` (a
 * mid of the service's own: rounded to a coarser tick, or weighted). Undefined when the values are
 * not decimal strings or too long to compute exactly.
 */
export function midReading(frame: { ask?: unknown; bid?: unknown; price?: unknown }): MidReading | undefined {
  const dp = places(frame.price);
  const askDp = places(frame.ask);
  const bidDp = places(frame.bid);
  if (askDp === undefined || bidDp === undefined || dp === undefined) return undefined;
  const read = [frame.ask, frame.bid, frame.price].map((v) => new Decimal(v as string));
  const D = exactFor(read, Math.max(dp, askDp, bidDp));
  if (!D) return undefined;
  const [ask, bid, price] = read.map((d) => new D(d)) as [Decimal, Decimal, Decimal];
  const mid = ask.plus(bid).dividedBy(2);
  const gap = price.minus(mid).abs();
  if (gap.isZero()) return 'exact';
  const ulp = new D(10).pow(-dp);
  // With ask and bid at the price's precision the mid has at most one more digit (a 5), so any
  // rounding mode lands within half a unit; with finer ask and bid, truncation may reach just under one.
  const fine = Math.max(askDp, bidDp) > dp;
  const asWritten = fine ? gap.lessThan(ulp) : gap.lessThanOrEqualTo(ulp.dividedBy(2));
  // Trailing zeros say nothing of the precision a service rounds at (a price padded to 8 places may
  // be a mid rounded at 2).
  const significant = Math.max(ask.decimalPlaces(), bid.decimalPlaces(), price.decimalPlaces());
  const trimmed = gap.lessThanOrEqualTo(new D(10).pow(-significant).dividedBy(2));
  return asWritten || trimmed ? 'rounded' : 'other';
}

/** The zones Intl lists: ICU's canonical names (CLDR keeps some older spellings, e.g. Asia/Calcutta). */
const LISTED_ZONES = new Set(Intl.supportedValuesOf('timeZone'));
const LISTED_LOWER = new Set([...LISTED_ZONES].map((z) => z.toLowerCase()));
/**
 * How the tz database spells a name: each part between slashes starts with an upper-case letter
 * (`America/New_York`, `US/Eastern`, `GB`, `EST5EDT`, `Etc/GMT+5`), the rest letters, digits and
 * `_`, `+`, `-`.
 */
const TZ_SPELLING = /^[A-Z][A-Za-z0-9_+-]*(\/[A-Z][A-Za-z0-9_+-]*)*$/;

/**
 * Whether `timeZone` is an IANA zone name (spec: Market object, "IANA zone name"): a name of the tz
 * database that Intl knows, canonical or one of the database's links (`US/Eastern`, `GB`, `CET`,
 * `EST5EDT`, `GMT`: names of the database all the same), spelled as the database spells it. A
 * canonical name respelled (`america/new_york`, `UTC` as `utc`) is not a name of the database.
 */
export function isIanaZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    return false;
  }
  if (LISTED_ZONES.has(timeZone)) return true;
  // A listed zone spelled otherwise is not its name.
  if (LISTED_LOWER.has(timeZone.toLowerCase())) return false;
  return TZ_SPELLING.test(timeZone);
}

/** Whether `timeZone` is one of Intl's canonical names: a link is recorded as an observation, never judged. */
export const isCanonicalZone = (timeZone: string): boolean => LISTED_ZONES.has(timeZone);
