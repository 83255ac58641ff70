import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { parseProfile } from '../../src/profile.ts';
import { KNOWN_ASSET_TYPES, LIMITS, PATHS, STATUS, parsePairCode } from '../../src/spec.ts';
import { get, getRaw, q } from '../helpers/reference.ts';

let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer({ tickMs: 50, pingTimeoutMs: 1500 });
});
afterAll(() => server.close());

const isInt = (v: unknown): boolean => Number.isInteger(v);

async function allPairs(keyName = 'primary'): Promise<Record<string, string>[]> {
  const out: Record<string, string>[] = [];
  for (let page = 1; page < 50; page++) {
    const r = await get(server, PATHS.pairs + q({ page: String(page), per_page: '100' }), keyName);
    const data = r.body.data as Record<string, string>[];
    if (data.length === 0) break;
    out.push(...data);
  }
  return out;
}

describe('reference REST: envelope and profile', () => {
  it('describes itself with a profile that passes the profile schema', () => {
    expect(() => parseProfile(server.profile)).not.toThrow();
    expect(server.profile.ws).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/v1\/ws$/);
    expect(server.profile.timing?.pingTimeoutMs).toBe(1500);
  });

  it('answers /v1/pairs in the envelope with a string status_number, an integer ts and no message', async () => {
    const r = await get(server, PATHS.pairs);
    expect(r.status).toBe(200);
    expect(r.body.status_number).toBe(STATUS.OK);
    expect(isInt(r.body.ts)).toBe(true);
    expect(Array.isArray(r.body.data)).toBe(true);
    expect(r.body).not.toHaveProperty('message');
  });

  it('answers every error with data null and a message', async () => {
    for (const path of [PATHS.price, PATHS.price + q({ code: 'Crypto:ALL:NOPE/USD' }), '/v1/nothing']) {
      const r = await get(server, path);
      expect(r.body.data).toBeNull();
      expect(typeof r.body.message).toBe('string');
      expect(r.body.status_number).not.toBe(STATUS.OK);
    }
  });

  it('answers every probe of its profile with the probe status and HTTP status', async () => {
    const probes = server.profile.probes ?? [];
    expect(new Set(probes.map((p) => p.status)).size).toBeGreaterThanOrEqual(20);
    for (const p of probes) {
      const r = await get(server, p.path + (p.query ? q(p.query) : ''), p.key ?? 'primary');
      expect({ probe: p.note, status: r.body.status_number, http: r.status }).toEqual({
        probe: p.note,
        status: p.status,
        http: p.httpStatus,
      });
    }
  });
});

describe('reference REST: auth', () => {
  it('rejects a missing key with HTTP 401 and 50005', async () => {
    const r = await get(server, PATHS.pairs, null);
    expect([r.status, r.body.status_number, r.body.data]).toEqual([401, STATUS.UNAUTHORIZED, null]);
  });

  it('rejects an unknown key with HTTP 401 and 50005', async () => {
    const r = await getRaw(server.restUrl + PATHS.pairs, { 'X-API-Key': 'not-a-key' });
    expect([r.status, r.body.status_number]).toEqual([401, STATUS.UNAUTHORIZED]);
  });

  it('matches the key header name case-insensitively', async () => {
    for (const header of ['X-API-Key', 'X-API-KEY', 'x-api-key', 'x-Api-kEY']) {
      const r = await get(server, PATHS.pairs, 'primary', header);
      expect([header, r.body.status_number]).toEqual([header, STATUS.OK]);
    }
  });

  it('answers a suspended key with 50007', async () => {
    const r = await get(server, PATHS.pairs, 'suspended');
    expect(r.body.status_number).toBe(STATUS.SUSPENDED);
  });

  it('never echoes the key in an error body', async () => {
    for (const name of ['suspended', 'restricted', 'throttled', 'apiMaintenance']) {
      const r = await get(server, PATHS.pairs, name);
      expect(r.text).not.toContain(server.profile.keys[name]!.key);
    }
  });
});

describe('reference REST: pagination and filters', () => {
  it('defaults to page 1 with 10 pairs per page', async () => {
    const a = await get(server, PATHS.pairs);
    const b = await get(
      server,
      PATHS.pairs + q({ page: String(LIMITS.defaultPage), per_page: String(LIMITS.defaultPerPage) }),
    );
    expect((a.body.data as unknown[]).length).toBe(10);
    expect(a.body.data).toEqual(b.body.data);
  });

  it('honours per_page and gives disjoint pages that cover the list', async () => {
    const all = await allPairs();
    const seen: string[] = [];
    for (let page = 1; page <= Math.ceil(all.length / 7); page++) {
      const r = await get(server, PATHS.pairs + q({ page: String(page), per_page: '7' }));
      const data = r.body.data as { code: string }[];
      expect(data.length).toBe(Math.min(7, all.length - (page - 1) * 7));
      seen.push(...data.map((d) => d.code));
    }
    expect(seen).toEqual(all.map((p) => p.code));
    const beyond = await get(server, PATHS.pairs + q({ page: '99' }));
    expect(beyond.body.data).toEqual([]);
  });

  it('rejects invalid page and per_page with 50004', async () => {
    for (const bad of [
      { page: '0' },
      { page: '-1' },
      { page: 'two' },
      { per_page: '0' },
      { per_page: 'ten' },
      { per_page: '1.5' },
      { per_page: '101' },
    ] as Record<string, string>[]) {
      const r = await get(server, PATHS.pairs + q(bad));
      expect([bad, r.status, r.body.status_number, r.body.data]).toEqual([bad, 400, STATUS.INVALID_REQUEST, null]);
    }
  });

  it('lists 40+ pairs over Crypto, Equity, Forex, Commodity and Metal, base and quote from the code', async () => {
    const all = await allPairs();
    expect(all.length).toBeGreaterThanOrEqual(40);
    expect(new Set(all.map((p) => parsePairCode(p.code)!.assetType))).toEqual(new Set(KNOWN_ASSET_TYPES));
    for (const p of all) {
      const parts = parsePairCode(p.code)!;
      expect([p.base, p.quote]).toEqual([parts.base, parts.quote]);
      expect(p.name.length).toBeGreaterThan(0);
    }
  });

  it('filters by asset type, case-insensitively', async () => {
    const r = await get(server, PATHS.pairs + q({ type: 'crypto', per_page: '100' }));
    const codes = (r.body.data as { code: string }[]).map((d) => d.code);
    expect(codes.length).toBeGreaterThan(5);
    expect(codes.every((c) => c.startsWith('Crypto:'))).toBe(true);
  });

  it('searches by a fragment of the code', async () => {
    const r = await get(server, PATHS.pairs + q({ code: 'btc', per_page: '100' }));
    const codes = (r.body.data as { code: string }[]).map((d) => d.code);
    expect(codes).toContain('Crypto:ALL:BTC/USD');
    expect(codes.every((c) => c.toLowerCase().includes('btc'))).toBe(true);
  });

  it('rejects a repeated query parameter with 50004', async () => {
    const r = await get(server, `${PATHS.pairs}?page=1&page=2`);
    expect(r.body.status_number).toBe(STATUS.INVALID_REQUEST);
  });
});

describe('reference REST: price', () => {
  it("answers every listed pair with ask > bid and price the exact mid at the pair's precision", async () => {
    for (const pair of await allPairs()) {
      const r = await get(server, PATHS.price + q({ code: pair.code }));
      expect([STATUS.OK, STATUS.PRICE_STALE]).toContain(r.body.status_number);
      const d = r.body.data as Record<string, string>;
      const [ask, bid, price] = [new Decimal(d.ask!), new Decimal(d.bid!), new Decimal(d.price!)];
      expect(ask.gt(bid)).toBe(true);
      const places = d.price!.split('.')[1]?.length ?? 0;
      expect(d.ask!.split('.')[1]?.length ?? 0).toBe(places);
      expect(ask.plus(bid).dividedBy(2).toFixed(places)).toBe(d.price);
      expect(price.gte(bid) && price.lte(ask)).toBe(true);
    }
  });

  it('gives Crypto a continuous REG market without a timezone and other assets a real IANA zone', async () => {
    const btc = await get(server, PATHS.price + q({ code: 'Crypto:ALL:BTC/USD' }));
    expect((btc.body.data as Record<string, unknown>).market).toEqual({
      open: true,
      reason: 'continuous',
      session: 'REG',
    });
    for (const code of ['Equity:US:AAPL/USD', 'Forex:ALL:EUR/USD', 'Commodity:ALL:WTI/USD', 'Metal:ALL:XAU/USD']) {
      const m = ((await get(server, PATHS.price + q({ code }))).body.data as { market: { timezone: string } }).market;
      expect(() => new Intl.DateTimeFormat('en', { timeZone: m.timezone })).not.toThrow();
    }
  });

  it('answers the stale pair with 50102, HTTP 200, data filled, reason no_price and a message', async () => {
    const r = await get(server, PATHS.price + q({ code: server.profile.pairs!.stale! }));
    expect([r.status, r.body.status_number]).toEqual([200, STATUS.PRICE_STALE]);
    expect((r.body.data as { market: { reason: string } }).market.reason).toBe('no_price');
    expect(r.body.message).toMatch(/real-time/);
  });

  it('answers an unknown or inactive pair with 50104 and data null', async () => {
    for (const code of ['Crypto:ALL:NOPE/USD', server.profile.pairs!.inactive!, 'garbage']) {
      const r = await get(server, PATHS.price + q({ code }));
      expect([code, r.body.status_number, r.body.data]).toEqual([code, STATUS.PAIR_NOT_FOUND, null]);
    }
  });

  it('answers a missing code with 50004 and an unknown endpoint or method with 50008', async () => {
    expect((await get(server, PATHS.price)).body.status_number).toBe(STATUS.INVALID_REQUEST);
    expect((await get(server, PATHS.price + q({ code: '' }))).body.status_number).toBe(STATUS.INVALID_REQUEST);
    expect((await get(server, '/v2/pairs')).body.status_number).toBe(STATUS.NOT_FOUND);
    const post = await fetch(server.restUrl + PATHS.pairs, {
      method: 'POST',
      headers: { 'X-API-Key': server.profile.keys.primary.key },
    });
    expect(((await post.json()) as { status_number: string }).status_number).toBe(STATUS.NOT_FOUND);
  });

  it('serves a known pool, and answers an unknown pool with 50108', async () => {
    const code = server.profile.pairs!.pooled as string;
    expect(
      (await get(server, PATHS.price + q({ code, pool: '0x1111111111111111111111111111111111111111' }))).body
        .status_number,
    ).toBe(STATUS.OK);
    expect((await get(server, PATHS.price + q({ code, pool: '0xnope' }))).body.status_number).toBe(
      STATUS.POOL_NOT_FOUND,
    );
    expect(
      (await get(server, PATHS.price + q({ code: 'Crypto:ALL:BTC/USD', pool: '0xnope' }))).body.status_number,
    ).toBe(STATUS.POOL_NOT_FOUND);
  });
});

describe('reference REST: entitlements', () => {
  it('lists only the asset types of a crypto-only key and refuses its other prices with 50109', async () => {
    const pairs = await allPairs('cryptoOnly');
    expect(pairs.length).toBeGreaterThan(0);
    expect(pairs.every((p) => p.code.startsWith('Crypto:'))).toBe(true);
    const r = await get(server, PATHS.price + q({ code: 'Equity:US:AAPL/USD' }), 'cryptoOnly');
    expect([r.status, r.body.status_number, r.body.data]).toEqual([403, STATUS.ASSET_TYPE_DENIED, null]);
  });

  it('lists exactly the whitelist of a whitelisted key and refuses other pairs with 50010', async () => {
    const wl = server.profile.keys.whitelisted!;
    expect((await allPairs('whitelisted')).map((p) => p.code).sort()).toEqual([...wl.pairs].sort());
    expect((await get(server, PATHS.price + q({ code: wl.pairs[0]! }), 'whitelisted')).body.status_number).toBe(
      STATUS.OK,
    );
    expect((await get(server, PATHS.price + q({ code: 'Crypto:ALL:ETH/USD' }), 'whitelisted')).body.status_number).toBe(
      STATUS.ACCESS_DENIED,
    );
  });

  it('answers a key with no pairs allowed with 50107 on both endpoints', async () => {
    expect((await get(server, PATHS.pairs, 'noPairs')).body.status_number).toBe(STATUS.NO_PAIRS_ALLOWED);
    expect((await get(server, PATHS.price + q({ code: 'Crypto:ALL:BTC/USD' }), 'noPairs')).body.status_number).toBe(
      STATUS.NO_PAIRS_ALLOWED,
    );
  });
});

describe('reference REST: rate limit', () => {
  it('throttles the burst key with 50006 and HTTP 429 past its allowance, then recovers after the window', async () => {
    const burst = server.profile.keys.burst as { key: string; rateLimit: { requests: number; windowMs: number } };
    const statuses: unknown[] = [];
    for (let i = 0; i < burst.rateLimit.requests + 2; i++)
      statuses.push((await get(server, PATHS.pairs, 'burst')).body.status_number);
    expect(statuses.slice(0, burst.rateLimit.requests).every((s) => s === STATUS.OK)).toBe(true);
    const limited = await get(server, PATHS.pairs, 'burst');
    expect([limited.status, limited.body.status_number, limited.body.data]).toEqual([429, STATUS.RATE_LIMITED, null]);
    await new Promise((r) => setTimeout(r, burst.rateLimit.windowMs + 50));
    expect((await get(server, PATHS.pairs, 'burst')).body.status_number).toBe(STATUS.OK);
  });
});
