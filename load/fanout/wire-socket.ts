/**
 * The load generator's WebSocket client (RFC 6455, client side, no extensions). `ws` builds a
 * Buffer and emits an event for every frame, which is most of a generator's CPU at 200,000
 * frames/s; this one reads the frames in place in each socket chunk (src/ws-frame.ts), hands the
 * caller a byte range, and stamps every chunk with the clock before it parses anything.
 * Only the load workers use it: conformance sessions keep `ws`, which checks every rule.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { NetworkError } from '../../src/errors.ts';
import { monoNow } from '../mono-clock.ts';
import { OPCODE, type ReaderEvents, WireReader, acceptFor, closeFrame, frame } from '../../src/ws-frame.ts';

/** A handshake refusal's body is read up to this many bytes (enough for the spec's JSON). */
const REFUSAL_BODY_MAX = 4096;
const CLOSE_TIMEOUT_MS = 5000;

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
  private request: http.ClientRequest | null;
  private readonly reader: WireReader;
  private closeCode = 1006;
  private closeSent = false;
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
    const request = (secure ? https : http).request({
      hostname: target.hostname.replace(/^\[|\]$/g, ''),
      port: target.port || (secure ? 443 : 80),
      path: `${target.pathname}${target.search}`,
      // Upgraded sockets must not come from, or go back to, a keep-alive pool.
      agent: false,
      timeout: options.handshakeTimeoutMs,
      headers: {
        ...options.headers,
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': key,
      },
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      // Verified whatever NODE_TLS_REJECT_UNAUTHORIZED says; `ca` adds the run's CA to Node's own.
      ...(secure ? { rejectUnauthorized: true, ...(options.ca ? { ca: options.ca } : {}) } : {}),
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
      res.on('end', () => {
        if (this.state === 'closed') return;
        this.events.refused(res.statusCode ?? 0, Buffer.concat(chunks).subarray(0, REFUSAL_BODY_MAX));
        this.finish();
      });
      res.on('error', () => {
        /* the refusal is reported from what arrived */
      });
    });
    request.on('upgrade', (res, socket, head) => {
      if (res.headers['sec-websocket-accept'] !== acceptFor(key)) {
        socket.destroy();
        this.fail(new NetworkError('handshake: wrong Sec-WebSocket-Accept', 'EHANDSHAKE'));
        return;
      }
      if (res.headers['sec-websocket-extensions']) {
        socket.destroy();
        this.fail(new NetworkError('handshake: the server chose an extension the client did not offer', 'EHANDSHAKE'));
        return;
      }
      request.setTimeout(0);
      this.request = null;
      this.socket = socket;
      socket.setNoDelay(true);
      socket.setTimeout(0);
      this.state = 'open';
      socket.on('data', (chunk: Buffer) => this.reader.write(chunk, monoNow()));
      socket.on('error', () => {
        /* 'close' follows and reports the code */
      });
      socket.on('end', () => {
        this.ended = true;
        socket.end();
      });
      socket.on('close', () => this.finish());
      this.events.open();
      if (head.length > 0 && this.state === 'open') this.reader.write(head, monoNow());
    });
    request.end();
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
    if (this.socket) this.socket.destroy();
    else {
      this.request?.destroy();
      this.finish();
    }
  }

  /** Reports the error, then closes (a socket that was never taken closes at once). */
  private fail(err: NetworkError): void {
    if (this.state === 'closed') return;
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

  /** Writes a whole frame (masked, as a client must), unless the socket is gone or half-closed. */
  private write(bytes: Buffer): void {
    const socket = this.socket;
    if (!socket || socket.destroyed || this.ended) return;
    socket.write(bytes);
  }

  private violation(what: string): void {
    this.closeCode = 1002;
    this.sendClose(1002);
    this.fail(new NetworkError(`protocol error: ${what}`, 'EPROTOCOL'));
  }
}
