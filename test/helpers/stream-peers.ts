/**
 * The two stream transports as the session tests see them: a peer server of each kind on port 0
 * (peers of the client, not the thing under test) and the client factory that talks to it. The
 * contract both clients keep is one table of cases (stream-contract.ts), which
 * test/unit/ws-session.test.ts and test/unit/socketio-session.test.ts each run with their transport.
 */
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo, Server as NetServer, Socket as NetSocket } from 'node:net';
import { once } from 'node:events';
import { Server as IoServer, type ServerOptions } from 'socket.io';
import { WebSocketServer } from 'ws';
import type { Evidence } from '../../src/check.ts';
import { createStreamClient, type StreamClientOptions } from '../../src/transports/ws-session.ts';
import { createSocketIoClient } from '../../src/transports/socketio-session.ts';
import type { StreamClient, StreamSession } from '../../src/transports/stream.ts';

/** The Socket.IO event the peers speak on. */
export const EVENT = 'price';

const cleanups: (() => Promise<void> | void)[] = [];
/** Registers a teardown step; `cleanup` runs them last first (register it with afterEach). */
export function deferCleanup(step: () => Promise<void> | void): void {
  cleanups.push(step);
}
export async function cleanup(): Promise<void> {
  while (cleanups.length) await cleanups.pop()!();
}

/** Listens on 127.0.0.1, port 0, and returns the port. */
export async function listen(server: HttpServer | NetServer): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** The server's side of one connection, in the transport's own terms. */
export interface PeerConnection {
  /** The handshake request. */
  request: IncomingMessage;
  /** Sends one message: a string as text, a Buffer as binary, anything else as JSON. */
  send(message: unknown): void;
  /** Calls back with every message the client sends, JSON parsed where it parses. */
  onMessage(listener: (message: unknown) => void): void;
  /** Closes the connection from the server side (seen by the client as the transport's `serverClose`). */
  close(): void;
}

export interface PeerOptions {
  /** Sees each upgrade request first; returning true takes the socket (to write raw HTTP bytes, say). */
  raw?: (req: IncomingMessage, socket: NetSocket) => boolean;
  /** Socket.IO server options (Socket.IO peers only). */
  io?: Partial<ServerOptions>;
}

export interface Peer {
  url: string;
  port: number;
  /** Every upgrade request the peer received, raw ones included. */
  handshakes: IncomingMessage[];
  /** The Socket.IO server (Socket.IO peers only). */
  io?: IoServer;
}

export interface StreamTransport {
  name: 'ws' | 'socketio';
  /** The client factory under test. */
  create(options: StreamClientOptions): StreamClient;
  /** A peer of this transport, its connection handler written by the test. */
  peer(onConnection?: (c: PeerConnection) => void, options?: PeerOptions): Promise<Peer>;
  /** The URL the client opens for a server listening on `port`. */
  urlAt(port: number): string;
  /** How a server-side `close()` reaches the client. */
  serverClose: { code: number; reason: string };
}

/** One HTTP server for the upgrades: raw ones first, then the transport's. */
async function upgradeServer(
  options: PeerOptions,
  accept: (req: IncomingMessage, socket: NetSocket, head: Buffer) => void,
  http = createServer(),
): Promise<{ port: number; handshakes: IncomingMessage[] }> {
  const handshakes: IncomingMessage[] = [];
  const sockets = new Set<NetSocket>();
  http.on('upgrade', (req: IncomingMessage, socket: NetSocket, head: Buffer) => {
    handshakes.push(req);
    sockets.add(socket);
    socket.on('error', () => undefined);
    if (!options.raw?.(req, socket)) accept(req, socket, head);
  });
  const port = await listen(http);
  deferCleanup(
    () =>
      new Promise<void>((r) => {
        // Upgraded sockets leave the HTTP server's books, so they are destroyed here.
        for (const s of sockets) s.destroy();
        http.closeAllConnections();
        http.close(() => r());
      }),
  );
  return { port, handshakes };
}

const asText = (raw: string): unknown => {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
};

export const wsTransport: StreamTransport = {
  name: 'ws',
  create: createStreamClient,
  urlAt: (port) => `ws://127.0.0.1:${port}/stream`,
  serverClose: { code: 4000, reason: 'closed by the peer' },
  async peer(onConnection, options = {}) {
    const wss = new WebSocketServer({ noServer: true });
    deferCleanup(() => {
      for (const c of wss.clients) c.terminate();
      wss.close();
    });
    const { port, handshakes } = await upgradeServer(options, (req, socket, head) =>
      wss.handleUpgrade(req, socket, head, (ws) =>
        onConnection?.({
          request: req,
          send: (m) => ws.send(typeof m === 'string' || Buffer.isBuffer(m) ? m : JSON.stringify(m)),
          onMessage: (listener) =>
            ws.on('message', (data, isBinary) => listener(isBinary ? data : asText(String(data)))),
          close: () => ws.close(wsTransport.serverClose.code, wsTransport.serverClose.reason),
        }),
      ),
    );
    return { url: wsTransport.urlAt(port), port, handshakes };
  },
};

export const socketIoTransport: StreamTransport = {
  name: 'socketio',
  create: (options) => createSocketIoClient({ ...options, event: EVENT }),
  urlAt: (port) => `ws://127.0.0.1:${port}/socket.io/`,
  serverClose: { code: 1000, reason: 'io server disconnect' },
  async peer(onConnection, options = {}) {
    const io = new IoServer({ serveClient: false, ...options.io });
    // Attached to a server that never listens: Socket.IO gets its engine, the peer dispatches to it.
    io.attach(createServer());
    io.on('connection', (s) =>
      onConnection?.({
        request: s.request,
        send: (m) => s.emit(EVENT, m),
        onMessage: (listener) => s.on(EVENT, listener),
        close: () => s.disconnect(true),
      }),
    );
    deferCleanup(() => {
      io.disconnectSockets(true);
      io.engine.close();
    });
    const http = createServer((req, res) => io.engine.handleRequest(req, res));
    const { port, handshakes } = await upgradeServer(
      options,
      (req, socket, head) => io.engine.handleUpgrade(req, socket, head),
      http,
    );
    return { url: socketIoTransport.urlAt(port), port, handshakes, io };
  },
};

/** The key every client is given as its primary key. */
export const KEY = 'sk_live_stream_session_test_key_123';

/** A client of `transport` recording its evidence, closed after the test. */
export function client(
  transport: StreamTransport,
  url: string,
  extra: Partial<StreamClientOptions> = {},
): { stream: StreamClient; evidence: Evidence[] } {
  const evidence: Evidence[] = [];
  const stream = transport.create({
    url,
    primaryKey: KEY,
    record: (e) => evidence.push(e),
    waitMs: 1000,
    handshakeTimeoutMs: 2000,
    ...extra,
  });
  deferCleanup(() => stream.closeAll());
  return { stream, evidence };
}

export async function openOk(stream: StreamClient, options = {}): Promise<StreamSession> {
  const result = await stream.open(options);
  if (!result.ok) throw new Error(`refused ${result.status} ${result.text}`);
  return result.session;
}
