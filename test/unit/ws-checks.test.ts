/**
 * WebSocket checks against small targets on loopback that each behave in one way the reference
 * service does not: the other outcome the spec allows (a 50005 notice after connecting instead of
 * a handshake refusal, a frame still in flight after a replacing subscribe), and rules no
 * reference fault breaks yet. Each target is a few lines of ws code with a one-line comment.
 */
import { waitsFor } from '../../src/timing/index.ts';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { runChecks } from '../../src/runner.ts';
import type { CheckResult } from '../../src/check.ts';
import { parseProfile, type Profile } from '../../src/profile.ts';
import { wsChecks } from '../../suites/ws/index.ts';
import { isPushInspection } from '../../src/push-inspection.ts';

const KEY = 'mini-primary-key-4c1d';
const NO_STREAM = 'mini-no-stream-key-77aa';
const PAIRS = ['Crypto:ALL:AAA/USD', 'Crypto:ALL:BBB/USD', 'Crypto:ALL:CCC/USD'];
const TICK_MS = 40;

type Json = Record<string, unknown>;
interface Conn {
  ws: WebSocket;
  req: IncomingMessage;
  pairs: Set<string>;
  send(v: unknown): void /** Restarts the keep-alive window. */;
  touch(): void;
}
/** How a mini target treats one connection: `refuse` answers the upgrade instead; `message` answers requests. */
interface Behaviour {
  /** Runs as soon as a connection is accepted. */
  open?(conn: Conn): void;
  refuse?(req: IncomingMessage): { status: number; body: string } | undefined;
  message?(conn: Conn, msg: Json | undefined, raw: string): void;
  /** One push per subscribed pair per tick; override to send other frames. */
  push?(conn: Conn, pair: string, n: number): Json | undefined;
  /** Close a silent connection after this long (no ping), ms. */
  pingTimeoutMs?: number;
  /** The REST price of a pair on its `n`-th read (default: the same every time). */
  restQuote?(pair: string, n: number): Json;
}

const quote = (pair: string, n: number): Json => ({
  code: pair,
  ask: '10.02',
  bid: '10.00',
  price: '10.01',
  last_updated: 1_700_000_000_000 + n,
  sent_at: 1_700_000_000_000 + n,
});

/** The well-behaved answers; a behaviour overrides what it breaks. */
function standard(conn: Conn, msg: Json | undefined): void {
  if (!msg) return conn.send({ method: 'error', message: 'malformed', code: '50004', data: null });
  const id = typeof msg.id === 'string' ? { id: msg.id } : {};
  const pairs = (msg.params as { pairs?: unknown } | undefined)?.pairs;
  if (msg.method === 'ping') return conn.ws.send('Pong!');
  if (msg.method !== 'subscribe' && msg.method !== 'unsubscribe')
    return conn.send({ method: 'error', message: 'unknown method', code: '50004', ...id, data: null });
  if (!Array.isArray(pairs) || pairs.length === 0 || pairs.length > 100)
    return conn.send({ method: 'error', message: 'invalid pairs', code: '50004', ...id, data: null });
  const unknown = pairs.find((p) => !PAIRS.includes(p as string));
  if (unknown !== undefined)
    return conn.send({
      method: 'error',
      message: `pair not found: ${String(unknown)}`,
      code: '50104',
      ...id,
      data: null,
    });
  if (msg.method === 'subscribe') {
    conn.pairs = new Set(pairs as string[]);
    return conn.send({ method: 'subscribe', message: 'Success', code: '200', ...id, data: null });
  }
  for (const p of pairs) conn.pairs.delete(p as string);
  conn.send({ method: 'unsubscribe', message: 'success', code: '200', ...id, data: null });
}

const servers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()!();
});

async function miniTarget(b: Behaviour, windowMs = 1000): Promise<Profile> {
  const reads = new Map<string, number>();
  const rest = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (body: unknown): void => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/v1/pairs') {
      const page = Number(url.searchParams.get('page') ?? '1');
      return send({
        status_number: '200',
        ts: Date.now(),
        data:
          page === 1
            ? PAIRS.map((code) => ({ code, name: code, base: code.split(':')[2]!.split('/')[0], quote: 'USD' }))
            : [],
      });
    }
    const code = url.searchParams.get('code') ?? '';
    if (!PAIRS.includes(code))
      return send({ status_number: '50104', ts: Date.now(), data: null, message: 'pair not found' });
    reads.set(code, (reads.get(code) ?? 0) + 1);
    send({
      status_number: '200',
      ts: Date.now(),
      data: {
        ...(b.restQuote ?? quote)(code, b.restQuote ? reads.get(code)! : 0),
        last_updated: undefined,
        sent_at: undefined,
        market: { open: true, reason: 'continuous', session: 'REG' },
      },
    });
  };
  const server = createServer(rest);
  const wss = new WebSocketServer({ noServer: true });
  const conns = new Set<Conn>();
  server.on('upgrade', (req, socket, head) => {
    const refusal = b.refuse?.(req);
    if (refusal) {
      socket.end(
        `HTTP/1.1 ${refusal.status} Refused\r\nContent-Type: application/json\r\nContent-Length: ` +
          `${Buffer.byteLength(refusal.body)}\r\nConnection: close\r\n\r\n${refusal.body}`,
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const windowOf = b.pingTimeoutMs ?? windowMs;
      let idle = setTimeout(() => ws.close(1000, 'ping timeout'), windowOf);
      const touch = (): void => {
        clearTimeout(idle);
        idle = setTimeout(() => ws.close(1000, 'ping timeout'), windowOf);
      };
      const conn: Conn = { ws, req, pairs: new Set(), send: (v) => ws.send(JSON.stringify(v)), touch };
      conns.add(conn);
      b.open?.(conn);
      let n = 0;
      const ticker = setInterval(() => {
        n++;
        for (const pair of conn.pairs) {
          const frame = (b.push ?? ((_c, p, i) => quote(p, i)))(conn, pair, n);
          if (frame) conn.send(frame);
        }
      }, TICK_MS);
      ws.on('message', (data) => {
        const raw = String(data);
        let msg: Json | undefined;
        try {
          msg = JSON.parse(raw) as Json;
        } catch {
          msg = undefined;
        }
        if (msg?.method === 'ping') touch();
        (b.message ?? standard)(conn, msg, raw);
      });
      ws.on('close', () => {
        clearInterval(ticker);
        clearTimeout(idle);
        conns.delete(conn);
      });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(async () => {
    for (const c of conns) c.ws.terminate();
    wss.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  const port = (server.address() as AddressInfo).port;
  return {
    rest: `http://127.0.0.1:${port}`,
    ws: `ws://127.0.0.1:${port}/stream`,
    keys: { primary: { key: KEY }, noStream: { key: NO_STREAM } },
    pairs: { sample: PAIRS },
    // What the mini target's operator knows: it pushes every tick and answers at once.
    timing: { pingTimeoutMs: windowMs, pingGraceMs: 500, pushIntervalMs: TICK_MS, noticeMs: 100 },
  };
}

async function runOne(profile: Profile, id: string): Promise<CheckResult> {
  const checks = wsChecks.filter((c) => c.id === id);
  expect(checks).toHaveLength(1);
  const { results } = await runChecks({ profile, checks, settings: { timeoutMs: 15_000 } });
  return results[0]!;
}

const line = (r: CheckResult): string => `${r.id} ${r.outcome} ${r.reason ?? ''} ${JSON.stringify(r.violations)}`;
const keyOf = (req: IncomingMessage): string | undefined => req.headers['x-api-key'] as string | undefined;

/** Accepts every key, then answers the first request of a connection without a valid key with `code`. */
const acceptsThenNotice = (code: string, forKey: (k: string | undefined) => boolean): Behaviour => ({
  message(conn, msg, raw) {
    if (forKey(keyOf(conn.req)))
      conn.send({
        method: 'error',
        message: 'not allowed',
        code,
        ...(typeof msg?.id === 'string' ? { id: msg.id } : {}),
        data: null,
      });
    else standard(conn, msg && raw ? msg : undefined);
  },
});

describe('handshake checks accept the outcome after connecting', () => {
  it('passes ws.handshake.missing-key and invalid-key when the target accepts, then answers 50005', async () => {
    const profile = await miniTarget(acceptsThenNotice('50005', (k) => k !== KEY && k !== NO_STREAM));
    for (const id of ['ws.handshake.missing-key', 'ws.handshake.invalid-key']) {
      const r = await runOne(profile, id);
      expect(r.outcome, line(r)).toBe('pass');
      expect(r.observations).toContainEqual(expect.objectContaining({ name: 'outcome' }));
    }
  });

  it('passes ws.handshake.missing-key when the target sends the 50005 notice on connect and closes', async () => {
    // Answers a connection without a key before any request, then closes it.
    const profile = await miniTarget({
      open(conn) {
        if (keyOf(conn.req) !== undefined) return;
        conn.send({ method: 'error', message: 'missing key', code: '50005', data: null });
        conn.ws.close(1008, 'unauthorized');
      },
    });
    const r = await runOne(profile, 'ws.handshake.missing-key');
    expect(r.outcome, line(r)).toBe('pass');
  });

  it('passes ws.handshake.no-stream when the noStream key is accepted and answered with 50010', async () => {
    const profile = await miniTarget(acceptsThenNotice('50010', (k) => k === NO_STREAM));
    const r = await runOne(profile, 'ws.handshake.no-stream');
    expect(r.outcome, line(r)).toBe('pass');
  });

  it('fails ws.handshake.missing-key when a connection without a key is served normally', async () => {
    const profile = await miniTarget({});
    const r = await runOne(profile, 'ws.handshake.missing-key');
    expect(r.outcome).toBe('fail');
    expect(r.violations[0]!.received).toMatch(/no key accepted; answered .*"code":"200"/);
  });

  it('fails ws.handshake.missing-key when the refusal body is not JSON', async () => {
    // Refuses a missing key with 401 and a plain-text body.
    const profile = await miniTarget({
      refuse: (req) => (keyOf(req) ? undefined : { status: 401, body: 'Unauthorized' }),
    });
    const r = await runOne(profile, 'ws.handshake.missing-key');
    expect(r.outcome).toBe('fail');
    expect(r.violations[0]!.received).toMatch(/HTTP 401 Unauthorized \(not JSON\)/);
  });

  it('skips ws.handshake.error-body with the reason when the target refuses no handshake', async () => {
    const profile = await miniTarget(acceptsThenNotice('50005', (k) => k !== KEY));
    const r = await runOne(profile, 'ws.handshake.error-body');
    expect(r.outcome).toBe('skip');
    expect(r.reason).toMatch(/refused none/);
  });
});

describe('subscription checks', () => {
  it('passes ws.subscribe.replaces when one push of the old pair was already in flight', async () => {
    // Sends one last push of the replaced pair right after the notice, as a queue would.
    const profile = await miniTarget({
      message(conn, msg, raw) {
        const before = [...conn.pairs];
        standard(conn, msg && raw ? msg : undefined);
        if (msg?.method === 'subscribe') for (const p of before) if (!conn.pairs.has(p)) conn.send(quote(p, 0));
      },
    });
    const r = await runOne(profile, 'ws.subscribe.replaces');
    expect(r.outcome, line(r)).toBe('pass');
  });

  it('judges the notice frame only in part when one kind of notice goes unanswered', async () => {
    // Answers a good subscribe, and nothing else: no error notice to validate.
    const profile = await miniTarget({
      message(conn, msg) {
        const pairs = (msg?.params as { pairs?: unknown } | undefined)?.pairs;
        if (
          msg?.method === 'subscribe' &&
          Array.isArray(pairs) &&
          pairs.length > 0 &&
          pairs.every((p) => PAIRS.includes(p))
        )
          standard(conn, msg);
        else if (msg?.method === 'ping') standard(conn, msg);
      },
    });
    const r = await runOne(profile, 'ws.notice.schema');
    expect(r.outcome, line(r)).toBe('pass');
    expect(r.unjudged?.statements).toEqual(['event:notice-error']);
    expect(r.partly?.reason).toBe('1 of 5 requests answered with a notice');
  });

  it('skips the stop checks when every push was a change and the stopped pair did not move on REST', async () => {
    // Each push a new price, so pushes may come only on change; REST never moves: a stopped pair's
    // silence then proves nothing, however well the target stops it.
    const moving = (_c: Conn, pair: string, n: number): Json => {
      const at = (base: number): string => (base + n / 100).toFixed(2);
      return { ...quote(pair, n), ask: at(10.02), bid: at(10), price: at(10.01) };
    };
    // Side by side, each against a target of its own: both wait out their windows.
    const ids = ['ws.subscribe.replaces', 'ws.unsubscribe.stops'];
    for (const r of await Promise.all(ids.map(async (id) => runOne(await miniTarget({ push: moving }), id)))) {
      expect(r.outcome, line(r)).toBe('skip');
      expect(r.reason).toMatch(/its REST price did not move within \d+ ms either, so its silence does not show/);
    }
  });

  it('judges a kept pair by its moves after the window, not by one it made and pushed within it', async () => {
    // Pushes only on change. Once a request drops a pair, each pair kept moves once, 300 ms later,
    // is pushed with it, and then holds: it owes no push after the window for frames in flight.
    const priced = (pair: string, x: number): Json => ({
      ...quote(pair, 0),
      ask: (10.02 + x).toFixed(2),
      bid: (10 + x).toFixed(2),
      price: (10.01 + x).toFixed(2),
    });
    const onChange = async (): Promise<Profile> => {
      const kept = new Set<string>();
      const pushedAfter = new Set<string>();
      let stopAt = Number.POSITIVE_INFINITY;
      const movedOnce = (): boolean => Date.now() >= stopAt + 300;
      return miniTarget({
        message(conn, msg, raw) {
          const before = [...conn.pairs];
          standard(conn, msg && raw ? msg : undefined);
          if (before.some((p) => !conn.pairs.has(p))) {
            stopAt = Date.now();
            for (const p of before) if (conn.pairs.has(p)) kept.add(p);
          }
        },
        push(_conn, pair, n) {
          if (!kept.has(pair)) return priced(pair, n / 100);
          if (!movedOnce() || pushedAfter.has(pair)) return undefined;
          pushedAfter.add(pair);
          return priced(pair, 0.5);
        },
        restQuote: (pair, n) => (kept.has(pair) ? priced(pair, movedOnce() ? 0.5 : 0) : priced(pair, n / 100)),
      });
    };
    // Side by side, each against a target of its own: every one waits out its windows.
    const ids = ['ws.unsubscribe.stops', 'ws.unsubscribe.stops-several', 'ws.subscribe.replaces'];
    const results = await Promise.all(ids.map(async (id) => runOne(await onChange(), id)));
    const outcomes: Record<string, string> = {};
    for (const r of results) {
      expect(r.violations, line(r)).toEqual([]);
      outcomes[r.id] = r.outcome;
    }
    // The stopped pairs moved on REST and were not pushed: the stop is proven; the kept pair held.
    expect(outcomes).toEqual({
      'ws.unsubscribe.stops': 'skip',
      'ws.unsubscribe.stops-several': 'pass',
      'ws.subscribe.replaces': 'pass',
    });
  });

  it('skips ws.subscribe.replaces when the target closed the connection before the replacing subscribe', async () => {
    // Pushes two ticks after the subscribe, then closes a pinged connection (a keep-alive gone
    // wrong): the replace was never asked, so it is not judged.
    const ticks = new WeakMap<Conn, Set<number>>();
    const profile = await miniTarget({
      push(conn, pair, n) {
        const seen = ticks.get(conn) ?? new Set<number>();
        ticks.set(conn, seen.add(n));
        if (seen.size >= 3) {
          conn.ws.close(1001, 'going away');
          return undefined;
        }
        return quote(pair, n);
      },
    });
    const r = await runOne(profile, 'ws.subscribe.replaces');
    expect({ outcome: r.outcome, violations: r.violations }, line(r)).toEqual({ outcome: 'skip', violations: [] });
    expect(r.reason).toMatch(/^the target closed the connection \(1001, by server\) before the replacing subscribe/);
  });

  it('fails ws.subscribe.replaces when the old pair is pushed again well after the notice', async () => {
    // Pushes the replaced pair once more 1.8 s after the notice: past the 1.5 s a stop may take.
    const profile = await miniTarget({
      message(conn, msg, raw) {
        const before = [...conn.pairs];
        standard(conn, msg && raw ? msg : undefined);
        if (msg?.method === 'subscribe')
          for (const p of before) if (!conn.pairs.has(p)) setTimeout(() => conn.send(quote(p, 0)), 1800);
      },
    });
    const r = await runOne(profile, 'ws.subscribe.replaces');
    expect(r.outcome).toBe('fail');
    expect(r.violations[0]!.received).toMatch(/push\(es\) for Crypto:ALL:AAA\/USD more than 1500 ms after the notice/);
  });

  it('fails ws.subscribe.invalid.missing-params and pairs-not-array when the target accepts them', async () => {
    // Answers any subscribe with success, whatever its params.
    const profile = await miniTarget({
      message(conn, msg, raw) {
        if (msg?.method === 'subscribe')
          conn.send({ method: 'subscribe', message: 'Success', code: '200', data: null });
        else standard(conn, msg && raw ? msg : undefined);
      },
    });
    for (const id of ['ws.subscribe.invalid.missing-params', 'ws.subscribe.invalid.pairs-not-array']) {
      const r = await runOne(profile, id);
      expect(r.outcome, line(r)).toBe('fail');
      expect(r.violations.map((v) => v.expected)).toEqual(['method "error"', 'code "50004"']);
    }
  });

  it('takes the notice that answers the request, not an unrelated one sent before it', async () => {
    // Sends an unrelated notice with code 200 before every answer.
    const profile = await miniTarget({
      message(conn, msg, raw) {
        conn.send({ method: 'status', message: 'noise', code: '200' });
        standard(conn, msg && raw ? msg : undefined);
      },
    });
    for (const id of ['ws.subscribe.notice', 'ws.subscribe.unknown-pair']) {
      const r = await runOne(profile, id);
      expect(r.outcome, line(r)).toBe('pass');
    }
  });

  it('fails ws.frames.no-status-number when only unrelated notices come back', async () => {
    // Never answers a request; floods unrelated notices instead.
    const profile = await miniTarget({
      message(conn) {
        for (let i = 0; i < 50; i++) conn.send({ method: 'flood', message: 'noise', code: '200' });
      },
    });
    const r = await runOne(profile, 'ws.frames.no-status-number');
    expect(r.outcome).toBe('fail');
    // The notice wait comes from the profile's stated reply time.
    const wait = waitsFor(profile).noticeMs;
    expect(r.violations[0]!.received).toMatch(new RegExp(`^no frame within ${wait} ms answering \\{"id":"f1"`));
  });

  it('judges an error code by value in the error checks and leaves its type to ws.notice.schema', async () => {
    // Sends every code as a JSON number.
    const profile = await miniTarget({
      message(conn, msg, raw) {
        const real = conn.send;
        conn.send = (v) => real({ ...(v as Json), code: Number((v as Json).code) });
        standard(conn, msg && raw ? msg : undefined);
        conn.send = real;
      },
    });
    const byId = new Map(
      (
        await runChecks({
          profile,
          checks: wsChecks.filter((c) =>
            ['ws.subscribe.unknown-pair', 'ws.subscribe.pushes-start', 'ws.notice.schema'].includes(c.id),
          ),
        })
      ).results.map((r) => [r.id, r]),
    );
    expect(byId.get('ws.subscribe.unknown-pair')!.outcome, line(byId.get('ws.subscribe.unknown-pair')!)).toBe('pass');
    expect(byId.get('ws.subscribe.pushes-start')!.outcome, line(byId.get('ws.subscribe.pushes-start')!)).toBe('pass');
    expect(byId.get('ws.notice.schema')!.outcome).toBe('fail');
    expect(byId.get('ws.notice.schema')!.violations[0]!.received).toMatch(/\/code: must (equal|be)/);
  });

  it('skips the push rules with a pointer to ws.subscribe.pushes-start when nothing is pushed', async () => {
    const profile = await miniTarget({ push: () => undefined });
    const { results } = await runChecks({
      profile,
      checks: wsChecks.filter((c) =>
        ['ws.push.schema', 'ws.subscribe.replaces', 'ws.subscribe.pushes-start'].includes(c.id),
      ),
    });
    const byId = new Map(results.map((r) => [r.id, r]));
    // This target's prices never move, so its silence proves nothing: pushes may come only on change.
    expect(byId.get('ws.subscribe.pushes-start')!.outcome).toBe('skip');
    expect(byId.get('ws.subscribe.pushes-start')!.reason).toMatch(/did not move/);
    for (const id of ['ws.push.schema', 'ws.subscribe.replaces']) {
      expect(byId.get(id)!.outcome).toBe('skip');
      expect(byId.get(id)!.reason).toMatch(/no push arrived.*ws\.subscribe\.pushes-start/);
    }
  });

  it('fails ws.unsubscribe.notice when the message is "Success" instead of "success"', async () => {
    const profile = await miniTarget({
      message(conn, msg, raw) {
        if (msg?.method === 'unsubscribe')
          conn.send({ method: 'unsubscribe', message: 'Success', code: '200', data: null });
        else standard(conn, msg && raw ? msg : undefined);
      },
    });
    const r = await runOne(profile, 'ws.unsubscribe.notice');
    expect(r.outcome).toBe('fail');
    expect(r.violations).toEqual([expect.objectContaining({ expected: 'message "success"' })]);
  });

  it('fails ws.push.mid when pushes carry a price one tick above the ask', async () => {
    const profile = await miniTarget({ push: (_c, pair, n) => ({ ...quote(pair, n), price: '10.03' }) });
    const r = await runOne(profile, 'ws.push.mid');
    expect(r.outcome).toBe('fail');
    expect(r.violations[0]!.received).toMatch(/price 10.03 > ask 10.02/);
  });

  it("passes ws.push.mid on a mid of the service's own: one tick off the exact mid, within the spread", async () => {
    const profile = await miniTarget({ push: (_c, pair, n) => ({ ...quote(pair, n), price: '10.02' }) });
    const r = await runOne(profile, 'ws.push.mid');
    expect(r.outcome, line(r)).toBe('pass');
    expect(r.observations).toContainEqual(expect.objectContaining({ name: 'mid', value: ['other'] }));
  });

  it('finds nothing to compare in ws.push.mid without decimal prices; the push inspection still fails', async () => {
    // Pushes its pairs with a non-decimal ask, plus a stray pair nobody subscribed to with a price above its ask.
    const profile = await miniTarget({
      push: (_c, pair, n) =>
        n % 2 ? { ...quote(pair, n), ask: 'x' } : { ...quote('Crypto:ALL:ZZZ/USD', n), price: '99' },
    });
    const r = await runOne(profile, 'ws.push.mid');
    expect(r.outcome, line(r)).toBe('fail');
    // Every violation is the engine's inspection of the frames received: the check itself compared none.
    expect(r.violations.every(isPushInspection), line(r)).toBe(true);
    expect(r.violations.map((v) => v.received)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/\/ask: must match format "decimal" \(got "x"\)/),
        expect.stringMatching(/ZZZ.*price 99 > ask 10\.02/),
      ]),
    );
  });

  it('passes ws.push.mid when the mid is rounded either way at the price precision', async () => {
    // ask 10.03, bid 10.00: the exact mid 10.015 is sent as 10.01 or 10.02 in turn.
    const profile = await miniTarget({
      push: (_c, pair, n) => ({ ...quote(pair, n), ask: '10.03', bid: '10.00', price: n % 2 ? '10.01' : '10.02' }),
    });
    const r = await runOne(profile, 'ws.push.mid');
    expect(r.outcome, line(r)).toBe('pass');
  });
});

describe('observations', () => {
  it('records last_updated going back and sent_at before last_updated, without failing', async () => {
    // last_updated counts down; sent_at is one before it.
    const profile = await miniTarget({
      push: (_c, pair, n) => ({
        ...quote(pair, 0),
        last_updated: 1_700_000_001_000 - n,
        sent_at: 1_700_000_000_999 - n,
      }),
    });
    const r = await runOne(profile, 'ws.push.observe-timestamps');
    expect(r.outcome, line(r)).toBe('pass');
    const value = (name: string): unknown => r.observations.find((o) => o.name === name)?.value;
    expect(value('last-updated-monotonic')).toBe(false);
    expect(value('sent-at-not-before-last-updated')).toBe(false);
    expect(value('timestamp-unit')).toEqual(['last_updated:ms', 'sent_at:ms']);
  });

  it('holds a pinged connection for timing.keepAliveHoldWindows windows when the profile sets it', async () => {
    const profile = await miniTarget({}, 1000);
    const hold = (p: Profile): Profile => ({ ...p, timing: { ...p.timing, keepAliveHoldWindows: 1.6 } });
    const held = await runOne(hold(profile), 'ws.keepalive.ping-keeps-alive');
    expect(held.outcome, line(held)).toBe('pass');
    // One ping every window/3 from the open until 1.6 windows: at 0, ⅓, ⅔, 1 and 1⅓ windows.
    expect(held.observations).toContainEqual(
      expect.objectContaining({ name: 'pings-and-pongs', value: expect.objectContaining({ pings: 5 }) }),
    );
    // A target that drops every connection 1.4 windows after it opened, pings or not.
    const dropsEarly = await miniTarget(
      {
        open: (conn) => {
          setTimeout(() => conn.ws.close(1000, 'bye'), 1400);
        },
      },
      1000,
    );
    const cut = await runOne(hold(dropsEarly), 'ws.keepalive.ping-keeps-alive');
    expect(cut.outcome, line(cut)).toBe('fail');
    expect(JSON.stringify(cut.violations)).toContain('open for at least 1.6 × 1000 ms while pinging');
  });

  it('refuses a profile whose hold would not outlast the window and its grace', () => {
    const base = { rest: 'http://127.0.0.1:1', keys: { primary: { key: 'k' } } };
    expect(() =>
      parseProfile({ ...base, timing: { pingTimeoutMs: 1000, pingGraceMs: 500, keepAliveHoldWindows: 1.4 } }),
    ).toThrow(
      'profile: /timing/keepAliveHoldWindows: 1.4 windows (1400 ms) must outlast ' +
        'the window and its grace (1000 + 500 ms)',
    );
    expect(() => parseProfile({ ...base, timing: { keepAliveHoldWindows: 1 } })).toThrow(/keepAliveHoldWindows/);
    // The default grace is half a window: a hold must outlast 1.5 windows.
    expect(() => parseProfile({ ...base, timing: { keepAliveHoldWindows: 1.3 } })).toThrow(/\(30000 \+ 15000 ms\)/);
    expect(parseProfile({ ...base, timing: { keepAliveHoldWindows: 1.6 } }).timing).toEqual({
      keepAliveHoldWindows: 1.6,
    });
  });

  it('records that other traffic keeps a connection alive when the target counts it', async () => {
    // Any message restarts the keep-alive window, not only ping.
    const profile = await miniTarget(
      {
        message(conn, msg, raw) {
          standard(conn, msg && raw ? msg : undefined);
          conn.touch();
        },
      },
      600,
    );
    const r = await runOne(profile, 'ws.keepalive.observe-other-traffic');
    expect(r.outcome, line(r)).toBe('pass');
    expect(r.observations).toContainEqual(expect.objectContaining({ name: 'other-traffic-keeps-alive', value: true }));
  });
});

describe('checks of every pair, every error notice and every header spelling', () => {
  it("skips ws.subscribe.pushes-every-pair, naming the pair, when an unpushed pair's REST price stays", async () => {
    // Never pushes the third pair; its REST price never moves, so it may just be quiet.
    const profile = await miniTarget({ push: (_conn, pair, n) => (pair === PAIRS[2] ? undefined : quote(pair, n)) });
    const r = await runOne(profile, 'ws.subscribe.pushes-every-pair');
    expect({ outcome: r.outcome, violations: r.violations }, line(r)).toEqual({ outcome: 'skip', violations: [] });
    expect(r.reason).toBe(
      `no push for ${PAIRS[2]} and its REST price did not move within the wait, ` +
        `so whether it is pushed cannot be judged`,
    );
  });

  it('skips ws.unsubscribe.stops-several when the target closes the connection under its watch', async () => {
    // A sound unsubscribe, every REST read a new price, and the connection closed soon after: the
    // third pair's silence is the close's, not the unsubscribe's.
    const profile = await miniTarget({
      message(conn, msg, raw) {
        standard(conn, msg && raw ? msg : undefined);
        if (msg?.method === 'unsubscribe') setTimeout(() => conn.ws.close(1000, 'bye'), 100);
      },
      restQuote: (pair, n) => ({ ...quote(pair, 0), ask: `10.${String(n).padStart(2, '0')}` }),
    });
    const r = await runOne(profile, 'ws.unsubscribe.stops-several');
    expect({ outcome: r.outcome, violations: r.violations }, line(r)).toEqual({ outcome: 'skip', violations: [] });
    expect(r.reason).toBe(
      'the target closed the connection (code 1000) before the watch ended: the pushes that stopped with it ' +
        'prove nothing of the unsubscribe',
    );
  });

  it("skips ws.unsubscribe.stops-several when neither unsubscribed pair's REST price moves (no proof)", async () => {
    // Stops every unsubscribed pair, and the third one goes quiet too; the REST prices never move.
    let unsubscribed = false;
    const profile = await miniTarget({
      message(conn, msg, raw) {
        if (msg?.method === 'unsubscribe') unsubscribed = true;
        standard(conn, msg && raw ? msg : undefined);
      },
      push: (_conn, pair, n) => (pair === PAIRS[2] && unsubscribed ? undefined : quote(pair, n)),
    });
    const r = await runOne(profile, 'ws.unsubscribe.stops-several');
    expect({ outcome: r.outcome, violations: r.violations }, line(r)).toEqual({ outcome: 'skip', violations: [] });
    expect(r.reason).toBe(
      `neither ${PAIRS[0]} nor ${PAIRS[1]} moved on REST after the unsubscribe, so ` +
        `whether their pushes stopped cannot be told from quiet`,
    );
    expect(
      r.evidence.some((e) => e.kind === 'note' && e.text.startsWith(`no push for ${PAIRS[2]} after the unsubscribe`)),
    ).toBe(true);
  });

  it('fails ws.notice.error-shape on a target whose 50004 notices carry data and no id', async () => {
    // Every 50004 notice comes without id and with data filled; the rest is standard.
    const profile = await miniTarget({
      message(conn, msg, raw) {
        const real = conn.send;
        conn.send = (v) =>
          real(
            (v as Json).code === '50004'
              ? { method: 'error', message: 'invalid', code: '50004', data: { why: 'x' } }
              : v,
          );
        try {
          standard(conn, msg && raw ? msg : undefined);
        } finally {
          conn.send = real;
        }
      },
    });
    const r = await runOne(profile, 'ws.notice.error-shape');
    expect(r.outcome, line(r)).toBe('fail');
    const received = r.violations.map((v) => v.received);
    expect(received).toContain(
      'the notice answering an unknown method (50004 expected): id absent in ' +
        '{"method":"error","message":"invalid","code":"50004","data":{"why":"x"}}',
    );
    expect(received).toContain(
      'the notice answering malformed JSON (50004 expected): data {"why":"x"} in ' +
        '{"method":"error","message":"invalid","code":"50004","data":{"why":"x"}}',
    );
    expect(received.some((v) => v.startsWith('the notice answering an unknown pair'))).toBe(false);
  });

  it('fails ws.handshake.header-case when a spelling the handshake accepts is refused after connecting', async () => {
    // Upgrades every connection, but only the key sent as X-API-Key exactly authenticates it.
    const canonical = (req: IncomingMessage): boolean =>
      req.rawHeaders.some((h, i) => i % 2 === 0 && h === 'X-API-Key');
    const profile = await miniTarget({
      message: (conn, msg, raw) =>
        canonical(conn.req)
          ? standard(conn, msg && raw ? msg : undefined)
          : conn.send({
              method: 'error',
              message: 'invalid key',
              code: '50005',
              ...(typeof msg?.id === 'string' ? { id: msg.id } : {}),
              data: null,
            }),
    });
    const r = await runOne(profile, 'ws.handshake.header-case');
    expect(r.outcome, line(r)).toBe('fail');
    expect(r.violations.map((v) => v.received.split(':')[0])).toEqual(['key in "X-API-KEY"', 'key in "x-api-key"']);
    expect(r.violations[0]!.received).toContain(
      'accepted, then the subscribe answered {"method":"error","message":"invalid key","code":"50005"',
    );
    const clean = await runOne(await miniTarget({}), 'ws.handshake.header-case');
    expect(clean.outcome, line(clean)).toBe('pass');
  });
});
