/**
 * decimal.js for the reference's prices, with room for every digit it writes: the default
 * precision of 20 significant digits would round a sum of two 24-digit prices.
 */
import { Decimal as DecimalJs } from 'decimal.js';

/** Significant digits every sum, difference and half of the reference's prices keeps. */
const PRECISION = 100;

export const Decimal = DecimalJs.clone({ precision: PRECISION });
export type Decimal = DecimalJs;
