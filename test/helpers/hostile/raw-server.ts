/**
 * A TCP server on loopback that reads HTTP request heads by hand and lets a hostile target answer
 * with raw bytes, so it can send what node:http would refuse to write. Timers a target starts are
 * tied to the socket and cleared when it closes; `close()` destroys every connection.
 */
import net from 'node:net';
import { once } from 'node:events';
import { acceptFor } from '../../../src/ws-frame.ts';

/** One request head as read from the wire (bodies are ignored: the harness only sends GETs). */
export interface RawRequest {
  method: string;
  /** Request target as sent, e.g. `/v1/price?code=...`. */
  target: string;
  /** Lower-cased names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  isUpgrade: boolean;
}

/** What a handler gets for each request on a connection. */
export interface RawExchange {
  socket: net.Socket;
  request: RawRequest;
  /**
   * Stops reading further requests on this socket: the handler owns the bytes from now on; returns
   * those already read past the head.
   */
  detach(): Buffer;
  /** Runs `fn` every `ms` until the socket closes. */
  every(ms: number, fn: () => void): void;
  /** Runs `fn` once after `ms` unless the socket closed first. */
  after(ms: number, fn: () => void): void;
}

export interface RawServer {
  readonly port: number;
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  /** Connections accepted so far. */
  readonly connections: () => number;
  close(): Promise<void>;
}

const MAX_HEAD_BYTES = 64 * 1024;

/** Parses one request head (without the blank line); undefined if it is not HTTP/1.x. */
export function parseHead(head: string): RawRequest | undefined {
  const lines = head.split('\r\n');
  const m = /^([A-Z]+) (\S+) HTTP\/1\.[01]$/.exec(lines[0] ?? '');
  if (!m) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const isUpgrade = (headers.upgrade ?? '').toLowerCase() === 'websocket';
  return { method: m[1]!, target: m[2]!, headers, isUpgrade };
}

/**
 * Starts a raw server on 127.0.0.1, port 0. `onConnection` runs first for every socket (a target
 * that answers before any request uses it); `onRequest` for every request head read.
 */
export async function startRawServer(
  handlers: {
    onConnection?: (socket: net.Socket, tools: Pick<RawExchange, 'every' | 'after'>) => void;
    onRequest?: (exchange: RawExchange) => void;
  },
  host = '127.0.0.1',
): Promise<RawServer> {
  const sockets = new Set<net.Socket>();
  let count = 0;
  const server = net.createServer((socket) => {
    count++;
    sockets.add(socket);
    const timers: NodeJS.Timeout[] = [];
    socket.on('close', () => {
      sockets.delete(socket);
      for (const t of timers) clearTimeout(t);
    });
    // A hostile target never cares whether the harness hung up on it.
    socket.on('error', () => {});
    const every = (ms: number, fn: () => void): void => {
      timers.push(
        setInterval(() => {
          if (!socket.destroyed) fn();
        }, ms),
      );
    };
    const after = (ms: number, fn: () => void): void => {
      timers.push(
        setTimeout(() => {
          if (!socket.destroyed) fn();
        }, ms),
      );
    };
    handlers.onConnection?.(socket, { every, after });
    if (!handlers.onRequest) {
      socket.resume();
      return;
    }
    let buffer = Buffer.alloc(0);
    let detached = false;
    const onData = (chunk: Buffer): void => {
      buffer = Buffer.concat([buffer, chunk]);
      while (!detached) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) {
          if (buffer.length > MAX_HEAD_BYTES) socket.destroy();
          return;
        }
        const head = buffer.subarray(0, end).toString('latin1');
        buffer = buffer.subarray(end + 4);
        const request = parseHead(head);
        if (!request) {
          socket.destroy();
          return;
        }
        handlers.onRequest!({
          socket,
          request,
          detach: () => {
            detached = true;
            socket.off('data', onData);
            const rest = buffer;
            buffer = Buffer.alloc(0);
            return rest;
          },
          every,
          after,
        });
        if (socket.destroyed) return;
      }
    };
    socket.on('data', onData);
  });
  server.listen(0, host);
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    origin: `http://${host}:${port}`,
    connections: () => count,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A complete 101 response for a client's Sec-WebSocket-Key: the handshake a raw WebSocket target answers with. */
export function switchingProtocols(clientKey: string): string {
  return [
    'HTTP/1.1 101 Switching Protocols',
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Accept: ${acceptFor(clientKey)}`,
    '',
    '',
  ].join('\r\n');
}

/** Serialises a complete HTTP/1.1 response (headers written as given, so they may lie). */
export function rawResponse(
  status: string,
  headers: readonly [string, string | number][],
  body: string | Buffer = '',
): Buffer {
  const head = [`HTTP/1.1 ${status}`, ...headers.map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
  return Buffer.concat([Buffer.from(head, 'latin1'), typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
}

/**
 * Writes `total` bytes made by `chunk(i)` (an empty chunk stops early) with back-pressure, as fast
 * as the peer reads; resolves with the bytes the socket accepted when done or when the peer hangs up.
 */
export async function pump(socket: net.Socket, total: number, chunk: (i: number) => Buffer): Promise<number> {
  let sent = 0;
  let i = 0;
  while (sent < total && !socket.destroyed && socket.writable) {
    let c = chunk(i++);
    if (c.length === 0) break;
    if (sent + c.length > total) c = c.subarray(0, total - sent);
    sent += c.length;
    if (!socket.write(c) && !(await drainedOrClosed(socket))) break;
  }
  return socket.bytesWritten;
}

/** Waits for `drain` (true) or `close` (false), leaving no listener behind. */
function drainedOrClosed(socket: net.Socket): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (drained: boolean) => () => {
      socket.off('drain', onDrain);
      socket.off('close', onClose);
      resolve(drained);
    };
    const onDrain = done(true);
    const onClose = done(false);
    socket.on('drain', onDrain);
    socket.on('close', onClose);
  });
}
