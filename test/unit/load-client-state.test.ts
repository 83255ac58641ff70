/**
 * The fan-out worker's measurements fed literal messages, as ws feeds its Receiver literal
 * frames: each message is the text a socket chunk carries, with the time the chunk arrived.
 * No socket and no thread: what a worker counts for each frame is read back from `take()`.
 */
import { describe, expect, it } from 'vitest';
import { ClientState, type StateConfig, type TickCounts } from '../../load/fanout/client-state.ts';
import { decode, summarize, type Percentiles } from '../../load/histogram.ts';
import { NetworkError } from '../../src/errors.ts';
import { frame, OPCODE, textFrame, WireReader } from '../../src/ws-frame.ts';

const PAIR = 'Crypto:ALL:BTC/USDT';
const OTHER = 'Crypto:ALL:ETH/USDT';
/** Local wall ms = mono ms + WALL: mono 1,000 is wall 1,700,000,001,000. */
const WALL = 1_700_000_000_000;

function state(config: Partial<StateConfig> = {}): ClientState {
  return new ClientState(
    {
      clients: [
        { index: 0, key: 'k0', startAtMs: 0 },
        { index: 1, key: 'k1', startAtMs: 0 },
      ],
      pairs: [PAIR, OTHER],
      updateWindowMs: 100,
      validatePerSecond: 0,
      wallOffsetMs: WALL,
      serverOffsetMs: 0,
      msPerUnit: null,
      ...config,
    },
    0,
  );
}

/** A push frame of the spec's example shape; times are wall ms unless given otherwise. */
const push = (fields: Record<string, unknown> = {}): string =>
  JSON.stringify({
    code: PAIR,
    ask: '100.01',
    bid: '99.99',
    price: '100.00',
    last_updated: WALL + 900,
    sent_at: WALL + 990,
    ...fields,
  });

/** Delivers `messages` to client `client` as one chunk that reached the socket at mono `t`. */
function deliver(s: ClientState, client: number, t: number, messages: (string | Buffer)[], clean = true): Buffer {
  const parts = messages.map((m) => (typeof m === 'string' ? Buffer.from(m) : m));
  const chunk = Buffer.concat(parts);
  s.onChunk(chunk, clean);
  let at = 0;
  for (const p of parts) {
    s.onMessage(s.clients[client]!, chunk, at, at + p.length, t);
    at += p.length;
  }
  return chunk;
}

const ms = (encoded: string | null): Percentiles => summarize(decode(encoded!));
/** One value recorded in a histogram: its count is 1 and its max `value`, to HDR's 3 significant digits. */
function one(encoded: string | null, value: number): void {
  const h = ms(encoded);
  expect(h.count).toBe(1);
  expect(h.max).toBeGreaterThanOrEqual(value);
  expect(h.max).toBeLessThanOrEqual(value * 1.001);
}

describe('fan-out worker state: push frames', () => {
  it('counts a push frame, records its latency and server latency, and follows its update', () => {
    const s = state();
    deliver(s, 0, 1000, [push()]);
    const tick = s.take(1000);
    expect(tick.frames).toBe(1);
    expect(tick.sentAtUnit).toBe('ms');
    // Received at wall +1000, sent at +990, last updated at +900.
    one(tick.latency, 10);
    one(tick.serverLatency, 90);
    expect(tick.maxSentMinusReceivedMs).toBe(-10);
    expect(tick.latencyBelowZero).toBeNull();
    // The update is still inside its window: it is not handed over yet.
    expect(tick.updates).toEqual([]);
    // Its window (100 ms from its first receipt) has ended by 1,200.
    expect(s.take(1200).updates).toEqual([[PAIR, WALL + 900, 1000, 1000, 1]]);
  });

  it('puts a second receiver of the same update into its record, which then spans the skew', () => {
    const s = state();
    deliver(s, 0, 1000, [push()]);
    deliver(s, 1, 1035, [push()]);
    const tick = s.take(2000);
    expect(tick.frames).toBe(2);
    expect(tick.duplicates).toBe(0);
    // Only the first receipt per client shows the server's delay, and each client's is one.
    expect(ms(tick.serverLatency).count).toBe(2);
    expect(tick.updates).toEqual([[PAIR, WALL + 900, 1000, 1035, 2]]);
  });

  it('counts a repeat of an update as a duplicate and an older one as out of order', () => {
    const s = state();
    deliver(s, 0, 1000, [push()]);
    deliver(s, 0, 1010, [push({ sent_at: WALL + 1005 })]);
    deliver(s, 0, 1020, [push({ last_updated: WALL + 800, sent_at: WALL + 1015 })]);
    const tick = s.take(1020);
    expect(tick).toMatchObject({ frames: 3, duplicates: 1, outOfOrder: 1 });
    // A repeat shows the update's age, not the server's delay: only the two first receipts count.
    expect(ms(tick.serverLatency).count).toBe(2);
    expect(ms(tick.latency).count).toBe(3);
  });

  it('reads a push frame in any key order, with spaces, as the scanner does in the common one', () => {
    const s = state();
    deliver(s, 0, 1000, [
      `{ "sent_at" : ${WALL + 990}, "price": "1.00", "last_updated": ${WALL + 900}, "code" : "${OTHER}" }`,
    ]);
    const tick = s.take(5000);
    expect(tick.frames).toBe(1);
    one(tick.latency, 10);
    expect(tick.updates).toEqual([[OTHER, WALL + 900, 1000, 1000, 1]]);
  });

  it('counts a frame without sent_at or last_updated but measures nothing of it (the spec requires neither)', () => {
    const s = state();
    deliver(s, 0, 1000, [JSON.stringify({ code: PAIR, ask: '1.01', bid: '0.99', price: '1.00' })]);
    const tick = s.take(5000);
    expect(tick).toMatchObject({ frames: 1, framesWithoutSentAt: 1, updates: [], sentAtUnit: null });
    expect(ms(tick.latency).count).toBe(0);
  });

  it('reads sent_at in seconds when that is the unit that puts it near our clock', () => {
    const s = state();
    // Wall +1000 ms is 1,700,000,001 s; sent a whole second earlier in the server's stamp.
    deliver(s, 0, 1000, [push({ last_updated: 1_700_000_000, sent_at: 1_700_000_000 })]);
    const tick = s.take(1000);
    expect(tick.sentAtUnit).toBe('s');
    one(tick.latency, 1000);
  });

  it('keeps a receipt before sent_at apart, by how much, rather than clamping it to zero', () => {
    const s = state();
    deliver(s, 0, 1000, [push({ sent_at: WALL + 1004 })]);
    const tick = s.take(1000);
    expect(ms(tick.latency).count).toBe(0);
    one(tick.latencyBelowZero, 4);
    expect(tick.maxSentMinusReceivedMs).toBe(4);
  });

  it('corrects latency by the estimated server clock offset', () => {
    // The server's clock runs 500 ms ahead: its sent_at of wall +1490 is our +990.
    const s = state({ serverOffsetMs: 500 });
    deliver(s, 0, 1000, [push({ sent_at: WALL + 1490 })]);
    one(s.take(1000).latency, 10);
  });

  it('counts apart the frames sent inside the shared window, judged on our clock', () => {
    const s = state({ frameWindow: { startWallMs: WALL + 1000, endWallMs: WALL + 2000 } });
    deliver(s, 0, 1500, [push({ last_updated: WALL + 900, sent_at: WALL + 999 })]);
    deliver(s, 0, 1500, [push({ last_updated: WALL + 1000, sent_at: WALL + 1000 })]);
    deliver(s, 0, 2500, [push({ last_updated: WALL + 1999, sent_at: WALL + 1999 })]);
    deliver(s, 0, 2500, [push({ last_updated: WALL + 2000, sent_at: WALL + 2000 })]);
    expect(s.take(3000)).toMatchObject({ frames: 4, windowFrames: 2 });
  });

  it('hands over an update pushed out of a full ring with the next tick, before its window ends', () => {
    const s = state({ updateWindowMs: 60_000 });
    for (let i = 0; i < 257; i++) deliver(s, 0, 1000 + i, [push({ last_updated: WALL + i, sent_at: WALL + 1000 + i })]);
    expect(s.take(2000).updates).toEqual([[PAIR, WALL, 1000, 1000, 1]]);
    expect(s.take(2000, true).updates).toHaveLength(256);
  });

  it('gives a code beyond the pairs subscribed and 64 more a frame count but no update', () => {
    const s = state({ pairs: [] });
    for (let i = 0; i < 65; i++) deliver(s, 0, 1000, [push({ code: `X:ALL:C${i}/USD` })]);
    const tick = s.take(5000);
    expect(tick.frames).toBe(65);
    expect(tick.updates).toHaveLength(64);
  });
});

describe('fan-out worker state: notices and pongs', () => {
  it('counts an error notice as a notice and by its code, and a subscribe it answers as failed', () => {
    const s = state();
    const notice = { method: 'error', message: 'pair not found: X', code: '50104', id: 'c0', data: null };
    deliver(s, 0, 1000, [JSON.stringify(notice)]);
    // Client 1 never sent id c0: its error is counted, its subscribe is not failed by it.
    deliver(s, 1, 1000, [JSON.stringify(notice)]);
    const tick = s.take(1000);
    expect(tick).toMatchObject({ notices: 2, frames: 0, subscribeFailed: 1, noticeErrors: { '50104': 2 } });
  });

  it('takes the success notice as the subscription, once, and times it from the subscribe sent', () => {
    const s = state();
    const client = s.clients[0]!;
    expect(JSON.parse(s.subscribe(client, 900))).toEqual({
      id: 'c0',
      method: 'subscribe',
      params: { pairs: [PAIR, OTHER] },
    });
    const ok = JSON.stringify({ method: 'subscribe', message: 'Success', code: '200', id: 'c0', data: null });
    deliver(s, 0, 950, [ok]);
    deliver(s, 0, 990, [ok]);
    deliver(s, 0, 1000, [push()]);
    const tick = s.take(1000);
    expect(tick).toMatchObject({
      notices: 2,
      subscribed: [[0, 950]],
      clientTimes: { subscribe: [50], first_frame: [100], connect_time: [950 - client.startedAt] },
    });
    // An error after the subscription does not fail it.
    deliver(s, 0, 1100, [JSON.stringify({ method: 'error', code: '50004', id: 'c0', data: null })]);
    expect(s.take(1100)).toMatchObject({ subscribeFailed: 0, noticeErrors: { '50004': 1 } });
  });

  it('counts Pong! as a pong and any other text that is not JSON as a notice', () => {
    const s = state();
    deliver(s, 0, 1000, ['Pong!', 'Pong!!', 'hello']);
    expect(s.take(1000)).toMatchObject({ pongs: 1, notices: 2, violations: 0, frames: 0 });
  });

  it('counts a message that opens like JSON but is not as a violation, with a sample', () => {
    const s = state();
    deliver(s, 0, 1000, ['{"code": ']);
    expect(s.take(1000)).toMatchObject({ violations: 1, violationSamples: ['not JSON: {"code": '] });
  });
});

describe('fan-out worker state: chunks', () => {
  it('reads a chunk of several messages at their own offsets', () => {
    const s = state();
    deliver(s, 0, 1000, [push(), 'Pong!', push({ code: OTHER }), JSON.stringify({ method: 'error', code: '50000' })]);
    const tick = s.take(5000);
    expect(tick).toMatchObject({ frames: 2, pongs: 1, notices: 1 });
    expect(tick.updates.map((u) => u[0]).sort()).toEqual([PAIR, OTHER]);
  });

  it('gives a chunk equal to the last one the same messages, for another client', () => {
    const s = state();
    const messages = [push(), push({ code: OTHER, last_updated: WALL + 950 })];
    deliver(s, 0, 1000, messages);
    deliver(s, 1, 1020, messages);
    const tick = s.take(5000);
    expect(tick).toMatchObject({ frames: 4, duplicates: 0 });
    expect(tick.updates).toEqual([
      [PAIR, WALL + 900, 1000, 1020, 2],
      [OTHER, WALL + 950, 1000, 1020, 2],
    ]);
  });

  it('re-reads a chunk of the same length that differs, rather than taking the last one for it', () => {
    const s = state();
    deliver(s, 0, 1000, [push()]);
    // Same length, a new update: taken for the cached chunk, it would count as a duplicate.
    deliver(s, 0, 1100, [push({ last_updated: WALL + 901, sent_at: WALL + 1091 })]);
    const tick = s.take(5000);
    expect(tick).toMatchObject({ frames: 2, duplicates: 0 });
    expect(tick.updates).toEqual([
      [PAIR, WALL + 900, 1000, 1000, 1],
      [PAIR, WALL + 901, 1100, 1100, 1],
    ]);
  });

  it('re-reads a differing chunk that comes in the memory the last one came in, as a raw socket reads', () => {
    const s = state();
    const shared = Buffer.alloc(1024);
    const send = (client: number, t: number, text: string): void => {
      const n = shared.write(text);
      const chunk = shared.subarray(0, n);
      s.onChunk(chunk, true);
      s.onMessage(s.clients[client]!, chunk, 0, n, t);
    };
    send(0, 1000, push());
    // The same memory, new bytes of the same length: the cache must hold its own copy to tell them apart.
    send(1, 1100, push({ last_updated: WALL + 901, sent_at: WALL + 1091 }));
    const tick = s.take(5000);
    expect(tick.updates).toEqual([
      [PAIR, WALL + 900, 1000, 1000, 1],
      [PAIR, WALL + 901, 1100, 1100, 1],
    ]);
  });

  it('reads a message reassembled from fragments from its own bytes, though its chunk equals the last one', () => {
    const s = state();
    const first = deliver(s, 0, 1000, [push()]);
    // The same bytes again, while the socket was joining a fragmented message (not clean): the
    // message it hands over lies in a buffer of its own, at offset 0 like the cached one.
    s.onChunk(Buffer.from(first), false);
    const whole = Buffer.from(push({ last_updated: WALL + 901, sent_at: WALL + 1091 }));
    s.onMessage(s.clients[0]!, whole, 0, whole.length, 1100);
    // Read from the cache, it would repeat the first update: a duplicate, and the new one missed.
    expect(s.take(5000)).toMatchObject({
      frames: 2,
      duplicates: 0,
      updates: [
        [PAIR, WALL + 900, 1000, 1000, 1],
        [PAIR, WALL + 901, 1100, 1100, 1],
      ],
    });
  });
});

describe('fan-out worker state: sampled validation', () => {
  it('validates every frame against the push-frame schema when asked to, and counts what breaks it', () => {
    const s = state({ validatePerSecond: Number.POSITIVE_INFINITY });
    deliver(s, 0, 1000, [push(), push({ price: 100 }), push({ code: OTHER })]);
    const tick = s.take(1000);
    expect(tick).toMatchObject({ frames: 3, validated: 3, violations: 1 });
    expect(tick.violationSamples).toHaveLength(1);
    expect(tick.violationSamples[0]).toContain('/price');
  });

  it('counts a sampled frame that is not UTF-8 as a violation, and does not count it as a push', () => {
    const s = state({ validatePerSecond: Number.POSITIVE_INFINITY });
    const bad = Buffer.concat([Buffer.from(push().slice(0, -1)), Buffer.from(',"note":"\xff"}', 'latin1')]);
    deliver(s, 0, 1000, [bad]);
    expect(s.take(1000)).toMatchObject({
      frames: 0,
      validated: 1,
      violations: 1,
      violationSamples: ['text frame is not valid UTF-8'],
    });
  });

  it('with validation off, counts a frame without a code as a violation and validates nothing', () => {
    const s = state({ validatePerSecond: 0 });
    deliver(s, 0, 1000, [push({ price: 100 }), JSON.stringify({ price: '1.00' })]);
    const tick = s.take(1000);
    expect(tick).toMatchObject({ frames: 2, validated: 0, violations: 1 });
    expect(tick.violationSamples[0]).toMatch(/^frame without code: /);
  });

  it('keeps five violation samples a tick and counts every violation', () => {
    const s = state({ validatePerSecond: Number.POSITIVE_INFINITY });
    deliver(
      s,
      0,
      1000,
      Array.from({ length: 8 }, () => push({ price: 1 })),
    );
    const tick = s.take(1000);
    expect(tick).toMatchObject({ validated: 8, violations: 8 });
    expect(tick.violationSamples).toHaveLength(5);
    expect(s.take(1000)).toMatchObject({ validated: 0, violations: 0, violationSamples: [] });
  });

  it('adapts the validation stride to the frame rate, to validate about validatePerSecond frames a second', () => {
    // 100 per second wanted; 1,000 frames in the first second make the mean stride 10.
    const s = state({ validatePerSecond: 100 });
    for (let i = 0; i < 1000; i++) deliver(s, 0, i, [push({ last_updated: WALL + i, sent_at: WALL + i })]);
    expect(s.take(1000).validated).toBe(1000);
    for (let i = 0; i < 20_000; i++)
      deliver(s, 0, 1000 + i, [push({ last_updated: WALL + 1000 + i, sent_at: WALL + 1000 + i })]);
    const { validated } = s.take(21_000);
    // A stride drawn uniformly from 1..19 validates 2,000 of 20,000 frames, give or take about 25.
    expect(validated).toBeGreaterThan(1800);
    expect(validated).toBeLessThan(2200);
  });

  it('keeps the stride through a window without frames', () => {
    const s = state({ validatePerSecond: 100 });
    for (let i = 0; i < 1000; i++) deliver(s, 0, i, [push({ last_updated: WALL + i, sent_at: WALL + i })]);
    s.take(1000);
    s.take(2000);
    for (let i = 0; i < 20_000; i++)
      deliver(s, 0, 2000 + i, [push({ last_updated: WALL + 2000 + i, sent_at: WALL + 2000 + i })]);
    expect(s.take(22_000).validated).toBeLessThan(2200);
  });
});

describe('fan-out worker state: connections and ticks', () => {
  it('times a connection from its start, counts it open until it closes, and reports the close code', () => {
    const s = state();
    const [a, b] = s.clients as [(typeof s.clients)[0], (typeof s.clients)[0]];
    a.startedAt = 100;
    b.startedAt = 200;
    s.opened(a, 130);
    s.opened(b, 260);
    expect(s.take(300)).toMatchObject({
      open: 2,
      clientTimes: { connect: [30, 60] },
      openedAt: [130, 260],
      closed: [],
    });
    s.closedAt(a, 400, 1000);
    const later = s.take(500);
    expect(later).toMatchObject({ open: 1, closed: [[0, 400, 1000]] });
    expect(later.clientTimes).toEqual({});
  });

  it('counts a refusal by the status_number of its JSON body, or by its HTTP status, and not again as an error', () => {
    const s = state();
    const [a, b] = s.clients as [(typeof s.clients)[0], (typeof s.clients)[0]];
    s.refused(a, 429, Buffer.from(JSON.stringify({ status_number: '50009', message: 'Connection limit exceeded.' })));
    s.refused(b, 503, Buffer.from('<html>busy</html>'));
    s.connectError(a, new NetworkError('socket hang up', 'ECONNRESET'));
    // A client refused or never opened closes without counting a close.
    s.closedAt(a, 10, 1006);
    expect(s.take(100)).toMatchObject({
      refusals: { '50009': 1, 'http 503': 1 },
      connectErrors: {},
      closed: [],
      open: 0,
    });
  });

  it('counts a connection error by its code, or by its message, only before the connection opened', () => {
    const s = state();
    const [a, b] = s.clients as [(typeof s.clients)[0], (typeof s.clients)[0]];
    s.connectError(a, new NetworkError('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'));
    s.startError(new Error('Invalid URL'));
    s.opened(b, 10);
    s.connectError(b, new NetworkError('protocol error: the server masked a frame', 'EPROTOCOL'));
    expect(s.take(100).connectErrors).toEqual({ ECONNREFUSED: 1, 'Invalid URL': 1 });
  });

  it('starts every per-tick count again after take(), keeping what is not per tick', () => {
    const s = state();
    s.opened(s.clients[0]!, 10);
    deliver(s, 0, 1000, [push(), 'Pong!', '{"method":"error","code":"50000"}', '{x']);
    s.count('tallied');
    s.count('tallied');
    const first: TickCounts = s.take(1000);
    expect(first).toMatchObject({ frames: 1, pongs: 1, notices: 1, violations: 1, open: 1, sentAtUnit: 'ms' });
    const second = s.take(1001);
    expect(first.clientTimes).toEqual({ connect: [10 - s.clients[0]!.startedAt], first_frame: [1000] });
    expect(second.clientTimes).toEqual({});
    expect(first.counts).toEqual({ tallied: 2 });
    expect(second.counts).toEqual({});
    expect(second).toMatchObject({
      frames: 0,
      pongs: 0,
      notices: 0,
      violations: 0,
      duplicates: 0,
      noticeErrors: {},
      open: 1,
      sentAtUnit: 'ms',
      maxSentMinusReceivedMs: Number.NEGATIVE_INFINITY,
    });
    expect(ms(second.latency).count).toBe(0);
  });
});

describe('fan-out worker state behind the frame reader', () => {
  /** A state for one client reading every chunk through a WireReader, as a worker's socket does. */
  function reading(): { s: ClientState; write: (chunk: Buffer, t: number) => void } {
    const s = state({ pairs: [PAIR] });
    const client = s.clients[0]!;
    const reader = new WireReader(
      1 << 20,
      { chunk: s.onChunk, message: (buf, start, end, t) => s.onMessage(client, buf, start, end, t) },
      {
        ping: () => {},
        close: (code) => expect.unreachable(`close ${code}`),
        violation: (what) => expect.unreachable(what),
      },
    );
    return { s, write: (chunk, t) => reader.write(chunk, t) };
  }

  it('counts a push frame split across chunks once, timed by the chunk that completed it', () => {
    const { s, write } = reading();
    const whole = textFrame(push());
    write(whole.subarray(0, 1), 1000);
    write(whole.subarray(1, 40), 1004);
    write(whole.subarray(40), 1010);
    const tick = s.take(5000);
    expect(tick.frames).toBe(1);
    // Sent at wall +990, completed at +1010.
    one(tick.latency, 20);
    expect(tick.updates).toEqual([[PAIR, WALL + 900, 1010, 1010, 1]]);
  });

  it('counts once each a message sent in fragments and the frames that share its chunks', () => {
    const { s, write } = reading();
    const p = [1, 2, 3].map((i) => push({ last_updated: WALL + 900 + i, sent_at: WALL + 990 + i }));
    const half = Math.floor(p[1]!.length / 2);
    write(
      Buffer.concat([textFrame(p[0]!), frame({ opcode: OPCODE.text, payload: p[1]!.slice(0, half), fin: false })]),
      1000,
    );
    // The message completed by this chunk lies in a buffer of its own: nothing of the chunk's cache applies to it.
    write(
      Buffer.concat([frame({ opcode: OPCODE.continuation, payload: p[1]!.slice(half) }), textFrame('Pong!')]),
      1010,
    );
    write(Buffer.concat([textFrame(p[2]!)]), 1020);
    const tick = s.take(5000);
    expect(tick).toMatchObject({ frames: 3, pongs: 1, duplicates: 0, outOfOrder: 0, violations: 0 });
    expect(tick.updates).toEqual([
      [PAIR, WALL + 901, 1000, 1000, 1],
      [PAIR, WALL + 902, 1010, 1010, 1],
      [PAIR, WALL + 903, 1020, 1020, 1],
    ]);
  });
});
