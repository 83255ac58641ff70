/**
 * Hostile targets: small servers on 127.0.0.1, port 0, each misbehaving in exactly one way that
 * no spec describes. Each entry's `breaks` line says what it breaks, in the manner of
 * autocannon's test/helper.js. Transport-level targets misbehave on REST requests and WebSocket
 * upgrades alike; `ws` targets complete a handshake and then break the WebSocket protocol, so a
 * run pairs them with a working REST service. Byte-level faults are written as raw bytes.
 */
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { WebSocketServer, type WebSocket } from 'ws';
import { RUN_DEFAULTS } from '../../../src/runner.ts';
import { PATHS } from '../../../src/spec.ts';
import { OPCODE, WireReader, closeFrame, frame, frameHeader, textFrame } from '../../../src/ws-frame.ts';
import {
  pump,
  rawResponse,
  startRawServer,
  switchingProtocols,
  type RawExchange,
  type RawServer,
} from './raw-server.ts';

/** What a running target exposes to a test. */
export interface HostileTarget {
  /** REST base URL for `--target`; absent for `ws` targets (pair them with a working REST service). */
  rest?: string;
  /** WebSocket URL for `--ws`. */
  ws?: string;
  stats: HostileStats;
  close(): Promise<void>;
}

/** What a target saw, for assertions on the harness's behaviour. */
export interface HostileStats {
  connections(): number;
  /** Most bytes the kernel accepted on one tracked connection (a harness that stops reading keeps it low). */
  maxBytesWritten(): number;
  /** Counts `socket` in maxBytesWritten. */
  track(socket: net.Socket): void;
  /** Resolves once every tracked connection has closed (its count of bytes written is final). */
  settled(): Promise<void>;
  /** Every API key value the target was sent (the echo target records them, proving it had a key to echo). */
  keysSeen?: Set<string>;
  /** Every request that reached the other origin of a redirect target. */
  otherOrigin?: { method: string; url: string; headers: Record<string, string | string[] | undefined> }[];
}

export type Layer = 'rest' | 'ws' | 'both';

export interface HostileDefinition {
  name: string;
  /** What it breaks, one line. */
  breaks: string;
  layer: Layer;
  /**
   * The one exit a correct harness gives: 1 when the target answers HTTP (any response head, however
   * broken what follows), so the run reaches verdicts and a report; 2 when no response head comes.
   */
  exit: readonly [1 | 2];
  /** With exit 2: the problem line the preflight must print (so an answering target called unreachable is caught). */
  noAnswer?: RegExp;
  /** Peak RSS allowed when the target's messages are legitimately large; default MEMORY_LIMIT_MIB. */
  memoryLimitMiB?: number;
  /** `must` checks that may pass because the target keeps their rule despite its fault, each with why; `*` for all. */
  mayPass?: Readonly<Record<string, string>>;
  start(): Promise<HostileTarget>;
}

const WS_PATH = '/ws';
function stats(server: { connections(): number }): HostileStats {
  const tracked: net.Socket[] = [];
  return {
    connections: server.connections,
    track: (socket) => {
      tracked.push(socket);
    },
    maxBytesWritten: () => tracked.reduce((max, s) => Math.max(max, s.bytesWritten), 0),
    settled: async () => {
      // 'close' only: the reader's hang-up reaches the target as ECONNRESET first.
      await Promise.all(tracked.map((s) => (s.closed ? undefined : new Promise((r) => s.once('close', r)))));
    },
  };
}
const fromRaw = (server: RawServer, s: HostileStats, layer: Layer): HostileTarget => ({
  rest: layer === 'ws' ? undefined : server.origin,
  ws: layer === 'rest' ? undefined : `ws://127.0.0.1:${server.port}${WS_PATH}`,
  stats: s,
  close: () => server.close(),
});

/** A raw target whose every request (REST or upgrade) gets the same treatment. */
function everyRequest(layer: Layer, handle: (x: RawExchange, s: HostileStats) => void): () => Promise<HostileTarget> {
  return async () => {
    let s: HostileStats | undefined;
    const server = await startRawServer({ onRequest: (x) => handle(x, s!) });
    s = stats(server);
    return fromRaw(server, s, layer);
  };
}

/**
 * A raw target that completes every WebSocket handshake by hand, then does `after` with the socket;
 * `incoming(cb)` calls `cb` for each message and control frame the client sends.
 */
function afterHandshake(
  after: (socket: net.Socket, x: RawExchange, s: HostileStats, incoming: (cb: () => void) => void) => void,
): () => Promise<HostileTarget> {
  return everyRequest('ws', (x, s) => {
    if (!x.request.isUpgrade) {
      x.socket.end(
        rawResponse(
          '404 Not Found',
          [
            ['Content-Type', 'application/json'],
            ['Content-Length', 2],
          ],
          '{}',
        ),
      );
      return;
    }
    const early = x.detach();
    x.socket.write(switchingProtocols(x.request.headers['sec-websocket-key'] ?? ''));
    const listeners: (() => void)[] = [];
    const heard = (): void => {
      for (const l of listeners) l();
    };
    // A hostile target has no reason to buffer a big frame: past 1 MiB, or on any violation, it hangs up.
    const reader = new WireReader(
      1024 * 1024,
      { message: heard },
      { ping: heard, close: heard, violation: () => x.socket.destroy() },
      'client',
    );
    x.socket.on('data', (chunk: Buffer) => reader.write(chunk, 0));
    after(x.socket, x, s, (cb) => listeners.push(cb));
    if (early.length > 0) reader.write(early, 0);
  });
}

const SIGN_IN_PAGE = `<!doctype html>
<html><head><title>Sign in - Corporate SSO</title></head>
<body><form method="post" action="/login"><h1>Sign in</h1>
<input name="user"><input name="password" type="password"><button>Sign in</button></form></body></html>
`;

const NGINX_502 = `<html>
<head><title>502 Bad Gateway</title></head>
<body>
<center><h1>502 Bad Gateway</h1></center>
<hr><center>nginx/1.25.3</center>
</body>
</html>
`;

/** A pair record of the plausible kind, for bodies that go wrong later on. */
const PAIR_JSON = '{"code":"Crypto:ALL:BTC/USDT","name":"Bitcoin","base":"BTC","quote":"USDT"}';
const ENVELOPE_START = '{"status_number":"200","ts":1700000000000,"data":[';

/** 1 MiB of pair records, the repeating unit of the 50 MB body. */
const BIG_CHUNK = Buffer.from(`${PAIR_JSON},`.repeat(Math.floor((1024 * 1024) / (PAIR_JSON.length + 1))));

/** A well-formed pairs envelope 1 KiB under the default body limit: allowed, heavy to keep. */
const NEAR_LIMIT_BODY = (() => {
  const records = Math.floor((RUN_DEFAULTS.maxBodyBytes - 1024 - ENVELOPE_START.length - 2) / (PAIR_JSON.length + 1));
  return `${ENVELOPE_START}${Array.from({ length: records }, () => PAIR_JSON).join(',')}]}`;
})();
const NEAR_LIMIT_RESPONSE = rawResponse(
  '200 OK',
  [
    ['Content-Type', 'application/json'],
    ['Content-Length', Buffer.byteLength(NEAR_LIMIT_BODY)],
  ],
  NEAR_LIMIT_BODY,
);

/** A well-formed push frame 1 KiB under the default maxPayload: allowed, heavy to keep. */
const BIG_PUSH = textFrame(
  `{"code":"Crypto:ALL:BTC/USD","ask":"2","bid":"1","price":"1.5","last_updated":1,"sent_at":2,"pad":"` +
    `${'x'.repeat(RUN_DEFAULTS.maxPayloadBytes - 1024 - 100)}"}`,
);

/** Deterministic bytes that are not valid UTF-8 and not JSON. */
function noise(length: number, seed = 7): Buffer {
  const b = Buffer.alloc(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    b[i] = x >>> 16;
  }
  return b;
}

/** The frames of the flood: some not JSON, some JSON but not objects, some objects of no known kind. */
const FLOOD_BATCH = Buffer.concat(
  [
    'not json at all',
    '{"unterminated": ',
    '[1,2,3]',
    '42',
    '"a string"',
    'null',
    'true',
    '{"code":"Crypto:ALL:NOT/REAL","ask":"x"}',
    '{"method":"flood","code":"200","message":"noise"}',
    '',
  ].flatMap((t) => Array.from({ length: 20 }, () => textFrame(t))),
);

/** Writes `bytes` one byte every two seconds (the first at once). */
function dribble(x: RawExchange, bytes: Buffer): void {
  let i = 0;
  x.socket.write(bytes.subarray(i, ++i));
  x.every(2000, () => {
    if (i < bytes.length) x.socket.write(bytes.subarray(i, ++i));
  });
}

/** A node:http + ws target for faults that keep to the protocol but break everything above it. */
async function httpTarget(
  layer: Layer,
  onRequest: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  onSocket?: (ws: WebSocket, req: http.IncomingMessage) => void,
  onUpgrade?: (req: http.IncomingMessage, socket: net.Socket, head: Buffer, accept: () => void) => void,
): Promise<HostileTarget & { server: http.Server; wss: WebSocketServer }> {
  let count = 0;
  const sockets = new Set<net.Socket>();
  const server = http.createServer(onRequest);
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  server.on('connection', (socket) => {
    count++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    socket.on('error', () => {});
    const accept = (): void =>
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.on('error', () => {});
        onSocket?.(ws, req);
      });
    if (onUpgrade) onUpgrade(req, socket, head, accept);
    else if (onSocket) accept();
    else socket.destroy();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  return {
    server,
    wss,
    rest: layer === 'ws' ? undefined : `http://127.0.0.1:${port}`,
    ws: layer === 'rest' ? undefined : `ws://127.0.0.1:${port}${WS_PATH}`,
    stats: stats({ connections: () => count }),
    async close() {
      for (const c of wss.clients) c.terminate();
      for (const s of sockets) s.destroy();
      wss.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The API key a request carries, whatever the header's case. */
const keyOf = (req: http.IncomingMessage): string => {
  const v = req.headers['x-api-key'];
  return Array.isArray(v) ? v.join(',') : (v ?? '');
};

const writeJson = (
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
};

/** The registry of hostile targets; the tests run the harness against each. */
export const HOSTILE_TARGETS: readonly HostileDefinition[] = [
  {
    name: 'silent',
    breaks: 'accepts connections and never answers, REST or upgrade',
    layer: 'both',
    exit: [2],
    noAnswer: /^conform: target http:\/\/127\.0\.0\.1:\d+ sent no HTTP response within \d+ ms$/,
    start: everyRequest('both', () => {}),
  },
  {
    name: 'silent-behind-auth',
    breaks:
      'answers a request without a key at once (401, 50005) and never answers ' +
      'one with a key: a gateway whose backend hangs',
    layer: 'both',
    exit: [1],
    start: everyRequest('both', (x) => {
      if (x.request.headers['x-api-key'] !== undefined) return;
      const body = '{"status_number":"50005","ts":1700000000000,"data":null,"message":"missing API key"}';
      x.socket.write(
        rawResponse(
          '401 Unauthorized',
          [
            ['Content-Type', 'application/json'],
            ['Content-Length', body.length],
          ],
          body,
        ),
      );
    }),
  },
  {
    name: 'html-sign-in',
    breaks: 'answers every request and upgrade with a 200 HTML sign-in page',
    layer: 'both',
    exit: [1],
    start: everyRequest('both', (x) => {
      x.socket.write(
        rawResponse(
          '200 OK',
          [
            ['Content-Type', 'text/html; charset=utf-8'],
            ['Content-Length', Buffer.byteLength(SIGN_IN_PAGE)],
          ],
          SIGN_IN_PAGE,
        ),
      );
    }),
  },
  {
    name: 'proxy-502',
    breaks: 'answers every request and upgrade with a proxy 502 Bad Gateway HTML page',
    layer: 'both',
    exit: [1],
    start: everyRequest('both', (x) => {
      x.socket.write(
        rawResponse(
          '502 Bad Gateway',
          [
            ['Server', 'nginx/1.25.3'],
            ['Content-Type', 'text/html'],
            ['Content-Length', Buffer.byteLength(NGINX_502)],
          ],
          NGINX_502,
        ),
      );
    }),
  },
  {
    name: 'reset-on-request',
    breaks: 'resets the connection (RST) as soon as a request head arrives',
    layer: 'both',
    exit: [2],
    noAnswer: /^conform: target http:\/\/127\.0\.0\.1:\d+ unreachable: ECONNRESET$/,
    start: everyRequest('both', (x) => {
      x.socket.resetAndDestroy();
    }),
  },
  {
    name: 'reset-mid-body',
    breaks: 'sends the headers and half the body it announced, then resets',
    layer: 'both',
    exit: [1],
    start: everyRequest('both', (x) => {
      const body = ENVELOPE_START + PAIR_JSON.repeat(3);
      x.socket.write(
        rawResponse(
          '200 OK',
          [
            ['Content-Type', 'application/json'],
            ['Content-Length', body.length * 2],
          ],
          body,
        ),
      );
      x.after(20, () => x.socket.resetAndDestroy());
    }),
  },
  {
    name: 'truncated-json',
    breaks: 'announces a longer Content-Length than it sends, ends the JSON mid-string and closes',
    layer: 'both',
    exit: [1],
    start: everyRequest('both', (x) => {
      const body = '{"status_number":"200","ts":1700000000000,"data":[{"code":"Crypto:ALL:BTC/US';
      x.socket.end(
        rawResponse(
          '200 OK',
          [
            ['Content-Type', 'application/json'],
            ['Content-Length', 1000],
          ],
          body,
        ),
      );
    }),
  },
  {
    name: 'short-content-length',
    breaks:
      'announces a shorter Content-Length than its JSON, so the body read is truncated JSON and the rest is garbage',
    layer: 'both',
    exit: [1],
    start: everyRequest('both', (x) => {
      const body = `{"status_number":"200","ts":1700000000000,"data":[${PAIR_JSON}]}`;
      x.socket.write(
        rawResponse(
          '200 OK',
          [
            ['Content-Type', 'application/json'],
            ['Content-Length', 40],
          ],
          body,
        ),
      );
    }),
  },
  {
    name: 'slowloris',
    breaks: 'dribbles its response (REST or upgrade) one byte every two seconds',
    layer: 'both',
    exit: [2],
    noAnswer: /^conform: target http:\/\/127\.0\.0\.1:\d+ sent no HTTP response within \d+ ms$/,
    start: everyRequest('both', (x) => {
      const body = `{"status_number":"200","ts":1700000000000,"data":[]}`;
      dribble(
        x,
        rawResponse(
          '200 OK',
          [
            ['Content-Type', 'application/json'],
            ['Content-Length', body.length],
          ],
          body,
        ),
      );
    }),
  },
  {
    name: 'octet-stream',
    breaks: 'answers 200 application/octet-stream with 64 KiB of binary noise',
    layer: 'both',
    exit: [1],
    start: everyRequest('both', (x) => {
      const body = noise(64 * 1024);
      x.socket.write(
        rawResponse(
          '200 OK',
          [
            ['Content-Type', 'application/octet-stream'],
            ['Content-Length', body.length],
          ],
          body,
        ),
      );
    }),
  },
  {
    name: 'body-50mb',
    breaks: 'answers every request and upgrade with a 50 MB JSON body',
    layer: 'both',
    exit: [1],
    start: everyRequest('both', (x, s) => {
      const total = 50 * 1024 * 1024;
      x.detach();
      x.socket.write(
        rawResponse(
          '200 OK',
          [
            ['Content-Type', 'application/json'],
            ['Content-Length', total],
          ],
          ENVELOPE_START,
        ),
      );
      s.track(x.socket);
      void pump(x.socket, total - ENVELOPE_START.length, () => BIG_CHUNK);
    }),
  },
  {
    name: 'bodies-near-limit',
    breaks: 'answers every request with a well-formed pairs list 1 KiB under the default body limit (--max-body)',
    layer: 'both',
    exit: [1],
    mayPass: { '*': 'its bodies are well-formed envelopes and pair lists: it tests memory, not rules' },
    start: everyRequest('both', (x) => {
      x.socket.write(NEAR_LIMIT_RESPONSE);
    }),
  },
  {
    name: 'wrong-types',
    breaks: 'answers with valid JSON in which every field has the wrong type (REST envelopes, notices, pushes)',
    layer: 'both',
    exit: [1],
    mayPass: { 'ws.keepalive.ping-keeps-alive': 'it never closes a connection, so a pinged one stays open' },
    async start() {
      return httpTarget(
        'both',
        (req, res) => {
          const url = new URL(req.url ?? '/', 'http://x');
          const data = url.pathname.endsWith('/pairs')
            ? { code: 7, name: false, base: [], quote: {} }
            : [{ code: 1, ask: 1.5, bid: true, price: null, market: 'open' }];
          writeJson(res, 200, { status_number: 200, ts: '1700000000000', data, message: 404 });
        },
        (ws) => {
          const push = setInterval(
            () =>
              ws.send(JSON.stringify({ code: 1, ask: 1.5, bid: 1.4, price: 1.45, last_updated: 'now', sent_at: [] })),
            100,
          );
          ws.on('close', () => clearInterval(push));
          ws.on('message', () =>
            ws.send(JSON.stringify({ method: 1, message: false, code: 200, id: 42, data: 'null', status_number: [] })),
          );
        },
      );
    },
  },
  {
    name: 'redirect-loop',
    breaks: 'answers every request and upgrade with a 302 to itself',
    layer: 'both',
    exit: [1],
    async start() {
      const redirect = (req: http.IncomingMessage): string =>
        `${req.url ?? '/'}${(req.url ?? '').includes('?') ? '&' : '?'}loop=1`;
      return httpTarget(
        'both',
        (req, res) => {
          res.writeHead(302, { location: redirect(req), 'content-length': 0 });
          res.end();
        },
        undefined,
        (req, socket) => {
          socket.end(`HTTP/1.1 302 Found\r\nLocation: ${redirect(req)}\r\nContent-Length: 0\r\n\r\n`);
        },
      );
    },
  },
  {
    name: 'redirect-elsewhere',
    breaks:
      'answers every request and upgrade with a 307 to another origin (another ' +
      'loopback port) that records what arrives',
    layer: 'both',
    exit: [1],
    async start() {
      const seen: NonNullable<HostileStats['otherOrigin']> = [];
      // The other origin answers like a healthy service, so following the redirect would look rewarding.
      const other = await httpTarget(
        'both',
        (req, res) => {
          seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
          writeJson(res, 200, { status_number: '200', ts: 1700000000000, data: [] });
        },
        undefined,
        (req, socket) => {
          seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
          socket.destroy();
        },
      );
      const elsewhere = (req: http.IncomingMessage): string => `${other.rest}${req.url ?? '/'}`;
      const target = await httpTarget(
        'both',
        (req, res) => {
          res.writeHead(307, { location: elsewhere(req), 'content-length': 0 });
          res.end();
        },
        undefined,
        (req, socket) => {
          socket.end(`HTTP/1.1 307 Temporary Redirect\r\nLocation: ${elsewhere(req)}\r\nContent-Length: 0\r\n\r\n`);
        },
      );
      target.stats.otherOrigin = seen;
      return {
        ...target,
        async close() {
          await target.close();
          await other.close();
        },
      };
    },
  },
  {
    name: 'bad-chunking',
    breaks: 'sends Transfer-Encoding: chunked with a chunk size that is not hexadecimal',
    layer: 'both',
    exit: [1],
    start: everyRequest('both', (x) => {
      x.socket.write(
        rawResponse(
          '200 OK',
          [
            ['Content-Type', 'application/json'],
            ['Transfer-Encoding', 'chunked'],
          ],
          `zz\r\n{"status_number":"200"}\r\n0\r\n\r\n`,
        ),
      );
    }),
  },
  {
    name: 'conflicting-lengths',
    breaks: 'sends two different Content-Length headers on one response',
    layer: 'both',
    // A head with two different lengths cannot be parsed (RFC 9112 6.3): no response came, so no verdicts.
    exit: [2],
    noAnswer: /^conform: target http:\/\/127\.0\.0\.1:\d+ does not answer HTTP \(HPE_UNEXPECTED_CONTENT_LENGTH\)$/,
    start: everyRequest('both', (x) => {
      const body = '{"status_number":"200","ts":1700000000000,"data":[]}';
      x.socket.write(
        rawResponse(
          '200 OK',
          [
            ['Content-Type', 'application/json'],
            ['Content-Length', 20],
            ['Content-Length', body.length],
          ],
          body,
        ),
      );
    }),
  },
  {
    name: 'not-http',
    breaks: 'speaks another protocol: an SSH banner on connect, then silence',
    layer: 'both',
    exit: [2],
    noAnswer: new RegExp(
      /^conform: target http:\/\/127\.0\.0\.1:\d+ /.source +
        /(does not answer HTTP \(HPE_[A-Z_]+\)|sent no HTTP response within \d+ ms)$/.source,
    ),
    async start() {
      const server = await startRawServer({
        onConnection: (socket) => {
          socket.write('SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n');
        },
      });
      return fromRaw(server, stats(server), 'both');
    },
  },
  {
    name: 'ws-mute',
    breaks: 'completes the WebSocket handshake, then never sends a frame, not even a close reply',
    layer: 'ws',
    exit: [1],
    mayPass: { 'ws.keepalive.ping-keeps-alive': 'it never closes a connection, so a pinged one stays open' },
    start: afterHandshake(() => {}),
  },
  {
    name: 'ws-silent-upgrade',
    breaks: 'takes the upgrade request and never answers it (REST is a working service)',
    layer: 'ws',
    exit: [1],
    start: everyRequest('ws', () => {}),
  },
  {
    name: 'ws-slow-upgrade',
    breaks: 'dribbles its 101 Switching Protocols one byte every two seconds',
    layer: 'ws',
    exit: [1],
    start: everyRequest('ws', (x) => {
      dribble(x, Buffer.from(switchingProtocols(x.request.headers['sec-websocket-key'] ?? ''), 'latin1'));
    }),
  },
  {
    name: 'ws-reset-upgrade',
    breaks: 'resets the connection (RST) as soon as the upgrade request arrives',
    layer: 'ws',
    exit: [1],
    start: everyRequest('ws', (x) => {
      x.socket.resetAndDestroy();
    }),
  },
  {
    name: 'ws-flood',
    breaks: 'floods frames as fast as the client reads (some not JSON, some not objects) and ignores every request',
    layer: 'ws',
    exit: [1],
    mayPass: {
      'ws.keepalive.ping-keeps-alive': 'it never closes a connection, so a pinged one stays open',
      'ws.frames.no-status-number': 'none of its frames carries status_number',
    },
    start: afterHandshake((socket, _x, s) => {
      // Bounded like every load loop: one minute or 2 GiB per connection, whichever comes first.
      const until = Date.now() + 60_000;
      s.track(socket);
      void pump(socket, 2 * 1024 * 1024 * 1024, () => (Date.now() < until ? FLOOD_BATCH : Buffer.alloc(0)));
    }),
  },
  {
    name: 'ws-frame-20mb',
    breaks: 'sends one 20 MB text frame as soon as the handshake completes',
    layer: 'ws',
    exit: [1],
    start: afterHandshake((socket, _x, s) => {
      const total = 20 * 1024 * 1024;
      socket.write(frameHeader({ opcode: OPCODE.text, length: total }));
      s.track(socket);
      void pump(socket, total, () => BIG_CHUNK);
    }),
  },
  {
    name: 'ws-big-frames',
    breaks:
      'sends 16 well-formed pushes 1 KiB under the default maxPayload (--max-payload) ' +
      'each, as soon as the handshake completes',
    layer: 'ws',
    exit: [1],
    mayPass: { 'ws.keepalive.ping-keeps-alive': 'it never closes a connection, so a pinged one stays open' },
    start: afterHandshake((socket, _x, s) => {
      s.track(socket);
      void pump(socket, 16 * BIG_PUSH.length, () => BIG_PUSH);
    }),
  },
  {
    name: 'ws-binary',
    breaks: 'answers every request with a binary frame and pushes binary frames',
    layer: 'ws',
    exit: [1],
    mayPass: {
      'ws.keepalive.ping-keeps-alive': 'it never closes a connection, so a pinged one stays open',
      'ws.frames.no-status-number': 'binary frames carry no status_number',
    },
    async start() {
      return httpTarget(
        'ws',
        (_req, res) => writeJson(res, 404, {}),
        (ws) => {
          const push = setInterval(() => ws.send(noise(256)), 100);
          ws.on('close', () => clearInterval(push));
          ws.on('message', (data) => ws.send(Buffer.from(String(data))));
        },
      );
    },
  },
  {
    name: 'ws-reset-mid-frame',
    breaks: 'announces a 1000-byte text frame, sends 300 bytes of it, then resets',
    layer: 'ws',
    exit: [1],
    start: afterHandshake((socket, x) => {
      socket.write(frameHeader({ opcode: OPCODE.text, length: 1000 }));
      socket.write(
        `{"method":"subscribe","message":"Success","code":"200","data":null,"pad":"${'x'.repeat(300)}`.slice(0, 300),
      );
      x.after(20, () => socket.resetAndDestroy());
    }),
  },
  {
    name: 'ws-slow-frame',
    breaks: 'completes the handshake, then dribbles a notice frame one byte every two seconds',
    layer: 'ws',
    exit: [1],
    mayPass: { 'ws.keepalive.ping-keeps-alive': 'it never closes a connection, so a pinged one stays open' },
    start: afterHandshake((socket, x) => {
      const bytes = textFrame('{"method":"subscribe","message":"Success","code":"200","data":null}');
      let i = 0;
      x.every(2000, () => {
        if (i < bytes.length) socket.write(bytes.subarray(i, ++i));
      });
    }),
  },
  {
    name: 'ws-masked',
    breaks: 'masks its frames, which a server must never do (RFC 6455 5.1)',
    layer: 'ws',
    exit: [1],
    start: afterHandshake((socket, _x, _s, incoming) => {
      const mask = Buffer.from([0x37, 0xfa, 0x21, 0x3d]);
      socket.write(
        frame({
          opcode: OPCODE.text,
          payload: '{"method":"subscribe","message":"Success","code":"200","data":null}',
          mask,
        }),
      );
      incoming(() => socket.write(frame({ opcode: OPCODE.text, payload: 'Pong!', mask })));
    }),
  },
  {
    name: 'ws-reserved-opcode',
    breaks: 'sends frames with reserved opcodes (0x3 data, 0xB control)',
    layer: 'ws',
    exit: [1],
    start: afterHandshake((socket, _x, _s, incoming) => {
      socket.write(frame({ opcode: 0x3, payload: '{"method":"subscribe","message":"Success","code":"200"}' }));
      incoming(() => socket.write(frame({ opcode: 0xb, payload: 'Pong!' })));
    }),
  },
  {
    name: 'ws-reserved-bits',
    breaks: 'sets RSV1 on its frames without having negotiated an extension',
    layer: 'ws',
    exit: [1],
    start: afterHandshake((socket) => {
      socket.write(
        frame({
          opcode: OPCODE.text,
          rsv: 0b100,
          payload: '{"method":"subscribe","message":"Success","code":"200","data":null}',
        }),
      );
    }),
  },
  {
    name: 'ws-invalid-utf8',
    breaks: 'sends a text frame that is not valid UTF-8',
    layer: 'ws',
    exit: [1],
    start: afterHandshake((socket) => {
      socket.write(
        textFrame(
          Buffer.concat([
            Buffer.from('{"method":"subscribe","message":"'),
            Buffer.from([0xc3, 0x28, 0xff, 0xfe]),
            Buffer.from('","code":"200"}'),
          ]),
        ),
      );
    }),
  },
  {
    name: 'ws-illegal-close-code',
    breaks: 'closes with status codes that must never be sent (1005, 999, 1004, 1015, 2999, in turn per connection)',
    layer: 'ws',
    exit: [1],
    async start() {
      const codes = [1005, 999, 1004, 1015, 2999];
      let n = 0;
      return afterHandshake((socket) => {
        socket.write(closeFrame(codes[n++ % codes.length]!, 'illegal'));
      })();
    },
  },
  {
    name: 'ws-oversize-close',
    breaks: 'sends a close frame with a 202-byte payload (control frames carry at most 125)',
    layer: 'ws',
    exit: [1],
    start: afterHandshake((socket) => {
      socket.write(closeFrame(1000, 'r'.repeat(200)));
    }),
  },
  {
    name: 'echo-key',
    breaks:
      'echoes the API key back in bodies, headers, status lines, handshake ' +
      'refusals, notices, pushes, pongs and close reasons',
    layer: 'both',
    exit: [1],
    mayPass: {
      'rest.auth.missing-key': 'it answers every request 401 with 50005',
      'rest.auth.invalid-key': 'it answers every request 401 with 50005',
      'ws.handshake.invalid-key': 'it accepts and then sends a 50005 notice, which the spec allows',
      'ws.handshake.error-body': 'its refusals carry status_number and message, never code',
      'ws.limits.connections.primary':
        'it refuses every third handshake with 50009, which can meet a connection limit by chance',
      'ws.limits.connections.slot-freed':
        'it refuses every third handshake with 50009, which can meet a connection limit by chance',
      'ws.limits.connections.limited':
        'it refuses every third handshake with 50009, which can meet a connection limit by chance',
      'ws.limits.connections.per-key':
        'it refuses every third handshake with 50009, which can meet a connection limit by chance',
      'ws.limits.keys-apart':
        'it refuses every third handshake with 50009, which can meet a connection limit by chance',
      'rest.auth.header-case.canonical': 'it serves /v1/pairs to a key however its header is spelled',
      'rest.auth.header-case.upper': 'it serves /v1/pairs to a key however its header is spelled',
      'rest.auth.header-case.lower': 'it serves /v1/pairs to a key however its header is spelled',
      'rest.pairs.defaults': 'its /v1/pairs is one page of one well-formed pair, which the paging rules hold for',
      'rest.pairs.page-default-size':
        'its /v1/pairs is one page of one well-formed pair, which the paging rules hold for',
      'rest.pairs.per-page': 'its /v1/pairs is one page of one well-formed pair, which the paging rules hold for',
      'rest.pairs.code-search': 'its one pair holds the fragment searched for, which is its own code',
      'ws.subscribe.invalid.empty-list':
        'it acknowledges every request with a success notice, and an empty subscription may be acknowledged',
      'rest.pairs.invalid-param.page-zero':
        'it answers any paging with its one page, as a lenient service may answer an invalid one',
      'rest.pairs.invalid-param.page-negative':
        'it answers any paging with its one page, as a lenient service may answer an invalid one',
      'rest.pairs.invalid-param.page-text':
        'it answers any paging with its one page, as a lenient service may answer an invalid one',
      'rest.pairs.invalid-param.per-page-zero':
        'it answers any paging with its one page, as a lenient service may answer an invalid one',
      'rest.pairs.invalid-param.per-page-text':
        'it answers any paging with its one page, as a lenient service may answer an invalid one',
    },
    async start() {
      let upgrades = 0;
      const keysSeen = new Set<string>();
      const target = await httpTarget(
        'both',
        (req, res) => {
          const key = keyOf(req);
          keysSeen.add(key);
          // The pairs of a keyed request are served, the key echoed in them, so the run gets past its
          // set-up check (a refused key stops it before any check) and every check meets the echo.
          if (key && req.url?.startsWith(PATHS.pairs)) {
            res.statusMessage = `Key ${key} accepted`;
            writeJson(
              res,
              200,
              {
                status_number: '200',
                ts: 1700000000000,
                data: [{ code: `Crypto:ALL:${key}/USDT`, name: `echo ${key}`, base: key, quote: 'USDT' }],
              },
              { 'x-echo-key': key, 'set-cookie': `session=${key}; HttpOnly` },
            );
            return;
          }
          res.statusMessage = `Key ${key} rejected`;
          writeJson(
            res,
            401,
            {
              status_number: '50005',
              ts: 1700000000000,
              data: { key, echo: `you sent ${key}` },
              message: `invalid key: ${key}`,
            },
            {
              'x-echo-key': key,
              'www-authenticate': `ApiKey realm="${key}"`,
              'set-cookie': `session=${key}; HttpOnly`,
            },
          );
        },
        (ws, req) => {
          const key = keyOf(req);
          ws.send(JSON.stringify({ method: 'error', message: `invalid key ${key}`, code: '50005', data: null }));
          const push = setInterval(
            () =>
              ws.send(
                JSON.stringify({
                  code: `Crypto:ALL:${key}/USDT`,
                  ask: '2',
                  bid: '1',
                  price: '1.5',
                  last_updated: 1,
                  sent_at: 2,
                }),
              ),
            100,
          );
          let messages = 0;
          ws.on('close', () => clearInterval(push));
          ws.on('message', (data) => {
            const text = String(data);
            let request: Record<string, unknown> = {};
            try {
              request = JSON.parse(text) as Record<string, unknown>;
            } catch {
              /* echo anyway */
            }
            if (request.method === 'ping') ws.send(`Pong! ${key}`);
            else
              ws.send(
                JSON.stringify({
                  method: request.method ?? 'error',
                  message: `Success for ${key}`,
                  code: '200',
                  id: request.id,
                  data: { key },
                }),
              );
            if (++messages === 3) ws.close(1008, `key ${key} revoked`);
          });
        },
        (req, socket, _head, accept) => {
          const key = keyOf(req);
          keysSeen.add(key);
          // Every third handshake is refused with a body and headers that carry the key.
          if (++upgrades % 3 === 0 || key === '') {
            const body = JSON.stringify({ status_number: '50009', message: `connection limit reached for key ${key}` });
            socket.end(
              `HTTP/1.1 429 Key ${key} over limit\r\nX-Echo-Key: ${key}\r\nContent-Type: ` +
                `application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
            );
            return;
          }
          accept();
        },
      );
      target.stats.keysSeen = keysSeen;
      target.wss.on('headers', (headers, req) => headers.push(`X-Echo-Key: ${keyOf(req)}`));
      return target;
    },
  },
];

/** A port on loopback with nothing listening (bound, then released). */
export async function closedPort(): Promise<string> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
