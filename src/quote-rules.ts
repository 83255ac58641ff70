/**
 * Pure rules on a quote (a price record or a push frame), shared by the REST and stream checks and
 * by the engine's inspection of every push: what a decimal string is, its precision as written, and
 * bid <= price <= ask with price the mid of ask and bid, computed exactly.
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
 * What is wrong with the prices of one frame: bid <= price <= ask, and price the mid of ask and bid
 * at the price's precision (the rounding mode is not shown, so any rounding of the exact mid passes).
 * Every sum and comparison is exact, however many digits the prices carry. Returns nothing when
 * the values are not decimal strings: the schema check reports those.
 */
export function priceProblems(frame: { ask?: unknown; bid?: unknown; price?: unknown }): string[] {
  const dp = places(frame.price);
  const askDp = places(frame.ask);
  const bidDp = places(frame.bid);
  if (askDp === undefined || bidDp === undefined || dp === undefined) return [];
  const problems: string[] = [];
  // Reading a string is exact at any precision; comparisons are too.
  const [a, b, p] = [frame.ask, frame.bid, frame.price].map((v) => new Decimal(v as string)) as [
    Decimal,
    Decimal,
    Decimal,
  ];
  if (b.greaterThan(p)) problems.push(`bid ${b.toString()} > price ${p.toString()}`);
  if (p.greaterThan(a)) problems.push(`price ${p.toString()} > ask ${a.toString()}`);
  const D = exactFor([a, b, p], Math.max(dp, askDp, bidDp));
  if (!D) return problems;
  const [ask, bid, price] = [a, b, p].map((d) => new D(d)) as [Decimal, Decimal, Decimal];
  const mid = ask.plus(bid).dividedBy(2);
  const ulp = new D(10).pow(-dp);
  const gap = price.minus(mid).abs();
  // With ask and bid at the price's precision the mid has at most one more digit (a 5), so any
  // rounding mode lands within half a unit; with finer ask and bid, truncation may reach just under one.
  const fine = Math.max(askDp, bidDp) > dp;
  const asWritten = fine ? gap.lessThan(ulp) : gap.lessThanOrEqualTo(ulp.dividedBy(2));
  // Trailing zeros say nothing of the precision a service rounds at (a price padded to 8 places may
  // be a mid rounded at 2): the mid rounded at the finest precision the three values show once
  // trimmed passes too.
  const significant = Math.max(ask.decimalPlaces(), bid.decimalPlaces(), price.decimalPlaces());
  const trimmed = gap.lessThanOrEqualTo(new D(10).pow(-significant).dividedBy(2));
  if (!asWritten && !trimmed)
    problems.push(`price ${price.toString()} is not the mid ${mid.toString()} of ask and bid at ${dp} decimal places`);
  return problems;
}

/** The zones Intl lists: ICU's canonical names (CLDR keeps some older spellings, e.g. Asia/Calcutta). */
const LISTED_ZONES = new Set(Intl.supportedValuesOf('timeZone'));
const LISTED_LOWER = new Set([...LISTED_ZONES].map((z) => z.toLowerCase()));
/** UTC and the fixed-offset zones of the IANA `etcetera` file, which Intl does not list. */
const ETC_ZONE = /^(UTC|Etc\/(UTC|GMT|GMT[+-]([0-9]|1[0-4])))$/;
/**
 * A canonical name of a geographic IANA zone: an area of the tz database, then title-case parts.
 * It admits names IANA made canonical after the ICU of this Node was built (Asia/Kolkata,
 * Europe/Kyiv), which Intl knows only as links to its older spelling.
 */
const GEOGRAPHIC_ZONE =
  /^(Africa|America|Antarctica|Asia|Atlantic|Australia|Europe|Indian|Pacific)(\/[A-Z][A-Za-z0-9_+-]*)+$/;

/**
 * Whether `timeZone` is a canonical IANA zone name (spec: Market object, "IANA zone name"): one
 * Intl knows, spelled as the tz database spells it. Links kept for compatibility ("US/Eastern",
 * "EST", "GB") and other spellings ("utc", "america/new_york") are not canonical names.
 */
export function isIanaZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    return false;
  }
  if (LISTED_ZONES.has(timeZone) || ETC_ZONE.test(timeZone)) return true;
  // A listed zone spelled otherwise is not its canonical name.
  if (LISTED_LOWER.has(timeZone.toLowerCase())) return false;
  return GEOGRAPHIC_ZONE.test(timeZone);
}
