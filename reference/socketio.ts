/**
 * The stream over Socket.IO, on the same HTTP server as REST and the raw WebSocket: one named
 * event carries every message both ways, and the protocol is session.ts's, so entitlements,
 * limits (counted per key across both transports), faults and the keep-alive are the same.
 *
 * Handshakes are decided before Socket.IO sees them: Socket.IO's `allowRequest` can only answer
 * with engine.io's own body, and the spec wants `{status_number, message}` in the HTTP phase.
 * Both handshake forms are served: the WebSocket upgrade (what conform's client sends) and the
 * long-polling GET (what a browser's socket.io-client sends first).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket as NetSocket } from 'node:net';
import { Server, type Socket } from 'socket.io';
import type { Admission, Link, StreamServer } from './stream.ts';

/** Socket.IO's default path; the spec shows none. */
export const SOCKETIO_PATH = '/socket.io/';

/** The WebSocket under a Socket.IO connection, when it runs on one (not long-polling). */
type WsLike = { bufferedAmount?: number; terminate?: () => void };
const wsOf = (socket: Socket): WsLike | undefined => (socket.conn.transport as unknown as { socket?: WsLike }).socket;

/** A Socket.IO connection as the protocol's Link: every message is one event. */
class SocketIoLink implements Link {
  readonly kind = 'socketio';
  /** `jsonText`: messages are emitted as JSON text strings rather than objects (a dialect's choice). */
  constructor(
    private readonly socket: Socket,
    private readonly event: string,
    private readonly jsonText: boolean,
  ) {}

  get open(): boolean {
    return this.socket.connected;
  }

  get backlog(): number {
    const ws = wsOf(this.socket);
    if (typeof ws?.bufferedAmount === 'number') return ws.bufferedAmount;
    // Long-polling: what waits for the next poll.
    const queued = (this.socket.conn as unknown as { writeBuffer?: { data?: unknown }[] }).writeBuffer ?? [];
    let bytes = 0;
    for (const p of queued) bytes += typeof p.data === 'string' ? p.data.length : 0;
    return bytes;
  }

  sendJson(value: Record<string, unknown>, text: string): void {
    this.socket.emit(this.event, this.jsonText ? text : value);
  }
  sendText(text: string): void {
    this.socket.emit(this.event, text);
  }
  /** Socket.IO carries no close code or reason: the client sees `io server disconnect`. */
  close(): void {
    this.socket.disconnect(true);
  }

  terminate(): void {
    const ws = wsOf(this.socket);
    if (ws?.terminate) ws.terminate();
    else this.socket.conn.close(true);
  }

  sendPushes(jsons: readonly string[]): void {
    for (const json of jsons) this.socket.emit(this.event, this.jsonText ? json : (JSON.parse(json) as unknown));
  }

  /** Pre-encoded event packets (`2["event",{...}]`), written as engine.io messages like a Socket.IO broadcast. */
  writePushes(packets: readonly string[]): void {
    for (const p of packets) this.socket.conn.write(p);
  }
}

/** Whether a request opens a new engine.io session (no `sid` yet) rather than continuing one. */
function isHandshake(req: IncomingMessage): boolean {
  return !new URL(req.url ?? '/', 'http://reference.local').searchParams.has('sid');
}

export interface SocketIoOptions {
  /** The event that carries the messages. */
  event: string;
  /** The namespace the stream is served on; default `/`. */
  namespace?: string;
  /** Messages emitted as JSON text strings rather than objects; default false. */
  jsonText?: boolean;
  /**
   * Where a handshake is refused: `http` (default: the spec's JSON body in place of the upgrade)
   * or `connect-error` (the connection opens, and the namespace middleware refuses it with a
   * CONNECT_ERROR whose data is that body).
   */
  refusals?: 'http' | 'connect-error';
  /** Largest inbound message, bytes. */
  maxPayload: number;
  /**
   * The spec's keep-alive window: Socket.IO's own heartbeat runs three times within it, so a test
   * can see it does not count as a ping.
   */
  pingTimeoutMs: number;
  /** Default SOCKETIO_PATH. */
  path?: string;
}

/** Socket.IO beside the raw WebSocket; the service's HTTP server hands it the requests it `handles`. */
export class SocketIoStream {
  readonly path: string;
  private readonly io: Server;
  /** Admitted handshakes by their request, until Socket.IO's connection picks them up. */
  private readonly admitted = new WeakMap<IncomingMessage, Admission>();

  constructor(
    private readonly stream: StreamServer,
    readonly options: SocketIoOptions,
  ) {
    this.path = options.path ?? SOCKETIO_PATH;
    this.io = new Server({
      path: this.path,
      serveClient: false,
      maxHttpBufferSize: options.maxPayload,
      perMessageDeflate: false,
      httpCompression: false,
      // Socket.IO's defaults (25 s, 20 s) unless the keep-alive window is shorter (tests).
      pingInterval: Math.min(25_000, Math.max(100, Math.floor(options.pingTimeoutMs / 3))),
      pingTimeout: Math.min(20_000, Math.max(100, options.pingTimeoutMs)),
    });
    // Attached to an HTTP server that never listens: Socket.IO gets its engine; requests come from dispatch.
    this.io.attach(createServer());
    const namespace = options.namespace ?? '/';
    stream.enableSocketIo(options.event, namespace, options.jsonText === true);
    const nsp = this.io.of(namespace);
    if (options.refusals === 'connect-error') nsp.use((socket, next) => this.admitInNamespace(socket, next));
    // A handshake admitted here that engine.io then rejects frees its slot.
    this.io.engine.on('connection_error', (err: { req?: IncomingMessage }) => {
      if (err.req) this.admitted.get(err.req)?.release();
    });
    nsp.on('connection', (socket) => this.onConnection(socket));
  }

  /** Whether a request belongs to Socket.IO. */
  handles(req: IncomingMessage): boolean {
    const url = req.url ?? '/';
    return url.startsWith(this.path) || url.split('?')[0] === this.path.replace(/\/$/, '');
  }

  /** Whether handshakes are decided in the HTTP phase (else by the namespace middleware). */
  private get httpRefusals(): boolean {
    return this.options.refusals !== 'connect-error';
  }

  /**
   * The namespace middleware of `connect-error` refusals: admits, or refuses with the spec's body
   * as CONNECT_ERROR data.
   */
  private admitInNamespace(socket: Socket, next: (err?: Error) => void): void {
    const admitted = this.stream.admit(socket.request, socket.handshake.address);
    if (!('key' in admitted)) {
      const refusal = Object.assign(new Error(admitted.message), {
        data: JSON.parse(this.stream.refusalResponse(admitted).body) as unknown,
      });
      return next(refusal);
    }
    socket.conn.once('close', admitted.release);
    this.admitted.set(socket.request, admitted);
    next();
  }

  /** A long-polling request; a new session is decided first, and refused with the spec's JSON body. */
  request(req: IncomingMessage, res: ServerResponse): void {
    if (this.httpRefusals && isHandshake(req)) {
      const admitted = this.stream.admit(req, req.socket.remoteAddress ?? '');
      if (!('key' in admitted)) {
        const { http, body } = this.stream.refusalResponse(admitted);
        res.writeHead(http, {
          'Content-Type': 'application/json; charset=utf-8',
          'Content-Length': Buffer.byteLength(body),
        });
        res.end(body);
        return;
      }
      this.admitted.set(req, admitted);
    }
    this.io.engine.handleRequest(req, res);
  }

  /** A WebSocket upgrade: a new session is decided first and refused in place of the upgrade. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => {});
    if (this.httpRefusals && isHandshake(req)) {
      const admitted = this.stream.admit(req, (socket as NetSocket).remoteAddress ?? '');
      if (!('key' in admitted)) return this.stream.refuse(socket, admitted);
      // The raw socket closes whether or not the connection completes, so the slot is always freed.
      socket.once('close', admitted.release);
      this.admitted.set(req, admitted);
    }
    this.io.engine.handleUpgrade(req, socket, head);
  }

  private onConnection(socket: Socket): void {
    const admitted = this.admitted.get(socket.request);
    if (!admitted) {
      socket.disconnect(true);
      return;
    }
    this.admitted.delete(socket.request);
    socket.conn.once('close', admitted.release);
    const client = this.stream.attach(
      new SocketIoLink(socket, this.options.event, this.options.jsonText === true),
      admitted,
    );
    socket.on(this.options.event, (payload: unknown) => this.stream.onPayload(client, payload));
    socket.on('disconnect', () => {
      // The Socket.IO connection ended (a client's DISCONNECT arrives before its WebSocket closes).
      admitted.release();
      this.stream.forget(client);
    });
  }

  /** Ends every Socket.IO connection. */
  close(): void {
    this.io.disconnectSockets(true);
    this.io.engine.close();
  }
}
