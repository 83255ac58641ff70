/**
 * The stream session the checks talk to: one interface over raw WebSocket and Socket.IO (with a
 * named event), so a transport can be added without touching a check.
 */

/**
 * The stream transports a target may speak, each a session of src/transports/ chosen in
 * stream-factory.ts. The profile's type, its schema and the options take the names from here.
 */
export const TRANSPORTS = ['ws', 'socketio'] as const;
export type Transport = (typeof TRANSPORTS)[number];

export interface OpenOptions {
  /** Key value; `undefined` sends the profile's primary key, `null` sends none. */
  key?: string | null;
  /** Header name that carries the key; default `X-API-Key`. */
  keyHeader?: string;
  /** Local source address to bind (e.g. 127.0.0.2), for per-key versus per-IP limits. */
  localAddress?: string;
  /** Gives up on the handshake after this long. */
  timeoutMs?: number;
}

/** A frame as received, stamped on arrival with a monotonic clock (ms). */
export type InboundFrame =
  | { kind: 'json'; text: string; value: unknown; atMs: number }
  | { kind: 'text'; text: string; atMs: number }
  | { kind: 'binary'; bytes: number; atMs: number };

export interface CloseInfo {
  code: number;
  reason: string;
  /** Monotonic ms at which the close was seen. */
  atMs: number;
  by: 'server' | 'client';
}

/** The handshake was refused: the HTTP response that came back instead of the upgrade. */
export interface Refusal {
  ok: false;
  status: number;
  headers: Record<string, string>;
  text: string;
  json: unknown;
}

export type OpenResult = { ok: true; session: StreamSession } | Refusal;

/** A JSON object frame: a notice when it has `method`, otherwise a push. */
export type JsonObject = Record<string, unknown>;

/** A received push data frame with its arrival time. */
export interface Push {
  value: JsonObject;
  text: string;
  atMs: number;
}

export interface StreamSession {
  /** Monotonic ms at which the handshake began (before the upgrade request was sent). */
  readonly startedAtMs: number;
  /** Monotonic ms at which the connection opened. */
  readonly openedAtMs: number;
  readonly isOpen: boolean;
  /**
   * The frames received so far, in order: the latest of them, once a long session passes the kept
   * limits (the oldest are dropped from the front, so an index into it does not last).
   */
  readonly frames: readonly InboundFrame[];
  /** How many frames were received so far, kept or not: `frames[0]` is number `received - frames.length`. */
  readonly received: number;
  /** Sends a JSON message. */
  send(message: unknown): void;
  /** Sends raw text (malformed JSON and the like). */
  sendText(text: string): void;
  /** Sends `message` and resolves with the first JSON notice whose `id` echoes it (or, without id, the next notice). */
  request(message: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with the first frame received from now on that matches. Rejects on timeout or close. */
  next(predicate: (frame: InboundFrame) => boolean, timeoutMs?: number): Promise<InboundFrame>;
  /** Resolves with the first frame received so far or later that matches (a frame may beat the caller to it). */
  find(predicate: (frame: InboundFrame) => boolean, timeoutMs?: number): Promise<InboundFrame>;
  /** Push frames received so far (JSON objects without `method`), optionally of one pair and after a time. */
  pushes(filter?: { pair?: string; sinceMs?: number }): Push[];
  /** Push frames received so far, grouped by their `code` (frames without a string `code` under ''). */
  pushesByPair(sinceMs?: number): Map<string, Push[]>;
  /** Resolves when the connection closes, by either side. */
  readonly closed: Promise<CloseInfo>;
  close(code?: number, reason?: string): Promise<CloseInfo>;
}

export interface StreamClient {
  open(options?: OpenOptions): Promise<OpenResult>;
  /** Monotonic clock (ms) the client stamps frames with; checks compare times with it. */
  now(): number;
  /** Closes every session this client opened (the runner calls it when a check ends). */
  closeAll(): Promise<void>;
}

/** Whether a frame is a JSON object. */
export function jsonObject(frame: InboundFrame): JsonObject | undefined {
  if (frame.kind !== 'json') return undefined;
  const v = frame.value;
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : undefined;
}

/** A notice: a JSON object frame with a `method` field (spec: WebSocket notice frame). */
export function isNotice(frame: InboundFrame): boolean {
  const o = jsonObject(frame);
  return o !== undefined && 'method' in o;
}

/** A push: a JSON object frame without `method` (spec: WebSocket push data frame). */
export function isPush(frame: InboundFrame): boolean {
  const o = jsonObject(frame);
  return o !== undefined && !('method' in o);
}
