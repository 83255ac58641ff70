/**
 * The seams of the reference service: the few points where what it does may differ from the one
 * answer the spec gives. The correct path computes that answer, hands it to the seam and goes on
 * with what the seam returns; with no fault every seam returns what it was given (`CORRECT`), so
 * the correct path reads as the spec. A fault (fault-effects.ts) is a set of transformations at
 * these seams and nothing else.
 *
 * The seams, by what they shape: how a request or handshake is admitted, what a key may read, how
 * a REST answer is chosen and its envelope written, how a REST request is read, how prices and
 * records are written, how the session protocol answers, how a notice is written, and which pairs
 * are pushed and how a push is written.
 */
import type { IncomingMessage } from 'node:http';
import type { NoticeCode, RestStatus } from '../src/spec.ts';
import type { PairEntry } from './prices.ts';
import type { KeyRecord, Refusal, ServiceView } from './model.ts';

/** Where a request arrived: REST or the stream's handshake. */
export type Surface = 'rest' | 'stream';

/** What a key's entitlement is asked for: listing pairs, reading a price on REST, subscribing. */
export type Use = 'list' | 'price' | 'subscribe';

/**
 * The connection slot an admitted handshake takes: whose count, its size, whether a close frees it,
 * how long a handshake refused for a full count holds a slot all the same (0: not at all; Infinity:
 * for good), and which other counts its allowance is checked against.
 */
export interface Slot {
  readonly countKey: string;
  readonly allowance: number;
  readonly freed: boolean;
  /** Other counts the allowance is checked against besides its own (a count pooled across keys); none by default. */
  readonly countsWith?: readonly string[];
  readonly refusalHoldsMs: number;
}

/** An accepted subscribe or unsubscribe of a connection, as its history keeps it. */
export interface Accepted {
  readonly method: string;
  readonly pairs: readonly string[];
}

/** Which part of the REST side answered: auth before routing, the router, an endpoint, the stream path. */
export type Responder = 'auth' | 'router' | 'pairs' | 'price' | 'stream-path';

/** What a REST request is answered with, before the envelope is written. */
export interface Answer {
  readonly status: RestStatus;
  readonly data: unknown;
  /** Absent: the status's own message. */
  readonly message?: string;
}

/** A REST answer as written: HTTP status and the envelope. */
export interface Outcome {
  http: number;
  body: Record<string, unknown>;
  /** Headers beside the content type (Retry-After, the rate-limit headers). */
  headers?: Record<string, string>;
}

/** The `/v1/pairs` query as read: a number, or the message of why it is invalid. */
export interface PairsQuery {
  readonly page: number | string;
  readonly perPage: number | string;
  /** Lowercased filters; undefined when not given. */
  readonly type: string | undefined;
  readonly code: string | undefined;
}

/** The slice of the matching pairs one page answers. */
export interface PageWindow {
  readonly start: number;
  readonly count: number;
}

/** A quote's three prices as decimal strings. */
export interface Quote {
  readonly ask: string;
  readonly bid: string;
  readonly price: string;
}

/** The keep-alive of a connection: the window (undefined: never closed) and whether a ping restarts it. */
export interface KeepAlive {
  readonly windowMs: number | undefined;
  readonly pingResets: boolean;
}

/** `params.pairs` of a subscribe or unsubscribe as read: the codes, or why the request is invalid. */
export type PairsVerdict = string[] | { readonly invalid: string };

/** Why a notice is sent, where its code alone does not say. */
export type NoticeCause = 'malformed-json' | 'unknown-method' | 'empty-pairs' | 'not-an-object' | 'missing-method';

/** Whether a request with a known method is served, or refused as invalid before its method acts. */
export type RequestVerdict = 'serve' | { readonly invalid: string };

/** How a handshake without a valid key is answered: refused in it, or told with a notice after connecting. */
export type UnauthorizedMode = 'handshake' | 'after-connect';

/** Every seam of the service, grouped by what it shapes. */
export interface Seams {
  admission: {
    /** The key a request (rest) or handshake (stream) names; given: the X-API-Key header's, in any spelling. */
    caller(
      key: KeyRecord | undefined,
      at: { req: IncomingMessage; surface: Surface; svc: ServiceView },
    ): KeyRecord | undefined;
    /** REST: the refusal of a key's account state before routing (undefined: served). */
    account(status: RestStatus | undefined, at: { key: KeyRecord }): RestStatus | undefined;
    /** Stream: the refusal of a handshake for its key's state and access (undefined: admitted). */
    refusal(refusal: Refusal | undefined, at: { key: KeyRecord }): Refusal | undefined;
    /** Stream: the slot an admitted handshake takes. */
    slot(slot: Slot, at: { key: KeyRecord; remoteAddress: string }): Slot;
    /** Stream: the JSON body of a refused handshake. */
    body(body: Record<string, unknown>, at: { refusal: Refusal }): Record<string, unknown>;
    /** Stream: how a handshake without a valid key is answered; given: the dialect's choice. */
    unauthorized(mode: UnauthorizedMode): UnauthorizedMode;
  };
  /** What a key may read: the refusal for `entry` (undefined entry: the key's pairs as a whole). */
  entitlement(
    denied: RestStatus | undefined,
    at: { key: KeyRecord; entry: PairEntry | undefined; use: Use },
  ): RestStatus | undefined;
  envelope: {
    /** The status, data and message a REST request is answered with. */
    answer(answer: Answer, at: { by: Responder; params: URLSearchParams }): Answer;
    /** The envelope and HTTP status as written. */
    write(out: Outcome, at: { status: RestStatus; by: Responder }): Outcome;
  };
  query: {
    /** The `/v1/pairs` query as read, before it is validated. */
    pairs(query: PairsQuery, at: { params: URLSearchParams }): PairsQuery;
    /** The slice of the matches a valid page answers. */
    window(window: PageWindow, at: { page: number }): PageWindow;
    /** The pairs in the order /v1/pairs lists them, once, as the service starts. */
    listing(entries: PairEntry[]): PairEntry[];
  };
  record: {
    /** A pair's quote as read for sending (REST and pushes), before the dialect writes its decimals. */
    quote(quote: Quote, at: { entry: PairEntry }): Quote;
    /** A `/v1/pairs` record. */
    pair(record: Record<string, unknown>, at: { entry: PairEntry }): Record<string, unknown>;
    /** The `/v1/price` data: code, prices, market. */
    price(data: Record<string, unknown>, at: { entry: PairEntry; svc: ServiceView }): Record<string, unknown>;
  };
  session: {
    keepAlive(keepAlive: KeepAlive): KeepAlive;
    /** The reply to a ping: plain text, or an object sent as JSON (undefined: none is sent). */
    pong(
      reply: string | Record<string, unknown>,
      at: { subscribed: boolean },
    ): string | Record<string, unknown> | undefined;
    /** `params.pairs` of a subscribe or unsubscribe as read (`current`: the connection's subscription). */
    pairs(verdict: PairsVerdict, at: { params: unknown; method: string; current: readonly string[] }): PairsVerdict;
    /** Whether a subscribe, unsubscribe or ping is served, given the whole message. */
    request(verdict: RequestVerdict, at: { msg: Record<string, unknown> }): RequestVerdict;
    /** The valid codes a subscribe or unsubscribe acts on. */
    select(codes: string[], at: { method: string; svc: ServiceView }): string[];
    /** The pair a subscribe finds for a code (undefined: not found). */
    subscribable(entry: PairEntry | undefined, at: { code: string; svc: ServiceView }): PairEntry | undefined;
    /**
     * The subscription set after an accepted subscribe or unsubscribe; `history`: the connection's
     * accepted requests before this one, oldest first, each with the set it left.
     */
    next(next: string[], at: { current: readonly string[]; method: string; history: readonly Accepted[] }): string[];
  };
  /** A notice as sent (undefined: none is sent). */
  notice(
    notice: Record<string, unknown>,
    at: { code: NoticeCode; request: string | undefined; cause: NoticeCause | undefined },
  ): Record<string, unknown> | undefined;
  push: {
    /** The pairs a subscription is pushed. */
    pairs(codes: string[], at: { svc: ServiceView }): string[];
    /** The push variant of a connection that (re)subscribes; undefined: the shared pushes. */
    variant(at: { resubscribed: boolean }): string | undefined;
    /** Whether a subscribed connection's pushes are held back; given: false. */
    held(held: boolean, at: { pingedSinceSubscribe: boolean }): boolean;
    /** A push as sent. */
    message(push: Record<string, unknown>, at: { variant: string | undefined }): Record<string, unknown>;
  };
}

/** The seams of a service that follows the spec: each returns what it was given. */
export const CORRECT: Readonly<Seams> = Object.freeze({
  admission: {
    caller: (key) => key,
    account: (status) => status,
    refusal: (refusal) => refusal,
    slot: (slot) => slot,
    body: (body) => body,
    unauthorized: (mode) => mode,
  },
  entitlement: (denied) => denied,
  envelope: { answer: (answer) => answer, write: (out) => out },
  query: { pairs: (query) => query, window: (window) => window, listing: (entries) => entries },
  record: { quote: (quote) => quote, pair: (record) => record, price: (data) => data },
  session: {
    keepAlive: (keepAlive) => keepAlive,
    pong: (reply) => reply,
    pairs: (verdict) => verdict,
    request: (verdict) => verdict,
    select: (codes) => codes,
    subscribable: (entry) => entry,
    next: (next) => next,
  },
  notice: (notice) => notice,
  push: { pairs: (codes) => codes, variant: () => undefined, held: (held) => held, message: (push) => push },
} satisfies Seams);

/** A deviation: some seams replaced. */
export type Deviation = {
  [G in keyof Seams]?: Seams[G] extends (...args: never[]) => unknown ? Seams[G] : Partial<Seams[G]>;
};

/** The seams with `deviation`'s in place of the correct ones. */
export function deviate(deviation: Deviation | undefined): Readonly<Seams> {
  if (!deviation) return CORRECT;
  const out: Record<string, unknown> = {};
  for (const [group, correct] of Object.entries(CORRECT)) {
    const given = (deviation as Record<string, unknown>)[group];
    out[group] = typeof correct === 'function' ? (given ?? correct) : { ...correct, ...(given as object) };
  }
  return out as unknown as Seams;
}
