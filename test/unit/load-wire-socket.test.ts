/**
 * The load generator's own WebSocket client against real servers on loopback: a `ws` server for
 * the protocol's ordinary paths, raw-byte servers for frames split anywhere, frames in the
 * handshake's own packet, and the violations a client must refuse.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import { WireSocket, type WireOptions } from '../../load/fanout/wire-socket.ts';
import type { NetworkError } from '../../src/errors.ts';
import { monoNow } from '../../load/mono-clock.ts';
import { startRawServer, switchingProtocols, type RawServer } from '../helpers/hostile/raw-server.ts';
import { closeFrame, frame, OPCODE, textFrame } from '../../src/ws-frame.ts';
import { watchClientReads } from '../helpers/client-reads.ts';

/** Paces a server's writes, so the client reads them as separate chunks. */
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Seen {
  socket: WireSocket;
  opened: Promise<void>;
  closed: Promise<number>;
  /** Resolves once `n` messages have arrived. */
  received(n: number): Promise<void>;
  messages: string[];
  times: number[];
  errors: NetworkError[];
  refused: { status: number; body: string }[];
  closes: number;
}

function connect(url: string, options: Partial<WireOptions> = {}): Seen {
  let onOpen!: () => void;
  let onClose!: (code: number) => void;
  const waiting: { n: number; resolve: () => void }[] = [];
  const seen = {
    messages: [] as string[],
    times: [] as number[],
    errors: [] as NetworkError[],
    refused: [] as { status: number; body: string }[],
    closes: 0,
    opened: new Promise<void>((r) => {
      onOpen = r;
    }),
    closed: new Promise<number>((r) => {
      onClose = r;
    }),
    received: (n: number) =>
      new Promise<void>((resolve) => {
        if (seen.messages.length >= n) resolve();
        else waiting.push({ n, resolve });
      }),
  } as Seen;
  seen.socket = new WireSocket(
    url,
    { headers: { 'x-test': 'yes' }, handshakeTimeoutMs: 2000, ...options },
    {
      open: () => onOpen(),
      message: (buf, start, end, t) => {
        seen.messages.push(buf.toString('utf8', start, end));
        seen.times.push(t);
        for (const w of waiting.filter((w) => seen.messages.length >= w.n)) {
          waiting.splice(waiting.indexOf(w), 1);
          w.resolve();
        }
      },
      refused: (status, body) => seen.refused.push({ status, body: body.toString() }),
      error: (err) => seen.errors.push(err),
      close: (code) => {
        seen.closes++;
        onClose(code);
      },
    },
  );
  return seen;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function wsServer(onConnection: (socket: ServerSocket, req: http.IncomingMessage) => void): Promise<string> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(server, 'listening');
  server.on('connection', onConnection);
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        for (const c of server.clients) c.terminate();
        server.close(() => r());
      }),
  );
  return `ws://127.0.0.1:${(server.address() as net.AddressInfo).port}/v1/stream`;
}

const wsOrigin = (server: RawServer): string => server.origin.replace('http', 'ws');

async function rawServer(handlers: Parameters<typeof startRawServer>[0]): Promise<RawServer> {
  const server = await startRawServer(handlers);
  cleanups.push(() => server.close());
  return server;
}

describe("WireSocket: the load workers' WebSocket client", () => {
  it("opens with the caller's headers, sends masked text, and reads messages of every length encoding", async () => {
    const sizes = [0, 5, 125, 126, 65_535, 65_536, 300_000];
    const got: string[] = [];
    let headers: http.IncomingHttpHeaders = {};
    const url = await wsServer((socket, req) => {
      headers = req.headers;
      socket.on('message', (data) => {
        got.push(data.toString());
        for (const n of sizes) socket.send('x'.repeat(n));
      });
    });
    const seen = connect(url);
    await seen.opened;
    expect(headers['x-test']).toBe('yes');
    seen.socket.send('{"method":"subscribe"}');
    await seen.received(sizes.length);
    expect(got).toEqual(['{"method":"subscribe"}']);
    expect(seen.messages.map((m) => m.length)).toEqual(sizes);
    expect(seen.errors).toEqual([]);
  });

  it('joins a fragmented message, answers a ping with a pong of its payload, reports the close code', async () => {
    let pong = '';
    const url = await wsServer((socket) => {
      // Closes once the pong is in: the close code is reported after the ping was answered.
      socket.on('pong', (data) => {
        pong = data.toString();
        socket.close(4001, 'bye');
      });
      socket.send('{"a":', { fin: false });
      socket.send('1', { fin: false });
      socket.send('}', { fin: true });
      socket.ping('are you there');
    });
    const seen = connect(url);
    expect(await seen.closed).toBe(4001);
    expect(seen.messages).toEqual(['{"a":1}']);
    expect(pong).toBe('are you there');
    expect(seen.closes).toBe(1);
  });

  it('closes with the code it sends; the server sees that code', async () => {
    let serverSaw!: (code: number) => void;
    const serverClosed = new Promise<number>((resolve) => {
      serverSaw = resolve;
    });
    const url = await wsServer((socket) => socket.on('close', (code) => serverSaw(code)));
    const seen = connect(url);
    await seen.opened;
    seen.socket.close(1000);
    expect(await seen.closed).toBe(1000);
    expect(await serverClosed).toBe(1000);
    expect(seen.socket.state).toBe('closed');
  });

  it("reads frames split anywhere, sharing a chunk or in the handshake's packet, timed by last chunk", async () => {
    const texts = Array.from({ length: 12 }, (_, i) =>
      `{"code":"P${i}","sent_at":${1000 + i}}`.repeat(1 + (i % 3) * 30),
    );
    const frames = texts.map((t) => textFrame(t));
    const stream = Buffer.concat(frames);
    /** Each write of the stream: the offset it ends at and when (monoNow) it was handed to the socket. */
    const writes: { end: number; t: number }[] = [];
    const server = await rawServer({
      onRequest: ({ socket, request, detach }) => {
        detach();
        socket.setNoDelay(true);
        // The 101 and the first frame in one write: the client finds the frame in the upgrade's head.
        writes.push({ end: 3, t: monoNow() });
        socket.write(
          Buffer.concat([
            Buffer.from(switchingProtocols(request.headers['sec-websocket-key']!), 'latin1'),
            stream.subarray(0, 3),
          ]),
        );
        void (async () => {
          // Then pieces of 1, 2, 3 … bytes and one large piece holding several whole frames.
          let at = 3;
          for (let size = 1; at < stream.length / 2; size++) {
            writes.push({ end: Math.min(at + size, stream.length), t: monoNow() });
            socket.write(stream.subarray(at, at + size));
            at += size;
            await pause(2);
          }
          writes.push({ end: stream.length, t: monoNow() });
          socket.write(stream.subarray(at));
        })();
      },
    });
    const seen = connect(wsOrigin(server));
    await seen.received(texts.length);
    expect(seen.messages).toEqual(texts);
    // The receipt time is the arrival of the chunk that completed the frame, so never before that
    // chunk was written (a frame timed at its first chunk would be earlier than its last write).
    let frameEnd = 0;
    const completedAt = frames.map((f) => {
      frameEnd += f.length;
      return writes.find((w) => w.end >= frameEnd)!.t;
    });
    expect(new Set(completedAt).size).toBeGreaterThan(texts.length / 2);
    for (const [i, t] of seen.times.entries()) expect(t, `frame ${i}`).toBeGreaterThanOrEqual(completedAt[i]!);
    expect([...seen.times].sort((a, b) => a - b)).toEqual(seen.times);
    expect(seen.times.at(-1)!).toBeLessThanOrEqual(monoNow());
  });

  it.each([
    ['a masked server frame', frame({ opcode: OPCODE.text, payload: 'hi', mask: Buffer.from([1, 2, 3, 4]) }), /masked/],
    ['a reserved bit', frame({ opcode: OPCODE.text, payload: 'hi', rsv: 4 }), /reserved bit/],
    ['a reserved opcode', frame({ opcode: 0x3, payload: 'hi' }), /reserved opcode/],
    ['a fragmented ping', frame({ opcode: OPCODE.ping, payload: 'hi', fin: false }), /control frame/],
    ['a continuation with nothing to continue', frame({ opcode: OPCODE.continuation, payload: 'hi' }), /continuation/],
    [
      'a frame over the payload limit',
      frame({ opcode: OPCODE.text, payload: 'x'.repeat(2000) }),
      /over the 1000-byte limit/,
    ],
  ])('refuses %s: a protocol error, then close 1002, and nothing after it is read', async (_name, bad, message) => {
    const server = await rawServer({
      onRequest: ({ socket, request, detach }) => {
        detach();
        socket.write(Buffer.from(switchingProtocols(request.headers['sec-websocket-key']!), 'latin1'));
        socket.write(Buffer.concat([textFrame('before'), bad, textFrame('after')]));
      },
    });
    const seen = connect(wsOrigin(server), { maxPayload: 1000 });
    expect(await seen.closed).toBe(1002);
    expect(seen.messages).toEqual(['before']);
    expect(seen.errors.map((e) => e.errno)).toEqual(['EPROTOCOL']);
    expect(seen.errors[0]!.message).toMatch(message);
  });

  it("stops reading at the server's close frame and reports its code", async () => {
    const server = await rawServer({
      onRequest: ({ socket, request, detach }) => {
        detach();
        socket.write(Buffer.from(switchingProtocols(request.headers['sec-websocket-key']!), 'latin1'));
        socket.write(Buffer.concat([closeFrame(4002, 'going'), textFrame('after close')]));
        socket.on('end', () => {
          /* half-close from the client: this server keeps its side open */
        });
      },
    });
    const seen = connect(wsOrigin(server));
    expect(await seen.closed).toBe(4002);
    expect(seen.messages).toEqual([]);
  });

  it('reports a refusal in the handshake with its status and body, then closes once', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"status_number":"50005","message":"invalid key"}');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const seen = connect(`ws://127.0.0.1:${(server.address() as net.AddressInfo).port}/`);
    expect(await seen.closed).toBe(1006);
    expect(seen.refused).toEqual([{ status: 401, body: '{"status_number":"50005","message":"invalid key"}' }]);
    expect(seen.errors).toEqual([]);
    expect(seen.closes).toBe(1);
  });

  it('fails the handshake on a wrong Sec-WebSocket-Accept, on silence past the timeout, on a closed port', async () => {
    const wrong = await rawServer({
      onRequest: ({ socket, detach }) => {
        detach();
        socket.write(Buffer.from(switchingProtocols('not the client key'), 'latin1'));
      },
    });
    const silent = await rawServer({
      onRequest: ({ detach }) => {
        detach();
      },
    });
    const closedPort = await rawServer({});
    const port = closedPort.port;
    await closedPort.close();
    const cases: [string, number, string][] = [
      [wsOrigin(wrong), 2000, 'EHANDSHAKE'],
      [wsOrigin(silent), 200, 'ETIMEDOUT'],
      [`ws://127.0.0.1:${port}`, 2000, 'ECONNREFUSED'],
    ];
    for (const [origin, timeout, code] of cases) {
      const seen = connect(origin, { handshakeTimeoutMs: timeout });
      expect(await seen.closed).toBe(1006);
      expect(seen.errors.map((e) => e.errno)).toEqual([code]);
      expect(seen.closes).toBe(1);
    }
  });

  it("speaks wss: verifies the server's certificate against the trusted ones, refuses an untrusted one", async () => {
    const tls = {
      cert: readFileSync(new URL('../helpers/tls/cert.pem', import.meta.url)),
      key: readFileSync(new URL('../helpers/tls/key.pem', import.meta.url)),
    };
    const server = https.createServer(tls);
    const wss = new WebSocketServer({ server });
    wss.on('connection', (socket) => socket.on('message', (data) => socket.send(`echo ${data.toString()}`)));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          for (const c of wss.clients) c.terminate();
          wss.close();
          server.close(() => r());
        }),
    );
    const url = `wss://127.0.0.1:${(server.address() as net.AddressInfo).port}/`;
    const trusted = connect(url, { ca: tls.cert });
    await trusted.opened;
    trusted.socket.send('over tls');
    await trusted.received(1);
    expect(trusted.messages).toEqual(['echo over tls']);
    trusted.socket.close();
    expect(await trusted.closed).toBe(1000);
    const untrusted = connect(url);
    expect(await untrusted.closed).toBe(1006);
    expect(untrusted.errors.map((e) => e.errno)).toEqual(['DEPTH_ZERO_SELF_SIGNED_CERT']);
  });

  it('terminate() while connecting still closes exactly once, without an error', async () => {
    const silent = await rawServer({
      onRequest: ({ detach }) => {
        detach();
      },
    });
    const sockets = watchClientReads();
    const seen = connect(wsOrigin(silent));
    seen.socket.terminate();
    expect(await seen.closed).toBe(1006);
    // The socket's close is the last event that could report a second close or an error.
    expect(await sockets.closed()).toHaveLength(1);
    await new Promise(setImmediate);
    expect(seen.closes).toBe(1);
    expect(seen.errors).toEqual([]);
  });
});
