/** The pure rules of the WebSocket suite, on literal frame values. */
import { describe, expect, it } from 'vitest';
import { midReading, places, priceProblems, relativeGap, timestampUnit } from '../../suites/ws/rules.ts';
import { notation } from '../../src/quote-rules.ts';
import { answers } from '../../suites/ws/notices.ts';

describe('places', () => {
  it.each([
    ['1.50', 2],
    ['64250', 0],
    ['0.000001', 6],
    ['-3.1', 1],
    // Exponent notation, as BigDecimal and Python's Decimal print: the place of the last digit written.
    ['1.234E-8', 11],
    ['2.450E-5', 8],
    ['6.425000E+4', 2],
    ['1.5E+3', -2],
    ['1e5', -5],
    ['1.', 0],
    ['.5', 1],
  ] as const)('counts the decimal places of %s as %i', (v, n) => expect(places(v)).toBe(n));
  it.each([1.5, '+1', ' 1', '1 ', 'NaN', 'Infinity', '0x1f', '0b1', '0o7', '.', '1e', '1E+99999999999999999', null])(
    'rejects %j as a decimal string',
    (v) => expect(places(v)).toBeUndefined(),
  );
});

describe('priceProblems', () => {
  it('reports bid above price and price above ask', () => {
    expect(priceProblems({ ask: '10.00', bid: '10.02', price: '10.01' })).toEqual([
      'bid 10.02 > price 10.01',
      'price 10.01 > ask 10',
    ]);
  });
  it("accepts the service's own mid: rounded to a 0.25 tick, or weighted and in pipettes", () => {
    // "price: the service's mid-price": a mid on a tick coarser than the last decimal, and an FX mid
    // quoted one decimal finer than ask and bid, weighted towards the bid.
    expect(priceProblems({ ask: '100.50', bid: '100.25', price: '100.50' })).toEqual([]);
    expect(priceProblems({ ask: '1.0852', bid: '1.0850', price: '1.08508' })).toEqual([]);
  });
  it('reports a price one tick above the ask, whatever its decimals', () =>
    expect(priceProblems({ ask: '10.02', bid: '10.00', price: '10.03' })).toEqual(['price 10.03 > ask 10.02']));
  it('compares with decimals, not floats', () => {
    expect(priceProblems({ ask: '0.3', bid: '0.1', price: '0.2' })).toEqual([]);
    expect(priceProblems({ ask: '0.30000000000000001', bid: '0.1', price: '0.30000000000000002' })).toEqual([
      'price 0.30000000000000002 > ask 0.30000000000000001',
    ]);
  });
  it('leaves values that are not decimal strings to the schema', () =>
    expect(priceProblems({ ask: 10.02, bid: '10.00', price: '10.01' })).toEqual([]));
  it('judges prices in exponent notation as the decimals they spell', () => {
    expect(priceProblems({ ask: '1.236E-8', bid: '1.232E-8', price: '1.234E-8' })).toEqual([]);
    expect(priceProblems({ ask: '1.236E-8', bid: '1.232E-8', price: '1.237E-8' })).toEqual([
      'price 1.237e-8 > ask 1.236e-8',
    ]);
  });
});

describe('midReading', () => {
  it('reads an exact mid, at any precision, padded or in exponent notation', () => {
    expect(midReading({ ask: '10.02', bid: '10.00', price: '10.01' })).toBe('exact');
    expect(midReading({ ask: '189.30800000', bid: '189.30600000', price: '189.30700000' })).toBe('exact');
    expect(midReading({ ask: '6.425000E+4', bid: '64249.96', price: '6.424998E+4' })).toBe('exact');
    expect(
      midReading({
        ask: '64250.0060599267494414216',
        bid: '64250.0060599267494414212',
        price: '64250.0060599267494414214',
      }),
    ).toBe('exact');
  });
  it('reads either rounding of a mid that needs one more digit, and a truncation with finer ask and bid', () => {
    expect(midReading({ ask: '10.03', bid: '10.00', price: '10.01' })).toBe('rounded');
    expect(midReading({ ask: '10.03', bid: '10.00', price: '10.02' })).toBe('rounded');
    expect(midReading({ ask: '10.019', bid: '10.000', price: '10.00' })).toBe('rounded');
    // Half-up at 2 places, every value padded to 8: 85.375 sent as 85.38000000.
    expect(midReading({ ask: '85.39000000', bid: '85.36000000', price: '85.38000000' })).toBe('rounded');
  });
  it("reads a mid of the service's own as other: on a coarser tick, weighted, one unit off", () => {
    expect(midReading({ ask: '100.50', bid: '100.25', price: '100.50' })).toBe('other');
    expect(midReading({ ask: '1.0852', bid: '1.0850', price: '1.08508' })).toBe('other');
    expect(midReading({ ask: '10.02', bid: '10.00', price: '10.02' })).toBe('other');
    expect(
      midReading({
        ask: '64250.0060599267494414216',
        bid: '64250.0060599267494414212',
        price: '64250.0060599267494414215',
      }),
    ).toBe('other');
  });
  it('reads nothing of values that are not decimal strings', () =>
    expect(midReading({ ask: 10.02, bid: '10.00', price: '10.01' })).toBeUndefined());
});

describe('notation', () => {
  it.each([
    ['1.50', 'plain'],
    ['.5', 'plain'],
    ['1.234E-8', 'exponent'],
    ['1e5', 'exponent'],
    ['+1', undefined],
    [1.5, undefined],
  ] as const)('reads %j as %s', (v, n) => expect(notation(v)).toBe(n));
});

describe('timestampUnit', () => {
  const now = 1_763_800_000_000;
  it.each([
    [1_763_799_999, 's'],
    [1_763_799_999_123, 'ms'],
    [1_763_799_999_123_456, 'us'],
    // biome-ignore lint/correctness/noPrecisionLoss: a nanosecond timestamp is read by its magnitude alone
    [1_763_799_999_123_456_789, 'ns'],
    [42, 'unknown'],
  ] as const)('reads %d as %s', (v, unit) => expect(timestampUnit(v, now)).toBe(unit));
});

describe('relativeGap', () => {
  it('is the distance relative to the second value', () => expect(relativeGap('101', '100')).toBeCloseTo(0.01));
  it('is undefined for a zero base or a non-decimal', () => {
    expect(relativeGap('1', '0')).toBeUndefined();
    expect(relativeGap(1, '1')).toBeUndefined();
  });
});

describe('answers (which notice answers a request)', () => {
  const sub = { id: 's1', method: 'subscribe', params: { pairs: ['A:B:C/D'] } };
  it.each([
    ['the echoed id', { method: 'subscribe', code: '200', id: 's1' }, true],
    ['no id and the same method', { method: 'subscribe', code: '200' }, true],
    ['no id and method error', { method: 'error', code: '50104' }, true],
    ['another id', { method: 'subscribe', code: '200', id: 's2' }, false],
    ['no id and an unrelated method', { method: 'flood', code: '200' }, false],
  ] as const)('%s: %j -> %s', (_what, notice, expected) => expect(answers(sub, notice)).toBe(expected));
  it('takes an error notice as the answer to malformed text', () => {
    expect(answers('{"method":', { method: 'error', code: '50004' })).toBe(true);
    expect(answers('{"method":', { method: 'subscribe', code: '200' })).toBe(false);
  });
});
