/**
 * The stream side: handshake refusals as HTTP JSON bodies, per-key connection allowance,
 * subscribe/unsubscribe/ping, the keep-alive window, and the push fan-out. The protocol works on
 * a Link (one connection), so raw WebSocket (here) and Socket.IO (socketio.ts) share every rule,
 * and the allowance of a key is counted across both.
 *
 * Fan-out: each tick serialises and frames each subscribed pair's push once; clients with the
 * same subscription set share one concatenated buffer, written with one socket write per client
 * per tick. A client whose unsent bytes pass `maxBacklogBytes` is skipped (counted), and dropped
 * after `dropAfterTicks` such ticks, so a slow reader cannot make the server buffer without bound.
 */
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { WebSocketServer, WebSocket } from 'ws';
import { LIMITS, METHOD, STATUS, TEXT, pairNotFoundMessage, type NoticeCode, type RestStatus } from '../src/spec.ts';
import { messageOf, type KeyRecord, type Service } from './service.ts';
import { keyHeader, priceFields } from './rest.ts';
import { PriceBook } from './prices.ts';
import type { IdleClose } from './dialect.ts';

/** Counters of the fan-out, for tests and the benchmark. */
export interface StreamStats {
  /** Open WebSocket connections. */
  clients: number;
  ticks: number;
  /** Push frames handed to sockets. */
  framesWritten: number;
  /** Push frames not written because the client's backlog was over the bound. */
  framesSkipped: number;
  /** Clients dropped for staying over the backlog bound. */
  slowClientsDropped: number;
  /** Connections closed for sending too many messages. */
  floodsClosed: number;
  /** Handshakes refused, by status number. */
  refused: Record<string, number>;
  /** Wall time spent in ticks (stepping prices and writing every client's frames), ms. */
  tickMsTotal: number;
  /** Longest tick, ms. */
  tickMsMax: number;
}

interface Group {
  readonly id: string;
  readonly codes: readonly string[];
  readonly clients: Set<Client>;
  readonly changed?: boolean;
}

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

/** A handshake the service accepted: the key and the connection slot it holds. */
export interface Admission {
  readonly key: KeyRecord;
  readonly countKey: string;
  /** Admitted without a valid key, to be told 50005 after connecting (a dialect's choice). */
  readonly unauthorized?: boolean;
  /** Frees the slot; safe to call more than once. */
  release(): void;
}

/** A handshake the service refuses, with the status number and message of the JSON body. */
export interface Refusal {
  readonly status: RestStatus;
  readonly message: string;
}

/** The raw WebSocket link: ws for messages, its TCP socket for the pre-framed fan-out. */
class WsLink implements Link {
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

/** A connected client of either transport. */
export interface Client {
  readonly link: Link;
  readonly key: KeyRecord;
  readonly countKey: string;
  subs: string[];
  group: Group | undefined;
  keepAlive: NodeJS.Timeout | undefined;
  overTicks: number;
  windowStart: number;
  windowCount: number;
  /** Admitted without a valid key and told so: its requests are not served. */
  readonly unauthorized: boolean;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A server-to-client (unmasked) WebSocket text frame: FIN + opcode 1, then the length (RFC 6455 5.2). */
export function textFrame(payload: Buffer): Buffer {
  const len = payload.length;
  const head = len < 126 ? 2 : len < 65536 ? 4 : 10;
  const buf = Buffer.allocUnsafe(head + len);
  buf[0] = 0x81;
  if (len < 126) buf[1] = len;
  else if (len < 65536) {
    buf[1] = 126;
    buf.writeUInt16BE(len, 2);
  } else {
    buf[1] = 127;
    buf.writeUInt32BE(Math.floor(len / 2 ** 32), 2);
    buf.writeUInt32BE(len >>> 0, 6);
  }
  payload.copy(buf, head);
  return buf;
}

/** Close codes the service uses (RFC 6455 7.4.1); the spec shows none. */
const CLOSE = { normal: 1000, policy: 1008 } as const;

/**
 * The keep-alive close of each dialect: code and reason (the spec shows neither); no code sends a
 * close frame without one (1005 at the client).
 */
const IDLE_CLOSES: Readonly<Record<IdleClose, { code?: number; reason?: string }>> = {
  normal: { code: CLOSE.normal, reason: 'no ping within the keep-alive window' },
  'going-away': { code: 1001 },
  policy: { code: CLOSE.policy, reason: 'ping timeout' },
  'app-4000': { code: 4000, reason: 'idle' },
  'no-status': {},
};
/** How long a closing handshake may take before the socket is destroyed. */
const CLOSE_GRACE_MS = 2000;

/** The WebSocket side of one service: handshakes, sessions and the push ticker. */
export class StreamServer {
  /** Socket.IO event packet prefix of pushes (`2["event",`, or `2/nsp,["event",`), set when Socket.IO is served. */
  private pushPacketPrefix: string | undefined;
  /** Whether Socket.IO pushes carry the JSON as a text string rather than an object. */
  private pushAsText = false;
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
  private readonly clients = new Set<Client>();
  private readonly counts = new Map<string, number>();
  private readonly groups = new Map<string, Group>();
  private readonly ticker: NodeJS.Timeout;

  constructor(private readonly svc: Service) {
    const { config } = svc;
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
    const svc = this.svc;
    const value = keyHeader(req, svc.is('auth-header-case-sensitive') || svc.is('handshake-header-case-sensitive'));
    let key = svc.keyFor(value);
    // Fault: a keyless connection gets the primary key's entitlements but its own count, so it
    // breaks only the missing-key rule and not primary's allowance.
    const anonymous = !key && value === undefined && svc.is('handshake-missing-key-accepted');
    if (anonymous)
      key = { ...svc.primary, name: 'anonymous', key: '\u0000anonymous', connections: Number.MAX_SAFE_INTEGER };
    const no = (status: RestStatus, message = messageOf(status)): Refusal => ({ status, message });
    // Spec, Authentication 3: failures before the connection is established come back in the
    // HTTP handshake as a JSON body with status_number and message.
    if (!key) {
      if (svc.dialect.stream.unauthorized === 'handshake') return no(STATUS.UNAUTHORIZED);
      // Spec, Authentication 4: after connection an absent or invalid key yields a 50005 notice.
      // Such a connection holds no key's slot: it is closed right after the notice.
      return {
        key: { name: 'unauthorized', key: '\u0000unauthorized', stream: true },
        countKey: '\u0000unauthorized',
        unauthorized: true,
        release: () => {},
      };
    }
    if (key.state === 'suspended') return no(STATUS.SUSPENDED);
    if (key.state === 'restricted') return no(STATUS.RESTRICTED_USER);
    if (key.state === 'stream-maintenance') return no(STATUS.WS_MAINTENANCE);
    if (key.stream === false && !svc.is('handshake-no-stream-accepted'))
      return no(STATUS.ACCESS_DENIED, 'Access denied: no access to the V1 source stream');
    // Spec, Limits: counted per key, not per IP address; refused from any address.
    const countKey = svc.is('limit-per-ip') ? `${key.key}\u0000${remoteAddress}` : key.key;
    const allowance = (key.connections ?? 1) + (svc.is('limit-off-by-one') ? 1 : 0);
    const open = this.counts.get(countKey) ?? 0;
    if (open >= allowance) return no(STATUS.CONNECTION_LIMIT);
    this.counts.set(countKey, open + 1);
    let released = false;
    // Fault: the slot of a single-connection key (keys.limited) is never given back.
    const leaks = svc.is('limit-slot-not-freed') && (key.connections ?? 1) === 1;
    const free = (): void => {
      this.counts.set(countKey, (this.counts.get(countKey) ?? 1) - 1);
    };
    // How long a closed connection keeps its slot is not shown: the dialect chooses.
    const delay = svc.dialect.keys.slotReleaseMs;
    const release = (): void => {
      if (released || leaks) return;
      released = true;
      if (delay > 0) setTimeout(free, delay).unref();
      else free();
    };
    return { key, countKey, release };
  }

  /** The HTTP response of a refused handshake: status and JSON body (counted in stats). */
  refusalResponse(refusal: Refusal): { http: number; body: string } {
    const { status, message } = refusal;
    this.stats.refused[status] = (this.stats.refused[status] ?? 0) + 1;
    const body = this.svc.wire.text(
      this.svc.is('handshake-body-code') ? { code: status, message } : { status_number: status, message },
    );
    return { http: this.svc.wire.handshakeHttp(status), body };
  }

  /** Writes a refusal in place of the upgrade and ends the socket. */
  refuse(socket: Duplex, refusal: Refusal): void {
    const { http, body } = this.refusalResponse(refusal);
    socket.end(
      `HTTP/1.1 ${http} ${STATUS_CODES[http] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }

  private accept(ws: WebSocket, socket: Socket, admitted: Admission): void {
    socket.setNoDelay(true);
    const client = this.attach(new WsLink(ws, socket), admitted);
    ws.on('error', () => {});
    ws.on('message', (data, isBinary) => this.onMessage(client, data as Buffer, isBinary));
    ws.on('close', () => this.forget(client));
  }

  /** Serves Socket.IO pushes too: `event` names the packets the fan-out pre-encodes. */
  enableSocketIo(event: string, namespace: string, jsonText: boolean): void {
    // Socket.IO packet format v5: type 2 (EVENT), then the namespace and a comma unless it is `/`.
    this.pushPacketPrefix = `2${namespace === '/' ? '' : `${namespace},`}[${JSON.stringify(event)},`;
    this.pushAsText = jsonText;
  }

  /** Starts the protocol on an accepted connection of any transport; the transport wires its messages and close. */
  attach(link: Link, admitted: Admission): Client {
    const svc = this.svc;
    const client: Client = {
      link,
      key: admitted.key,
      countKey: admitted.countKey,
      subs: [],
      group: undefined,
      keepAlive: undefined,
      overTicks: 0,
      windowStart: Date.now(),
      windowCount: 0,
      unauthorized: admitted.unauthorized === true,
    };
    this.clients.add(client);
    this.stats.clients = this.clients.size;
    if (admitted.unauthorized) {
      this.notice(client, METHOD.error, messageOf(STATUS.UNAUTHORIZED), STATUS.UNAUTHORIZED, undefined);
      client.link.close(CLOSE.policy, 'unauthorized');
      return client;
    }
    const window = svc.config.pingTimeoutMs;
    if (!svc.is('keepalive-never')) {
      // Spec, Limits: the connection is closed if no ping arrives within the window.
      const idle = IDLE_CLOSES[svc.dialect.stream.idleClose];
      client.keepAlive = setTimeout(
        () => client.link.close(idle.code, idle.reason),
        svc.is('keepalive-early') ? Math.floor(window / 2) : window,
      );
    }
    return client;
  }

  /** The connection of `client` ended: stop its timer and its pushes. */
  forget(client: Client): void {
    if (!this.clients.delete(client)) return;
    clearTimeout(client.keepAlive);
    this.setGroup(client, []);
    this.stats.clients = this.clients.size;
  }

  /** Whether `client` went over its message rate with this message (closed on the first one over). */
  private flooded(client: Client): boolean {
    const max = this.svc.config.maxMessagesPerSecond;
    const now = Date.now();
    if (now - client.windowStart >= 1000) {
      client.windowStart = now;
      client.windowCount = 0;
    }
    if (++client.windowCount <= max) return false;
    if (client.windowCount === max + 1) {
      this.stats.floodsClosed++;
      client.link.close(CLOSE.policy, 'too many messages');
    }
    return true;
  }

  /** A slow reader's unsent bytes are bounded: past the bound it is dropped instead of buffered. */
  private sendable(client: Client): boolean {
    if (!client.link.open) return false;
    // A client that floods requests but never reads would grow our buffer: drop it instead.
    if (client.link.backlog > this.svc.config.maxBacklogBytes) {
      this.stats.slowClientsDropped++;
      client.link.terminate();
      return false;
    }
    return true;
  }

  /** Sends one notice, written as the dialect writes JSON. */
  private sendJson(client: Client, value: Record<string, unknown>): void {
    if (!this.sendable(client)) return;
    const wire = this.svc.wire;
    client.link.sendJson(wire.shape(value), wire.text(value));
  }

  private sendText(client: Client, text: string): void {
    if (this.sendable(client)) client.link.sendText(text);
  }

  private notice(client: Client, method: string, message: string, code: NoticeCode, id: string | undefined): void {
    const svc = this.svc;
    const n: Record<string, unknown> = { method, message, code: svc.is('notice-code-number') ? Number(code) : code };
    if (id !== undefined && !svc.is('notice-id-not-echoed')) n.id = id;
    n.data = null;
    if (svc.is('notice-status-number')) n.status_number = code;
    if (svc.is('notice-denied-shape') && (code === STATUS.ACCESS_DENIED || code === STATUS.ASSET_TYPE_DENIED)) {
      delete n.id;
      n.data = { reason: message };
    }
    this.sendJson(client, n);
  }

  private invalid(client: Client, message: string, id?: string): void {
    this.notice(client, METHOD.error, message, STATUS.INVALID_REQUEST, id);
  }

  /** A raw WebSocket message. */
  private onMessage(client: Client, data: Buffer, isBinary: boolean): void {
    if (this.flooded(client)) return;
    // Messages are JSON text (spec: WebSocket connection); a binary frame is an invalid request.
    if (isBinary) return this.invalid(client, 'invalid request: binary frames are not accepted');
    this.onText(client, data.toString('utf8'));
  }

  /**
   * A Socket.IO payload of the message event: an object is the request itself, a string is read
   * as JSON text (so malformed JSON can still be sent), binary is an invalid request.
   */
  onPayload(client: Client, payload: unknown): void {
    if (this.flooded(client)) return;
    if (typeof payload === 'string') return this.onText(client, payload);
    if (Buffer.isBuffer(payload) || payload instanceof ArrayBuffer || ArrayBuffer.isView(payload))
      return this.invalid(client, 'invalid request: binary messages are not accepted');
    this.onRequest(client, payload);
  }

  private onText(client: Client, text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      if (this.svc.is('notice-malformed-json-ignored')) return;
      return this.invalid(client, 'invalid request: malformed JSON');
    }
    this.onRequest(client, msg);
  }

  private onRequest(client: Client, msg: unknown): void {
    const svc = this.svc;
    if (client.unauthorized) return;
    if (!isObj(msg)) return this.invalid(client, 'invalid request: a message is a JSON object with a method');
    const id = typeof msg.id === 'string' ? msg.id : undefined;
    if (msg.id !== undefined && id === undefined) return this.invalid(client, 'invalid request: id must be a string');
    switch (msg.method) {
      case METHOD.ping:
        return this.ping(client);
      case METHOD.subscribe:
        return this.subscribe(client, msg.params, id);
      case METHOD.unsubscribe:
        return this.unsubscribe(client, msg.params, id);
      default:
        if (svc.is('notice-unknown-method-ignored')) return;
        return this.invalid(
          client,
          typeof msg.method === 'string'
            ? `invalid request: unknown method ${JSON.stringify(msg.method).slice(0, 80)}`
            : 'invalid request: method is required',
          id,
        );
    }
  }

  private ping(client: Client): void {
    const svc = this.svc;
    if (client.keepAlive && !svc.is('keepalive-ping-not-reset')) client.keepAlive.refresh();
    if (svc.is('ping-reply-json')) {
      this.sendJson(client, { method: METHOD.ping, message: TEXT.pong, code: STATUS.OK, data: null });
      return;
    }
    this.sendText(client, svc.is('ping-reply-lowercase') ? TEXT.pong.toLowerCase() : TEXT.pong);
  }

  /** Validates `params.pairs`; returns the codes or sends a 50004/50104 notice and returns undefined. */
  private pairsOf(client: Client, params: unknown, id: string | undefined): string[] | undefined {
    const svc = this.svc;
    // Faults: a missing params reads as no pairs, a single code as a one-pair list.
    if (params === undefined && svc.is('subscribe-missing-params-accepted')) return [];
    if (isObj(params) && typeof params.pairs === 'string' && svc.is('subscribe-pairs-string-accepted'))
      return [params.pairs];
    if (!isObj(params) || !Array.isArray(params.pairs)) {
      this.invalid(client, 'invalid request: params.pairs must be an array of pair codes', id);
      return undefined;
    }
    const pairs: unknown[] = params.pairs;
    if (pairs.length === 0 && !svc.is('subscribe-empty-accepted')) {
      this.invalid(client, 'invalid request: params.pairs is empty', id);
      return undefined;
    }
    if (pairs.some((c) => typeof c !== 'string')) {
      this.invalid(client, 'invalid request: every pair must be a string', id);
      return undefined;
    }
    const max =
      LIMITS.maxPairsPerSubscribe + (svc.is('subscribe-accepts-101') ? 1 : 0) - (svc.is('subscribe-limit-99') ? 1 : 0);
    if (pairs.length > max) {
      this.invalid(client, `invalid request: at most ${LIMITS.maxPairsPerSubscribe} pairs`, id);
      return undefined;
    }
    return [...new Set(pairs as string[])];
  }

  private subscribe(client: Client, params: unknown, id: string | undefined): void {
    const svc = this.svc;
    // What a refused subscribe does to the earlier subscription is not stated: the dialect keeps or drops it.
    const accepted = this.trySubscribe(client, params, id);
    if (!accepted && svc.dialect.stream.failedSubscribe === 'drop') this.setGroup(client, []);
  }

  /** A subscribe request; true when accepted. */
  private trySubscribe(client: Client, params: unknown, id: string | undefined): boolean {
    const svc = this.svc;
    let codes = this.pairsOf(client, params, id);
    if (!codes) return false;
    // Fault: unknown pairs listed beside known ones are dropped instead of refused.
    if (svc.is('subscribe-unknown-among-known-dropped') && codes.some((c) => svc.livePair(c)))
      codes = codes.filter((c) => svc.livePair(c));
    for (const code of codes) {
      const entry =
        svc.livePair(code) ?? (svc.is('subscribe-inactive-accepted') ? svc.book.pairs.get(code) : undefined);
      if (!entry) {
        const message = svc.is('subscribe-unknown-message') ? 'unknown pair' : pairNotFoundMessage(code);
        this.notice(client, METHOD.error, message, STATUS.PAIR_NOT_FOUND, id);
        return false;
      }
      let denied = svc.readAccess(client.key, entry);
      // Spec, Authentication 4: lacking pair-whitelist access yields 50010 after connection.
      if (denied === STATUS.NO_PAIRS_ALLOWED) denied = STATUS.ACCESS_DENIED;
      if (denied === STATUS.ACCESS_DENIED && svc.is('entitlement-whitelist-subscribe')) denied = undefined;
      if (denied) {
        this.notice(client, METHOD.error, `${messageOf(denied)}: ${code}`, denied as NoticeCode, id);
        return false;
      }
    }
    // Spec, subscription table: the earlier set is replaced, not extended.
    const next = svc.is('subscribe-extends') ? [...new Set([...client.subs, ...codes])] : codes;
    this.setGroup(client, next);
    this.notice(
      client,
      METHOD.subscribe,
      svc.is('notice-subscribe-message-lowercase') ? TEXT.subscribeSuccess.toLowerCase() : TEXT.subscribeSuccess,
      STATUS.OK,
      id,
    );
    if (svc.dialect.stream.pushes === 'on-change-snapshot') this.snapshot(client);
    return true;
  }

  /** The current price of each subscribed pair, right after a subscribe (pushes that wait for a change otherwise). */
  private snapshot(client: Client): void {
    if (!this.sendable(client) || !client.group) return;
    const now = this.svc.clock();
    const jsons: string[] = [];
    for (const code of client.group.codes) {
      const json = this.pushJson(code, now);
      if (json !== null) jsons.push(json);
    }
    if (jsons.length > 0) client.link.sendPushes(jsons);
  }

  private unsubscribe(client: Client, params: unknown, id: string | undefined): void {
    const svc = this.svc;
    let codes = this.pairsOf(client, params, id);
    if (!codes) return;
    if (svc.is('unsubscribe-first-pair-only')) codes = codes.slice(0, 1);
    for (const code of codes)
      if (!svc.book.pairs.has(code))
        return this.notice(client, METHOD.error, pairNotFoundMessage(code), STATUS.PAIR_NOT_FOUND, id);
    // Pairs that are not subscribed (spec: not shown): ignored, or refused, per the dialect.
    const stray = codes.find((c) => !client.subs.includes(c));
    if (stray !== undefined && svc.dialect.stream.unsubscribeNotSubscribed === 'error')
      return this.invalid(client, `invalid request: not subscribed to ${stray}`, id);
    if (!svc.is('unsubscribe-keeps-pushing'))
      this.setGroup(
        client,
        client.subs.filter((c) => !codes.includes(c)),
      );
    const message = svc.is('unsubscribe-message-capitalized') ? TEXT.subscribeSuccess : TEXT.unsubscribeSuccess;
    this.notice(client, METHOD.unsubscribe, message, STATUS.OK, id);
  }

  /** Moves a client to the group of its new subscription set. */
  private setGroup(client: Client, codes: string[]): void {
    client.subs = codes;
    const old = client.group;
    if (old) {
      old.clients.delete(client);
      if (old.clients.size === 0) this.groups.delete(old.id);
    }
    if (codes.length === 0) {
      client.group = undefined;
      return;
    }
    let pushed = this.svc.is('push-first-pair-only') ? codes.slice(0, 1) : codes;
    if (this.svc.is('push-unsubscribed-pair')) {
      const extra = [...this.svc.book.pairs.values()].find((e) => PriceBook.priced(e) && !codes.includes(e.code));
      if (extra) pushed = [...codes, extra.code];
    }
    // Fault: connections whose subscription changed (replaced or reduced) get pushes of their own.
    const changed = this.svc.is('push-changed-missing-bid') && old !== undefined;
    const id = `${[...pushed].sort().join('\n')}${changed ? '\n(changed)' : ''}`;
    let group = this.groups.get(id);
    if (!group) {
      group = { id, codes: pushed, clients: new Set(), changed };
      this.groups.set(id, group);
    }
    group.clients.add(client);
    client.group = group;
  }

  /**
   * One push tick: step the prices, serialise each needed pair once, frame it once per transport,
   * one write per raw WebSocket client (the group's frames concatenated).
   */
  tick(): void {
    const started = performance.now();
    this.fanOut();
    const took = performance.now() - started;
    this.stats.ticks++;
    this.stats.tickMsTotal += took;
    if (took > this.stats.tickMsMax) this.stats.tickMsMax = took;
  }

  /** The JSON text of a pair's push at clock time `now` (null: the pair has no price), written per the dialect. */
  private pushJson(code: string, now: number): string | null {
    const svc = this.svc;
    const entry = svc.book.pairs.get(code);
    if (!entry || !PriceBook.priced(entry)) return null;
    const push: Record<string, unknown> = {
      code,
      ...priceFields(svc, entry, 'stream'),
      last_updated: svc.wire.pushTime(entry.current.lastUpdated),
      sent_at: svc.wire.pushTime(now),
    };
    if (push.last_updated === undefined) delete push.last_updated;
    if (push.sent_at === undefined) delete push.sent_at;
    if (svc.is('push-missing-bid')) delete push.bid;
    if (svc.is('push-price-number')) push.price = Number(push.price);
    return svc.wire.text(push);
  }

  private fanOut(): void {
    const svc = this.svc;
    const now = svc.clock();
    const moved = svc.book.step(now, svc.config.moveProbability, (e) => svc.market(e, now).open);
    if (this.groups.size === 0 || svc.is('push-never-starts')) return;
    // Push cadence and trigger are not shown: every tick pushes every pair, or only the pairs that moved.
    const changed = svc.dialect.stream.pushes === 'every-tick' ? undefined : new Set(moved);
    const jsons = new Map<string, string | null>();
    const jsonOf = (code: string): string | null => {
      let json = jsons.get(code);
      if (json !== undefined) return json;
      json = changed && !changed.has(code) ? null : this.pushJson(code, now);
      jsons.set(code, json);
      return json;
    };
    const frames = new Map<string, Buffer>();
    const frameOf = (code: string): Buffer => {
      let frame = frames.get(code);
      if (!frame) {
        frame = textFrame(Buffer.from(jsons.get(code)!));
        frames.set(code, frame);
      }
      return frame;
    };
    // Socket.IO event packets, encoded once per pair like a Socket.IO broadcast.
    const prefix = this.pushPacketPrefix;
    const packets = new Map<string, string>();
    const packetOf = (code: string): string => {
      let packet = packets.get(code);
      if (packet === undefined) {
        const json = jsons.get(code)!;
        packet = `${prefix}${this.pushAsText ? JSON.stringify(json) : json}]`;
        packets.set(code, packet);
      }
      return packet;
    };
    const { maxBacklogBytes, dropAfterTicks } = svc.config;
    const perFrame = svc.config.fanOut === 'per-frame';
    for (const group of this.groups.values()) {
      // The group's priced pairs; each is serialised once per tick, whatever the groups.
      const pushes: string[] = [];
      for (const code of group.codes) if (jsonOf(code) !== null) pushes.push(code);
      const n = pushes.length;
      if (n === 0) continue;
      if (group.changed) {
        // Fault push-changed-missing-bid: these connections' pushes are written one by one, without bid.
        const jsonsWithoutBid = pushes.map((code) =>
          JSON.stringify({ ...(JSON.parse(jsonOf(code)!) as object), bid: undefined }),
        );
        for (const client of group.clients) if (client.link.open) client.link.sendPushes(jsonsWithoutBid);
        continue;
      }
      let bytes: Buffer | undefined;
      let groupPackets: string[] | undefined;
      for (const client of group.clients) {
        const link = client.link;
        if (!link.open) continue;
        if (link.backlog > maxBacklogBytes) {
          this.stats.framesSkipped += n;
          if (++client.overTicks >= dropAfterTicks) {
            this.stats.slowClientsDropped++;
            link.terminate();
          }
          continue;
        }
        client.overTicks = 0;
        if (link instanceof WsLink) {
          if (perFrame) {
            // The naive baseline the benchmark compares against: one ws.send per frame per client.
            for (const code of pushes) {
              const part = frameOf(code);
              link.ws.send(part.subarray(part[1]! === 126 ? 4 : 2), { binary: false });
            }
          } else {
            bytes ??= n === 1 ? frameOf(pushes[0]!) : Buffer.concat(pushes.map(frameOf));
            // Frames are whole and unmasked, so writing the shared bytes beside ws's own sends is safe.
            link.socket.write(bytes);
          }
        } else if (link.writePushes && prefix !== undefined) {
          groupPackets ??= pushes.map(packetOf);
          link.writePushes(groupPackets);
        }
        this.stats.framesWritten += n;
      }
    }
  }

  /** Stops the ticker and ends every connection. */
  closeAll(): void {
    clearInterval(this.ticker);
    for (const client of this.clients) {
      clearTimeout(client.keepAlive);
      client.link.terminate();
    }
    this.wss.close();
  }
}
