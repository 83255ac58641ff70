/**
 * The session protocol on an admitted connection of either transport: requests (subscribe,
 * unsubscribe, ping) and their notices, the message rate, and the keep-alive window.
 */
import { LIMITS, METHOD, STATUS, TEXT, pairNotFoundMessage, type NoticeCode } from '../src/spec.ts';
import { messageOf, type Service } from './service.ts';
import type { Client, StreamStats } from './model.ts';
import type { Admission } from './admission.ts';
import type { FanOut } from './fanout.ts';
import { CLOSE, type Link } from './link.ts';
import type { IdleClose } from './dialect.ts';
import type { NoticeCause } from './seams.ts';

export type { Client } from './model.ts';

/** The 50004 message of a subscribe or unsubscribe listing more pairs than allowed. */
export const TOO_MANY_PAIRS = `invalid request: at most ${LIMITS.maxPairsPerSubscribe} pairs`;

/** What a notice answers: the request's id and method, and why, where the code alone does not say. */
interface About {
  readonly id?: string;
  readonly request?: string;
  readonly cause?: NoticeCause;
}

/** Whether `v` is a JSON object (not null, not an array). */
export const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

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

/** The sessions of one service. */
export class Sessions {
  private readonly clients = new Set<Client>();

  constructor(
    private readonly svc: Service,
    private readonly fanOut: FanOut,
    private readonly stats: StreamStats,
  ) {}

  /** Starts the protocol on an accepted connection of any transport; the transport wires its messages and close. */
  attach(link: Link, admitted: Admission): Client {
    const svc = this.svc;
    // Spec, Limits: the connection is closed if no ping arrives within the window.
    const keepAlive = svc.seams.session.keepAlive({ windowMs: svc.config.pingTimeoutMs, pingResets: true });
    const client: Client = {
      link,
      key: admitted.key,
      countKey: admitted.countKey,
      subs: [],
      group: undefined,
      keepAlive: undefined,
      pingResets: keepAlive.pingResets,
      overTicks: 0,
      windowStart: Date.now(),
      windowCount: 0,
      unauthorized: admitted.unauthorized === true,
      pingedSinceSubscribe: false,
      history: [],
    };
    this.clients.add(client);
    this.stats.clients = this.clients.size;
    if (admitted.unauthorized) {
      this.notice(client, METHOD.error, messageOf(STATUS.UNAUTHORIZED), STATUS.UNAUTHORIZED);
      client.link.close(CLOSE.policy, 'unauthorized');
      return client;
    }
    if (keepAlive.windowMs !== undefined) {
      const idle = IDLE_CLOSES[svc.dialect.stream.idleClose];
      // How soon after the window the close comes is not stated: at once, or as late as an idle sweep.
      const closeAfterMs = Math.round(keepAlive.windowMs * svc.dialect.stream.idleCloseWindows);
      client.keepAlive = setTimeout(() => client.link.close(idle.code, idle.reason), closeAfterMs);
    }
    return client;
  }

  /** The connection of `client` ended: stop its timer and its pushes. */
  forget(client: Client): void {
    if (!this.clients.delete(client)) return;
    clearTimeout(client.keepAlive);
    this.fanOut.join(client, []);
    this.stats.clients = this.clients.size;
  }

  /** Ends every connection. */
  closeAll(): void {
    for (const client of this.clients) {
      clearTimeout(client.keepAlive);
      client.link.terminate();
    }
  }

  /** A raw WebSocket message. */
  onMessage(client: Client, data: Buffer, isBinary: boolean): void {
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

  /** Sends one JSON message, written as the dialect writes JSON. */
  private sendJson(client: Client, value: Record<string, unknown>): void {
    if (!this.fanOut.sendable(client)) return;
    const wire = this.svc.wire;
    client.link.sendJson(wire.shape(value), wire.text(value));
  }

  private sendText(client: Client, text: string): void {
    if (this.fanOut.sendable(client)) client.link.sendText(text);
  }

  /**
   * Sends a notice (spec: notice format): `method`, `message`, `code`, the request's `id`, and
   * `data` null unless the dialect leaves the optional field out.
   */
  private notice(client: Client, method: string, message: string, code: NoticeCode, about: About = {}): void {
    const n: Record<string, unknown> = { method, message, code };
    if (about.id !== undefined) n.id = about.id;
    if (this.svc.dialect.stream.noticeData === 'null') n.data = null;
    const sent = this.svc.seams.notice(n, { code, request: about.request, cause: about.cause });
    if (sent) this.sendJson(client, sent);
  }

  /** Sends a 50004 error notice. */
  private invalid(client: Client, message: string, about: About = {}): void {
    this.notice(client, METHOD.error, message, STATUS.INVALID_REQUEST, about);
  }

  private onText(client: Client, text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return this.invalid(client, 'invalid request: malformed JSON', { cause: 'malformed-json' });
    }
    this.onRequest(client, msg);
  }

  private onRequest(client: Client, msg: unknown): void {
    if (client.unauthorized) return;
    if (!isObj(msg))
      return this.invalid(client, 'invalid request: a message is a JSON object with a method', {
        cause: 'not-an-object',
      });
    const id = typeof msg.id === 'string' ? msg.id : undefined;
    if (msg.id !== undefined && id === undefined) return this.invalid(client, 'invalid request: id must be a string');
    const known = msg.method === METHOD.ping || msg.method === METHOD.subscribe || msg.method === METHOD.unsubscribe;
    const verdict = known ? this.svc.seams.session.request('serve', { msg }) : 'serve';
    if (verdict !== 'serve') return this.invalid(client, verdict.invalid, { id, request: msg.method as string });
    switch (msg.method) {
      case METHOD.ping:
        return this.ping(client);
      case METHOD.subscribe:
        return this.subscribe(client, msg.params, id);
      case METHOD.unsubscribe:
        return this.unsubscribe(client, msg.params, id);
      default:
        return this.invalid(
          client,
          typeof msg.method === 'string'
            ? `invalid request: unknown method ${JSON.stringify(msg.method).slice(0, 80)}`
            : 'invalid request: method is required',
          { id, cause: typeof msg.method === 'string' ? 'unknown-method' : 'missing-method' },
        );
    }
  }

  private ping(client: Client): void {
    if (client.keepAlive && client.pingResets) client.keepAlive.refresh();
    client.pingedSinceSubscribe = true;
    const reply = this.svc.seams.session.pong(TEXT.pong, { subscribed: client.subs.length > 0 });
    if (typeof reply === 'string') this.sendText(client, reply);
    else if (reply) this.sendJson(client, reply);
  }

  /** The codes of `params.pairs`, or sends a 50004 notice and returns undefined. */
  private pairsOf(client: Client, params: unknown, id: string | undefined, method: string): string[] | undefined {
    // An empty list is not stated invalid: the dialect refuses it (50004) or acknowledges a subscribe to nothing.
    const acknowledgeEmpty = method === METHOD.subscribe && this.svc.dialect.stream.emptySubscribe === 'acknowledge';
    const read = readPairs(params, acknowledgeEmpty);
    const verdict = this.svc.seams.session.pairs(read, { params, method, current: client.subs });
    if (Array.isArray(verdict)) return verdict;
    this.invalid(client, verdict.invalid, { id, request: method, cause: emptyPairs(params) });
    return undefined;
  }

  private subscribe(client: Client, params: unknown, id: string | undefined): void {
    // What a refused subscribe does to the earlier subscription is not stated: the dialect keeps or drops it.
    const accepted = !this.refusedPairFirst(client, params, id) && this.trySubscribe(client, params, id);
    if (!accepted && this.svc.dialect.stream.failedSubscribe === 'drop') this.fanOut.join(client, []);
  }

  /**
   * Under the dialect's `pairs-first`, a subscribe naming a pair that cannot be subscribed is refused
   * for that pair (50104) before its count is judged; true when it was.
   */
  private refusedPairFirst(client: Client, params: unknown, id: string | undefined): boolean {
    const svc = this.svc;
    if (svc.dialect.stream.subscribeErrors !== 'pairs-first' || !isObj(params) || !Array.isArray(params.pairs))
      return false;
    const subscribable = (code: string): boolean => {
      const live = svc.livePair(code);
      return (
        svc.seams.session.subscribable(live && !svc.suspended.has(code) ? live : undefined, { code, svc }) !== undefined
      );
    };
    // The pairs as the subscribe reads them (a fault's seam may drop some), as trySubscribe does.
    const listed = (params.pairs as unknown[]).filter((code): code is string => typeof code === 'string');
    const refused = svc.seams.session.select(listed, { method: METHOD.subscribe, svc }).find((c) => !subscribable(c));
    if (refused === undefined) return false;
    this.notice(client, METHOD.error, pairNotFoundMessage(refused), STATUS.PAIR_NOT_FOUND, {
      id,
      request: METHOD.subscribe,
    });
    return true;
  }

  /** A subscribe request; true when accepted. */
  private trySubscribe(client: Client, params: unknown, id: string | undefined): boolean {
    const svc = this.svc;
    const seams = svc.seams.session;
    const method = METHOD.subscribe;
    const valid = this.pairsOf(client, params, id, method);
    if (!valid) return false;
    const codes = seams.select(valid, { method, svc });
    for (const code of codes) {
      const live = svc.livePair(code);
      // A listed pair may be suspended: 50104, like an inactive one (spec: Errors, 50104).
      const entry = seams.subscribable(live && !svc.suspended.has(code) ? live : undefined, { code, svc });
      if (!entry) {
        this.notice(client, METHOD.error, pairNotFoundMessage(code), STATUS.PAIR_NOT_FOUND, { id, request: method });
        return false;
      }
      const denied = svc.access(client.key, entry, 'subscribe');
      if (denied) {
        this.notice(client, METHOD.error, `${messageOf(denied)}: ${code}`, denied as NoticeCode, {
          id,
          request: method,
        });
        return false;
      }
    }
    // Spec, subscription table: the earlier set is replaced, not extended.
    client.pingedSinceSubscribe = false;
    this.accept(client, method, seams.next(codes, { current: client.subs, method, history: client.history }));
    this.notice(client, METHOD.subscribe, TEXT.subscribeSuccess, STATUS.OK, {
      id,
      request: method,
      cause: emptyPairs(params),
    });
    if (svc.dialect.stream.pushes === 'on-change-snapshot') this.fanOut.snapshot(client);
    return true;
  }

  /** An accepted request leaves `next` subscribed: pushed from now on, and kept in the connection's history. */
  private accept(client: Client, method: string, next: string[]): void {
    this.fanOut.join(client, next);
    client.history.push({ method, pairs: [...next] });
  }

  private unsubscribe(client: Client, params: unknown, id: string | undefined): void {
    const svc = this.svc;
    const seams = svc.seams.session;
    const method = METHOD.unsubscribe;
    const valid = this.pairsOf(client, params, id, method);
    if (!valid) return;
    const codes = seams.select(valid, { method, svc });
    for (const code of codes)
      if (!svc.book.pairs.has(code))
        return this.notice(client, METHOD.error, pairNotFoundMessage(code), STATUS.PAIR_NOT_FOUND, {
          id,
          request: method,
        });
    // Pairs that are not subscribed (spec: not shown): ignored, or refused, per the dialect.
    const stray = codes.find((c) => !client.subs.includes(c));
    if (stray !== undefined && svc.dialect.stream.unsubscribeNotSubscribed === 'error')
      return this.invalid(client, `invalid request: not subscribed to ${stray}`, { id, request: method });
    const next = client.subs.filter((c) => !codes.includes(c));
    this.accept(client, method, seams.next(next, { current: client.subs, method, history: client.history }));
    this.notice(client, METHOD.unsubscribe, TEXT.unsubscribeSuccess, STATUS.OK, { id, request: method });
  }
}

/** `empty-pairs` when `params.pairs` is an empty list, so that a notice answering it says why. */
const emptyPairs = (params: unknown): NoticeCause | undefined =>
  isObj(params) && Array.isArray(params.pairs) && params.pairs.length === 0 ? 'empty-pairs' : undefined;

/**
 * Spec, subscribe: `params.pairs` is an array of at most 100 pair codes (duplicates count once);
 * an empty one is refused unless `emptyAllowed`.
 */
function readPairs(params: unknown, emptyAllowed = false): string[] | { invalid: string } {
  if (!isObj(params) || !Array.isArray(params.pairs))
    return { invalid: 'invalid request: params.pairs must be an array of pair codes' };
  const pairs: unknown[] = params.pairs;
  if (pairs.length === 0) return emptyAllowed ? [] : { invalid: 'invalid request: params.pairs is empty' };
  if (pairs.some((c) => typeof c !== 'string')) return { invalid: 'invalid request: every pair must be a string' };
  if (pairs.length > LIMITS.maxPairsPerSubscribe) return { invalid: TOO_MANY_PAIRS };
  return [...new Set(pairs as string[])];
}
