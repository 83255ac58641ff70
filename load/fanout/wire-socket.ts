/**
 * The load generator's WebSocket client (RFC 6455, client side, no extensions). `ws` builds a
 * Buffer and emits an event for every frame, which is most of a generator's CPU at 200,000
 * frames/s; this one reads the frames in place in each socket chunk (src/ws-frame.ts), hands the
 * caller a byte range, and stamps every chunk with the clock before it parses anything.
 * A plain (ws:) connection does its own opening handshake on a raw socket whose reads land in one
 * buffer of the thread's, read in place before the next: Node's stream would allocate a buffer
 * for each of the 100,000 chunks a second of a 200,000 frames/s run (allocation, zero-filling and
 * the major collections they bring were a fifth of a worker's CPU and its longest pauses). A wss:
 * connection goes through `https`, as TLS reads cannot land in a caller's buffer.
 * Only the load workers use it: conformance sessions keep `ws`, which checks every rule.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import https from 'node:https';
import net, { type Socket } from 'node:net';
import { NetworkError } from '../../src/errors.ts';
import { monoNow } from '../mono-clock.ts';
import { OPCODE, type ReaderEvents, WireReader, acceptFor, closeFrame, frame } from '../../src/ws-frame.ts';
import { HandshakeReader, NO_HANDSHAKE } from './handshake-reader.ts';

/** A handshake refusal's body is read up to this many bytes (enough for the spec's JSON). */
const REFUSAL_BODY_MAX = 4096;
/** A handshake answer whose head runs longer than this is no answer a WebSocket server gives. */
const HANDSHAKE_HEAD_MAX = 16 * 1024;
const CLOSE_TIMEOUT_MS = 5000;
/**
 * Every plain socket of this thread reads into this buffer: a chunk is read whole, in place, before
 * the next read, and whatever of it is kept is copied (the reader's partial frames, a chunk cache).
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/** A socket's events: its messages and chunks as the reader gives them (`t` is when the chunk arrived), and these. */
export interface WireEvents extends ReaderEvents {
  /** The handshake is done. */
  open(): void;
  /** The server answered the upgrade with another status: the status and the body's first bytes. */
  refused(status: number, body: Buffer): void;
  /**
   * A failure to connect or hand-shake, or a protocol violation by the server (the socket is then
   * dropped). `errno` is Node's code (ECONNREFUSED…) or this client's: ETIMEDOUT, EHANDSHAKE, EPROTOCOL.
   */
  error(err: NetworkError): void;
  /** The socket is gone: the code of the server's close frame, 1005 when it had none, 1006 when no close frame came. */
  close(code: number): void;
}

export interface WireOptions {
  headers: Record<string, string>;
  handshakeTimeoutMs: number;
  localAddress?: string;
  /** A bigger message is a protocol error (default 16 MiB; the spec's frames are a few hundred bytes). */
  maxPayload?: number;
  /** wss: trusted certificates instead of Node's (NODE_EXTRA_CA_CERTS adds to those as well). */
  ca?: string | Buffer | (string | Buffer)[];
}

export class WireSocket {
  state: 'connecting' | 'open' | 'closing' | 'closed' = 'connecting';
  private socket: Socket | null = null;
  /** The upgrade request, until it has given its socket (10,000 of them are worth freeing). */
  private request: http.ClientRequest | null = null;
  private readonly reader: WireReader;
  /** ws: reads the server's answer to the upgrade, until the connection is open. */
  private handshake: HandshakeReader = NO_HANDSHAKE;
  private closeCode = 1006;
  private closeSent = false;
  private failed = false;
  private ended = false;
  private closeTimer: NodeJS.Timeout | null = null;

  constructor(
    url: string,
    options: WireOptions,
    private readonly events: WireEvents,
  ) {
    const target = new URL(url);
    const secure = target.protocol === 'wss:';
    const key = randomBytes(16).toString('base64');
    this.reader = new WireReader(options.maxPayload ?? 16 * 1024 * 1024, events, {
      ping: (payload) => this.write(frame({ opcode: OPCODE.pong, payload, mask: randomBytes(4) })),
      close: (code) => {
        this.closeCode = code ?? 1005;
        this.state = 'closing';
        this.sendClose(code ?? 1000);
        this.socket!.end();
      },
      violation: (what) => this.violation(what),
    });
    if (secure) this.upgradeOverHttps(target, key, options);
    else this.upgradeRaw(target, key, options);
  }

  /** wss: the opening handshake through `https`, the frames from the upgraded socket's stream. */
  private upgradeOverHttps(target: URL, key: string, options: WireOptions): void {
    const request = https.request({
      hostname: target.hostname.replace(/^\[|\]$/g, ''),
      port: target.port || 443,
      path: `${target.pathname}${target.search}`,
      // Upgraded sockets must not come from, or go back to, a keep-alive pool.
      agent: false,
      timeout: options.handshakeTimeoutMs,
      headers: { ...options.headers, ...upgradeHeaders(key) },
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      // Verified whatever NODE_TLS_REJECT_UNAUTHORIZED says; `ca` adds the run's CA to Node's own.
      rejectUnauthorized: true,
      ...(options.ca ? { ca: options.ca } : {}),
    });
    this.request = request;
    request.on('timeout', () => request.destroy(new NetworkError('handshake timed out', 'ETIMEDOUT')));
    request.on('error', (err: NodeJS.ErrnoException) =>
      this.fail(err instanceof NetworkError ? err : new NetworkError(err.message, err.code, { cause: err })),
    );
    request.on('response', (res) => {
      // Not switched: a refusal in the handshake (the spec's JSON body, or anything else).
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < REFUSAL_BODY_MAX) {
          chunks.push(c);
          size += c.length;
        }
      });
      res.on('end', () => this.refuse(res.statusCode ?? 0, Buffer.concat(chunks)));
      res.on('error', () => {
        /* the refusal is reported from what arrived */
      });
    });
    request.on('upgrade', (res, socket, head) => {
      if (!this.accepted(key, res.headers['sec-websocket-accept'], res.headers['sec-websocket-extensions'])) {
        socket.destroy();
        return;
      }
      request.setTimeout(0);
      this.request = null;
      this.socket = socket;
      socket.setNoDelay(true);
      socket.setTimeout(0);
      socket.on('data', (chunk: Buffer) => this.reader.write(chunk, monoNow()));
      this.watch(socket);
      this.opened(head.length > 0 ? head : null, monoNow());
    });
    request.end();
  }

  /** ws: the opening handshake written and read on a raw socket that reads into the thread's buffer. */
  private upgradeRaw(target: URL, key: string, options: WireOptions): void {
    const socket = net.connect({
      host: target.hostname.replace(/^\[|\]$/g, ''),
      port: Number(target.port) || 80,
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      onread: {
        buffer: READ_BUFFER,
        callback: (n: number): boolean => {
          // The clock first: the chunk arrived no later than this.
          const t = monoNow();
          const chunk = READ_BUFFER.subarray(0, n);
          if (this.state === 'connecting') this.handshake.read(chunk, t);
          else if (this.state !== 'closed') this.reader.write(chunk, t);
          return true;
        },
      },
    });
    this.socket = socket;
    socket.setNoDelay(true);
    const headers = { Host: target.host, ...options.headers, ...upgradeHeaders(key) };
    socket.write(
      `GET ${target.pathname}${target.search} HTTP/1.1\r\n` +
        `${Object.entries(headers)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('')}\r\n`,
      'latin1',
    );
    const timer = setTimeout(
      () => this.fail(new NetworkError('handshake timed out', 'ETIMEDOUT')),
      options.handshakeTimeoutMs,
    );
    this.handshake = new HandshakeReader(
      {
        switched: (accept, extensions, rest, t) => {
          clearTimeout(timer);
          if (this.accepted(key, accept, extensions)) this.opened(rest, t);
        },
        refused: (status, body) => {
          clearTimeout(timer);
          this.refuse(status, body);
          socket.destroy();
        },
        violation: (what) => {
          clearTimeout(timer);
          this.fail(new NetworkError(`handshake: ${what}`, 'EHANDSHAKE'));
        },
      },
      { headMax: HANDSHAKE_HEAD_MAX, bodyMax: REFUSAL_BODY_MAX },
    );
    socket.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (this.state === 'connecting') this.fail(new NetworkError(err.message, err.code, { cause: err }));
    });
    socket.on('close', () => clearTimeout(timer));
    this.watch(socket);
  }

  /** Whether the server's switch is the one asked for: its accept value, and no extension we did not offer. */
  private accepted(key: string, accept: unknown, extensions: unknown): boolean {
    if (accept !== acceptFor(key)) {
      this.fail(new NetworkError('handshake: wrong Sec-WebSocket-Accept', 'EHANDSHAKE'));
      return false;
    }
    if (extensions) {
      this.fail(new NetworkError('handshake: the server chose an extension the client did not offer', 'EHANDSHAKE'));
      return false;
    }
    return true;
  }

  /** The connection is open: the bytes that came after the handshake's head, if any, are its first frames. */
  private opened(rest: Buffer | null, t: number): void {
    this.state = 'open';
    this.events.open();
    if (rest && rest.length > 0 && this.state === 'open') this.reader.write(rest, t);
  }

  /** The server answered the upgrade with another status: reported once, then closed. */
  private refuse(status: number, body: Buffer): void {
    if (this.state === 'closed') return;
    this.events.refused(status, body.subarray(0, REFUSAL_BODY_MAX));
    this.finish();
  }

  /** The events of a socket both paths share: the server's end and the close. */
  private watch(socket: Socket): void {
    socket.on('error', () => {
      /* 'close' follows and reports the code */
    });
    socket.on('end', () => {
      this.ended = true;
      if (this.state === 'connecting') this.handshake.end();
      else socket.end();
    });
    socket.on('close', () => {
      if (this.state === 'connecting')
        this.fail(new NetworkError('handshake: the server closed the connection', 'ECONNRESET'));
      this.finish();
    });
  }

  /** Sends one text message (masked, as a client must). */
  send(text: string): void {
    if (this.state !== 'open') return;
    this.write(frame({ opcode: OPCODE.text, payload: text, mask: randomBytes(4) }));
  }

  /** Starts the closing handshake; the socket closes when the server answers or goes away. */
  close(code = 1000): void {
    if (this.state !== 'open') {
      if (this.state === 'connecting') this.terminate();
      return;
    }
    this.state = 'closing';
    this.sendClose(code);
  }

  /** Drops the connection at once. */
  terminate(): void {
    if (this.state === 'closed') return;
    if (this.socket) {
      this.socket.destroy();
      // A socket still connecting may never report its close: the connection ends here all the same.
      if (this.state === 'connecting') this.finish();
    } else {
      this.request?.destroy();
      this.finish();
    }
  }

  /** Reports the error, once, then closes (a socket that was never taken closes at once). */
  private fail(err: NetworkError): void {
    if (this.state === 'closed' || this.failed) return;
    this.failed = true;
    this.reader.stop();
    this.events.error(err);
    if (this.socket) this.socket.destroy();
    else this.finish();
  }

  /** Every path ends here, exactly once: 'close' follows 'error' and 'refused' too, as in `ws`. */
  private finish(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.reader.stop();
    this.request = null;
    if (this.closeTimer) clearTimeout(this.closeTimer);
    this.events.close(this.closeCode);
  }

  private sendClose(code: number): void {
    if (this.closeSent) return;
    this.closeSent = true;
    // A peer that never finishes the closing handshake does not keep the socket forever.
    this.closeTimer = setTimeout(() => this.socket?.destroy(), CLOSE_TIMEOUT_MS);
    this.closeTimer.unref();
    this.write(closeFrame(code, '', randomBytes(4)));
  }

  /** Writes a whole frame (masked, as a client must), unless the socket is gone, half-closed or not open yet. */
  private write(bytes: Buffer): void {
    const socket = this.socket;
    if (!socket || socket.destroyed || this.ended || this.state === 'connecting') return;
    socket.write(bytes);
  }

  private violation(what: string): void {
    this.closeCode = 1002;
    this.sendClose(1002);
    this.fail(new NetworkError(`protocol error: ${what}`, 'EPROTOCOL'));
  }
}

/** The headers of the opening handshake (RFC 6455 section 4.1) besides the caller's. */
const upgradeHeaders = (key: string): Record<string, string> => ({
  Connection: 'Upgrade',
  Upgrade: 'websocket',
  'Sec-WebSocket-Version': '13',
  'Sec-WebSocket-Key': key,
});
