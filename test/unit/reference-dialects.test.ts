import { afterEach, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { parseProfile } from '../../src/profile.ts';
import { PATHS, STATUS } from '../../src/spec.ts';
import {
  DEFAULT_DIALECT,
  DIALECT_SPACE,
  DialectError,
  coveringSeeds,
  drawDialect,
  parseDialect,
  startReferenceServer,
  type PartialDialect,
  type ReferenceServer,
} from '../../reference/index.ts';
import { connect, get, getRaw, open, q, subscribe, type Client } from '../helpers/reference.ts';
import { PriceBook, QUIET_PAIR_MS } from '../../reference/prices.ts';
import { DEFAULT_PAIRS } from '../../reference/catalogue.ts';
import { EXTRA_FIELD } from '../../reference/wire.ts';
import { streamFactoryFor } from '../../src/transports/stream-factory.ts';
import { io } from 'socket.io-client';

const servers: ReferenceServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Serves `dialect` with a 50 ms push cadence unless the dialect sets one (pingTimeoutMs 3000 unless given). */
async function serve(
  dialect: PartialDialect,
  extra: { pingTimeoutMs?: number; transport?: 'socketio' } = {},
): Promise<ReferenceServer> {
  const s = await startReferenceServer({
    dialect: { ...dialect, stream: { tickMs: 50, ...dialect.stream } },
    pingTimeoutMs: extra.pingTimeoutMs ?? 3000,
    transport: extra.transport,
  });
  servers.push(s);
  return s;
}

const options = (group: keyof typeof DIALECT_SPACE): [string, { values: readonly unknown[] }][] =>
  Object.entries(DIALECT_SPACE[group]);

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
        for (const [name, space] of options(group))
          expect(space.values).toContain((d[group] as Record<string, unknown>)[name]);
      expect(parseDialect(JSON.parse(JSON.stringify(d)), `seed ${seed}`)).toEqual(d);
    }
  });

  it('finds seeds that together take every value of every option', () => {
    const seeds = coveringSeeds();
    const seen = new Set<string>();
    for (const seed of seeds) {
      const d = drawDialect(seed) as unknown as Record<string, Record<string, unknown>>;
      for (const [group, opts] of Object.entries(d))
        if (typeof opts === 'object')
          for (const [name, v] of Object.entries(opts)) seen.add(`${group}.${name}=${JSON.stringify(v)}`);
    }
    for (const group of Object.keys(DIALECT_SPACE) as (keyof typeof DIALECT_SPACE)[])
      for (const [name, space] of options(group))
        for (const v of space.values) expect(seen).toContain(`${group}.${name}=${JSON.stringify(v)}`);
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

  it('refuses a bad dialect given to startReferenceServer, naming the field', async () => {
    await expect(startReferenceServer({ dialect: { rest: { perPageMax: 3 } } })).rejects.toThrow(
      'dialect: /rest/perPageMax: must be >= 10',
    );
  });

  it('serves the default dialect when none is given', async () => {
    const s = await startReferenceServer({ tickMs: 50 });
    servers.push(s);
    expect(s.dialect).toEqual(DEFAULT_DIALECT);
    expect(s.profile.keys.primary.connections).toBe(8);
  });
});

describe('dialect keys', () => {
  it('allows the primary key exactly its allowance across source addresses, stated in the profile', async () => {
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
    // keys.limited stays, without its allowance: the harness finds it.
    expect(profile.keys.limited).toMatchObject({ key: expect.any(String) });
    const a = await open(s);
    expect((await connect(s)).ok).toBe(false);
    await a.close();
  });

  it("keeps a closed connection's slot for slotReleaseMs, then frees it", async () => {
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

  it("refuses or clamps a per_page above the dialect's maximum", async () => {
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
  it("draws each pair's decimals from 0 to 8 and writes ask, bid and price with them", async () => {
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

  it("rounds an off-grid mid half-up to the pair's precision under mid rounded", async () => {
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

  it("keeps every decimal of the pair's precision under the default dialect", async () => {
    const s = await serve({});
    const p = (await get(s, `${PATHS.price}${q({ code: 'Crypto:ALL:BTC/USD' })}`)).body.data as Record<string, string>;
    expect([decimalsOf(p.ask), decimalsOf(p.bid), decimalsOf(p.price)]).toEqual([2, 2, 2]);
  });
});

const BTC = 'Crypto:ALL:BTC/USD';
const listed = async (s: ReferenceServer, query: Record<string, string> = {}): Promise<Record<string, unknown>> =>
  (await get(s, `${PATHS.pairs}${q({ per_page: '100', ...query })}`)).body;
const codesOf = (body: Record<string, unknown>): string[] => (body.data as { code: string }[]).map((p) => p.code);

describe('dialect listing', () => {
  it('adds pagination metadata as a meta object or beside data, per the dialect', async () => {
    const meta = await serve({ rest: { pagination: 'meta' } });
    const a = await get(meta, `${PATHS.pairs}${q({ page: '2', per_page: '5' })}`);
    const total = (await listed(meta)).meta as Record<string, number>;
    expect(a.body.meta).toEqual({ page: 2, per_page: 5, total: total.total });
    expect(total.total).toBeGreaterThan(100);
    const top = await serve({ rest: { pagination: 'top-level' } });
    const b = await get(top, `${PATHS.pairs}${q({ page: '2', per_page: '5' })}`);
    expect([b.body.page, b.body.per_page, b.body.total]).toEqual([2, 5, total.total]);
    expect((await listed(await serve({}))).total).toBeUndefined();
  });

  it('lists pairs by code, reversed, or in one seeded shuffle that every request sees', async () => {
    const catalogue = codesOf(await listed(await serve({})));
    const byCode = codesOf(await listed(await serve({ rest: { order: 'code' } })));
    expect(byCode).toEqual([...byCode].sort());
    const all = async (s: ReferenceServer): Promise<string[]> => [
      ...codesOf(await listed(s, { page: '1' })),
      ...codesOf(await listed(s, { page: '2' })),
    ];
    const fullCatalogue = await all(await serve({}));
    expect(await all(await serve({ rest: { order: 'reversed' } }))).toEqual([...fullCatalogue].reverse());
    const shuffled = await serve({ seed: 9, rest: { order: 'shuffled' } });
    const first = codesOf(await listed(shuffled));
    expect(first).not.toEqual(catalogue);
    expect(codesOf(await listed(shuffled))).toEqual(first);
    expect(new Set(await all(shuffled))).toEqual(new Set(fullCatalogue));
  });

  it.each([12, 250])(
    'serves a catalogue of %i active pairs, keeping the pairs the keys name and every special state',
    async (size) => {
      const s = await serve({ rest: { catalogueSize: size, pagination: 'top-level' } });
      const body = await listed(s);
      // The stale pair is listed too: it has a price.
      expect(body.total).toBe(size + 1);
      const codes = new Set<string>();
      for (let page = 1; codes.size < size + 1; page++)
        for (const c of codesOf(await listed(s, { page: String(page) }))) codes.add(c);
      for (const c of s.profile.keys.whitelisted!.pairs as string[]) expect(codes).toContain(c);
      expect(codes).toContain(s.profile.pairs!.stale);
      for (const c of [...codes].slice(0, 20))
        expect((await get(s, `${PATHS.price}${q({ code: c })}`)).body.data).not.toBeNull();
      expect(
        (await get(s, `${PATHS.price}${q({ code: s.profile.pairs!.inactive as string })}`)).body.status_number,
      ).toBe(STATUS.PAIR_NOT_FOUND);
    },
  );
});

describe('dialect JSON', () => {
  it('adds an undocumented field to envelopes, records, market, notices, pushes and handshake bodies', async () => {
    const s = await serve({ json: { extraFields: true } });
    const pairs = await listed(s);
    expect(pairs[EXTRA_FIELD.name]).toBe(EXTRA_FIELD.value);
    expect((pairs.data as Record<string, unknown>[])[0]![EXTRA_FIELD.name]).toBe(EXTRA_FIELD.value);
    const price = (await get(s, `${PATHS.price}${q({ code: BTC })}`)).body.data as Record<
      string,
      Record<string, unknown>
    >;
    expect(price[EXTRA_FIELD.name]).toBe(EXTRA_FIELD.value);
    expect(price.market![EXTRA_FIELD.name]).toBe(EXTRA_FIELD.value);
    const refused = await connect(s, 'suspended');
    expect(refused.ok).toBe(false);
    if (!refused.ok)
      expect(refused.body).toEqual({
        status_number: STATUS.SUSPENDED,
        message: expect.any(String),
        [EXTRA_FIELD.name]: EXTRA_FIELD.value,
      });
    const c = await open(s);
    const notice = await subscribe(c, [BTC]);
    expect([notice.code, notice[EXTRA_FIELD.name]]).toEqual([STATUS.OK, EXTRA_FIELD.value]);
    const push = (await c.next((f) => f.json?.code === BTC)).json!;
    expect(push[EXTRA_FIELD.name]).toBe(EXTRA_FIELD.value);
    await c.close();
  });

  it('orders keys as the dialect says and spaces the text', async () => {
    const s = await serve({ json: { keyOrder: 'sorted', whitespace: 'indented' } });
    const r = await getRaw(`${s.restUrl}${PATHS.price}${q({ code: BTC })}`, {
      'X-API-Key': s.profile.keys.primary.key,
    });
    expect(Object.keys(r.body)).toEqual(['data', 'status_number', 'ts']);
    expect(Object.keys(r.body.data as object)).toEqual(['ask', 'bid', 'code', 'market', 'price']);
    expect(r.text).toContain('\n  "data": {\n    "ask"');
    const rev = await serve({ json: { keyOrder: 'reversed', whitespace: 'tabs' } });
    const c = await open(rev);
    c.send({ id: 'x', method: 'subscribe', params: { pairs: [BTC] } });
    const n = await c.next((f) => f.json?.method !== undefined);
    expect(Object.keys(n.json!)).toEqual(['data', 'id', 'code', 'message', 'method']);
    expect(n.text).toContain('\n\t"data": null');
    await c.close();
  });
});

/** Waits until the client has received `n` pushes of `code` (after those already queued), and returns them. */
async function pushesOf(c: Client, code: string, n: number, timeoutMs = 5000): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  while (out.length < n)
    out.push((await c.next((f) => f.json?.code === code && f.json.method === undefined, timeoutMs)).json!);
  return out;
}

describe('dialect stream', () => {
  it("serves the stream at the dialect's path, on a port of its own; refuses upgrades on the REST port", async () => {
    const s = await serve({ stream: { path: '/v1/stream/prices', port: 'separate' } });
    const ws = new URL(s.wsUrl);
    expect(ws.pathname).toBe('/v1/stream/prices');
    expect(ws.port).not.toBe(new URL(s.restUrl).port);
    const c = await open(s);
    expect((await subscribe(c, [BTC])).code).toBe(STATUS.OK);
    await c.close();
    const onRest = await connect(s, 'primary', { url: `${s.restUrl.replace('http', 'ws')}/v1/stream/prices` });
    expect(onRest.ok).toBe(false);
    if (!onRest.ok) expect(onRest.body.status_number).toBe(STATUS.NOT_FOUND);
    const oldPath = await connect(s, 'primary', { url: `ws://${ws.host}/v1/ws` });
    expect(oldPath.ok).toBe(false);
    expect((await get(s, PATHS.pairs)).body.status_number).toBe(STATUS.OK);
  });

  it("pushes at the dialect's cadence", async () => {
    const s = await serve({ stream: { tickMs: 400 } });
    const c = await open(s);
    await subscribe(c, [BTC]);
    const [a, b, d] = await pushesOf(c, BTC, 3);
    expect((b!.sent_at as number) - (a!.sent_at as number)).toBeGreaterThanOrEqual(350);
    expect((d!.sent_at as number) - (b!.sent_at as number)).toBeGreaterThanOrEqual(350);
    await c.close();
  });

  it('pushes only prices that changed under on-change, with last_updated the tick of the push', async () => {
    const s = await serve({ stream: { pushes: 'on-change' } });
    const c = await open(s);
    await subscribe(c, [BTC]);
    const pushes = await pushesOf(c, BTC, 4);
    // sent_at is the clock as the frame is written, within the tick that moved the price (slack for a loaded machine).
    for (const p of pushes) {
      expect(p.sent_at as number).toBeGreaterThanOrEqual(p.last_updated as number);
      expect((p.sent_at as number) - (p.last_updated as number)).toBeLessThan(1000);
    }
    for (let i = 1; i < pushes.length; i++)
      expect(pushes[i]!.price !== pushes[i - 1]!.price || pushes[i]!.ask !== pushes[i - 1]!.ask).toBe(true);
    await c.close();
  });

  it("sends an unchanging pair's snapshot right after the subscribe (on-change-snapshot), then nothing", async () => {
    const stale = (s: ReferenceServer): string => s.profile.pairs!.stale as string;
    const snap = await serve({ stream: { pushes: 'on-change-snapshot' } });
    const c = await open(snap);
    c.send({ method: 'subscribe', params: { pairs: [stale(snap)] } });
    const first = await c.next((f) => f.json?.code === stale(snap));
    expect(first.json!.last_updated).toBeLessThan(first.json!.sent_at as number);
    // The stale pair never moves: after several ticks, the next frame of interest is the ping's
    // Pong!, not a second push.
    await new Promise((r) => setTimeout(r, 300));
    c.send({ method: 'ping' });
    expect((await c.next((f) => f.text === 'Pong!' || f.json?.code === stale(snap))).text).toBe('Pong!');
    await c.close();
    const plain = await serve({ stream: { pushes: 'on-change' } });
    const d = await open(plain);
    d.send({ method: 'subscribe', params: { pairs: [stale(plain), BTC] } });
    for (let i = 0; i < 3; i++)
      expect((await d.next((f) => f.json?.code === BTC || f.json?.code === stale(plain))).json!.code).toBe(BTC);
    await d.close();
  });

  it('writes push timestamps in seconds, or leaves them out', async () => {
    const secs = await serve({ stream: { timestamps: 's' } });
    const c = await open(secs);
    await subscribe(c, [BTC]);
    const [p] = await pushesOf(c, BTC, 1);
    expect(Math.abs((p!.sent_at as number) - Date.now() / 1000)).toBeLessThan(5);
    await c.close();
    const none = await serve({ stream: { timestamps: 'absent' } });
    const d = await open(none);
    await subscribe(d, [BTC]);
    const [q2] = await pushesOf(d, BTC, 1);
    expect(q2).not.toHaveProperty('sent_at');
    expect(q2).not.toHaveProperty('last_updated');
    await d.close();
  });

  it('answers unsubscribing a pair that is not subscribed with success or 50004, per the dialect', async () => {
    for (const [mode, code] of [
      ['success', STATUS.OK],
      ['error', STATUS.INVALID_REQUEST],
    ] as const) {
      const s = await serve({ stream: { unsubscribeNotSubscribed: mode } });
      const c = await open(s);
      await subscribe(c, [BTC]);
      c.send({ id: 'u', method: 'unsubscribe', params: { pairs: ['Forex:ALL:EUR/USD'] } });
      expect((await c.notice()).code).toBe(code);
      c.send({ id: 'v', method: 'unsubscribe', params: { pairs: [BTC] } });
      expect((await c.notice()).code).toBe(STATUS.OK);
      await c.close();
    }
  });

  it('keeps or drops the earlier subscription when a subscribe is refused, per the dialect', async () => {
    for (const mode of ['keep', 'drop'] as const) {
      const s = await serve({ stream: { failedSubscribe: mode } });
      const c = await open(s);
      await subscribe(c, [BTC]);
      await pushesOf(c, BTC, 1);
      expect((await subscribe(c, ['Crypto:ALL:NOPE/USD'], 's2')).code).toBe(STATUS.PAIR_NOT_FOUND);
      const after = await c.pushesFor(400);
      if (mode === 'keep') expect(after.length).toBeGreaterThan(0);
      else expect(after).toEqual([]);
      await c.close();
    }
  });

  it.each([
    ['going-away', 1001, ''],
    ['app-4000', 4000, 'idle'],
    ['no-status', 1005, ''],
  ] as const)('closes an idle connection %s (code %i, reason %j)', async (idleClose, code, reason) => {
    const s = await serve({ stream: { idleClose } }, { pingTimeoutMs: 300 });
    const c = await open(s);
    const closed = await c.waitClosed();
    expect([closed.code, closed.reason]).toEqual([code, reason]);
  });

  it('closes a connection that sends more messages per second than the dialect allows (1008)', async () => {
    const s = await serve({ stream: { maxMessagesPerSecond: 20 } });
    // Each burst is written at once, so it lands within one second whatever the load.
    const within = await open(s);
    for (let i = 0; i < 20; i++) within.send({ method: 'ping' });
    await pongs(within, 20);
    expect(within.closed).toBeUndefined();
    await within.close();
    const over = await open(s);
    for (let i = 0; i < 21; i++) over.send({ method: 'ping' });
    expect((await over.waitClosed()).code).toBe(1008);
  });

  it('accepts a connection without a valid key, tells it 50005, closes it when keys are checked after', async () => {
    const s = await serve({ stream: { unauthorized: 'after-connect' } });
    for (const keyless of [null, 'unknown']) {
      const r = await connect(s, keyless);
      expect(r.ok).toBe(true);
      if (!r.ok) continue;
      const n = await r.client.notice();
      expect([n.method, n.code]).toEqual(['error', STATUS.UNAUTHORIZED]);
      expect(n).not.toHaveProperty('status_number');
      expect((await r.client.waitClosed()).code).toBe(1008);
    }
    // Refusals the spec places in the handshake stay there.
    const suspended = await connect(s, 'suspended');
    expect(suspended.ok).toBe(false);
  });
});

/** Waits for `n` Pong! replies. */
async function pongs(c: Client, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await c.next((f) => f.text === 'Pong!');
}

describe('dialect quiet pairs', () => {
  it('moves a quiet pair at most once every QUIET_PAIR_MS while the others move every step', () => {
    const book = new PriceBook(DEFAULT_PAIRS.slice(0, 6), 3, 0, 'even-spread', true);
    const moves = new Map<string, number[]>();
    for (let t = 100; t <= 10_000; t += 100)
      for (const code of book.step(t, 1, () => true)) moves.set(code, [...(moves.get(code) ?? []), t]);
    const quiet = DEFAULT_PAIRS[2]!.code;
    const times = moves.get(quiet)!;
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(QUIET_PAIR_MS);
    expect(moves.get(DEFAULT_PAIRS[0]!.code)!.length).toBeGreaterThan(50);
  });
});

describe('dialect Socket.IO', () => {
  // The client the runner picks from the profile: transport, event and namespace come from there.
  const client = (s: ReferenceServer) =>
    streamFactoryFor(s.profile)({
      url: s.profile.ws!,
      primaryKey: s.profile.keys.primary.key,
      record: () => undefined,
    });

  it("serves the stream on the dialect's event and namespace, messages as JSON text, both in the profile", async () => {
    const s = await serve(
      { socketio: { event: 'prices', namespace: '/v1', payload: 'json-text' } },
      { transport: 'socketio' },
    );
    expect([s.profile.event, s.profile.namespace]).toEqual(['prices', '/v1']);
    expect(parseProfile(JSON.parse(JSON.stringify(s.profile))).namespace).toBe('/v1');
    const r = await client(s).open();
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const notice = await r.session.request({ id: 'a', method: 'subscribe', params: { pairs: [BTC] } });
    expect(notice.code).toBe(STATUS.OK);
    await r.session.find((f) => f.kind === 'json' && (f.value as Record<string, unknown>).code === BTC);
    await r.session.close();
    // On the wire every message is a string payload of the event, on the namespace.
    const raw = io(`${s.socketIoUrl!.replace(/^ws:/, 'http:').replace(/\/socket\.io\/$/, '')}/v1`, {
      path: '/socket.io/',
      forceNew: true,
      reconnection: false,
      transports: ['websocket'],
      extraHeaders: { 'X-API-Key': s.profile.keys.primary.key },
    });
    try {
      const payloads: unknown[] = [];
      const got = new Promise<void>((resolve) =>
        raw.on('prices', (p: unknown) => {
          payloads.push(p);
          if (payloads.length === 2) resolve();
        }),
      );
      raw.on('connect', () => raw.emit('prices', { method: 'subscribe', params: { pairs: [BTC] } }));
      await got;
      for (const p of payloads) expect(typeof p).toBe('string');
      expect(JSON.parse(payloads[0] as string)).toMatchObject({ method: 'subscribe', code: STATUS.OK });
      expect(JSON.parse(payloads[1] as string)).toMatchObject({ code: BTC });
    } finally {
      raw.disconnect();
    }
  });

  it('refuses in the namespace when the dialect says so: a CONNECT_ERROR with {status_number, message}', async () => {
    const s = await serve(
      { keys: { primary: 1 }, socketio: { refusals: 'connect-error', namespace: '/prices' } },
      { transport: 'socketio' },
    );
    const c = client(s);
    const refused = await c.open({ key: s.profile.keys.suspended!.key });
    expect(refused).toMatchObject({
      ok: false,
      json: { status_number: STATUS.SUSPENDED, message: expect.any(String) },
    });
    const one = await c.open();
    expect(one.ok).toBe(true);
    const two = await c.open();
    expect(two).toMatchObject({ ok: false, json: { status_number: STATUS.CONNECTION_LIMIT } });
    if (one.ok) await one.session.close();
    // Under the default, the same refusal comes in the HTTP phase.
    const http = await serve({}, { transport: 'socketio' });
    expect(await client(http).open({ key: http.profile.keys.suspended!.key })).toMatchObject({
      ok: false,
      status: 403,
    });
  });
});

describe('every covering dialect', () => {
  it.each(coveringSeeds())(
    'seed %i: starts, writes a valid profile, answers REST, a subscribe and a refusal over both transports',
    async (seed) => {
      const s = await startReferenceServer({ dialect: drawDialect(seed), transport: 'socketio', pingTimeoutMs: 5000 });
      servers.push(s);
      const profile = parseProfile(JSON.parse(JSON.stringify(s.profile)));
      expect((await get(s, PATHS.pairs)).body.status_number).toBe(STATUS.OK);
      const code = profile.pairs!.sample![0]!;
      expect((await get(s, `${PATHS.price}${q({ code })}`)).body.status_number).toBe(STATUS.OK);
      const c = await open(s);
      expect((await subscribe(c, [code])).code).toBe(STATUS.OK);
      await c.close();
      const refused = await connect(s, 'suspended');
      expect(refused.ok).toBe(false);
      const io = streamFactoryFor(profile)({
        url: profile.ws!,
        primaryKey: profile.keys.primary.key,
        record: () => undefined,
      });
      // The raw connection's slot may stay taken for the dialect's slotReleaseMs (a one-connection key waits for it).
      const deadline = Date.now() + s.dialect.keys.slotReleaseMs + 3000;
      let r = await io.open();
      while (!r.ok && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        r = await io.open();
      }
      expect(r.ok).toBe(true);
      if (r.ok) {
        expect((await r.session.request({ id: 'a', method: 'subscribe', params: { pairs: [code] } })).code).toBe(
          STATUS.OK,
        );
        await r.session.close();
      }
      expect(await io.open({ key: profile.keys.suspended!.key })).toMatchObject({
        ok: false,
        json: { status_number: STATUS.SUSPENDED },
      });
    },
  );
});

// Pairs and pushes a check may not take for granted.
describe('dialect pairs a check may not take for granted', () => {
  const ETH = 'Crypto:ALL:ETH/USD';
  const XRP = 'Crypto:ALL:XRP/USD';

  it('lists suspended pairs that a subscribe refuses with 50104 and REST refuses too (suspendedListed)', async () => {
    const s = await serve({ stream: { suspendedListed: true } });
    const listed = (await get(s, `${PATHS.pairs}${q({ per_page: '100' })}`)).body.data as { code: string }[];
    expect(listed.map((p) => p.code)).toContain(ETH);
    const c = await open(s);
    expect(await subscribe(c, [BTC], 's1')).toMatchObject({ code: STATUS.OK });
    // No listed pair the stream refuses is priced as active on REST.
    let refused = 0;
    for (const [i, { code }] of listed.entries()) {
      if ((await subscribe(c, [code], `r${i}`)).code !== STATUS.PAIR_NOT_FOUND) continue;
      refused++;
      const rest = await get(s, `${PATHS.price}${q({ code })}`);
      expect([code, rest.body.status_number]).toEqual([code, STATUS.PAIR_UNAVAILABLE]);
    }
    expect(refused).toBeGreaterThan(5);
    await c.close();
  });

  it('refuses an over-long subscribe for the suspended pair it names (subscribeErrors: pairs-first)', async () => {
    const s = await serve({
      stream: { suspendedListed: true, subscribeErrors: 'pairs-first' },
      rest: { catalogueSize: 250 },
    });
    const codes = [
      ...((await get(s, `${PATHS.pairs}${q({ per_page: '100' })}`)).body.data as { code: string }[]),
      ...((await get(s, `${PATHS.pairs}${q({ per_page: '100', page: '2' })}`)).body.data as { code: string }[]),
    ].map((p) => p.code);
    const c = await open(s);
    expect(await subscribe(c, codes.slice(0, 101))).toMatchObject({
      code: STATUS.PAIR_NOT_FOUND,
      message: `pair not found: ${ETH}`,
    });
    await c.close();
  });

  it('pushes a dropped pair for stopLagMs after the notice, then stops (stopLagMs)', async () => {
    const s = await serve({ stream: { stopLagMs: 600, tickMs: 50 } });
    const c = await open(s);
    await subscribe(c, [BTC]);
    await c.pushesFor(200);
    c.send({ id: 'u', method: 'unsubscribe', params: { pairs: [BTC] } });
    expect((await c.notice()).code).toBe(STATUS.OK);
    const lagged = (await c.pushesFor(450)).filter((p) => p.code === BTC);
    await c.pushesFor(300);
    const after = (await c.pushesFor(400)).filter((p) => p.code === BTC);
    expect([lagged.length > 3, after.length]).toEqual([true, 0]);
    await c.close();
  });

  it('a pair dropped earlier lags from its own drop, not from a later request (stopLagMs)', async () => {
    const s = await serve({ stream: { stopLagMs: 600, tickMs: 50 } });
    const c = await open(s);
    const ETH = 'Crypto:ALL:ETH/USD';
    await subscribe(c, [BTC, ETH]);
    await c.pushesFor(200);
    await subscribe(c, [ETH], 's2');
    // Another request while BTC still lags: its stop stays 600 ms after its own drop.
    await c.pushesFor(300);
    c.send({ id: 'u', method: 'unsubscribe', params: { pairs: [ETH] } });
    expect((await c.notice()).code).toBe(STATUS.OK);
    await c.pushesFor(450);
    const after = (await c.pushesFor(300)).filter((p) => p.code === BTC);
    expect(after.length).toBe(0);
    await c.close();
  });

  it('never moves a still pair while the others move every step (stillPairs)', async () => {
    const s = await serve({ stream: { stillPairs: true, pushes: 'on-change' } });
    const c = await open(s);
    await subscribe(c, ['Crypto:ALL:SOL/USD', BTC]);
    const codes = (await c.pushesFor(600)).map((p) => p.code);
    expect(codes).toContain(BTC);
    expect(codes).not.toContain('Crypto:ALL:SOL/USD');
    await c.close();
  });

  it('pushes a dropped pair for stopLagTicks more ticks after the unsubscribe notice, then stops', async () => {
    const s = await serve({ stream: { stopLagTicks: 2, tickMs: 100 } });
    const c = await open(s);
    await subscribe(c, [BTC]);
    await c.pushesFor(250);
    c.send({ id: 'u', method: 'unsubscribe', params: { pairs: [BTC] } });
    expect((await c.notice()).code).toBe(STATUS.OK);
    const after = await c.pushesFor(800);
    expect(after.filter((p) => p.code === BTC).length).toBe(2);
    await c.close();
  });

  it('answers every second price read of a delayed pair with 50102 and prices 2 % up (delayedPrices)', async () => {
    const s = await serve({ rest: { delayedPrices: true } });
    const [live, delayed] = [
      await get(s, `${PATHS.price}${q({ code: XRP })}`),
      await get(s, `${PATHS.price}${q({ code: XRP })}`),
    ];
    expect(live.status).toBe(200);
    expect(live.body.status_number).toBe(STATUS.OK);
    expect(delayed.status).toBe(200);
    expect(delayed.body.status_number).toBe(STATUS.PRICE_STALE);
    const price = (r: typeof live): Decimal => new Decimal((r.body.data as { price: string }).price);
    expect(price(delayed).dividedBy(price(live)).toNumber()).toBeGreaterThan(1.015);
    const d = delayed.body.data as { ask: string; bid: string; price: string };
    expect(new Decimal(d.ask).plus(d.bid).dividedBy(2).eq(d.price)).toBe(true);
  });
});

describe('dialect readings a strict harness rejected', () => {
  const AAPL = 'Equity:US:AAPL/USD';
  const EURUSD = 'Forex:ALL:EUR/USD';
  const market = async (s: ReferenceServer, code: string): Promise<Record<string, unknown>> =>
    ((await get(s, `${PATHS.price}${q({ code })}`)).body.data as { market: Record<string, unknown> }).market;

  it('closes a connection without a ping as late as 1.4 windows (idleCloseWindows)', async () => {
    const s = await serve({ stream: { idleCloseWindows: 1.4 } }, { pingTimeoutMs: 1000 });
    // Taken before the handshake: the server's window starts once it accepts, never before this.
    const opened = Date.now();
    const c = await open(s);
    while (!c.closed && Date.now() - opened < 3000) await new Promise((r) => setTimeout(r, 20));
    expect(c.closed!.at - opened).toBeGreaterThanOrEqual(1350);
    expect(s.profile.timing?.pingGraceMs).toBeGreaterThanOrEqual(400);
  });

  it('reports the tz database links of its zones (zoneNames: links)', async () => {
    const s = await serve({ rest: { zoneNames: 'links' } });
    expect((await market(s, AAPL)).timezone).toBe('US/Eastern');
    expect((await market(s, 'Commodity:ALL:WTI/USD')).timezone).toBe('US/Central');
  });

  it.each(['tick', 'weighted'] as const)('prices a mid of its own within the spread (mid: %s)', async (mid) => {
    const s = await serve({ numbers: { mid } });
    const d = (await get(s, `${PATHS.price}${q({ code: BTC })}`)).body.data as Record<string, string>;
    const [ask, bid, price] = [d.ask!, d.bid!, d.price!].map((v) => new Decimal(v)) as [Decimal, Decimal, Decimal];
    expect(bid.lte(price) && price.lte(ask)).toBe(true);
    expect(price.eq(ask.plus(bid).dividedBy(2))).toBe(false);
  });

  it('labels US equities by their exchange, extended hours kept (equityMarkets: exchanges)', async () => {
    const s = await startReferenceServer({
      dialect: { rest: { equityMarkets: 'exchanges' } },
      clock: () => Date.parse('2026-11-30T10:00:00Z'),
    });
    servers.push(s);
    expect((await market(s, 'Equity:NASDAQ:MSFT/USD')).reason).toBe('pre_session');
    expect((await market(s, AAPL)).reason).toBe('pre_session');
  });

  it('lists codes with a space or a slash in the base, and prices them (codeSpelling: spaced)', async () => {
    const s = await serve({ rest: { codeSpelling: 'spaced' } });
    for (const code of ['Commodity:ALL:Crude Oil/USD', 'Equity:US:BF/B/USD']) {
      const found = (await get(s, `${PATHS.pairs}${q({ code })}`)).body.data as { code: string; base: string }[];
      expect(found.map((p) => [p.code, p.base])).toEqual([
        [code, code.split(':')[2]!.split('/').slice(0, -1).join('/')],
      ]);
      expect((await get(s, `${PATHS.price}${q({ code })}`)).body.status_number).toBe(STATUS.OK);
    }
  });

  it('finds by name as well as by code (codeSearch: code-or-name)', async () => {
    const s = await serve({ rest: { codeSearch: 'code-or-name' } });
    const found = (await get(s, `${PATHS.pairs}${q({ code: 'BTC', per_page: '100' })}`)).body.data as {
      code: string;
    }[];
    expect(found.map((p) => p.code)).toContain('Equity:US:MSTR/USD');
  });

  it('answers a closed market 50102 without data on HTTP 503, or with data on 200 (closedMarket)', async () => {
    const saturday = () => Date.parse('2026-11-28T15:00:00Z');
    const bare = await startReferenceServer({ dialect: { rest: { closedMarket: '50102-no-data' } }, clock: saturday });
    const filled = await startReferenceServer({ dialect: { rest: { closedMarket: '50102' } }, clock: saturday });
    servers.push(bare, filled);
    const r = await get(bare, `${PATHS.price}${q({ code: EURUSD })}`);
    expect([r.status, r.body.status_number, r.body.data]).toEqual([503, STATUS.PRICE_STALE, null]);
    const f = await get(filled, `${PATHS.price}${q({ code: EURUSD })}`);
    expect([f.status, f.body.status_number, (f.body.data as { market: { reason: string } }).market.reason]).toEqual([
      200,
      STATUS.PRICE_STALE,
      'market_closed',
    ]);
    expect((await get(bare, `${PATHS.price}${q({ code: BTC })}`)).body.status_number).toBe(STATUS.OK);
  });

  it('limits requests without a valid key per address before it answers 401 (keylessLimit)', async () => {
    const s = await serve({ rest: { keylessLimit: { requests: 2, windowMs: 60_000 } } });
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      const r = await get(s, PATHS.pairs, null);
      statuses.push([r.status, r.body.status_number]);
    }
    expect(statuses).toEqual([
      [401, STATUS.UNAUTHORIZED],
      [401, STATUS.UNAUTHORIZED],
      [429, STATUS.RATE_LIMITED],
    ]);
    expect((await get(s, PATHS.pairs)).body.status_number).toBe(STATUS.OK);
  });
});
