/**
 * The stream session's contract, one table of cases that test/unit/ws-session.test.ts and
 * test/unit/socketio-session.test.ts each run against their own client (raw WebSocket, Socket.IO with a
 * named event) and a peer of its kind on port 0: the key in the handshake, refusals read from the
 * HTTP response that replaced the upgrade, requests and their notices, bounded memory, closes and
 * aborts. Each file then holds only what its transport alone has.
 */
import { createServer as createNetServer, type Socket as NetSocket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { MAX_REFUSAL_BODY } from '../../src/transports/handshake-refusal.ts';
import { NetworkError, StreamClosedError, WaitTimeoutError } from '../../src/errors.ts';
import { isPush } from '../../src/transports/stream.ts';
import { expectOneSocketReadTo, watchClientReads } from './client-reads.ts';
import { KEY, client, listen, openOk, type PeerConnection, type StreamTransport } from './stream-peers.ts';
import { pump } from './hostile/raw-server.ts';

/** A raw HTTP response written in place of the upgrade. */
const refusal = (status: string, body: string, extra = ''): string =>
  `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}` +
  `Connection: close\r\n\r\n${body}`;

/** Answers every upgrade with `bytes` and hangs up. */
const answer =
  (bytes: (req: IncomingMessage) => string) =>
  (req: IncomingMessage, socket: NetSocket): boolean => {
    socket.end(bytes(req));
    return true;
  };

const notice = (fields: Record<string, unknown>) => ({ message: 'Success', code: '200', data: null, ...fields });

/** Registers the contract's cases for `t` (call at the top level of a test file whose afterEach runs `cleanup`). */
export function streamSessionContract(t: StreamTransport): void {
  describe(`stream session over ${t.name}: handshake`, () => {
    it('sends the primary key in the X-API-Key header and never in the URL', async () => {
      const seen: IncomingMessage[] = [];
      const p = await t.peer((c) => seen.push(c.request));
      const { stream } = client(t, p.url);
      await openOk(stream);
      expect(seen.map((r) => r.headers['x-api-key'])).toEqual([KEY]);
      expect(p.handshakes.map((r) => r.url ?? '').join(' ')).not.toContain(KEY);
    });

    it('sends no key header when the key is null and another header name when asked', async () => {
      const seen: unknown[] = [];
      const p = await t.peer((c) => seen.push(c.request.headers['x-api-key']));
      const { stream } = client(t, p.url);
      await openOk(stream, { key: null });
      await openOk(stream, { key: 'other-key', keyHeader: 'X-API-KEY' });
      expect(seen).toEqual([undefined, 'other-key']);
    });

    it('returns a refusal written in the HTTP phase as a Refusal with status, headers, body and JSON', async () => {
      const body = '{"status_number":"50005","message":"Unauthorized"}';
      const p = await t.peer(undefined, { raw: answer(() => refusal('401 Unauthorized', body, 'X-Extra: 1\r\n')) });
      const { stream, evidence } = client(t, p.url);
      const result = await stream.open({ key: null });
      expect(result).toEqual({
        ok: false,
        status: 401,
        headers: expect.objectContaining({ 'content-type': 'application/json', 'x-extra': '1' }),
        text: body,
        json: { status_number: '50005', message: 'Unauthorized' },
      });
      expect(evidence).toContainEqual(
        expect.objectContaining({ kind: 'ws-open', outcome: `refused: HTTP 401 ${body}` }),
      );
    });

    it('keeps a non-JSON refusal body as text with json undefined', async () => {
      const p = await t.peer(undefined, {
        raw: answer(() => 'HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy'),
      });
      const { stream } = client(t, p.url);
      expect(await stream.open()).toMatchObject({ ok: false, status: 503, text: 'busy', json: undefined });
    });

    it('reads a huge refusal body to its 64 KiB limit, at most one read past it, and stops the transfer', async () => {
      const total = 50 * 1024 * 1024;
      const head = `HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`;
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let pumped: Promise<number> | undefined;
      // Refuses with the head of a 50 MiB body and writes it as fast as the client reads.
      const p = await t.peer(undefined, {
        raw: (_req, socket) => {
          socket.write(head);
          pumped = pump(socket, total, () => chunk);
          return true;
        },
      });
      const { stream } = client(t, p.url);
      const reads = watchClientReads();
      const result = await stream.open();
      expect(result).toMatchObject({ ok: false, status: 401, json: undefined });
      expect(result.ok === false && result.text.length).toBe(MAX_REFUSAL_BODY);
      await expectOneSocketReadTo(reads, head.length + MAX_REFUSAL_BODY);
      // The client hung up, so the peer stopped writing (pump ends on close) long before the body's end.
      expect(await pumped).toBeLessThan(head.length + total);
    });

    it('reports a redirect as a refusal and does not follow it with the key', async () => {
      const followed: IncomingMessage[] = [];
      const other = await t.peer((c) => followed.push(c.request));
      const p = await t.peer(undefined, {
        raw: answer(
          (req) =>
            `HTTP/1.1 302 Found\r\nLocation: ${other.url.replace('ws:', 'http:')}?${req.url?.split('?')[1] ?? ''}\r\n` +
            'Content-Length: 0\r\nConnection: close\r\n\r\n',
        ),
      });
      const { stream } = client(t, p.url);
      const reads = watchClientReads();
      expect(await stream.open()).toMatchObject({ ok: false, status: 302 });
      // Every socket the client opened has closed: a client that follows has opened the next one by then.
      expect(await reads.closed()).toHaveLength(1);
      expect(other.handshakes).toEqual([]);
      expect(followed).toEqual([]);
    });

    it('binds the local source address it is given', async () => {
      const remote: (string | undefined)[] = [];
      const p = await t.peer((c) => remote.push(c.request.socket.remoteAddress));
      const { stream } = client(t, p.url);
      await openOk(stream, { localAddress: '127.0.0.2' });
      expect(remote).toEqual([expect.stringMatching(/(^|:)127\.0\.0\.2$/)]);
    });

    it('rejects with CONFORM_NETWORK naming the refused connection when nothing listens', async () => {
      const probe = createNetServer();
      const port = await listen(probe);
      await new Promise<void>((r) => probe.close(() => r()));
      const { stream, evidence } = client(t, t.urlAt(port));
      const err = await stream.open().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NetworkError);
      expect(err).toMatchObject({ code: 'CONFORM_NETWORK', message: expect.stringContaining('ECONNREFUSED') });
      expect(evidence).toContainEqual(
        expect.objectContaining({ kind: 'ws-open', outcome: expect.stringMatching(/^error:/) }),
      );
    });

    it('gives up on a handshake dribbled one byte at a time at its deadline, not at an idle timeout', async () => {
      // Writes its 101 one byte every 100 ms: the socket is never idle, and the head takes seconds to complete.
      const head = Buffer.from('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
      let written = 0;
      const p = await t.peer(undefined, {
        raw: (_req, socket) => {
          const timer = setInterval(() => {
            if (written < head.length && !socket.destroyed) socket.write(head.subarray(written, ++written));
            else clearInterval(timer);
          }, 100);
          socket.on('close', () => clearInterval(timer));
          return true;
        },
      });
      const { stream } = client(t, p.url, { handshakeTimeoutMs: 300 });
      await expect(stream.open()).rejects.toMatchObject({
        code: 'CONFORM_TIMEOUT',
        message: expect.stringMatching(/300 ms/),
      });
      // Given up while the peer was still writing: an idle timeout would have waited for the whole head.
      expect(written).toBeLessThan(head.length);
    });
  });

  describe(`stream session over ${t.name}: messages`, () => {
    it('request sends the object and resolves with the notice echoing its id, past pushes and others', async () => {
      const got: unknown[] = [];
      const p = await t.peer((c) =>
        c.onMessage((msg) => {
          got.push(msg);
          c.send({ code: 'Crypto:ALL:ETH/USDT', ask: '2', bid: '1', price: '1.5' });
          c.send(notice({ method: 'subscribe', id: 'someone-else' }));
          c.send(notice({ method: 'subscribe', id: (msg as { id: string }).id }));
        }),
      );
      const { stream, evidence } = client(t, p.url);
      const session = await openOk(stream);
      const request = { id: 'mine', method: 'subscribe', params: { pairs: ['Crypto:ALL:ETH/USDT'] } };
      expect(await session.request(request)).toEqual(notice({ method: 'subscribe', id: 'mine' }));
      expect(got).toEqual([request]);
      const frames = evidence.filter((e) => e.kind === 'frame');
      expect(frames[0]).toMatchObject({ direction: 'out', data: JSON.stringify(request) });
      expect(frames.filter((e) => e.direction === 'in')).toHaveLength(3);
    });

    it('request without an id resolves with the next notice', async () => {
      const p = await t.peer((c) => c.onMessage(() => c.send({ method: 'error', message: 'bad', code: '50004' })));
      const { stream } = client(t, p.url);
      const session = await openOk(stream);
      await expect(session.request({ method: 'nope' })).resolves.toMatchObject({ code: '50004' });
    });

    it('sends raw text as sent, so a malformed request reaches the server unchanged', async () => {
      const got: unknown[] = [];
      let arrived!: () => void;
      const received = new Promise<void>((r) => {
        arrived = r;
      });
      const p = await t.peer((c) =>
        c.onMessage((msg) => {
          got.push(msg);
          arrived();
        }),
      );
      const { stream } = client(t, p.url);
      const session = await openOk(stream);
      session.sendText('{"method":"subscribe",');
      await received;
      expect(got).toEqual(['{"method":"subscribe",']);
    });

    it('next rejects with CONFORM_WAIT_TIMEOUT when no frame matches in time', async () => {
      const p = await t.peer();
      const { stream } = client(t, p.url);
      const session = await openOk(stream);
      const err = await session.next(() => true, 50).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WaitTimeoutError);
      expect(err).toMatchObject({ code: 'CONFORM_WAIT_TIMEOUT' });
    });

    it('reads plain text as text, text holding JSON as JSON, binary as binary; pushes apart', async () => {
      const p = await t.peer((c) =>
        c.onMessage(() => {
          c.send('Pong!');
          c.send('"Pong!"');
          c.send({ code: 'Crypto:ALL:BTC/USD', ask: '2', bid: '1', price: '1.5', last_updated: 1, sent_at: 2 });
          c.send('{"method":"error","code":"50004","message":"x"}');
          c.send(Buffer.from([1, 2, 3]));
        }),
      );
      const { stream } = client(t, p.url);
      const session = await openOk(stream);
      session.send({ method: 'ping' });
      await session.next((f) => f.kind === 'binary');
      expect(session.frames.map((f) => f.kind)).toEqual(['text', 'json', 'json', 'json', 'binary']);
      expect(session.frames[0]).toMatchObject({ kind: 'text', text: 'Pong!' });
      expect(session.frames[1]).toMatchObject({ kind: 'json', text: '"Pong!"', value: 'Pong!' });
      expect(session.frames[4]).toMatchObject({ kind: 'binary', bytes: 3 });
      expect(session.pushes().map((x) => x.value.code)).toEqual(['Crypto:ALL:BTC/USD']);
      expect(session.frames.filter(isPush)).toHaveLength(1);
    });

    it('groups pushes by pair and filters them by time', async () => {
      const p = await t.peer((c) =>
        c.onMessage(() => {
          for (const code of ['A:X:B/C', 'D:X:E/F', 'A:X:B/C']) c.send({ code, ask: '1', bid: '1', price: '1' });
          c.send({ method: 'done', message: '', code: '200' });
        }),
      );
      const { stream } = client(t, p.url);
      const session = await openOk(stream);
      const before = stream.now();
      await session.request({ method: 'go' });
      const byPair = session.pushesByPair();
      expect([...byPair.keys()]).toEqual(['A:X:B/C', 'D:X:E/F']);
      expect(byPair.get('A:X:B/C')).toHaveLength(2);
      expect(session.pushes({ pair: 'D:X:E/F', sinceMs: before })).toHaveLength(1);
      expect(session.pushes({ sinceMs: stream.now() + 1 })).toHaveLength(0);
    });
  });

  describe(`stream session over ${t.name}: bounded memory and redaction`, () => {
    it('keeps at most maxKeptFrames frames of a flooding peer, dropping the oldest, and says so once', async () => {
      const p = await t.peer((c) => {
        for (let n = 0; n < 300; n++) c.send({ code: 'Crypto:ALL:BTC/USD', n });
        c.send({ method: 'end', message: '', code: '200' });
      });
      const { stream, evidence } = client(t, p.url, { maxKeptFrames: 100, maxRecordedFrames: 10 });
      const session = await openOk(stream);
      await session.find((f) => f.kind === 'json' && (f.value as { method?: string }).method === 'end');
      expect(session.frames.length).toBeLessThanOrEqual(110);
      expect(session.frames.at(-1)).toMatchObject({ value: { method: 'end' } });
      expect(session.pushes().at(-1)?.value.n).toBe(299);
      expect(evidence.filter((e) => e.kind === 'note' && e.text.includes('no longer kept'))).toHaveLength(1);
      expect(evidence.filter((e) => e.kind === 'frame')).toHaveLength(10);
      await session.close();
      expect(evidence).toContainEqual(
        expect.objectContaining({ kind: 'note', text: '291 further frames not recorded (limit 10)' }),
      );
    });

    it('drops a peer that floods past maxFramesPerSecond, with the reason in the close', async () => {
      const p = await t.peer((c) => {
        for (let n = 0; n < 200; n++) c.send({ code: 'Crypto:ALL:BTC/USD', n });
      });
      // The client's clock stands still, so the burst falls within one second however long a loaded
      // machine takes to deliver it: on the wall clock a one-second stall mid-burst opens a new window.
      const { stream } = client(t, p.url, { maxFramesPerSecond: 50, clock: () => 0 });
      const session = await openOk(stream);
      const info = await session.closed;
      expect(info).toMatchObject({
        by: 'client',
        reason: 'failed by the client: flood: more than 50 frames within one second',
      });
      expect(session.frames).toHaveLength(50);
      expect(() => session.send({ method: 'ping' })).toThrow(
        /cannot send: the connection is closed \(\d+ failed by the client: flood/,
      );
    });

    it('counts frames per second: a peer within the rate each second is kept, though it sends more', async () => {
      const p = await t.peer((c) =>
        c.onMessage(() => {
          for (let n = 0; n < 40; n++) c.send({ code: 'Crypto:ALL:BTC/USD', n });
          c.send({ method: 'done', message: '', code: '200' });
        }),
      );
      let now = 0;
      const { stream } = client(t, p.url, { maxFramesPerSecond: 50, clock: () => now });
      const session = await openOk(stream);
      await session.request({ method: 'go' });
      now = 1000;
      await session.request({ method: 'go' });
      expect(session.frames).toHaveLength(82);
      expect(session.isOpen).toBe(true);
    });

    it('keeps huge frames within maxKeptChars and records each cut to a readable length, key redacted', async () => {
      // Three 1 MiB text frames, the key across the 4096-character cut of each.
      const big = `${'x'.repeat(4080)}${KEY}${'y'.repeat(1024 * 1024)}`;
      const p = await t.peer((c) => {
        for (let i = 0; i < 3; i++) c.send(big);
        c.send('"end"');
      });
      const { stream, evidence } = client(t, p.url, { maxKeptChars: 2 * 1024 * 1024, maxPayload: 2 * 1024 * 1024 });
      const session = await openOk(stream);
      await session.find((f) => f.kind === 'json' && f.value === 'end');
      const kept = session.frames.reduce((n, f) => n + (f.kind === 'binary' ? 0 : f.text.length), 0);
      expect(kept).toBeLessThanOrEqual(2 * 1024 * 1024);
      expect(session.frames).toHaveLength(2);
      expect(session.frames.at(-2)).toMatchObject({ kind: 'text', text: big });
      expect(session.frames.at(-1)).toMatchObject({ text: '"end"' });
      const frames = evidence.filter((e) => e.kind === 'frame') as { data: string }[];
      expect(frames[0]!.data.length).toBeLessThan(4200);
      expect(frames[0]!.data).toMatch(/… \(\d+ characters in all\)$/);
      expect(JSON.stringify(evidence)).not.toContain(KEY.slice(0, 12));
      expect(evidence).toContainEqual(
        expect.objectContaining({
          kind: 'note',
          text: expect.stringMatching(/characters of frames received: the oldest are no longer kept/),
        }),
      );
    });

    it('never records a key: not one the server echoes, one given to open(), or one the client sends', async () => {
      const p = await t.peer((c) =>
        c.send({ method: 'error', message: `bad key ${String(c.request.headers['x-api-key'])}`, code: '50005' }),
      );
      const { stream, evidence } = client(t, p.url, { redact: (s) => s.replaceAll('secret-two', '***') });
      const s1 = await openOk(stream);
      await s1.find(() => true);
      s1.send({ method: 'ping', id: KEY });
      const s2 = await openOk(stream, { key: 'another-key-value' });
      await s2.find(() => true);
      await stream.closeAll();
      const text = JSON.stringify(evidence);
      expect(text).not.toContain(KEY);
      expect(text).not.toContain('another-key-value');
      expect(text).toContain('bad key [redacted]');
      expect(evidence.filter((e) => e.kind === 'ws-open')[0]).toMatchObject({ headers: { 'X-API-Key': '[redacted]' } });
    });
  });

  describe(`stream session over ${t.name}: closing`, () => {
    it("reports a server close by server, with the transport's code, reason and time, and rejects waits", async () => {
      const p = await t.peer((c: PeerConnection) => c.onMessage(() => c.close()));
      const { stream, evidence } = client(t, p.url);
      const session = await openOk(stream);
      const pending = session.next(() => false, 5000).catch((e: unknown) => e);
      const before = stream.now();
      session.send({ method: 'ping' });
      const info = await session.closed;
      expect(info).toMatchObject({ ...t.serverClose, by: 'server' });
      expect(info.atMs).toBeGreaterThanOrEqual(before);
      expect(await pending).toMatchObject({ code: 'CONFORM_WAIT_CLOSED' });
      expect(session.isOpen).toBe(false);
      expect(() => session.send({ method: 'ping' })).toThrow(StreamClosedError);
      expect(evidence.at(-1)).toMatchObject({ kind: 'close', ...t.serverClose, by: 'server' });
    });

    it('reports a client close as by client, and the server sees the connection end', async () => {
      const serverSide: Promise<unknown>[] = [];
      const p = await t.peer((c) => serverSide.push(once(c.request.socket, 'close')));
      const { stream } = client(t, p.url);
      const session = await openOk(stream);
      await expect(session.close(1000, 'bye')).resolves.toMatchObject({ code: 1000, by: 'client' });
      await Promise.all(serverSide);
      expect(serverSide).toHaveLength(1);
    });

    it('closeAll closes every open session', async () => {
      const p = await t.peer();
      const { stream } = client(t, p.url);
      const a = await openOk(stream);
      const b = await openOk(stream);
      await stream.closeAll();
      expect([a.isOpen, b.isOpen]).toEqual([false, false]);
    });

    it('an abort terminates every session, rejects pending waits and later opens', async () => {
      const p = await t.peer();
      const controller = new AbortController();
      const { stream } = client(t, p.url, { signal: controller.signal });
      const session = await openOk(stream);
      const pending = session.next(() => true, 5000).catch((e: unknown) => e);
      controller.abort();
      expect(await pending).toMatchObject({ code: 'CONFORM_ABORTED' });
      await expect(session.closed).resolves.toMatchObject({ by: 'client' });
      await expect(stream.open()).rejects.toMatchObject({ code: 'CONFORM_ABORTED' });
    });
  });
}
