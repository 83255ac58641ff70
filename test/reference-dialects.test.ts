import { afterEach, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { parseProfile } from '../src/profile.ts';
import { PATHS, STATUS } from '../src/spec.ts';
import {
  DEFAULT_DIALECT, DIALECT_SPACE, DialectError, coveringSeeds, drawDialect, parseDialect, startReferenceServer,
  type PartialDialect, type ReferenceServer,
} from '../reference/index.ts';
import { connect, get, open, q } from './reference-helpers.ts';

const servers: ReferenceServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(dialect: PartialDialect): Promise<ReferenceServer> {
  const s = await startReferenceServer({ dialect, tickMs: 50, pingTimeoutMs: 3000 });
  servers.push(s);
  return s;
}

const options = (group: keyof typeof DIALECT_SPACE): [string, { values: readonly unknown[] }][] => Object.entries(DIALECT_SPACE[group]);

describe('dialect values', () => {
  it('draws the same dialect from the same seed and different ones from other seeds', () => {
    expect(drawDialect(42)).toEqual(drawDialect(42));
    const distinct = new Set(Array.from({ length: 20 }, (_, i) => JSON.stringify({ ...drawDialect(i + 1), seed: 0 })));
    expect(distinct.size).toBeGreaterThan(15);
  });

  it('draws every option from its values in DIALECT_SPACE, and a drawn dialect reads back unchanged', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const d = drawDialect(seed);
      for (const group of Object.keys(DIALECT_SPACE) as (keyof typeof DIALECT_SPACE)[])
        for (const [name, space] of options(group)) expect(space.values).toContain((d[group] as Record<string, unknown>)[name]);
      expect(parseDialect(JSON.parse(JSON.stringify(d)), `seed ${seed}`)).toEqual(d);
    }
  });

  it('finds seeds that together take every value of every option', () => {
    const seeds = coveringSeeds();
    const seen = new Set<string>();
    for (const seed of seeds) {
      const d = drawDialect(seed) as unknown as Record<string, Record<string, unknown>>;
      for (const [group, opts] of Object.entries(d)) if (typeof opts === 'object') for (const [name, v] of Object.entries(opts)) seen.add(`${group}.${name}=${JSON.stringify(v)}`);
    }
    for (const group of Object.keys(DIALECT_SPACE) as (keyof typeof DIALECT_SPACE)[])
      for (const [name, space] of options(group)) for (const v of space.values) expect(seen).toContain(`${group}.${name}=${JSON.stringify(v)}`);
    expect(seeds).toEqual(coveringSeeds());
  });

  it('merges a partial dialect file onto the default', () => {
    const d = parseDialect({ $schema: '../schemas/dialect.schema.json', rest: { tsUnit: 's' } }, 'x.json');
    expect(d.rest.tsUnit).toBe('s');
    expect(d.rest.pastEnd).toBe(DEFAULT_DIALECT.rest.pastEnd);
    expect(d.keys).toEqual(DEFAULT_DIALECT.keys);
  });

  it.each([
    [{ rest: { tsUnit: 'us' } }, 'x.json: /rest/tsUnit: must be one of "ms", "s"'],
    [{ keys: { primary: 0 } }, 'x.json: /keys/primary: must be >= 1'],
    [{ colour: {} }, 'x.json: /colour: is not a dialect field'],
    [{ stream: { idleClose: 'slam' } }, 'x.json: /stream/idleClose: must be one of'],
    [[], 'x.json: /: must be object'],
  ])('refuses %j with one line naming the field', (value, line) => {
    expect(() => parseDialect(value, 'x.json')).toThrow(DialectError);
    expect(() => parseDialect(value, 'x.json')).toThrow(line);
  });

  it('serves the default dialect when none is given', async () => {
    const s = await startReferenceServer({ tickMs: 50 });
    servers.push(s);
    expect(s.dialect).toEqual(DEFAULT_DIALECT);
    expect(s.profile.keys.primary.connections).toBe(8);
  });
});

describe('dialect keys', () => {
  it('allows the primary key exactly its allowance, counted across source addresses, and states it in the profile', async () => {
    const s = await serve({ keys: { primary: 2 } });
    expect(s.profile.keys.primary.connections).toBe(2);
    const a = await open(s);
    const b = await open(s, 'primary', { localAddress: '127.0.0.2' });
    const third = await connect(s);
    expect(third.ok).toBe(false);
    if (!third.ok) expect(third.body.status_number).toBe(STATUS.CONNECTION_LIMIT);
    await a.close();
    await b.close();
  });

  it('gives the limited key and the other keys their allowances', async () => {
    const s = await serve({ keys: { limited: 3, others: 1 } });
    expect(s.profile.keys.limited!.connections).toBe(3);
    expect(s.profile.keys.cryptoOnly).toBeDefined();
    const one = await open(s, 'cryptoOnly');
    const two = await connect(s, 'cryptoOnly');
    expect(two.ok).toBe(false);
    const limited = [await open(s, 'limited'), await open(s, 'limited'), await open(s, 'limited')];
    expect((await connect(s, 'limited')).ok).toBe(false);
    await Promise.all([one, ...limited].map((c) => c.close()));
  });

  it('writes a valid profile without any allowance when the dialect does not state them', async () => {
    const s = await serve({ keys: { primary: 1, stated: false } });
    const profile = parseProfile(JSON.parse(JSON.stringify(s.profile)));
    for (const entry of Object.values(profile.keys)) expect(entry).not.toHaveProperty('connections');
    expect(profile.keys.limited).toBeUndefined();
    const a = await open(s);
    expect((await connect(s)).ok).toBe(false);
    await a.close();
  });

  it('keeps a closed connection\'s slot for slotReleaseMs, then frees it', async () => {
    const s = await serve({ keys: { primary: 1, slotReleaseMs: 600 } });
    const a = await open(s);
    await a.close();
    const closedAt = Date.now();
    const early = await connect(s);
    expect(early.ok).toBe(false);
    if (!early.ok) expect(early.body.status_number).toBe(STATUS.CONNECTION_LIMIT);
    // Retries until the slot is free: the first success must come no earlier than the delay.
    for (;;) {
      const r = await connect(s);
      if (r.ok) {
        expect(Date.now() - closedAt).toBeGreaterThanOrEqual(600 - 50);
        await r.client.close();
        break;
      }
      expect(Date.now() - closedAt).toBeLessThan(5000);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  it('frees the slot at once under the default dialect', async () => {
    const s = await serve({ keys: { primary: 1 } });
    const a = await open(s);
    await a.close();
    // The server sees the close within a few event-loop turns; the next handshake must then succeed.
    let r = await connect(s);
    for (let i = 0; !r.ok && i < 20; i++) r = await connect(s);
    expect(r.ok).toBe(true);
    if (r.ok) await r.client.close();
  });
});

describe('dialect REST', () => {
  it('writes ts in seconds when the dialect says s', async () => {
    const s = await serve({ rest: { tsUnit: 's' } });
    const before = Math.floor(Date.now() / 1000);
    const r = await get(s, PATHS.pairs);
    expect(r.body.ts).toBeGreaterThanOrEqual(before);
    expect(r.body.ts).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
  });

  it('maps status numbers to HTTP statuses per the dialect, keeping 401 for 50005 and 200 for 50102', async () => {
    const body = await serve({ rest: { httpStatus: 'status-in-body' } });
    expect((await get(body, PATHS.price)).status).toBe(200);
    expect((await get(body, PATHS.pairs, null)).status).toBe(401);
    expect((await get(body, `${PATHS.price}${q({ code: body.profile.pairs!.stale as string })}`)).status).toBe(200);
    const refused = await connect(body, null);
    expect(refused.ok).toBe(false);
    // A refused handshake is never a 2xx, whatever REST does.
    if (!refused.ok) expect(refused.status).toBe(401);
    const gw = await serve({ rest: { httpStatus: 'gateway' } });
    const r = await get(gw, PATHS.price);
    expect([r.status, r.body.status_number]).toEqual([422, STATUS.INVALID_REQUEST]);
    // The profile's probes carry the dialect's HTTP statuses.
    expect(gw.profile.probes!.find((p) => p.status === STATUS.INVALID_REQUEST)!.httpStatus).toBe(422);
  });

  it('refuses or clamps a per_page above the dialect\'s maximum', async () => {
    const err = await serve({ rest: { perPageMax: 50, perPageOver: 'error' } });
    expect((await get(err, `${PATHS.pairs}${q({ per_page: '50' })}`)).body.data).toHaveLength(50);
    const over = await get(err, `${PATHS.pairs}${q({ per_page: '51' })}`);
    expect([over.body.status_number, over.body.data]).toEqual([STATUS.INVALID_REQUEST, null]);
    const clamp = await serve({ rest: { perPageMax: 50, perPageOver: 'clamp' } });
    const clamped = await get(clamp, `${PATHS.pairs}${q({ per_page: '80' })}`);
    expect(clamped.body.status_number).toBe(STATUS.OK);
    expect(clamped.body.data).toHaveLength(50);
  });

  it('answers a page past the end with an empty list or 50004, per the dialect', async () => {
    const empty = await serve({ rest: { pastEnd: 'empty' } });
    const a = await get(empty, `${PATHS.pairs}${q({ page: '9999' })}`);
    expect([a.body.status_number, a.body.data]).toEqual([STATUS.OK, []]);
    const error = await serve({ rest: { pastEnd: 'error' } });
    const b = await get(error, `${PATHS.pairs}${q({ page: '9999' })}`);
    expect([b.body.status_number, b.body.data]).toEqual([STATUS.INVALID_REQUEST, null]);
    // The last page still answers.
    const last = await get(error, `${PATHS.pairs}${q({ page: '1', per_page: '10' })}`);
    expect(last.body.status_number).toBe(STATUS.OK);
  });
});

const decimalsOf = (v: unknown): number => String(v).split('.')[1]?.length ?? 0;

/** The REST price records of the profile's sample pairs. */
async function samplePrices(s: ReferenceServer): Promise<Record<string, string>[]> {
  const out: Record<string, string>[] = [];
  for (const code of s.profile.pairs!.sample!) {
    const r = await get(s, `${PATHS.price}${q({ code })}`);
    out.push(r.body.data as Record<string, string>);
  }
  return out;
}

describe('dialect numbers', () => {
  it('draws each pair\'s decimals from 0 to 8 and writes ask, bid and price with them', async () => {
    const s = await serve({ seed: 5, numbers: { decimals: 'drawn' } });
    const r = await get(s, `${PATHS.pairs}${q({ per_page: '100' })}`);
    const seen = new Set<number>();
    for (const pair of r.body.data as { code: string }[]) {
      const p = (await get(s, `${PATHS.price}${q({ code: pair.code })}`)).body.data as Record<string, string>;
      const n = decimalsOf(p.ask);
      expect(n).toBeLessThanOrEqual(8);
      expect([decimalsOf(p.bid), decimalsOf(p.price)]).toEqual([n, n]);
      expect(new Decimal(p.bid).gt(0)).toBe(true);
      seen.add(n);
    }
    expect(seen.size).toBeGreaterThanOrEqual(7);
  });

  it('writes the mid with one more decimal, exactly (bid+ask)/2, under mid exact', async () => {
    const s = await serve({ numbers: { mid: 'exact' } });
    for (const p of await samplePrices(s)) {
      expect(decimalsOf(p.price)).toBe(decimalsOf(p.ask) + 1);
      expect(new Decimal(p.price).times(2).eq(new Decimal(p.ask).plus(p.bid))).toBe(true);
    }
  });

  it('rounds an off-grid mid half-up to the pair\'s precision under mid rounded', async () => {
    const s = await serve({ numbers: { mid: 'rounded' } });
    for (const p of await samplePrices(s)) {
      const n = decimalsOf(p.ask);
      const mid = new Decimal(p.ask).plus(p.bid).div(2);
      expect(decimalsOf(p.price)).toBe(n);
      expect(mid.decimalPlaces()).toBe(n + 1);
      expect(p.price).toBe(mid.toDecimalPlaces(n, Decimal.ROUND_HALF_UP).toFixed(n));
    }
  });

  it('trims trailing zeros on REST and pads pushes to 8 decimals when the dialect formats them apart', async () => {
    const s = await serve({ numbers: { restZeros: 'trim', streamZeros: 'pad8' } });
    const btc = 'Crypto:ALL:BTC/USD';
    const rest = (await get(s, `${PATHS.price}${q({ code: btc })}`)).body.data as Record<string, string>;
    for (const v of [rest.ask, rest.bid, rest.price]) expect(v).not.toMatch(/\.\d*0$|\.$/);
    const c = await open(s);
    c.send({ method: 'subscribe', params: { pairs: [btc] } });
    const push = (await c.next((f) => f.json?.code === btc)).json!;
    for (const v of [push.ask, push.bid, push.price]) expect(String(v)).toMatch(/^\d+\.\d{8}$/);
    await c.close();
  });

  it('keeps every decimal of the pair\'s precision under the default dialect', async () => {
    const s = await serve({});
    const p = (await get(s, `${PATHS.price}${q({ code: 'Crypto:ALL:BTC/USD' })}`)).body.data as Record<string, string>;
    expect([decimalsOf(p.ask), decimalsOf(p.bid), decimalsOf(p.price)]).toEqual([2, 2, 2]);
  });
});
