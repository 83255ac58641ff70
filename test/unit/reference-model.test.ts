import { describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { marketAt } from '../../reference/market.ts';
import { PriceBook } from '../../reference/prices.ts';
import { ConfigError } from '../../src/errors.ts';
import { DEFAULT_CONFIG, resolveConfig } from '../../reference/config.ts';
import { DEFAULT_PAIRS } from '../../reference/catalogue.ts';
import { startReferenceServer } from '../../reference/index.ts';
import { MARKET_COMBINATIONS, PATHS } from '../../src/spec.ts';
import { get, q } from '../helpers/reference.ts';

const at = (iso: string): number => Date.parse(iso);

describe('reference market sessions', () => {
  const us = (iso: string): string => marketAt(at(iso), 'Equity', 'US').reason;
  it('puts US equities in PRE 04:00-09:30, REG 09:30-16:00, POST 16:00-20:00 New York time in winter', () => {
    expect(us('2026-01-14T08:59:00Z')).toBe('market_closed');
    expect(us('2026-01-14T09:00:00Z')).toBe('pre_session');
    expect(us('2026-01-14T14:29:00Z')).toBe('pre_session');
    expect(us('2026-01-14T14:30:00Z')).toBe('regular_session');
    expect(us('2026-01-14T20:59:00Z')).toBe('regular_session');
    expect(us('2026-01-14T21:00:00Z')).toBe('post_session');
    expect(us('2026-01-15T00:59:00Z')).toBe('post_session');
    expect(us('2026-01-15T01:00:00Z')).toBe('market_closed');
  });

  it('follows daylight saving time through the IANA zone', () => {
    expect(us('2026-07-15T13:29:00Z')).toBe('pre_session');
    expect(us('2026-07-15T13:30:00Z')).toBe('regular_session');
    expect(us('2026-07-15T20:00:00Z')).toBe('post_session');
  });

  it('closes every non-Crypto market at weekends and keeps Crypto continuous without a timezone', () => {
    const saturday = at('2026-07-18T15:00:00Z');
    for (const type of ['Equity', 'Forex', 'Commodity', 'Metal'])
      expect(marketAt(saturday, type, type === 'Equity' ? 'US' : 'ALL')).toMatchObject({
        open: false,
        reason: 'market_closed',
        session: 'CLOSED',
      });
    expect(marketAt(saturday, 'Crypto', 'ALL')).toEqual({ open: true, reason: 'continuous', session: 'REG' });
  });

  it('gives Forex, Commodity and Metal a regular session with a real zone on weekdays', () => {
    const wednesday = at('2026-07-15T12:00:00Z');
    for (const type of ['Forex', 'Commodity', 'Metal']) {
      const m = marketAt(wednesday, type, 'ALL');
      expect(m).toMatchObject({ open: true, reason: 'regular_session', session: 'REG' });
      expect(() => new Intl.DateTimeFormat('en', { timeZone: m.timezone })).not.toThrow();
    }
  });

  it('only ever produces the combinations the spec fixes', () => {
    for (let t = at('2026-03-01T00:00:00Z'); t < at('2026-03-15T00:00:00Z'); t += 17 * 60_000) {
      for (const [type, market] of [
        ['Equity', 'US'],
        ['Forex', 'ALL'],
        ['Metal', 'ALL'],
        ['Crypto', 'ALL'],
      ] as const) {
        const m = marketAt(t, type, market);
        const fixed = MARKET_COMBINATIONS[m.reason as keyof typeof MARKET_COMBINATIONS];
        expect({ open: m.open, session: m.session }).toEqual(fixed);
      }
    }
  });

  it('serves the session of its injected clock over REST', async () => {
    const server = await startReferenceServer({ clock: () => at('2026-01-14T09:30:00Z') });
    try {
      const r = await get(server, PATHS.price + q({ code: 'Equity:US:AAPL/USD' }));
      expect((r.body.data as { market: unknown }).market).toEqual({
        open: true,
        reason: 'pre_session',
        session: 'PRE',
        timezone: 'America/New_York',
      });
      expect(r.body.ts).toBe(at('2026-01-14T09:30:00Z'));
    } finally {
      await server.close();
    }
  });
});

describe('reference prices', () => {
  it("keeps ask > bid, price the exact mid at the pair's precision on a long walk; last_updated with price", () => {
    const book = new PriceBook(DEFAULT_PAIRS, 7, 1_000);
    let changes = 0;
    for (let step = 1; step <= 500; step++) {
      const before = new Map([...book.pairs].map(([c, e]) => [c, { ...e.current }]));
      const changed = new Set(book.step(1_000 + step, 0.5, () => true));
      changes += changed.size;
      for (const [code, e] of book.pairs) {
        const q0 = before.get(code)!;
        const { ask, bid, price, lastUpdated } = e.current;
        const places = e.config.precision;
        expect(new Decimal(ask).gt(bid)).toBe(true);
        expect(new Decimal(bid).gt(0)).toBe(true);
        expect(new Decimal(ask).plus(bid).dividedBy(2).toFixed(places)).toBe(price);
        expect([ask, bid, price].every((v) => (v.split('.')[1]?.length ?? 0) === places)).toBe(true);
        if (changed.has(code)) expect([price !== q0.price, lastUpdated]).toEqual([true, 1_000 + step]);
        else expect(e.current).toEqual(q0);
      }
    }
    expect(changes).toBeGreaterThan(1000);
  });

  it('repeats the same walk for the same seed', () => {
    const a = new PriceBook(DEFAULT_PAIRS, 3, 0);
    const b = new PriceBook(DEFAULT_PAIRS, 3, 0);
    for (let i = 0; i < 50; i++) expect(a.step(i, 0.5, () => true)).toEqual(b.step(i, 0.5, () => true));
    expect(a.pairs.get('Crypto:ALL:BTC/USD')!.current).toEqual(b.pairs.get('Crypto:ALL:BTC/USD')!.current);
  });

  it('does not move a closed market or a stale pair', () => {
    const book = new PriceBook(DEFAULT_PAIRS, 1, 0);
    const aapl = { ...book.pairs.get('Equity:US:AAPL/USD')!.current };
    const shib = { ...book.pairs.get('Crypto:ALL:SHIB/USD')!.current };
    for (let i = 0; i < 100; i++) book.step(i, 1, (e) => e.assetType !== 'Equity');
    expect(book.pairs.get('Equity:US:AAPL/USD')!.current).toEqual(aapl);
    expect(book.pairs.get('Crypto:ALL:SHIB/USD')!.current).toEqual(shib);
  });
});

describe('reference config', () => {
  const fieldOf = (partial: unknown): string => {
    try {
      resolveConfig(partial);
    } catch (err) {
      if (err instanceof ConfigError) return err.field;
      throw err;
    }
    return '(valid)';
  };

  it('accepts the default and merges sections over it', () => {
    expect(fieldOf({})).toBe('(valid)');
    const c = resolveConfig({ tickMs: 20 });
    expect([c.tickMs, c.pingTimeoutMs, c.keys]).toEqual([20, DEFAULT_CONFIG.pingTimeoutMs, DEFAULT_CONFIG.keys]);
  });

  it('names the first bad field', () => {
    expect(fieldOf([])).toBe('(root)');
    expect(fieldOf({ tikMs: 1 })).toBe('tikMs');
    expect(fieldOf({ tickMs: 0 })).toBe('tickMs');
    expect(fieldOf({ keys: {} })).toBe('keys.primary');
    expect(fieldOf({ keys: { primary: { key: '' } } })).toBe('keys.primary.key');
    expect(fieldOf({ keys: { primary: { key: 'a' }, b: { key: 'a' } } })).toBe('keys.b.key');
    expect(fieldOf({ keys: { primary: { key: 'a', connections: 0 } } })).toBe('keys.primary.connections');
    expect(fieldOf({ keys: { primary: { key: 'a', state: 'sleepy' } } })).toBe('keys.primary.state');
    expect(fieldOf({ keys: { primary: { key: 'a', pairs: ['Crypto:ALL:NOPE/USD'] } } })).toBe('keys.primary.pairs[0]');
    expect(fieldOf({ pairs: [{ code: 'BTCUSD', name: 'x', precision: 2, price: '1' }] })).toBe('pairs[0].code');
    expect(fieldOf({ pairs: [{ code: 'Crypto:ALL:BTC/USD', name: 'x', precision: 2, price: '1.234' }] })).toBe(
      'pairs[0].price',
    );
    expect(
      fieldOf({ pairs: [{ code: 'Forex:ALL:EUR/USD', name: 'x', precision: 2, price: '1', timezone: 'Mars/Base' }] }),
    ).toBe('pairs[0].timezone');
    expect(fieldOf({ restRateLimit: { requests: 1 } })).toBe('restRateLimit.windowMs');
    expect(fieldOf({ moveProbability: 2 })).toBe('moveProbability');
  });
});
