/**
 * What every stream transport shares once a connection is open: the frame log, waits by
 * predicate with timeouts, pushes by pair, the close bookkeeping and the evidence (capped,
 * redacted). A transport (raw WebSocket, Socket.IO) only turns its wire into `receive()` and
 * `ended()` calls and implements sending and closing.
 */
import type { Evidence } from '../check.ts';
import { AbortedError, StreamClosedError, WaitTimeoutError } from '../errors.ts';
import { API_KEY_HEADER } from '../spec.ts';
import { maskKeys } from '../redact.ts';
import { CLOSE_WAIT_MS, FLOOD_WINDOW_MS, FRAME_WAIT_MS } from '../timing/index.ts';
import {
  isPush,
  jsonObject,
  type CloseInfo,
  type InboundFrame,
  type JsonObject,
  type OpenOptions,
  type Push,
  type StreamSession,
} from './stream.ts';

/** What a session needs from its client. */
export interface FrameSessionOptions {
  /** Receives every frame and close of the session. */
  record: (e: Evidence) => void;
  /** Default wait for a reply or a frame, ms; default 5000. */
  waitMs?: number;
  /** Frames recorded as evidence per session before the rest is only counted; default 1000. */
  maxRecordedFrames?: number;
  /**
   * Frames a session keeps for `frames` and `pushes`; older ones are dropped (a flooding peer stays
   * bounded); default 20000.
   */
  maxKeptFrames?: number;
  /**
   * Characters of frame text a session keeps; older frames are dropped past it (huge frames stay
   * bounded); default 4 Mi.
   */
  maxKeptChars?: number;
  /** Frames per second past which the peer is dropped as a flood; default 20000. */
  maxFramesPerSecond?: number;
  /** Aborts every wait. */
  signal?: AbortSignal;
  /** Told of every push frame (a JSON object without `method`) as it arrives, for the engine's inspection. */
  onPush?: (push: Push) => void;
}

export const SESSION_DEFAULTS = {
  waitMs: FRAME_WAIT_MS,
  maxRecordedFrames: 1000,
  maxKeptFrames: 20_000,
  maxKeptChars: 4 * 1024 * 1024,
  maxFramesPerSecond: 20_000,
} as const;

/** A recorded frame shows this many characters; the transcript stays readable and small. */
const MAX_EVIDENCE_CHARS = 4096;
/** Longer than any key: a key straddling the cut is still whole when redacted. */
const KEY_MARGIN = 256;

/** How keys are shown in evidence. */
export const MASK = '[redacted]';

/**
 * A redactor that masks every key the client has sent, even when the caller's redactor does not
 * know it (a key given to `open()`); `remember` adds a key.
 */
export function maskingRedactor(
  primaryKey: string,
  redact?: (s: string) => string,
): { redact: (s: string) => string; remember: (key: string) => void } {
  const keys = new Set<string>([primaryKey]);
  let mask = maskKeys(keys, MASK);
  return {
    redact: (s: string): string => mask(redact ? redact(s) : s),
    remember(key: string): void {
      if (!key || keys.has(key)) return;
      keys.add(key);
      mask = maskKeys(keys, MASK);
    },
  };
}

/**
 * What every transport does before its handshake: pick the key (`undefined` → the primary key,
 * `null` → none), put it in the key header, and record the attempt with every key masked.
 */
export function prepareHandshake(
  client: { url: string; primaryKey: string; record: (e: Evidence) => void },
  open: OpenOptions,
  masker: ReturnType<typeof maskingRedactor>,
  clock: () => number,
): { headers: Record<string, string>; recordOpen: (outcome: string) => void } {
  const key = open.key === undefined ? client.primaryKey : open.key;
  if (key) masker.remember(key);
  const headers: Record<string, string> = key === null ? {} : { [open.keyHeader ?? API_KEY_HEADER]: key };
  const shownHeaders = Object.fromEntries(Object.entries(headers).map(([h, v]) => [h, masker.redact(v)]));
  const base = {
    kind: 'ws-open' as const,
    url: masker.redact(client.url),
    headers: shownHeaders,
    ...(open.localAddress ? { localAddress: open.localAddress } : {}),
  };
  return {
    headers,
    recordOpen: (outcome) => client.record({ ...base, outcome: masker.redact(outcome), atMs: clock() }),
  };
}

/** The sessions a client opened: closed together when a check ends, dropped at once on abort. */
export class SessionSet<S extends FrameSession> {
  private readonly sessions = new Set<S>();
  constructor(signal: AbortSignal | undefined) {
    signal?.addEventListener(
      'abort',
      () => {
        for (const s of this.sessions) s.terminate('aborted');
      },
      { once: true },
    );
  }

  add(session: S): void {
    this.sessions.add(session);
    void session.closed.then(() => this.sessions.delete(session));
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions].map((s) => s.close(1000, 'check ended').catch(() => undefined)));
  }
}

interface Waiter {
  predicate: (frame: InboundFrame) => boolean;
  resolve: (frame: InboundFrame) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/** One open connection as the checks see it; subclasses wire a transport to it. */
export abstract class FrameSession implements StreamSession {
  readonly frames: InboundFrame[] = [];
  private receivedCount = 0;
  readonly closed: Promise<CloseInfo>;
  private readonly waiters = new Set<Waiter>();
  private closeInfo: CloseInfo | undefined;
  private closingByClient = false;
  private recorded = 0;
  private unrecorded = 0;
  private droppedNoted = false;
  private failure: string | undefined;
  private keptChars = 0;
  private rateStartMs = 0;
  private rateCount = 0;
  private resolveClosed!: (info: CloseInfo) => void;

  constructor(
    readonly startedAtMs: number,
    readonly openedAtMs: number,
    protected readonly clock: () => number,
    protected readonly options: FrameSessionOptions,
    protected readonly redact: (s: string) => string,
  ) {
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
  }

  abstract get isOpen(): boolean;

  get received(): number {
    return this.receivedCount;
  }
  /** Puts one text message on the wire. */
  protected abstract transmit(text: string): void;
  /** Starts an orderly close (nothing when one is already under way). */
  protected abstract shut(code: number, reason: string): void;
  /** Drops the connection at once. */
  protected abstract kill(): void;
  /** Puts one JSON message on the wire; by default as its text. */
  protected transmitValue(_value: unknown, text: string): void {
    this.transmit(text);
  }

  send(message: unknown): void {
    const text = JSON.stringify(message);
    this.assertOpen();
    this.recordFrame('out', text);
    this.transmitValue(message, text);
  }

  sendText(text: string): void {
    this.assertOpen();
    this.recordFrame('out', text);
    this.transmit(text);
  }

  request(message: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>> {
    const id = message.id;
    const what =
      id === undefined ? `a notice answering ${String(message.method)}` : `a notice with id ${JSON.stringify(id)}`;
    const reply = this.nextMatching(
      (f) => {
        const o = jsonObject(f);
        if (!o || !('method' in o)) return false;
        return id === undefined || o.id === id;
      },
      timeoutMs,
      what,
    );
    try {
      this.send(message);
    } catch (err) {
      reply.catch(() => undefined);
      throw err;
    }
    return reply.then((f) => jsonObject(f) as Record<string, unknown>);
  }

  next(predicate: (frame: InboundFrame) => boolean, timeoutMs?: number): Promise<InboundFrame> {
    return this.nextMatching(predicate, timeoutMs, 'a matching frame');
  }

  find(predicate: (frame: InboundFrame) => boolean, timeoutMs?: number): Promise<InboundFrame> {
    const seen = this.frames.find(predicate);
    return seen ? Promise.resolve(seen) : this.nextMatching(predicate, timeoutMs, 'a matching frame');
  }

  pushes(filter: { pair?: string; sinceMs?: number } = {}): Push[] {
    const out: Push[] = [];
    for (const f of this.frames) {
      if (filter.sinceMs !== undefined && f.atMs < filter.sinceMs) continue;
      if (!isPush(f) || f.kind !== 'json') continue;
      const value = f.value as Record<string, unknown>;
      if (filter.pair !== undefined && value.code !== filter.pair) continue;
      out.push({ value, text: f.text, atMs: f.atMs });
    }
    return out;
  }

  pushesByPair(sinceMs?: number): Map<string, Push[]> {
    const byPair = new Map<string, Push[]>();
    for (const p of this.pushes(sinceMs === undefined ? {} : { sinceMs })) {
      const code = typeof p.value.code === 'string' ? p.value.code : '';
      const list = byPair.get(code);
      if (list) list.push(p);
      else byPair.set(code, [p]);
    }
    return byPair;
  }

  close(code = 1000, reason = ''): Promise<CloseInfo> {
    if (this.closeInfo) return Promise.resolve(this.closeInfo);
    this.closingByClient = true;
    this.shut(code, reason);
    // A peer that never answers the close still lets the check end.
    const timer = setTimeout(() => this.kill(), CLOSE_WAIT_MS);
    timer.unref();
    void this.closed.then(() => clearTimeout(timer));
    return this.closed;
  }

  /** Drops the connection at once (abort). */
  terminate(why: string): void {
    if (this.closeInfo) return;
    this.closingByClient = true;
    this.options.record({ kind: 'note', text: `terminated: ${why}`, atMs: this.clock() });
    for (const w of [...this.waiters]) this.finish(w, new AbortedError(`wait aborted: ${why}`));
    this.kill();
  }

  /**
   * Whether a frame arriving now is taken: not after the connection failed, and not past the
   * flood rate (a flood costs a parse per frame, so the peer is dropped). Call before decoding.
   */
  protected admitFrame(atMs: number): boolean {
    if (this.failure) return false;
    if (atMs - this.rateStartMs >= FLOOD_WINDOW_MS) {
      this.rateStartMs = atMs;
      this.rateCount = 0;
    }
    const rate = this.options.maxFramesPerSecond ?? SESSION_DEFAULTS.maxFramesPerSecond;
    if (++this.rateCount <= rate) return true;
    this.failConnection(`flood: more than ${rate} frames within one second`);
    return false;
  }

  /** A frame arrived; `evidence` is how it is shown in the transcript (default: its text). */
  protected receive(frame: InboundFrame, evidence?: string): void {
    this.recordFrame('in', evidence ?? (frame.kind === 'binary' ? `<binary ${frame.bytes} bytes>` : frame.text));
    this.frames.push(frame);
    this.receivedCount++;
    if (frame.kind !== 'binary') {
      this.keptChars += frame.text.length;
      const budget = this.options.maxKeptChars ?? SESSION_DEFAULTS.maxKeptChars;
      while (this.keptChars > budget && this.frames.length > 1) {
        const old = this.frames.shift()!;
        if (old.kind !== 'binary') this.keptChars -= old.text.length;
        this.noteDropped(
          `more than ${budget} characters of frames received: the oldest are no longer kept`,
          frame.atMs,
        );
      }
    }
    const keep = this.options.maxKeptFrames ?? SESSION_DEFAULTS.maxKeptFrames;
    // Drop in chunks of a tenth, so a flood costs amortised O(1) per frame.
    if (this.frames.length > keep + Math.ceil(keep / 10)) {
      for (const old of this.frames.splice(0, this.frames.length - keep))
        if (old.kind !== 'binary') this.keptChars -= old.text.length;
      this.noteDropped(`more than ${keep} frames received: the oldest are no longer kept`, frame.atMs);
    }
    if (this.options.onPush && frame.kind === 'json' && isPush(frame))
      this.options.onPush({ value: frame.value as JsonObject, text: frame.text, atMs: frame.atMs });
    for (const w of [...this.waiters]) {
      let hit = false;
      try {
        hit = w.predicate(frame);
      } catch (err) {
        this.finish(w, err as Error);
        continue;
      }
      if (hit) this.finish(w, frame);
    }
  }

  /**
   * The peer broke the protocol or the socket failed: the connection is dropped at once (RFC 6455
   * 7.1.7 lets the client fail it; waiting for the peer's close answer would keep the socket and
   * the process alive), and `why` becomes the close reason.
   */
  protected failConnection(why: string): void {
    this.options.record({ kind: 'note', text: `socket error: ${this.redact(why)}`, atMs: this.clock() });
    if (this.closeInfo) return;
    this.failure ??= why;
    this.closingByClient = true;
    this.kill();
  }

  /** The connection ended, by either side; only the first call counts. */
  protected ended(code: number, wireReason: string): void {
    if (this.closeInfo) return;
    const reason = this.failure ? `failed by the client: ${this.failure}` : wireReason;
    const info: CloseInfo = { code, reason, atMs: this.clock(), by: this.closingByClient ? 'client' : 'server' };
    this.closeInfo = info;
    if (this.unrecorded > 0)
      this.options.record({
        kind: 'note',
        text: `${this.unrecorded} further frames not recorded (limit ${this.limit})`,
        atMs: info.atMs,
      });
    this.options.record({ kind: 'close', code, reason: this.redact(reason), by: info.by, atMs: info.atMs });
    for (const w of [...this.waiters]) this.finish(w, closedError(info, 'the frame'));
    this.resolveClosed(info);
  }

  /** Records a note in the session's evidence. */
  protected note(text: string): void {
    this.options.record({ kind: 'note', text: this.redact(text), atMs: this.clock() });
  }

  private assertOpen(): void {
    if (this.isOpen) return;
    const c = this.closeInfo;
    throw new StreamClosedError(
      `cannot send: the connection is closed${c ? ` (${c.code}${c.reason ? ` ${c.reason}` : ''}, by ${c.by})` : ''}`,
    );
  }

  private nextMatching(
    predicate: (frame: InboundFrame) => boolean,
    timeoutMs: number | undefined,
    what: string,
  ): Promise<InboundFrame> {
    return new Promise<InboundFrame>((resolve, reject) => {
      if (this.options.signal?.aborted) return reject(new AbortedError('aborted'));
      if (this.closeInfo) return reject(closedError(this.closeInfo, what));
      const ms = timeoutMs ?? this.options.waitMs ?? SESSION_DEFAULTS.waitMs;
      const waiter: Waiter = {
        predicate,
        resolve,
        reject,
        timer: setTimeout(
          () => this.finish(waiter, new WaitTimeoutError(`waited ${ms} ms for ${what}: none came`)),
          ms,
        ),
      };
      this.waiters.add(waiter);
    });
  }

  private finish(waiter: Waiter, outcome: InboundFrame | Error): void {
    if (!this.waiters.delete(waiter)) return;
    clearTimeout(waiter.timer);
    if (outcome instanceof Error) waiter.reject(outcome);
    else waiter.resolve(outcome);
  }

  private get limit(): number {
    return this.options.maxRecordedFrames ?? SESSION_DEFAULTS.maxRecordedFrames;
  }

  private noteDropped(text: string, atMs: number): void {
    if (this.droppedNoted) return;
    this.droppedNoted = true;
    this.options.record({ kind: 'note', text, atMs });
  }

  private recordFrame(direction: 'in' | 'out', text: string): void {
    if (this.recorded >= this.limit) {
      this.unrecorded++;
      return;
    }
    this.recorded++;
    // Redacted before the cut, with a margin, so no key is cut in half and shown. A slice of a
    // string keeps its whole parent alive in V8: the cut goes through a fresh copy.
    let data: string;
    if (text.length <= MAX_EVIDENCE_CHARS) data = this.redact(text);
    else {
      const kept = this.redact(text.slice(0, MAX_EVIDENCE_CHARS + KEY_MARGIN)).slice(0, MAX_EVIDENCE_CHARS);
      data = `${Buffer.from(kept).toString()}… (${text.length} characters in all)`;
    }
    this.options.record({ kind: 'frame', direction, data, atMs: this.clock() });
  }
}

/** The error of a wait that the close ended. */
export function closedError(info: CloseInfo, what: string): StreamClosedError {
  return new StreamClosedError(
    `connection closed (${info.code}${info.reason ? ` ${info.reason}` : ''}, by ${info.by}) before ${what}`,
  );
}

/** Parses a text message as the raw WebSocket transport does: JSON when it parses, plain text otherwise. */
export function textFrame(text: string, atMs: number): InboundFrame {
  try {
    return { kind: 'json', text, value: JSON.parse(text) as unknown, atMs };
  } catch {
    return { kind: 'text', text, atMs }; // plain text, e.g. `Pong!`
  }
}
