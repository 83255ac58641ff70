/**
 * The stream side, joined to the raw WebSocket: admission (admission.ts), the session protocol
 * (session.ts) and the push fan-out (fanout.ts) of one service, and the ticker that drives the
 * fan-out. The protocol works on a Link (one connection), so raw WebSocket (here) and Socket.IO
 * (socketio.ts) share every rule, and the allowance of a key is counted across both.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { STATUS } from '../src/spec.ts';
import type { Service } from './service.ts';
import { Admissions, type Admission, type Refusal } from './admission.ts';
import { Sessions } from './session.ts';
import type { Client, StreamStats } from './model.ts';
import { FanOut } from './fanout.ts';
import { WsLink, type Link } from './link.ts';

export type { Admission, Refusal } from './admission.ts';
export type { Client } from './session.ts';
export type { Link } from './link.ts';
export type { StreamStats } from './model.ts';

/** The stream side of one service: handshakes, sessions and the push ticker. */
export class StreamServer {
  readonly stats: StreamStats = {
    clients: 0,
    ticks: 0,
    framesWritten: 0,
    framesSkipped: 0,
    slowClientsDropped: 0,
    floodsClosed: 0,
    refused: {},
    tickMsTotal: 0,
    tickMsMax: 0,
  };
  private readonly wss: WebSocketServer;
  private readonly admissions: Admissions;
  private readonly fanOut: FanOut;
  private readonly sessions: Sessions;
  private readonly ticker: NodeJS.Timeout;

  constructor(private readonly svc: Service) {
    const { config } = svc;
    this.admissions = new Admissions(svc, this.stats.refused);
    this.fanOut = new FanOut(svc, this.stats);
    this.sessions = new Sessions(svc, this.fanOut, this.stats);
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: config.maxPayload,
      perMessageDeflate: false,
      clientTracking: false,
    });
    this.ticker = setInterval(() => this.tick(), config.tickMs);
  }

  /** Handles an HTTP upgrade request to the raw WebSocket path. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => {});
    const path = new URL(req.url ?? '/', 'http://reference.local').pathname;
    if (path !== this.svc.config.wsPath)
      return this.refuse(socket, { status: STATUS.NOT_FOUND, message: `no stream at ${path}` });
    const admitted = this.admit(req, (socket as Socket).remoteAddress ?? '');
    if (!('key' in admitted)) return this.refuse(socket, admitted);
    // The raw socket closes whether or not the upgrade completes, so the slot is always freed.
    socket.once('close', admitted.release);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, socket as Socket, admitted));
  }

  /**
   * Decides a stream handshake of either transport before the upgrade: the refusal, or the key
   * with one slot of its allowance taken (counted per key across both transports).
   */
  admit(req: IncomingMessage, remoteAddress: string): Admission | Refusal {
    return this.admissions.admit(req, remoteAddress);
  }

  /** The HTTP response of a refused handshake: status and JSON body (counted in stats). */
  refusalResponse(refusal: Refusal): { http: number; body: string } {
    return this.admissions.response(refusal);
  }

  /** Writes a refusal in place of the upgrade and ends the socket. */
  refuse(socket: Duplex, refusal: Refusal): void {
    this.admissions.refuse(socket, refusal);
  }

  private accept(ws: WebSocket, socket: Socket, admitted: Admission): void {
    socket.setNoDelay(true);
    const client = this.attach(new WsLink(ws, socket), admitted);
    ws.on('error', () => {});
    ws.on('message', (data, isBinary) => this.sessions.onMessage(client, data as Buffer, isBinary));
    ws.on('close', () => this.forget(client));
  }

  /** Serves Socket.IO pushes too: `event` names the packets the fan-out pre-encodes. */
  enableSocketIo(event: string, namespace: string, jsonText: boolean): void {
    this.fanOut.enableSocketIo(event, namespace, jsonText);
  }

  /** Starts the protocol on an accepted connection of any transport; the transport wires its messages and close. */
  attach(link: Link, admitted: Admission): Client {
    return this.sessions.attach(link, admitted);
  }

  /** The connection of `client` ended: stop its timer and its pushes. */
  forget(client: Client): void {
    this.sessions.forget(client);
  }

  /** A Socket.IO payload of the message event. */
  onPayload(client: Client, payload: unknown): void {
    this.sessions.onPayload(client, payload);
  }

  /** One push tick (the ticker calls it every `tickMs`). */
  tick(): void {
    this.fanOut.tick();
  }

  /** Stops the ticker and ends every connection. */
  closeAll(): void {
    clearInterval(this.ticker);
    this.sessions.closeAll();
    this.wss.close();
  }
}
