/**
 * The REST load generator's HTTP/1.1 client: keep-alive connections on raw sockets, each request
 * written from bytes prepared once per path, each response read in place in the socket's chunk
 * (status code, framing headers, and the envelope's `status_number` found in the body's bytes),
 * with no object, header map or string made per response beyond that value.
 *
 * Written by hand for speed, as the fan-out's frame reader is: undici's Pool and autocannon build
 * a request object, a header list and a body buffer for every response, which is most of a
 * generator's CPU per request; measured beside wrk in docs/benchmarks.md. It speaks only what a
 * load run needs: GET with fixed headers, Content-Length and chunked bodies, keep-alive, optional
 * pipelining, a time limit per request, and a connection the server closes opened again.
 */
import net from 'node:net';
import tls from 'node:tls';
import { ResponseReader } from './http-reader.ts';

/** What the client tells its owner about each request, identified by the tag the owner gave it. */
export interface HttpLoadEvents {
  /** The request was written to a socket. */
  sent(tag: number): void;
  /** Its response ended: the HTTP status and the body's `status_number` (undefined when it had none). */
  response(tag: number, status: number, statusNumber: string | undefined): void;
  /** It failed: `timeout` (no complete response within the time limit) or the socket's error code. */
  failed(tag: number, code: string): void;
}

export interface HttpLoadClientOptions {
  /** `http://host:port` or `https://host:port`. */
  origin: string;
  /** Request paths (with query), addressed by their index. */
  paths: readonly string[];
  headers: Record<string, string>;
  /** Most connections opened. */
  connections: number;
  /** Requests in flight on one connection at once (1: none pipelined). */
  pipelining: number;
  /** A request with no complete response by then fails as `timeout`, and its connection is dropped. */
  timeoutMs: number;
  /** CA certificates an https: origin's certificate is verified against (Node's own and the run's `--ca`). */
  ca?: string[];
}

/** How often the in-flight requests are held to their time limit: a tenth of it, within 10..1000 ms. */
const sweepMs = (timeoutMs: number): number => Math.min(1000, Math.max(10, Math.floor(timeoutMs / 10)));

/** One keep-alive connection: its socket, its requests in flight (oldest first) and its reader. */
class Connection {
  readonly tags: number[] = [];
  readonly deadlines: number[] = [];
  closed = false;
  readonly reader: ResponseReader;

  constructor(
    readonly socket: net.Socket,
    onResponse: (status: number, statusNumber: string | undefined, keepAlive: boolean) => void,
    onViolation: () => void,
  ) {
    this.reader = new ResponseReader(onResponse, onViolation);
  }
}

/** Keep-alive connections to one origin, opened as requests need them, up to the limit. */
export class HttpLoadClient {
  private readonly requests: Buffer[];
  private readonly conns: Connection[] = [];
  /** Connections that can take another request now. */
  private readonly free: Connection[] = [];
  /** Requests waiting for a connection: path index and tag, in pairs. */
  private readonly queue: number[] = [];
  private queueHead = 0;
  private readonly sweeper: NodeJS.Timeout;
  private closing = false;
  private readonly readBuffer = Buffer.allocUnsafe(64 * 1024);
  private readonly target: { host: string; port: number; secure: boolean; servername: string };

  constructor(
    private readonly options: HttpLoadClientOptions,
    private readonly events: HttpLoadEvents,
  ) {
    const url = new URL(options.origin);
    const secure = url.protocol === 'https:';
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // SNI names a host, never an address (RFC 6066): an IP target sends none.
    this.target = {
      host,
      port: Number(url.port) || (secure ? 443 : 80),
      secure,
      servername: net.isIP(host) ? '' : host,
    };
    const head = Object.entries({ host: url.host, ...options.headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    this.requests = options.paths.map((p) => Buffer.from(`GET ${p} HTTP/1.1\r\n${head}\r\n`, 'latin1'));
    this.sweeper = setInterval(() => this.sweep(), sweepMs(options.timeoutMs));
    this.sweeper.unref();
  }

  /** Requests in flight or waiting for a connection. */
  get pending(): number {
    let n = (this.queue.length - this.queueHead) / 2;
    for (const c of this.conns) n += c.tags.length;
    return n;
  }

  /** Whether a request sent now would be written at once (a connection free, or one more may be opened). */
  get canSendNow(): boolean {
    return this.free.length > 0 || this.conns.length < this.options.connections;
  }

  /** Sends the request for path `pathIndex` now, or as soon as a connection can take it. */
  send(pathIndex: number, tag: number): void {
    if (this.closing) return;
    const conn = this.free.pop() ?? this.open();
    if (conn) this.write(conn, pathIndex, tag);
    else this.queue.push(pathIndex, tag);
  }

  /** Drops every connection; requests still in flight or queued fail as `closed`. */
  close(): void {
    this.closing = true;
    clearInterval(this.sweeper);
    for (let i = this.queueHead; i < this.queue.length; i += 2) this.events.failed(this.queue[i + 1]!, 'closed');
    this.queue.length = 0;
    this.queueHead = 0;
    for (const c of [...this.conns]) this.drop(c, 'closed');
  }

  private open(): Connection | undefined {
    if (this.conns.length >= this.options.connections) return undefined;
    const { host, port, secure, servername } = this.target;
    const socket = secure
      ? // Verified whatever NODE_TLS_REJECT_UNAUTHORIZED says; `ca` adds the run's CA to Node's own.
        tls.connect({
          host,
          port,
          ...(servername ? { servername } : {}),
          rejectUnauthorized: true,
          ...(this.options.ca ? { ca: this.options.ca } : {}),
        })
      : net.connect({
          host,
          port,
          // Reads land in one buffer of the client's, read in place before the next: no Buffer per chunk.
          onread: { buffer: this.readBuffer, callback: (n: number) => this.onRead(conn, n) },
        });
    socket.setNoDelay(true);
    const conn: Connection = new Connection(
      socket,
      (status, statusNumber, keepAlive) => this.answered(conn, status, statusNumber, keepAlive),
      () => this.drop(conn, 'EPROTOCOL'),
    );
    this.conns.push(conn);
    if (secure) socket.on('data', (chunk: Buffer) => conn.reader.read(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => this.drop(conn, err.code ?? 'ESOCKET'));
    socket.on('close', () => {
      // A body framed by the close ends with it.
      conn.reader.end();
      this.drop(conn, 'ECONNRESET');
    });
    return conn;
  }

  private onRead(conn: Connection, n: number): boolean {
    conn.reader.read(this.readBuffer, n);
    return true;
  }

  private write(conn: Connection, pathIndex: number, tag: number): void {
    conn.tags.push(tag);
    conn.deadlines.push(performance.now() + this.options.timeoutMs);
    conn.socket.write(this.requests[pathIndex]!);
    if (conn.tags.length < this.options.pipelining) this.free.push(conn);
    this.events.sent(tag);
  }

  private answered(conn: Connection, status: number, statusNumber: string | undefined, keepAlive: boolean): void {
    const tag = conn.tags.shift()!;
    conn.deadlines.shift();
    if (!keepAlive) {
      // The server closes after this response: the ones pipelined behind it go to other connections.
      this.events.response(tag, status, statusNumber);
      this.drop(conn, 'ECONNRESET');
      return;
    }
    if (conn.tags.length === this.options.pipelining - 1) this.free.push(conn);
    this.events.response(tag, status, statusNumber);
    this.next();
  }

  /** Gives queued requests to connections that can take them. */
  private next(): void {
    while (this.queueHead < this.queue.length) {
      const conn = this.free.pop() ?? this.open();
      if (!conn) return;
      const pathIndex = this.queue[this.queueHead++]!;
      const tag = this.queue[this.queueHead++]!;
      if (this.queueHead === this.queue.length) {
        this.queue.length = 0;
        this.queueHead = 0;
      }
      this.write(conn, pathIndex, tag);
    }
  }

  /** Ends a connection: its requests in flight fail with `code`; waiting ones get a new connection. */
  private drop(conn: Connection, code: string): void {
    if (conn.closed) return;
    conn.closed = true;
    conn.socket.destroy();
    const i = this.conns.indexOf(conn);
    if (i >= 0) this.conns.splice(i, 1);
    const f = this.free.indexOf(conn);
    if (f >= 0) this.free.splice(f, 1);
    const tags = conn.tags.splice(0);
    conn.deadlines.length = 0;
    for (const tag of tags) this.events.failed(tag, code);
    if (!this.closing) this.next();
  }

  /** Fails the requests past their time limit, with their connections (a late answer would be misread). */
  private sweep(): void {
    const now = performance.now();
    for (const conn of [...this.conns])
      if (conn.deadlines.length > 0 && conn.deadlines[0]! <= now) this.drop(conn, 'timeout');
  }
}
