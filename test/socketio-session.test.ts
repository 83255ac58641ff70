/**
 * The Socket.IO session against small Socket.IO servers started on port 0 in the test (peers, not
 * the thing under test): the named event both ways, the key in the handshake header, refusals
 * written as raw HTTP responses in place of the upgrade, server and client disconnects.
 */
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket as NetSocket } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { Server, type ServerOptions, type Socket } from 'socket.io';
import { WebSocketServer } from 'ws';
import type { Evidence } from '../src/check.ts';
import { createSocketIoClient, socketIoTarget } from '../src/transports/socketio-session.ts';
import { createStreamClient } from '../src/transports/ws-session.ts';
import { MAX_REFUSAL_BODY } from '../src/transports/handshake-refusal.ts';
import { expectOneSocketReadTo, watchClientReads } from './helpers/client-reads.ts';
import { streamFactoryFor } from '../src/transports/stream-factory.ts';
import { minimalProfile, parseProfile } from '../src/profile.ts';
import { StreamError, isPush, type StreamClient, type StreamSession } from '../src/transports/stream.ts';

const KEY = 'sk_live_socketio_test_key_456';
const EVENT = 'price';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function listen(server: HttpServer | ReturnType<typeof createNetServer>): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

interface Peer {
  url: string;
  io: Server;
  handshakes: IncomingMessage[];
}

/**
 * A Socket.IO server on its own HTTP server. `refuse` may answer a handshake with raw HTTP bytes
 * before Socket.IO sees it (how a service writes the spec's JSON body in the HTTP phase).
 */
async function peer(
  onConnection: (socket: Socket) => void,
  options: { refuse?: (req: IncomingMessage) => string | undefined; io?: Partial<ServerOptions> } = {},
): Promise<Peer> {
  const io = new Server({ serveClient: false, ...options.io });
  // Attached to a server that never listens: Socket.IO gets its engine, the test dispatches to it.
  io.attach(createServer());
  const handshakes: IncomingMessage[] = [];
  const http = createServer((req, res) => io.engine.handleRequest(req, res));
  http.on('upgrade', (req: IncomingMessage, socket: NetSocket, head: Buffer) => {
    handshakes.push(req);
    const raw = options.refuse?.(req);
    if (raw !== undefined) {
      socket.end(raw);
      return;
    }
    io.engine.handleUpgrade(req, socket, head);
  });
  io.on('connection', onConnection);
  const port = await listen(http);
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        io.disconnectSockets(true);
        io.engine.close();
        http.closeAllConnections();
        http.close(() => r());
      }),
  );
  return { url: `ws://127.0.0.1:${port}/socket.io/`, io, handshakes };
}

function client(
  url: string,
  extra: Partial<Parameters<typeof createSocketIoClient>[0]> = {},
): { stream: StreamClient; evidence: Evidence[] } {
  const evidence: Evidence[] = [];
  const stream = createSocketIoClient({
    url,
    event: EVENT,
    primaryKey: KEY,
    record: (e) => evidence.push(e),
    waitMs: 1000,
    handshakeTimeoutMs: 2000,
    ...extra,
  });
  cleanups.push(() => stream.closeAll());
  return { stream, evidence };
}

async function openOk(stream: StreamClient, options = {}): Promise<StreamSession> {
  const result = await stream.open(options);
  if (!result.ok) throw new Error(`refused ${result.status} ${result.text}`);
  return result.session;
}

const refusal = (status: number, body: string, extra = ''): string =>
  `HTTP/1.1 ${status} Refused\r\nContent-Type: application/json\r\nContent-Length: ` +
  `${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`;

describe('socket.io session: target URL', () => {
  it('takes the URL path as the Socket.IO path and defaults it to /socket.io/', () => {
    expect(socketIoTarget('ws://127.0.0.1:8080/socket.io/')).toEqual({
      origin: 'ws://127.0.0.1:8080',
      path: '/socket.io/',
    });
    expect(socketIoTarget('wss://example.test')).toEqual({ origin: 'wss://example.test', path: '/socket.io/' });
    expect(socketIoTarget('ws://127.0.0.1:9/v1/stream')).toEqual({ origin: 'ws://127.0.0.1:9', path: '/v1/stream' });
  });
});

describe('transport selection by profile', () => {
  it('picks raw WebSocket without a transport or with ws, and Socket.IO with socketio and its event', async () => {
    expect(streamFactoryFor({})).toBe(createStreamClient);
    expect(streamFactoryFor({ transport: 'ws' })).toBe(createStreamClient);
    let event: unknown;
    const p = await peer((s) =>
      s.on('quotes', (m: unknown) => {
        event = m;
      }),
    );
    const factory = streamFactoryFor({ transport: 'socketio', event: 'quotes' });
    const stream = factory({ url: p.url, primaryKey: KEY, record: () => undefined });
    cleanups.push(() => stream.closeAll());
    const session = await openOk(stream);
    session.send({ method: 'ping' });
    await expect.poll(() => event).toEqual({ method: 'ping' });
  });

  it('refuses socketio without an event name, in the factory and in a profile', () => {
    expect(() => streamFactoryFor({ transport: 'socketio' })).toThrow(/needs the event name/);
    expect(() =>
      parseProfile({ rest: 'http://127.0.0.1:1', keys: { primary: { key: 'k' } }, transport: 'socketio' }),
    ).toThrow(/required property "event"/);
    expect(
      minimalProfile({
        target: 'http://127.0.0.1:1/',
        key: 'k',
        ws: 'ws://127.0.0.1:1/socket.io/',
        transport: 'socketio',
        event: 'price',
      }),
    ).toMatchObject({ transport: 'socketio', event: 'price', ws: 'ws://127.0.0.1:1/socket.io/' });
  });
});

describe('socket.io session: handshake', () => {
  it('sends the primary key in the X-API-Key header and never in the query string', async () => {
    let seen: Socket['handshake'] | undefined;
    const p = await peer((s) => {
      seen = s.handshake;
    });
    const { stream } = client(p.url);
    await openOk(stream);
    expect(seen?.headers['x-api-key']).toBe(KEY);
    expect(seen?.url).not.toContain(KEY);
    expect(p.handshakes.map((r) => r.url ?? '').join(' ')).not.toContain(KEY);
    expect(seen?.query).not.toHaveProperty('key');
  });

  it('sends no key header when the key is null and another header name when asked', async () => {
    const seen: unknown[] = [];
    const p = await peer((s) => {
      seen.push(s.handshake.headers['x-api-key']);
    });
    const { stream } = client(p.url);
    await openOk(stream, { key: null });
    await openOk(stream, { key: 'other-key', keyHeader: 'X-API-KEY' });
    expect(seen).toEqual([undefined, 'other-key']);
  });

  it('uses the WebSocket transport only, so the handshake is one HTTP upgrade request', async () => {
    const p = await peer(() => undefined);
    const { stream } = client(p.url);
    const session = await openOk(stream);
    expect(p.handshakes).toHaveLength(1);
    expect(p.handshakes[0]!.url).toMatch(/^\/socket\.io\/\?EIO=4&transport=websocket/);
    expect(session.openedAtMs).toBeGreaterThanOrEqual(session.startedAtMs);
  });

  it('returns a refusal written in the HTTP phase as a Refusal with status, headers, body and JSON', async () => {
    const body = '{"status_number":"50005","message":"Unauthorized"}';
    const p = await peer(() => undefined, { refuse: () => refusal(401, body, 'X-Extra: 1\r\n') });
    const { stream, evidence } = client(p.url);
    const result = await stream.open({ key: null });
    expect(result).toEqual({
      ok: false,
      status: 401,
      headers: expect.objectContaining({ 'content-type': 'application/json', 'x-extra': '1' }),
      text: body,
      json: { status_number: '50005', message: 'Unauthorized' },
    });
    expect(evidence).toContainEqual(expect.objectContaining({ kind: 'ws-open', outcome: `refused: HTTP 401 ${body}` }));
  });

  it('reads a huge refusal body up to its 64 KiB limit, at most one read past it, and stops the transfer', async () => {
    let written = 0;
    const head = 'HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: 52428800\r\n\r\n';
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let peerClosed: Promise<unknown> | undefined;
    // Refuses with the headers of a 50 MB body and streams it as fast as the client reads.
    const huge = createServer();
    huge.on('upgrade', (_req, socket: NetSocket) => {
      socket.on('error', () => undefined);
      peerClosed = new Promise((resolve) => socket.once('close', resolve));
      socket.write(head);
      const pump = (): void => {
        while (written < 52_428_800 && !socket.destroyed) {
          written += chunk.length;
          if (!socket.write(chunk)) {
            socket.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
    const port = await listen(huge);
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          huge.closeAllConnections();
          huge.close(() => r());
        }),
    );
    const { stream } = client(`ws://127.0.0.1:${port}/socket.io/`);
    const reads = watchClientReads();
    const result = await stream.open();
    expect(result).toMatchObject({ ok: false, status: 401, json: undefined });
    expect(result.ok === false && result.text.length).toBe(MAX_REFUSAL_BODY);
    await expectOneSocketReadTo(reads, head.length + MAX_REFUSAL_BODY);
    // The client hung up: the peer's socket closes long before its body ends.
    await peerClosed;
    expect(written).toBeLessThan(52_428_800);
  });

  it('keeps a non-JSON refusal body as text with json undefined', async () => {
    const p = await peer(() => undefined, {
      refuse: () => 'HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy',
    });
    const { stream } = client(p.url);
    expect(await stream.open()).toMatchObject({ ok: false, status: 503, text: 'busy', json: undefined });
  });

  it("reports Socket.IO's own upgrade refusal (allowRequest) as HTTP 400 with engine.io's text, not JSON", async () => {
    const p = await peer(() => undefined, { io: { allowRequest: (_req, cb) => cb('nope', false) } });
    const { stream } = client(p.url);
    const result = await stream.open();
    expect(result.ok).toBe(false);
    if (result.ok) return;
    // engine.io cannot write a body of our choosing here: a service must answer before it.
    expect(result).toMatchObject({ status: 400, text: 'nope', json: undefined });
  });

  it('reports a redirect as a refusal and does not follow it with the key', async () => {
    let followed = false;
    const other = await peer(() => {
      followed = true;
    });
    const p = await peer(() => undefined, {
      refuse: (req) =>
        `HTTP/1.1 302 Found\r\nLocation: ${other.url.replace('ws:', 'http:')}?` +
        `${req.url?.split('?')[1] ?? ''}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    });
    const { stream } = client(p.url);
    expect(await stream.open()).toMatchObject({ ok: false, status: 302 });
    expect(followed).toBe(false);
    expect(other.handshakes).toHaveLength(0);
  });

  it('returns a namespace refusal (CONNECT_ERROR after the upgrade) as a Refusal, status 101, with data', async () => {
    const p = await peer(() => undefined);
    p.io.use((_socket, next) =>
      next(Object.assign(new Error('denied'), { data: { status_number: '50010', message: 'Access denied' } })),
    );
    const { stream, evidence } = client(p.url);
    const result = await stream.open();
    expect(result).toMatchObject({
      ok: false,
      status: 101,
      json: { status_number: '50010', message: 'Access denied' },
    });
    expect(evidence).toContainEqual(
      expect.objectContaining({ kind: 'ws-open', outcome: expect.stringContaining('CONNECT_ERROR') }),
    );
  });

  it('binds the local source address it is given', async () => {
    let remote: string | undefined;
    const p = await peer((s) => {
      remote = s.handshake.address;
    });
    const { stream } = client(p.url);
    await openOk(stream, { localAddress: '127.0.0.2' });
    expect(remote).toMatch(/127\.0\.0\.2$/);
  });

  it('rejects with CONFORM_NETWORK when nothing listens', async () => {
    const probe = createNetServer();
    const port = await listen(probe);
    await new Promise<void>((r) => probe.close(() => r()));
    const { stream, evidence } = client(`ws://127.0.0.1:${port}/socket.io/`);
    const err = await stream.open().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamError);
    expect(err).toMatchObject({ code: 'CONFORM_NETWORK', message: expect.stringContaining('ECONNREFUSED') });
    expect(evidence).toContainEqual(
      expect.objectContaining({ kind: 'ws-open', outcome: expect.stringMatching(/^error:/) }),
    );
  });

  it('rejects with CONFORM_NETWORK, naming the problem, when the peer is a plain WebSocket server', async () => {
    const http = createServer();
    const wss = new WebSocketServer({ server: http });
    wss.on('connection', (ws) => ws.send('{"method":"subscribe"}'));
    const port = await listen(http);
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          for (const c of wss.clients) c.terminate();
          wss.close();
          http.closeAllConnections();
          http.close(() => r());
        }),
    );
    const { stream } = client(`ws://127.0.0.1:${port}/socket.io/`);
    await expect(stream.open()).rejects.toMatchObject({
      code: 'CONFORM_NETWORK',
      message: expect.stringContaining('does not speak Socket.IO'),
    });
  });

  it('rejects with CONFORM_TIMEOUT when the server never answers the handshake', async () => {
    // Accepts TCP and reads, never writes.
    const silent = createNetServer((s) => {
      s.on('error', () => undefined);
      cleanups.push(() => {
        s.destroy();
      });
    });
    const port = await listen(silent);
    cleanups.push(() => new Promise<void>((r) => silent.close(() => r())));
    const { stream } = client(`ws://127.0.0.1:${port}/socket.io/`);
    await expect(stream.open({ timeoutMs: 300 })).rejects.toMatchObject({ code: 'CONFORM_TIMEOUT' });
  });
});

describe('socket.io session: messages on the named event', () => {
  it('emits a JSON request as the event with the object; request() resolves with the notice echoing it', async () => {
    const got: unknown[] = [];
    const p = await peer((s) =>
      s.on(EVENT, (msg: { id?: string; method?: string }) => {
        got.push(msg);
        s.emit(EVENT, { method: 'subscribe', message: 'Success', code: '200', id: msg.id, data: null });
      }),
    );
    const { stream } = client(p.url);
    const session = await openOk(stream);
    const notice = await session.request({ id: 'a1', method: 'subscribe', params: { pairs: ['Crypto:ALL:BTC/USD'] } });
    expect(got).toEqual([{ id: 'a1', method: 'subscribe', params: { pairs: ['Crypto:ALL:BTC/USD'] } }]);
    expect(notice).toEqual({ method: 'subscribe', message: 'Success', code: '200', id: 'a1', data: null });
  });

  it('sends raw text as a string payload, so a malformed request reaches the server as sent', async () => {
    const got: unknown[] = [];
    const p = await peer((s) =>
      s.on(EVENT, (msg: unknown) => {
        got.push(msg);
      }),
    );
    const { stream } = client(p.url);
    const session = await openOk(stream);
    session.sendText('{"method":"subscribe",');
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toEqual(['{"method":"subscribe",']);
  });

  it('reads the plain string `Pong!` as a text frame, objects as JSON frames, pushes apart from notices', async () => {
    const p = await peer((s) =>
      s.on(EVENT, () => {
        s.emit(EVENT, 'Pong!');
        s.emit(EVENT, { code: 'Crypto:ALL:BTC/USD', ask: '2', bid: '1', price: '1.5', last_updated: 1, sent_at: 2 });
        s.emit(EVENT, { code: 'Forex:ALL:EUR/USD', ask: '2', bid: '1', price: '1.5' });
        s.emit(EVENT, '{"method":"error","code":"50004","message":"x"}');
      }),
    );
    const { stream } = client(p.url);
    const session = await openOk(stream);
    session.send({ method: 'ping' });
    const pong = await session.next((f) => f.kind === 'text');
    expect(pong).toMatchObject({ kind: 'text', text: 'Pong!' });
    // A string that holds JSON reads as JSON, as the same text in a raw WebSocket frame would.
    await session.find((f) => f.kind === 'json' && (f.value as { method?: string }).method === 'error');
    expect(session.pushes().map((x) => x.value.code)).toEqual(['Crypto:ALL:BTC/USD', 'Forex:ALL:EUR/USD']);
    expect([...session.pushesByPair().keys()]).toEqual(['Crypto:ALL:BTC/USD', 'Forex:ALL:EUR/USD']);
    expect(session.frames.filter(isPush)).toHaveLength(2);
  });

  it('keeps messages the server emits in its connection handler, before the client sees connect', async () => {
    const p = await peer((s) => {
      s.emit(EVENT, { method: 'error', code: '50005', message: 'Invalid API key', data: null });
    });
    const { stream } = client(p.url);
    const session = await openOk(stream);
    const notice = await session.find((f) => f.kind === 'json');
    expect(notice).toMatchObject({ value: { code: '50005' } });
  });

  it('records messages on another event as notes, not frames', async () => {
    const p = await peer((s) => {
      s.emit('other', { method: 'subscribe' });
      s.emit(EVENT, 'Pong!');
    });
    const { stream, evidence } = client(p.url);
    const session = await openOk(stream);
    await session.find((f) => f.kind === 'text');
    expect(session.frames).toHaveLength(1);
    expect(evidence).toContainEqual(
      expect.objectContaining({ kind: 'note', text: expect.stringContaining('event "other"') }),
    );
  });

  it('keeps at most maxKeptFrames frames from a flooding server and notes the drop once', async () => {
    const p = await peer((s) =>
      s.on(EVENT, () => {
        for (let i = 0; i < 300; i++) s.emit(EVENT, { code: 'Crypto:ALL:BTC/USD', n: i });
        s.emit(EVENT, 'Pong!');
      }),
    );
    const { stream, evidence } = client(p.url, { maxKeptFrames: 100 });
    const session = await openOk(stream);
    session.send({ method: 'ping' });
    await session.next((f) => f.kind === 'text');
    expect(session.frames.length).toBeLessThanOrEqual(110);
    expect(session.pushes().at(-1)?.value.n).toBe(299);
    expect(evidence.filter((e) => e.kind === 'note' && e.text.includes('no longer kept'))).toHaveLength(1);
  });

  it('drops a peer that floods past maxFramesPerSecond, with the reason in the close', async () => {
    const p = await peer((s) =>
      s.on(EVENT, () => {
        for (let i = 0; i < 200; i++) s.emit(EVENT, { code: 'Crypto:ALL:BTC/USD', n: i });
      }),
    );
    const { stream } = client(p.url, { maxFramesPerSecond: 50 });
    const session = await openOk(stream);
    session.send({ method: 'ping' });
    const info = await session.closed;
    expect(info).toMatchObject({
      by: 'client',
      reason: expect.stringContaining('failed by the client: flood: more than 50 frames'),
    });
    expect(session.frames.length).toBeLessThanOrEqual(50);
    expect(() => session.send({ method: 'ping' })).toThrow(
      /cannot send: the connection is closed \(\d+ failed by the client: flood/,
    );
  });

  it('records a long message cut at 4096 characters with its length, the key masked before the cut', async () => {
    const long = `${'x'.repeat(4090)}${KEY}${'y'.repeat(5000)}`;
    const p = await peer((s) =>
      s.on(EVENT, () => {
        s.emit(EVENT, long);
      }),
    );
    const { stream, evidence } = client(p.url);
    const session = await openOk(stream);
    session.send({ method: 'ping' });
    const frame = await session.next((f) => f.kind === 'text');
    expect(frame.kind === 'text' && frame.text).toBe(long);
    const recorded = evidence
      .filter((e) => e.kind === 'frame' && e.direction === 'in')
      .map((e) => (e as { data: string }).data);
    expect(recorded[0]!.length).toBeLessThan(4200);
    expect(recorded[0]).toMatch(/… \(\d+ characters in all\)$/);
    expect(JSON.stringify(evidence)).not.toContain(KEY.slice(0, 12));
  });

  it('reads a binary payload as a binary frame', async () => {
    const p = await peer((s) => {
      s.emit(EVENT, Buffer.from([1, 2, 3]));
    });
    const { stream } = client(p.url);
    const session = await openOk(stream);
    expect(await session.find((f) => f.kind === 'binary')).toMatchObject({ kind: 'binary', bytes: 3 });
  });

  it("does not surface Socket.IO's own heartbeat as frames, and it keeps the connection up", async () => {
    const p = await peer(() => undefined, { io: { pingInterval: 40, pingTimeout: 200 } });
    const { stream } = client(p.url);
    const session = await openOk(stream);
    await new Promise((r) => setTimeout(r, 400));
    expect(session.frames).toEqual([]);
    expect(session.isOpen).toBe(true);
  });

  it('never writes the key into the evidence', async () => {
    const p = await peer((s) =>
      s.on(EVENT, () => {
        s.emit(EVENT, `echo ${KEY}`);
      }),
    );
    const { stream, evidence } = client(p.url);
    const session = await openOk(stream, { key: 'second-secret-key' });
    session.send({ method: 'ping', id: KEY });
    await session.next((f) => f.kind === 'text');
    await session.close();
    const text = JSON.stringify(evidence);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('second-secret-key');
    expect(text).toContain('[redacted]');
  });
});

describe('socket.io session: closing', () => {
  it('maps a server disconnect onto closed: by server, code 1000, the Socket.IO reason, and when', async () => {
    const p = await peer((s) =>
      s.on(EVENT, () => {
        s.disconnect(true);
      }),
    );
    const { stream, evidence } = client(p.url);
    const session = await openOk(stream);
    const waiting = session.next(() => false, 5000);
    const before = stream.now();
    session.send({ method: 'ping' });
    const info = await session.closed;
    expect(info).toMatchObject({ by: 'server', code: 1000, reason: 'io server disconnect' });
    expect(info.atMs).toBeGreaterThanOrEqual(before);
    await expect(waiting).rejects.toMatchObject({ code: 'CONFORM_WAIT_CLOSED' });
    expect(session.isOpen).toBe(false);
    expect(() => session.send({ method: 'ping' })).toThrow(StreamError);
    expect(evidence).toContainEqual(
      expect.objectContaining({ kind: 'close', by: 'server', reason: 'io server disconnect' }),
    );
  });

  it('keeps the WebSocket close code and reason when the server closes the transport under Socket.IO', async () => {
    const p = await peer((s) =>
      s.on(EVENT, () => {
        (s.conn.transport as unknown as { socket: { close(code: number, reason: string): void } }).socket.close(
          1008,
          'no ping within the keep-alive window',
        );
      }),
    );
    const { stream } = client(p.url);
    const session = await openOk(stream);
    session.send({ method: 'ping' });
    const info = await session.closed;
    expect(info).toMatchObject({
      by: 'server',
      code: 1008,
      reason: 'transport close: no ping within the keep-alive window',
    });
  });

  it('closes from the client side with by client, and the server sees the disconnect', async () => {
    let serverReason: string | undefined;
    let gone!: () => void;
    const disconnected = new Promise<void>((r) => {
      gone = r;
    });
    const p = await peer((s) =>
      s.on('disconnect', (r) => {
        serverReason = r;
        gone();
      }),
    );
    const { stream } = client(p.url);
    const session = await openOk(stream);
    const info = await session.close();
    expect(info).toMatchObject({ by: 'client', code: 1000, reason: 'io client disconnect' });
    await disconnected;
    expect(serverReason).toBe('client namespace disconnect');
  });

  it('closeAll closes every open session and an abort drops them and rejects their waits', async () => {
    const p = await peer(() => undefined);
    const { stream } = client(p.url);
    const a = await openOk(stream);
    const b = await openOk(stream);
    await stream.closeAll();
    expect([a.isOpen, b.isOpen]).toEqual([false, false]);

    const abort = new AbortController();
    const aborting = client(p.url, { signal: abort.signal }).stream;
    const c = await openOk(aborting);
    const waiting = c.next(() => false, 5000);
    abort.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'CONFORM_ABORTED' });
    await expect(c.closed).resolves.toMatchObject({ by: 'client' });
    await expect(aborting.open()).rejects.toMatchObject({ code: 'CONFORM_ABORTED' });
  });
});
