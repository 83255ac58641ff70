/**
 * A stream connection as the protocol sees it (`Link`), and the raw WebSocket's: ws for messages,
 * its TCP socket for the pre-framed fan-out. Socket.IO's is in socketio.ts.
 */
import type { Socket } from 'node:net';
import { WebSocket } from 'ws';

/** One stream connection as the protocol sees it; each transport implements it. */
export interface Link {
  readonly kind: 'ws' | 'socketio';
  readonly open: boolean;
  /** Bytes handed to the connection and not yet sent. */
  readonly backlog: number;
  /** Sends one JSON message (a notice): `value` as the dialect shaped it, `text` its JSON text. */
  sendJson(value: Record<string, unknown>, text: string): void;
  /** Sends one plain-text message (`Pong!`). */
  sendText(text: string): void;
  /** Closes in order; `code` and `reason` where the transport carries them (no code: a close frame without one). */
  close(code?: number, reason?: string): void;
  /** Drops the connection at once. */
  terminate(): void;
  /** Writes one tick's pushes, framed for this transport (Socket.IO: encoded event packets). */
  writePushes?(packets: readonly string[]): void;
  /** Sends pushes outside the tick (a snapshot on subscribe): their JSON texts. */
  sendPushes(jsons: readonly string[]): void;
}

/** Close codes the service uses (RFC 6455 7.4.1); the spec shows none. */
export const CLOSE = { normal: 1000, policy: 1008 } as const;

/** How long a closing handshake may take before the socket is destroyed. */
const CLOSE_GRACE_MS = 2000;

/**
 * The raw WebSocket link: ws for messages, its TCP socket for the pre-framed fan-out. Internal to
 * the reference (its declaration, which names ws's types, is left out of the published one).
 * @internal
 */
export class WsLink implements Link {
  readonly kind = 'ws';
  constructor(
    readonly ws: WebSocket,
    readonly socket: Socket,
  ) {}
  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }
  get backlog(): number {
    return this.socket.writableLength;
  }
  sendJson(_value: Record<string, unknown>, text: string): void {
    this.ws.send(text);
  }
  sendText(text: string): void {
    this.ws.send(text);
  }
  sendPushes(jsons: readonly string[]): void {
    for (const json of jsons) this.ws.send(json);
  }
  close(code?: number, reason?: string): void {
    this.ws.close(code, reason);
    setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref();
  }
  terminate(): void {
    this.ws.terminate();
  }
}
