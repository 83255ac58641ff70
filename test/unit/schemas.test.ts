import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCHEMA_NAMES, schemaFileName, type SchemaName } from '../../src/schema-definitions.ts';
import { validator, formatErrors } from '../../src/validator.ts';
import { SCHEMA_DIR, staleSchemaFiles } from '../helpers/schema-files.ts';

type Json = Record<string, unknown>;
const price = (over: Json = {}): Json => ({
  code: 'Forex:ALL:EUR/USD',
  ask: '1.08512',
  bid: '1.08500',
  price: '1.08506',
  market: { open: true, reason: 'regular_session', session: 'REG', timezone: 'America/New_York' },
  ...over,
});
const crypto = (market: Json): Json => price({ code: 'Crypto:ALL:BTC/USDT', market });
const without = (obj: Json, key: string): Json => Object.fromEntries(Object.entries(obj).filter(([k]) => k !== key));
const pairs = (n: number): string[] => Array.from({ length: n }, (_, i) => `Crypto:ALL:C${i}/USDT`);

/** For each schema: examples built from the spec's field tables, and broken variants with the reason. */
const REPLAY = {
  format: 'conform-explore-replay',
  version: 1,
  seed: 7,
  sequence: 3,
  target: { rest: 'http://127.0.0.1:8080', ws: 'ws://127.0.0.1:8080/v1/ws' },
  steps: [
    { op: 'open', conn: 'c1', key: 'primary', silent: false },
    { op: 'subscribe', conn: 'c1', pairs: ['Crypto:ALL:BTC/USD'], id: 'x1' },
    { op: 'idle', ms: 500 },
  ],
  failure: { step: 1, transition: 't', rule: 'transition:none/subscribe', expected: 'e', received: 'r' },
  transcript: ['1. c1 = open keys.primary -> accepted'],
};

const CASES: Record<SchemaName, { valid: unknown[]; invalid: [string, unknown][] }> = {
  'explore-replay': {
    valid: [REPLAY, without(REPLAY, 'transcript')],
    invalid: [
      ['another format', { ...REPLAY, format: 'conform-report' }],
      ['an unknown step', { ...REPLAY, steps: [{ op: 'jump' }] }],
      ['a connection not named cN', { ...REPLAY, steps: [{ op: 'close', conn: 'one' }] }],
      ['no failure', without(REPLAY, 'failure')],
    ],
  },
  'pair-record': {
    valid: [
      { code: 'Equity:US:AAPL/USD', name: 'Apple Inc.', base: 'AAPL', quote: 'USD' },
      { code: 'Metal:ALL:XAU/USD', name: 'Gold', base: 'XAU', quote: 'USD', extra: 1 },
    ],
    invalid: [
      ['missing name', { code: 'Equity:US:AAPL/USD', base: 'AAPL', quote: 'USD' }],
      ['malformed code', { code: 'AAPL/USD', name: 'Apple', base: 'AAPL', quote: 'USD' }],
      ['numeric quote', { code: 'Equity:US:AAPL/USD', name: 'Apple', base: 'AAPL', quote: 1 }],
    ],
  },
  'pairs-response': {
    valid: [
      {
        status_number: '200',
        ts: 1732300000,
        data: [{ code: 'Crypto:ALL:BTC/USDT', name: 'Bitcoin', base: 'BTC', quote: 'USDT' }],
      },
      { status_number: '200', ts: 1, data: [], total: 0 },
    ],
    invalid: [
      ['numeric status_number', { status_number: 200, ts: 1, data: [] }],
      ['non-integer ts', { status_number: '200', ts: 1.5, data: [] }],
      ['data not an array', { status_number: '200', ts: 1, data: {} }],
      ['bad element', { status_number: '200', ts: 1, data: [{ code: 'x' }] }],
    ],
  },
  market: {
    valid: [
      { open: true, reason: 'continuous', session: 'REG' },
      { open: false, reason: 'market_closed', session: 'CLOSED', timezone: 'Europe/London' },
      { open: true, reason: 'pre_session', session: 'PRE', timezone: 'America/New_York' },
      { open: true, reason: 'no_price', session: 'REG' },
    ],
    invalid: [
      ['out-of-enum reason', { open: true, reason: 'lunch_break', session: 'REG' }],
      ['out-of-enum session', { open: true, reason: 'regular_session', session: 'AFTER' }],
      ['closed but open', { open: true, reason: 'market_closed', session: 'CLOSED' }],
      ['post with REG', { open: true, reason: 'post_session', session: 'REG' }],
      ['open as string', { open: 'true', reason: 'continuous', session: 'REG' }],
      ['missing session', { open: true, reason: 'continuous' }],
    ],
  },
  'price-record': {
    valid: [
      price(),
      crypto({ open: true, reason: 'continuous', session: 'REG' }),
      crypto({ open: true, reason: 'no_price', session: 'REG' }),
      price({
        code: 'Equity:US:AAPL/USD',
        market: { open: true, reason: 'post_session', session: 'POST', timezone: 'America/New_York' },
      }),
      // The market of a code is a scope label: an equity labelled by its exchange may be a US one with
      // extended hours; a zone may be a link of the tz database; a base may hold a space or a slash.
      price({
        code: 'Equity:NASDAQ:AAPL/USD',
        market: { open: true, reason: 'pre_session', session: 'PRE', timezone: 'US/Eastern' },
      }),
      price({ code: 'Commodity:ALL:Crude Oil/USD' }),
      price({ code: 'Equity:US:BF/B/USD' }),
      // Decimal strings in exponent notation and with a bare point, as decimal types read them exactly.
      price({ ask: '1.08520E+0', bid: '1.0849e0', price: '1.08505' }),
      price({ ask: '1.234E-8', bid: '1.230E-8', price: '1.232E-8' }),
      price({ ask: '2.', bid: '.5', price: '1.25' }),
    ],
    invalid: [
      ['price as a JSON number', price({ price: 1.08506 })],
      ['plus sign', price({ bid: '+1.0' })],
      ['NaN decimal', price({ bid: 'NaN' })],
      ['Infinity decimal', price({ ask: 'Infinity' })],
      ['hex decimal', price({ ask: '0x1f' })],
      ['binary decimal', price({ ask: '0b101' })],
      ['octal decimal', price({ ask: '0o17' })],
      ['trailing space in decimal', price({ bid: '1.0 ' })],
      ['exponent beyond what a decimal type holds', price({ ask: '1E+9999999999999999' })],
      ['space in decimal', price({ bid: ' 1.0' })],
      ['empty decimal', price({ bid: '' })],
      ['missing market', without(price(), 'market')],
      ['crypto with timezone', crypto({ open: true, reason: 'continuous', session: 'REG', timezone: 'UTC' })],
      ['crypto in regular_session', crypto({ open: true, reason: 'regular_session', session: 'REG' })],
      ['forex without timezone', price({ market: { open: true, reason: 'regular_session', session: 'REG' } })],
      ['forex in continuous', price({ market: { open: true, reason: 'continuous', session: 'REG', timezone: 'UTC' } })],
      ['forex pre_session', price({ market: { open: true, reason: 'pre_session', session: 'PRE', timezone: 'UTC' } })],
      ['crypto stale outside REG', crypto({ open: true, reason: 'no_price', session: 'CLOSED' })],
      [
        'metal pre_session',
        price({
          code: 'Metal:ALL:XAU/USD',
          market: { open: true, reason: 'pre_session', session: 'PRE', timezone: 'UTC' },
        }),
      ],
    ],
  },
  'price-response': {
    valid: [
      { status_number: '200', ts: 1732300000000, data: price() },
      {
        status_number: '50102',
        ts: 1,
        data: crypto({ open: true, reason: 'no_price', session: 'REG' }),
        message: 'price may not reflect real-time conditions',
      },
    ],
    invalid: [
      ['50102 without message', { status_number: '50102', ts: 1, data: price() }],
      ['data null', { status_number: '200', ts: 1, data: null }],
      ['error status', { status_number: '50104', ts: 1, data: price(), message: 'x' }],
      ['ts as string', { status_number: '200', ts: '1', data: price() }],
    ],
  },
  'rest-envelope': {
    valid: [
      { status_number: '200', ts: 1, data: [] },
      { status_number: '50104', ts: 1, data: null, message: 'pair not found' },
      { status_number: '50102', ts: 1, data: price(), message: 'stale' },
      // ts is stated for answers with data; a gateway's 401 or unknown-endpoint answer may leave it out.
      { status_number: '50005', data: null, message: 'unauthorized' },
      { status_number: '50008', data: null, message: 'no such endpoint' },
    ],
    invalid: [
      ['undocumented status', { status_number: '40400', ts: 1, data: null, message: 'x' }],
      ['missing ts on a 50102', { status_number: '50102', data: price(), message: 'stale' }],
      ['ts as string on an error', { status_number: '50005', ts: '1', data: null, message: 'x' }],
      ['error with data', { status_number: '50005', ts: 1, data: {}, message: 'x' }],
      ['error without message', { status_number: '50005', ts: 1, data: null }],
      ['missing ts', { status_number: '200', data: [] }],
      ['data a string', { status_number: '200', ts: 1, data: 'x' }],
    ],
  },
  'rest-error': {
    valid: [
      { status_number: '50005', ts: 1, data: null, message: 'unauthorized' },
      { status_number: '50005', data: null, message: 'unauthorized' },
    ],
    invalid: [
      ['success status', { status_number: '200', ts: 1, data: null, message: 'x' }],
      ['data filled', { status_number: '50004', ts: 1, data: [], message: 'x' }],
      ['missing message', { status_number: '50004', ts: 1, data: null }],
      ['numeric status', { status_number: 50004, ts: 1, data: null, message: 'x' }],
    ],
  },
  'push-frame': {
    valid: [
      {
        code: 'Crypto:ALL:BTC/USDT',
        ask: '97001.5',
        bid: '97000.5',
        price: '97001.0',
        last_updated: 1732300000123,
        sent_at: 1732300000125,
      },
      { code: 'Forex:ALL:EUR/USD', ask: '1.1', bid: '1.0', price: '1.05' },
    ],
    invalid: [
      ['price as a JSON number', { code: 'Forex:ALL:EUR/USD', ask: '1.1', bid: '1.0', price: 1.05 }],
      ['plus-signed ask', { code: 'Forex:ALL:EUR/USD', ask: '+1.1', bid: '1.0', price: '1.05' }],
      ['missing bid', { code: 'Forex:ALL:EUR/USD', ask: '1.1', price: '1.05' }],
      ['fractional sent_at', { code: 'Forex:ALL:EUR/USD', ask: '1.1', bid: '1.0', price: '1.05', sent_at: 1.5 }],
      [
        'carries status_number',
        { code: 'Forex:ALL:EUR/USD', ask: '1.1', bid: '1.0', price: '1.05', status_number: '200' },
      ],
    ],
  },
  'notice-success': {
    valid: [
      { method: 'subscribe', message: 'Success', code: '200', id: '1', data: null },
      { method: 'unsubscribe', message: 'success', code: '200' },
    ],
    invalid: [
      ['numeric code', { method: 'subscribe', message: 'Success', code: 200 }],
      ['wrong message case', { method: 'subscribe', message: 'success', code: '200' }],
      ['out-of-enum method', { method: 'subscribed', message: 'Success', code: '200' }],
      ['carries status_number', { method: 'subscribe', message: 'Success', code: '200', status_number: '200' }],
      ['numeric id', { method: 'subscribe', message: 'Success', code: '200', id: 1 }],
      ['missing message', { method: 'unsubscribe', code: '200' }],
    ],
  },
  'notice-error': {
    valid: [
      { method: 'error', message: 'pair not found: Crypto:ALL:NOPE/USDT', code: '50104', id: '7', data: null },
      { method: 'error', message: 'invalid request', code: '50004' },
    ],
    invalid: [
      ['numeric code', { method: 'error', message: 'x', code: 50004 }],
      ['undocumented code', { method: 'error', message: 'x', code: '50009' }],
      ['method not error', { method: 'subscribe', message: 'x', code: '50004' }],
      ['missing message', { method: 'error', code: '50004' }],
      ['carries status_number', { method: 'error', message: 'x', code: '50004', status_number: '50004' }],
    ],
  },
  'handshake-error': {
    valid: [{ status_number: '50009', message: 'maximum number of connections reached' }],
    invalid: [
      ['carries code', { status_number: '50009', message: 'x', code: '50009' }],
      ['numeric status', { status_number: 50009, message: 'x' }],
      ['missing message', { status_number: '50010' }],
      ['undocumented status', { status_number: '429', message: 'x' }],
    ],
  },
  'subscribe-request': {
    valid: [
      { id: 'a', method: 'subscribe', params: { pairs: ['Crypto:ALL:BTC/USDT'] } },
      { method: 'subscribe', params: { pairs: pairs(100) } },
    ],
    invalid: [
      ['101 pairs', { method: 'subscribe', params: { pairs: pairs(101) } }],
      ['empty pairs', { method: 'subscribe', params: { pairs: [] } }],
      ['missing params', { method: 'subscribe' }],
      ['pairs not an array', { method: 'subscribe', params: { pairs: 'Crypto:ALL:BTC/USDT' } }],
      ['numeric id', { id: 1, method: 'subscribe', params: { pairs: ['x'] } }],
    ],
  },
  'unsubscribe-request': {
    valid: [{ method: 'unsubscribe', params: { pairs: ['Crypto:ALL:BTC/USDT'] } }],
    invalid: [
      ['wrong method', { method: 'subscribe', params: { pairs: ['x'] } }],
      ['missing params', { method: 'unsubscribe' }],
      ['pair not a string', { method: 'unsubscribe', params: { pairs: [1] } }],
    ],
  },
  'ping-request': {
    valid: [{ method: 'ping' }, { id: 'p1', method: 'ping', params: {} }],
    invalid: [
      ['wrong method', { method: 'pong' }],
      ['params not an object', { method: 'ping', params: [] }],
      ['missing method', { id: 'x' }],
    ],
  },
  profile: {
    valid: [
      { rest: 'http://127.0.0.1:8080', keys: { primary: { key: 'k' } } },
      // Allowances left out are found at the start of the run.
      { rest: 'http://127.0.0.1:8080', keys: { primary: { key: 'k' }, limited: { key: 'l' } } },
      {
        rest: 'https://api.example.test',
        ws: 'wss://api.example.test/ws',
        transport: 'ws',
        keys: {
          primary: { key: 'k', connections: 3 },
          limited: { key: 'l', connections: 1 },
          cryptoOnly: { key: 'c', assetTypes: ['Crypto'] },
          whitelisted: { key: 'w', pairs: ['Crypto:ALL:BTC/USDT'] },
          noStream: { key: 'n' },
          suspended: { key: 's' },
          rateLimited: { key: 'r' },
        },
        pairs: { stale: 'Crypto:ALL:STALE/USDT', inactive: 'Crypto:ALL:OLD/USDT' },
        probes: [{ status: '50106', path: '/v1/price', query: { code: 'Equity:US:MNT/USD' } }],
        timing: { pingTimeoutMs: 30000 },
      },
    ],
    invalid: [
      ['missing rest', { keys: { primary: { key: 'k' } } }],
      ['missing primary key', { rest: 'http://x', keys: {} }],
      [
        'an allowance of 0 connections',
        { rest: 'http://x', keys: { primary: { key: 'k' }, limited: { key: 'l', connections: 0 } } },
      ],
      ['rest not a URL', { rest: 'localhost:80', keys: { primary: { key: 'k' } } }],
      ['unknown top-level field', { rest: 'http://x', keys: { primary: { key: 'k' } }, target: 'x' }],
      [
        'probe with undocumented status',
        { rest: 'http://x', keys: { primary: { key: 'k' } }, probes: [{ status: '404', path: '/v1/x' }] },
      ],
    ],
  },
};

describe('schemas', () => {
  it('has a test table for every schema', () => {
    expect(Object.keys(CASES).sort()).toEqual([...SCHEMA_NAMES].sort());
  });

  for (const name of SCHEMA_NAMES) {
    describe(name, () => {
      it.each(CASES[name].valid.map((v, i) => [i, v]))('accepts valid example %i', (_, value) => {
        expect(validator.validate(name, value).errors).toEqual([]);
      });
      it('has at least three broken variants', () => expect(CASES[name].invalid.length).toBeGreaterThanOrEqual(3));
      it.each(CASES[name].invalid)('rejects %s', (_, value) => {
        const result = validator.validate(name, value);
        expect(result.ok).toBe(false);
        expect(result.errors.length).toBeGreaterThan(0);
        expect(validator.is(name, value)).toBe(false);
      });
    });
  }
});

describe('schema files', () => {
  it('every file in schemas/ is a compiled schema, and every compiled schema has its file', () => {
    const files = readdirSync(SCHEMA_DIR)
      .filter((f) => f.endsWith('.json'))
      .sort();
    // The dialect file is the reference service's input: reference/dialect.ts compiles it.
    expect(files).toEqual([...validator.names.map(schemaFileName), 'dialect.schema.json'].sort());
  });
  it('the files match their definitions (run npm run gen:schemas when this fails)', () => {
    expect(staleSchemaFiles()).toEqual([]);
  });
});

describe('error lines', () => {
  it('render pointer, rule and the offending value', () => {
    const result = validator.validate('push-frame', { code: 'Crypto:ALL:BTC/USDT', ask: '+1e5', bid: '1', price: '1' });
    expect(result.errors).toEqual(['/ask: must match format "decimal" (got "+1e5")']);
  });
  it('name the missing field', () => {
    expect(validator.validate('notice-error', { method: 'error', code: '50004' }).errors).toEqual([
      '/: must have required property "message" (got {"method":"error","code":"50004"})',
    ]);
  });
  it('truncate long values', () => {
    const long = 'x'.repeat(500);
    const [line] = validator.validate('ping-request', { method: long }).errors;
    expect(line!.length).toBeLessThan(200);
    expect(line).toContain('…');
  });
  it('are empty when ajv reports no errors', () => expect(formatErrors(null, {})).toEqual([]));
});
