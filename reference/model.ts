/**
 * The types the parts of the service name of each other: a key, a refused handshake, the service
 * as its seams see it, a client and its push group, the stream's counters. They live here, in a
 * module that imports none of those parts, so the parts import each other in one direction only
 * (stream → session → fan-out, admission → service → seams).
 */
import type { RestStatus } from '../src/spec.ts';
import type { KeyConfig } from './config.ts';
import type { Link } from './link.ts';
import type { PairEntry, PriceBook } from './prices.ts';

/** A configured key with its name. */
export interface KeyRecord extends KeyConfig {
  /** Name of the key in the config (and the profile). */
  readonly name: string;
}

/** A handshake the service refuses, with the status number and message of the JSON body. */
export interface Refusal {
  readonly status: RestStatus;
  readonly message: string;
}

/** What a seam may ask of the service it deviates (service.ts `Service` is one). */
export interface ServiceView {
  readonly book: PriceBook;
  /** The pairs in the order /v1/pairs lists them. */
  readonly listing: readonly PairEntry[];
  /** The primary key's record. */
  readonly primary: KeyRecord;
  /** The key record for a header value, or undefined for a missing or unknown key. */
  keyFor(value: string | undefined): KeyRecord | undefined;
  /** The pair of `code` when it exists and is subscribable. */
  livePair(code: string): PairEntry | undefined;
}

/** A connected client of either transport. */
export interface Client {
  readonly link: Link;
  readonly key: KeyRecord;
  readonly countKey: string;
  subs: string[];
  group: Group | undefined;
  keepAlive: NodeJS.Timeout | undefined;
  /** Whether a ping restarts the keep-alive window. */
  pingResets: boolean;
  overTicks: number;
  windowStart: number;
  windowCount: number;
  /** Admitted without a valid key and told so: its requests are not served. */
  readonly unauthorized: boolean;
  /** Whether a ping arrived since the last accepted subscribe. */
  pingedSinceSubscribe: boolean;
  /** Its accepted subscribes and unsubscribes, oldest first, each with the set it left. */
  history: { method: string; pairs: string[] }[];
}

/** The clients of one subscription set (and push variant): they share every tick's bytes. */
export interface Group {
  readonly id: string;
  /** The pairs pushed to the group. */
  readonly codes: readonly string[];
  readonly clients: Set<Client>;
  /** How its pushes are written, when not as everyone's (a seam's choice). */
  readonly variant: string | undefined;
}

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
