/**
 * The WebSocket session against small servers started on port 0: real handshakes, literal wire
 * frames written byte by byte where the framing matters, refusals as raw HTTP responses.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Evidence } from '../src/check.ts';
import { createStreamClient } from '../src/transports/ws-session.ts';
import { StreamError, type StreamClient } from '../src/transports/stream.ts';
import { MAX_REFUSAL_BODY } from '../src/transports/handshake-refusal.ts';
import { expectOneSocketReadTo, watchClientReads } from './helpers/client-reads.ts';

const KEY = 'sk_live_session_test_key_123';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/stream`;
}

/** A ws server whose connection handler the test writes. */
async function wsServer(onConnection: (ws: WebSocket, req: IncomingMessage) => void): Promise<string> {
  const server = createServer();
  const wss = new WebSocketServer({ server });
  wss.on('connection', onConnection);
  cleanups.push(() => {
    for (const c of wss.clients) c.terminate();
    wss.close();
  });
  return listen(server);
}

/** A server that answers the upgrade with whatever raw bytes the test writes. */
async function rawServer(onUpgrade: (req: IncomingMessage, socket: Socket) => void): Promise<string> {
  const server = createServer();
  const sockets = new Set<Socket>();
  server.on('upgrade', (req, socket) => {
    sockets.add(socket as Socket);
    onUpgrade(req, socket as Socket);
  });
  const url = await listen(server);
  // Upgraded sockets leave the HTTP server's books, so they go before it closes (cleanups run last first).
  cleanups.push(() => {
    for (const s of sockets) s.destroy();
  });
  return url;
}

function acceptUpgrade(req: IncomingMessage, socket: Socket): void {
  const accept = createHash('sha1')
    .update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
    .digest('base64');
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: ` +
      `Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
  );
}

/** An unmasked server text frame (payload under 126 bytes). */
const textFrame = (text: string): Buffer =>
  Buffer.concat([Buffer.from([0x81, Buffer.byteLength(text)]), Buffer.from(text)]);

function client(
  url: string,
  extra: Partial<Parameters<typeof createStreamClient>[0]> = {},
): { stream: StreamClient; evidence: Evidence[] } {
  const evidence: Evidence[] = [];
  const stream = createStreamClient({ url, primaryKey: KEY, record: (e) => evidence.push(e), waitMs: 1000, ...extra });
  cleanups.push(() => stream.closeAll());
  return { stream, evidence };
}

async function openOk(stream: StreamClient, options = {}) {
  const result = await stream.open(options);
  if (!result.ok) throw new Error(`refused ${result.status}`);
  return result.session;
}

describe('ws session: handshake', () => {
  it('sends the primary key in the X-API-Key header', async () => {
    let seen: string | undefined;
    const url = await wsServer((_ws, req) => {
      seen = req.headers['x-api-key'] as string;
    });
    const { stream } = client(url);
    await openOk(stream);
    expect(seen).toBe(KEY);
  });

  it('sends no key header when the key is null and another header name when asked', async () => {
    const seen: (string | undefined)[] = [];
    const url = await wsServer((_ws, req) => {
      seen.push(req.headers['x-api-key'] as string | undefined);
    });
    const { stream } = client(url);
    await openOk(stream, { key: null });
    await openOk(stream, { key: 'other', keyHeader: 'X-API-KEY' });
    expect(seen).toEqual([undefined, 'other']);
  });

  it('returns a refused handshake as a Refusal with status, headers, body and parsed JSON', async () => {
    const body = '{"status_number":"50005","message":"Unauthorized"}';
    const url = await rawServer((_req, socket) => {
      socket.end(
        `HTTP/1.1 401 Unauthorized\r\nContent-Type: ` +
          `application/json\r\nContent-Length: ${body.length}\r\nX-Extra: 1\r\n\r\n${body}`,
      );
    });
    const { stream, evidence } = client(url);
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

  it('keeps a non-JSON refusal body as text with json undefined', async () => {
    const url = await rawServer((_req, socket) => {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy');
    });
    const { stream } = client(url);
    const result = await stream.open();
    expect(result).toMatchObject({ ok: false, status: 503, text: 'busy', json: undefined });
  });

  it('reports a redirect as a refusal and does not follow it with the key', async () => {
    let followed = false;
    const other = await wsServer(() => {
      followed = true;
    });
    const url = await rawServer((_req, socket) => {
      socket.end(`HTTP/1.1 302 Found\r\nLocation: ${other}\r\nContent-Length: 0\r\n\r\n`);
    });
    const { stream } = client(url);
    const result = await stream.open();
    expect(result).toMatchObject({ ok: false, status: 302 });
    expect(followed).toBe(false);
  });

  it('binds the local source address it is given', async () => {
    let remote: string | undefined;
    const url = await wsServer((_ws, req) => {
      remote = req.socket.remoteAddress;
    });
    const { stream } = client(url);
    await openOk(stream, { localAddress: '127.0.0.2' });
    expect(remote).toBe('127.0.0.2');
  });

  it('rejects with CONFORM_NETWORK when nothing listens', async () => {
    const server = createServer();
    const url = await listen(server);
    await new Promise<void>((r) => server.close(() => r()));
    const { stream } = client(url);
    await expect(stream.open()).rejects.toMatchObject({ name: 'StreamError', code: 'CONFORM_NETWORK' });
  });
});

describe('ws session: frames', () => {
  it('classifies JSON, plain text and binary frames written as literal wire bytes, split across chunks', async () => {
    const url = await rawServer((req, socket) => {
      acceptUpgrade(req, socket);
      const wire = Buffer.concat([
        textFrame('{"code":"Crypto:ALL:BTC/USDT","ask":"2","bid":"1","price":"1.5"}'),
        textFrame('Pong!'),
        textFrame('"Pong!"'),
        Buffer.from([0x82, 0x03, 1, 2, 3]),
      ]);
      // One byte per write, so the parser must reassemble every frame.
      let i = 0;
      const drip = (): void => {
        if (i < wire.length) {
          socket.write(wire.subarray(i, i + 1));
          i++;
          setImmediate(drip);
        }
      };
      drip();
    });
    const { stream } = client(url);
    const session = await openOk(stream);
    await session.next((f) => f.kind === 'binary');
    expect(session.frames.map((f) => f.kind)).toEqual(['json', 'text', 'json', 'binary']);
    expect(session.frames[1]).toMatchObject({ kind: 'text', text: 'Pong!' });
    expect(session.frames[2]).toMatchObject({ kind: 'json', text: '"Pong!"', value: 'Pong!' });
    expect(session.frames[3]).toMatchObject({ kind: 'binary', bytes: 3 });
    expect(session.pushes().map((p) => p.value.code)).toEqual(['Crypto:ALL:BTC/USDT']);
  });

  it('request resolves with the notice echoing its id, passing over pushes and other notices', async () => {
    const url = await wsServer((ws) =>
      ws.on('message', (raw) => {
        const msg = JSON.parse(String(raw)) as { id: string };
        ws.send('{"code":"Crypto:ALL:ETH/USDT","ask":"2","bid":"1","price":"1.5"}');
        ws.send('{"method":"subscribe","message":"Success","code":"200","id":"someone-else","data":null}');
        ws.send(JSON.stringify({ method: 'subscribe', message: 'Success', code: '200', id: msg.id, data: null }));
      }),
    );
    const { stream, evidence } = client(url);
    const session = await openOk(stream);
    const notice = await session.request({
      id: 'mine',
      method: 'subscribe',
      params: { pairs: ['Crypto:ALL:ETH/USDT'] },
    });
    expect(notice).toEqual({ method: 'subscribe', message: 'Success', code: '200', id: 'mine', data: null });
    const frames = evidence.filter((e) => e.kind === 'frame');
    expect(frames[0]).toMatchObject({
      direction: 'out',
      data: '{"id":"mine","method":"subscribe","params":{"pairs":["Crypto:ALL:ETH/USDT"]}}',
    });
    expect(frames.filter((e) => e.kind === 'frame' && e.direction === 'in')).toHaveLength(3);
  });

  it('request without an id resolves with the next notice', async () => {
    const url = await wsServer((ws) =>
      ws.on('message', () => ws.send('{"method":"error","message":"bad","code":"50004","data":null}')),
    );
    const { stream } = client(url);
    const session = await openOk(stream);
    await expect(session.request({ method: 'nope' })).resolves.toMatchObject({ code: '50004' });
  });

  it('next rejects with CONFORM_WAIT_TIMEOUT when no frame matches in time', async () => {
    const url = await wsServer(() => undefined);
    const { stream } = client(url);
    const session = await openOk(stream);
    const err = await session.next(() => true, 50).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamError);
    expect(err).toMatchObject({ code: 'CONFORM_WAIT_TIMEOUT' });
  });

  it('groups pushes by pair and filters them by time', async () => {
    const url = await wsServer((ws) =>
      ws.on('message', () => {
        for (const code of ['A:X:B/C', 'D:X:E/F', 'A:X:B/C'])
          ws.send(JSON.stringify({ code, ask: '1', bid: '1', price: '1' }));
        ws.send('{"method":"done","message":"","code":"200"}');
      }),
    );
    const { stream } = client(url);
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

describe('ws session: close, limits and redaction', () => {
  it('reports a server close with its code, reason, side and a monotonic time', async () => {
    const url = await wsServer((ws) => setTimeout(() => ws.close(4000, 'ping timeout'), 30));
    const { stream, evidence } = client(url);
    const session = await openOk(stream);
    const pending = session.next(() => true, 5000).catch((e: unknown) => e);
    const info = await session.closed;
    expect(info).toMatchObject({ code: 4000, reason: 'ping timeout', by: 'server' });
    expect(info.atMs).toBeGreaterThanOrEqual(session.openedAtMs);
    expect(await pending).toMatchObject({ code: 'CONFORM_WAIT_CLOSED' });
    expect(session.isOpen).toBe(false);
    expect(evidence.at(-1)).toMatchObject({ kind: 'close', code: 4000, by: 'server' });
  });

  it('reports a client close as by client', async () => {
    const url = await wsServer(() => undefined);
    const { stream } = client(url);
    const session = await openOk(stream);
    await expect(session.close(1000, 'bye')).resolves.toMatchObject({ code: 1000, by: 'client' });
  });

  it('refuses a frame over maxPayload, records why and closes the connection', async () => {
    const url = await wsServer((ws) => ws.send('x'.repeat(2048)));
    const { stream, evidence } = client(url, { maxPayload: 1024 });
    const session = await openOk(stream);
    const info = await session.closed;
    expect(session.frames).toHaveLength(0);
    expect(info).toMatchObject({
      by: 'client',
      reason: expect.stringMatching(/^failed by the client: Max payload size exceeded/),
    });
    expect(evidence).toContainEqual(
      expect.objectContaining({ kind: 'note', text: expect.stringMatching(/max payload/i) }),
    );
  });

  it('drops the connection at once when the peer breaks the protocol and never answers the close', async () => {
    // A frame with the reserved opcode 0x3, then silence: no close reply ever comes.
    const url = await rawServer((req, socket) => {
      acceptUpgrade(req, socket);
      socket.write(Buffer.from([0x83, 0x00]));
    });
    const { stream } = client(url);
    const session = await openOk(stream);
    const pending = session.next(() => true, 5000).catch((e: unknown) => e);
    const info = await session.closed;
    expect(info.atMs - session.openedAtMs).toBeLessThan(1000);
    expect(info).toMatchObject({
      by: 'client',
      reason: expect.stringMatching(
        /^failed by the client: Invalid WebSocket frame: invalid opcode 3 \(WS_ERR_INVALID_OPCODE\)/,
      ),
    });
    expect(await pending).toMatchObject({
      code: 'CONFORM_WAIT_CLOSED',
      message: expect.stringMatching(/failed by the client: Invalid WebSocket frame: invalid opcode 3/),
    });
    expect(() => session.send({ method: 'ping' })).toThrow(
      /cannot send: the connection is closed \(1006 failed by the client: Invalid WebSocket frame/,
    );
  });

  it('reads a refusal body up to its 64 KiB limit, at most one read past it, and stops the transfer', async () => {
    let written = 0;
    const head = 'HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\n\r\n';
    let peerClosed: Promise<unknown> | undefined;
    const url = await rawServer((_req, socket) => {
      peerClosed = new Promise((resolve) => socket.once('close', resolve));
      socket.write(head);
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const pump = (): void => {
        while (written < 10 * 1024 * 1024 && !socket.destroyed) {
          written += chunk.length;
          if (!socket.write(chunk)) {
            socket.once('drain', pump);
            return;
          }
        }
      };
      socket.on('error', () => undefined);
      pump();
    });
    const { stream } = client(url);
    const reads = watchClientReads();
    const result = await stream.open();
    expect(result).toMatchObject({ ok: false, status: 401, json: undefined });
    expect(result.ok === false && result.text.length).toBe(MAX_REFUSAL_BODY);
    await expectOneSocketReadTo(reads, head.length + MAX_REFUSAL_BODY);
    // The client hung up: the peer's socket closes long before its body ends.
    await peerClosed;
    expect(written).toBeLessThan(10 * 1024 * 1024);
  });

  it('never records a key, not even one the server echoes or one given to open()', async () => {
    const url = await wsServer((ws, req) =>
      ws.send(
        JSON.stringify({ method: 'error', message: `bad key ${String(req.headers['x-api-key'])}`, code: '50005' }),
      ),
    );
    const { stream, evidence } = client(url, { redact: (s) => s.replaceAll('secret-two', '***') });
    const s1 = await openOk(stream);
    await s1.find(() => true);
    const s2 = await openOk(stream, { key: 'another-key-value' });
    await s2.find(() => true);
    const text = JSON.stringify(evidence);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('another-key-value');
    expect(text).toContain('bad key [redacted]');
    expect(evidence.filter((e) => e.kind === 'ws-open')[0]).toMatchObject({ headers: { 'X-API-Key': '[redacted]' } });
  });

  it('an abort terminates every session and rejects pending waits', async () => {
    const url = await wsServer(() => undefined);
    const controller = new AbortController();
    const { stream } = client(url, { signal: controller.signal });
    const session = await openOk(stream);
    const pending = session.next(() => true, 5000).catch((e: unknown) => e);
    controller.abort();
    expect(await pending).toMatchObject({ code: 'CONFORM_ABORTED' });
    await session.closed;
    await expect(stream.open()).rejects.toMatchObject({ code: 'CONFORM_ABORTED' });
  });
});

describe('ws session: bounded memory', () => {
  it('keeps at most maxKeptFrames frames of a flooding peer, dropping the oldest, and says so once', async () => {
    const url = await wsServer((ws) => {
      for (let i = 0; i < 500; i++) ws.send(JSON.stringify({ n: i }));
      ws.send('{"method":"end","message":"","code":"200"}');
    });
    const { stream, evidence } = client(url, { maxKeptFrames: 100, maxRecordedFrames: 10 });
    const session = await openOk(stream);
    await session.find((f) => f.kind === 'json' && (f.value as { method?: string }).method === 'end');
    expect(session.frames.length).toBeLessThanOrEqual(110);
    expect(session.frames.at(-1)).toMatchObject({ text: '{"method":"end","message":"","code":"200"}' });
    expect(evidence.filter((e) => e.kind === 'note' && e.text.includes('no longer kept'))).toHaveLength(1);
    expect(evidence.filter((e) => e.kind === 'frame')).toHaveLength(10);
    await session.close();
    expect(evidence).toContainEqual(
      expect.objectContaining({ kind: 'note', text: '491 further frames not recorded (limit 10)' }),
    );
  });
});

describe('ws session: deadlines and floods', () => {
  it('gives up on a handshake dribbled one byte at a time at the deadline, not the idle timeout', async () => {
    // Writes its 101 one byte every 100 ms: the socket is never idle, the handshake never completes in time.
    const url = await rawServer((_req, socket) => {
      const head = Buffer.from('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
      let i = 0;
      const timer = setInterval(() => {
        if (i < head.length && !socket.destroyed) socket.write(head.subarray(i, ++i));
        else clearInterval(timer);
      }, 100);
      socket.on('close', () => clearInterval(timer));
    });
    const { stream } = client(url, { handshakeTimeoutMs: 600 });
    const t0 = stream.now();
    await expect(stream.open()).rejects.toMatchObject({
      code: 'CONFORM_TIMEOUT',
      message: 'the WebSocket handshake did not complete within 600 ms',
    });
    expect(stream.now() - t0).toBeLessThan(1500);
  });

  it('drops a peer that floods past maxFramesPerSecond and says why', async () => {
    const url = await wsServer((ws) => {
      for (let i = 0; i < 2000; i++) ws.send('{"flood":true}');
    });
    const { stream } = client(url, { maxFramesPerSecond: 500 });
    const session = await openOk(stream);
    const info = await session.closed;
    expect(info).toMatchObject({
      by: 'client',
      reason: 'failed by the client: flood: more than 500 frames within one second',
    });
    expect(session.frames.length).toBe(500);
  });

  it('keeps huge frames within maxKeptChars and records each cut to a readable length, key redacted', async () => {
    // Five 1 MiB text frames, the key near the 4096-character cut of each.
    const big = `${'x'.repeat(4080)}${KEY}${'y'.repeat(1024 * 1024)}`;
    const url = await wsServer((ws) => {
      for (let i = 0; i < 5; i++) ws.send(big);
      ws.send('"end"');
    });
    const { stream, evidence } = client(url, { maxKeptChars: 3 * 1024 * 1024, maxPayload: 2 * 1024 * 1024 });
    const session = await openOk(stream);
    await session.find((f) => f.kind === 'json' && f.value === 'end');
    const kept = session.frames.reduce((n, f) => n + (f.kind === 'binary' ? 0 : f.text.length), 0);
    expect(kept).toBeLessThanOrEqual(3 * 1024 * 1024);
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
});
