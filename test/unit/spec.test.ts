import { describe, expect, it } from 'vitest';
import {
  LIMITS,
  MARKET_REASONS,
  MARKET_SESSIONS,
  NOTICE_CODES,
  REST_STATUSES,
  TEXT,
  parsePairCode,
} from '../../src/spec.ts';
import { specText, tableAfter, withSpec } from '../helpers/spec-doc.ts';

const strip = (cell: string): string => cell.replace(/`/g, '');

describe('spec constants agree with the spec document', () => {
  withSpec('lists exactly the REST status numbers of the spec table', () => {
    const documented = tableAfter('### REST `status_number` values').map((r) => strip(r[0]!));
    expect([...REST_STATUSES].sort()).toEqual(documented.sort());
  });

  withSpec('lists exactly the WebSocket notice codes of the spec table', () => {
    const documented = tableAfter('### WebSocket notice `code` values after connection').map((r) => strip(r[0]!));
    expect([...NOTICE_CODES].sort()).toEqual(documented.sort());
  });

  withSpec('lists exactly the market reasons and sessions the spec names', () => {
    const market = tableAfter('### Market object');
    /** The backticked values of the "One of …" cell of one field row. */
    const oneOf = (field: string): string[] =>
      [...(market.find((r) => r[0] === field)?.[2] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!).sort();
    expect(oneOf('reason').length).toBeGreaterThan(0);
    expect([...MARKET_REASONS].sort()).toEqual(oneOf('reason'));
    expect([...MARKET_SESSIONS].sort()).toEqual(oneOf('session'));
    const states = /States of `market\.session`: (.*)\. /.exec(specText())?.[1] ?? '';
    expect([...MARKET_SESSIONS].sort()).toEqual([...states.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).sort());
  });

  withSpec('carries the limits and fixed texts the spec states', () => {
    const text = specText();
    expect(text).toContain(`| Pairs per connection | ${LIMITS.maxPairsPerSubscribe} maximum. |`);
    expect(text).toContain(`within ${LIMITS.pingTimeoutMs / 1000} seconds`);
    expect(text).toContain(`| \`per_page\` default | ${LIMITS.defaultPerPage}. `);
    expect(text).toContain(`| \`page\` default | ${LIMITS.defaultPage}. |`);
    expect(text).toContain(`plain text \`${TEXT.pong}\``);
    expect(text).toContain(`\`message\` \`${TEXT.subscribeSuccess}\``);
    expect(text).toContain(`\`message\` \`${TEXT.unsubscribeSuccess}\``);
    expect(text).toContain(`\`${TEXT.pairNotFoundPrefix}<pair_code>\``);
  });
});

describe('parsePairCode', () => {
  it('splits a well-formed code into asset type, market, base and quote', () => {
    expect(parsePairCode('Equity:US:AAPL/USD')).toEqual({
      assetType: 'Equity',
      market: 'US',
      base: 'AAPL',
      quote: 'USD',
    });
  });
  it('reads the quote after the last slash: a base may hold a space or a slash of its own', () => {
    // The spec states only <asset_type>:<market>:<base>/<quote>, "the code also identifies the quote".
    expect(parsePairCode('Commodity:ALL:Crude Oil/USD')).toEqual({
      assetType: 'Commodity',
      market: 'ALL',
      base: 'Crude Oil',
      quote: 'USD',
    });
    expect(parsePairCode('Equity:US:BF/B/USD')).toEqual({
      assetType: 'Equity',
      market: 'US',
      base: 'BF/B',
      quote: 'USD',
    });
  });
  it.each([
    'Crypto:BTC/USD',
    'Crypto:ALL:BTCUSD',
    'Crypto::BTC/USD',
    'Crypto:ALL:/USD',
    'Crypto:ALL:BTC/',
    'Crypto:ALL:BTC/USD/',
    'Crypto:ALL:BTC:X/USD',
    ' Crypto:ALL:BTC/USD',
    'Crypto:ALL:BTC /USD',
    '',
  ])('rejects %j', (code) => expect(parsePairCode(code)).toBeNull());
});
