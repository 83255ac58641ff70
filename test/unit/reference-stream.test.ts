import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { LIMITS, PATHS, STATUS, TEXT, pairNotFoundMessage } from '../../src/spec.ts';
import { connect, get, open, q, subscribe, type Client } from '../helpers/reference.ts';

const WINDOW = 1500;
let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer({ tickMs: 50, pingTimeoutMs: WINDOW });
});
afterAll(() => server.close());

const BTC = 'Crypto:ALL:BTC/USD';
const ETH = 'Crypto:ALL:ETH/USD';
const EUR = 'Forex:ALL:EUR/USD';

async function activeCodes(n: number): Promise<string[]> {
  const codes: string[] = [];
  for (let page = 1; codes.length < n; page++) {
    const r = await get(server, `${PATHS.pairs}${q({ page: String(page), per_page: '100' })}`);
    const data = r.body.data as { code: string }[];
    if (data.length === 0) break;
    codes.push(...data.map((d) => d.code).filter((c) => c !== server.profile.pairs!.stale));
  }
  return codes.slice(0, n);
}

/** Retries `fn` until it returns true, for server-side effects of a close that race the client. */
async function eventually(fn: () => Promise<boolean>, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('reference stream: handshake', () => {
  it('refuses bad keys (absent, unknown, stream-less, suspended, maintenance): status_number and message', async () => {
    const cases: [string | null, string, number][] = [
      [null, STATUS.UNAUTHORIZED, 401],
      ['unknown', STATUS.UNAUTHORIZED, 401],
      ['noStream', STATUS.ACCESS_DENIED, 403],
      ['suspended', STATUS.SUSPENDED, 403],
      ['streamMaintenance', STATUS.WS_MAINTENANCE, 503],
    ];
    for (const [key, status, http] of cases) {
      const r = await connect(server, key);
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect([key, r.status, r.body.status_number]).toEqual([key, http, status]);
      expect(Object.keys(r.body).sort()).toEqual(['message', 'status_number']);
      expect(typeof r.body.message).toBe('string');
    }
  });

  it('refuses a connection to another path with 50008', async () => {
    const r = await connect(server, 'primary', { url: server.wsUrl.replace('/v1/ws', '/v1/other') });
    expect(r.ok ? 'open' : r.body.status_number).toBe(STATUS.NOT_FOUND);
  });

  it('counts the allowance per key across source addresses and frees a slot on close', async () => {
    const first = await open(server, 'limited');
    const again = await connect(server, 'limited');
    const fromOther = await connect(server, 'limited', { localAddress: '127.0.0.2' });
    expect([again.ok, fromOther.ok]).toEqual([false, false]);
    if (!again.ok) expect([again.status, again.body.status_number]).toEqual([429, STATUS.CONNECTION_LIMIT]);
    if (!fromOther.ok) expect(fromOther.body.status_number).toBe(STATUS.CONNECTION_LIMIT);
    await first.close();
    let next: Client | undefined;
    await eventually(async () => {
      const r = await connect(server, 'limited', { localAddress: '127.0.0.2' });
      if (r.ok) next = r.client;
      return r.ok;
    });
    await next!.close();
  });

  it('allows the primary key exactly its three connections', async () => {
    const allowance = server.profile.keys.primary.connections!;
    const clients = await Promise.all(Array.from({ length: allowance }, () => open(server)));
    const extra = await connect(server);
    expect(extra.ok ? 'open' : extra.body.status_number).toBe(STATUS.CONNECTION_LIMIT);
    await Promise.all(clients.map((c) => c.close()));
  });
});

describe('reference stream: subscribe, pushes, unsubscribe', () => {
  let c: Client;
  let keepAlive: NodeJS.Timeout;
  beforeAll(async () => {
    c = await open(server, 'secondary');
    keepAlive = setInterval(() => c.send({ method: 'ping' }), WINDOW / 3);
  });
  afterAll(() => {
    clearInterval(keepAlive);
    return c.close();
  });

  it('answers subscribe with the exact success notice and pushes without further requests', async () => {
    expect(await subscribe(c, [BTC, EUR], 'abc')).toEqual({
      method: 'subscribe',
      message: TEXT.subscribeSuccess,
      code: STATUS.OK,
      id: 'abc',
      data: null,
    });
    const push = (await c.next((f) => f.json?.code === BTC)).json!;
    expect(Object.keys(push)).toEqual(['code', 'ask', 'bid', 'price', 'last_updated', 'sent_at']);
    const [ask, bid, price] = [push.ask, push.bid, push.price].map((v) => new Decimal(v as string));
    expect(ask!.gt(bid!) && ask!.plus(bid!).dividedBy(2).eq(price!)).toBe(true);
    expect(Number.isInteger(push.last_updated) && Number.isInteger(push.sent_at)).toBe(true);
  });

  it('pushes only subscribed pairs, and a second subscribe replaces the set', async () => {
    await subscribe(c, [BTC, EUR]);
    let codes = new Set((await c.pushesFor(300)).map((p) => p.code));
    expect(codes).toEqual(new Set([BTC, EUR]));
    await subscribe(c, [ETH]);
    await c.pushesFor(60);
    codes = new Set((await c.pushesFor(300)).map((p) => p.code));
    expect(codes).toEqual(new Set([ETH]));
  });

  it('changes last_updated only when the price changes, and never sends status_number', async () => {
    await subscribe(c, [BTC]);
    const pushes = await c.pushesFor(1500);
    expect(pushes.length).toBeGreaterThan(10);
    let changes = 0;
    for (let i = 1; i < pushes.length; i++) {
      const [a, b] = [pushes[i - 1]!, pushes[i]!];
      if (a.price === b.price && a.ask === b.ask) expect(b.last_updated).toBe(a.last_updated);
      else {
        changes++;
        expect(b.last_updated as number).toBeGreaterThan(a.last_updated as number);
      }
      expect(b.sent_at as number).toBeGreaterThanOrEqual(b.last_updated as number);
      expect(b).not.toHaveProperty('status_number');
    }
    expect(changes).toBeGreaterThan(0);
  });

  it('accepts exactly 100 distinct pairs and refuses 101 with 50004, keeping the previous set', async () => {
    const codes = await activeCodes(LIMITS.maxPairsPerSubscribe + 1);
    expect(codes.length).toBe(LIMITS.maxPairsPerSubscribe + 1);
    expect((await subscribe(c, codes.slice(0, 100), 'hundred')).code).toBe(STATUS.OK);
    expect(await subscribe(c, codes, 'too-many')).toMatchObject({
      method: 'error',
      code: STATUS.INVALID_REQUEST,
      id: 'too-many',
      data: null,
    });
    await c.pushesFor(60);
    expect(new Set((await c.pushesFor(200)).map((p) => p.code)).size).toBe(100);
  });

  it('refuses empty, missing and non-array pairs, malformed JSON and unknown methods with 50004', async () => {
    const bad: unknown[] = [
      { id: 'e1', method: 'subscribe', params: { pairs: [] } },
      { id: 'e2', method: 'subscribe' },
      { id: 'e3', method: 'subscribe', params: { pairs: BTC } },
      { id: 'e4', method: 'subscribe', params: { pairs: [1, 2] } },
      { id: 'e5', method: 'launch' },
      { id: 'e6' },
    ];
    for (const msg of bad) {
      c.send(msg);
      expect(await c.notice()).toMatchObject({
        method: 'error',
        code: STATUS.INVALID_REQUEST,
        id: (msg as { id: string }).id,
        data: null,
      });
    }
    for (const raw of ['{not json', '[1,2]', '"text"', 'null']) {
      c.send(raw);
      expect(await c.notice()).toMatchObject({ method: 'error', code: STATUS.INVALID_REQUEST });
    }
  });

  it('refuses an unknown and an inactive pair with 50104 and the documented message', async () => {
    expect(await subscribe(c, [BTC, 'Crypto:ALL:NOPE/USD'], 'u1')).toEqual({
      method: 'error',
      message: pairNotFoundMessage('Crypto:ALL:NOPE/USD'),
      code: STATUS.PAIR_NOT_FOUND,
      id: 'u1',
      data: null,
    });
    const inactive = server.profile.pairs!.inactive!;
    expect(await subscribe(c, [inactive], 'u2')).toMatchObject({
      message: pairNotFoundMessage(inactive),
      code: STATUS.PAIR_NOT_FOUND,
    });
  });

  it('answers unsubscribe with the success notice, stops those pushes and keeps the others', async () => {
    await subscribe(c, [BTC, ETH]);
    c.send({ id: 'un', method: 'unsubscribe', params: { pairs: [BTC] } });
    expect(await c.notice()).toEqual({
      method: 'unsubscribe',
      message: TEXT.unsubscribeSuccess,
      code: STATUS.OK,
      id: 'un',
      data: null,
    });
    await c.pushesFor(60);
    expect(new Set((await c.pushesFor(300)).map((p) => p.code))).toEqual(new Set([ETH]));
  });

  it('answers ping with the plain text Pong!, with or without id and params', async () => {
    for (const msg of [{ method: 'ping' }, { id: 'p1', method: 'ping' }, { id: 'p2', method: 'ping', params: {} }]) {
      c.send(msg);
      expect((await c.next((f) => f.json === undefined)).text).toBe(TEXT.pong);
    }
  });
});

describe('reference stream: entitlements after connect', () => {
  it('refuses pairs outside a whitelist with 50010 and other asset types with 50109', async () => {
    const wl = await open(server, 'whitelisted');
    expect(await subscribe(wl, [server.profile.keys.whitelisted!.pairs[0]!])).toMatchObject({ code: STATUS.OK });
    expect(await subscribe(wl, [ETH], 'w')).toMatchObject({ method: 'error', code: STATUS.ACCESS_DENIED, id: 'w' });
    await wl.close();
    const co = await open(server, 'cryptoOnly');
    expect(await subscribe(co, ['Equity:US:AAPL/USD'], 'a')).toMatchObject({
      method: 'error',
      code: STATUS.ASSET_TYPE_DENIED,
      id: 'a',
    });
    expect(await subscribe(co, [BTC])).toMatchObject({ code: STATUS.OK });
    await co.close();
  });
});

describe('reference stream: keep-alive', () => {
  it('closes a connection that sends no ping within the window, not before', async () => {
    const c = await open(server, 'secondary');
    const opened = Date.now();
    const closed = await c.waitClosed(WINDOW + 4000);
    expect(closed.at - opened).toBeGreaterThanOrEqual(WINDOW - 20);
    // Slack for a loaded shared machine; a server that never closes still fails.
    expect(closed.at - opened).toBeLessThan(WINDOW + 2000);
  });

  it('keeps a connection open while pings arrive every third of the window, even without other traffic', async () => {
    const c = await open(server, 'secondary');
    const timer = setInterval(() => c.send({ method: 'ping' }), WINDOW / 3);
    await new Promise((r) => setTimeout(r, WINDOW * 2.5));
    clearInterval(timer);
    expect(c.closed).toBeUndefined();
    await c.close();
  });

  it('does not count other messages as a ping', async () => {
    const c = await open(server, 'secondary');
    const opened = Date.now();
    const timer = setInterval(() => c.send({ method: 'subscribe', params: { pairs: [BTC] } }), WINDOW / 3);
    const closed = await c.waitClosed(WINDOW + 4000);
    clearInterval(timer);
    // Slack for a loaded shared machine; a server that never closes still fails.
    expect(closed.at - opened).toBeLessThan(WINDOW + 2000);
  });
});

describe('reference stream: per-frame fan-out baseline', () => {
  it("delivers each push as a text frame of one object, fields in the batched fan-out's order", async () => {
    /** The field lists of the first BTC and EUR pushes, each frame parsed on its own. */
    const shapes = async (fanOut: 'per-frame' | 'batched'): Promise<{ keys: string[][]; framesWritten: number }> => {
      const s = await startReferenceServer({ tickMs: 50, config: { fanOut } });
      try {
        const c = await open(s);
        await subscribe(c, [BTC, EUR]);
        const frames = [await c.next((f) => f.json?.code === BTC), await c.next((f) => f.json?.code === EUR)];
        await c.close();
        return {
          keys: frames.map((f) => Object.keys(JSON.parse(f.text) as object)),
          framesWritten: s.stats.framesWritten,
        };
      } finally {
        await s.close();
      }
    };
    const perFrame = await shapes('per-frame');
    const batched = await shapes('batched');
    expect(perFrame.keys[0]).toEqual(['code', 'ask', 'bid', 'price', 'last_updated', 'sent_at']);
    expect(perFrame.keys).toEqual(batched.keys);
    expect(perFrame.framesWritten).toBeGreaterThanOrEqual(2);
  });
});

describe('reference stream: sent_at', () => {
  it('stamps each write of a tick with the clock as it writes, not the tick start', async () => {
    // A clock one ms further on at every read: two clients of one group are written at different stamps.
    let t = Date.now();
    const s = await startReferenceServer({ tickMs: 50, clock: () => ++t });
    try {
      const a = await open(s, 'primary');
      const b = await open(s, 'secondary');
      await subscribe(a, [BTC]);
      await subscribe(b, [BTC]);
      const [pa, pb] = await Promise.all([a.pushesFor(400), b.pushesFor(400)]);
      await Promise.all([a.close(), b.close()]);
      const stamps = (ps: Record<string, unknown>[]): Set<unknown> => new Set(ps.map((p) => p.sent_at));
      const [sa, sb] = [stamps(pa), stamps(pb)];
      expect(sa.size).toBeGreaterThanOrEqual(3);
      expect(sb.size).toBeGreaterThanOrEqual(3);
      // One stamp per tick would give both clients the same sent_at tick after tick.
      expect([...sa].filter((x) => sb.has(x))).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
