/**
 * The raw WebSocket transport of the stream session (ws): JSON text frames, the key in a
 * handshake header, refusals read from the HTTP response that replaced the upgrade. Every frame
 * in and out and every open and close is recorded as evidence, redacted.
 */
import { performance } from 'node:perf_hooks';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import type { Evidence } from '../check.ts';
import { API_KEY_HEADER } from '../spec.ts';
import { readRefusal } from './handshake-refusal.ts';
import {
  StreamError, isPush, jsonObject,
  type CloseInfo, type InboundFrame, type OpenOptions, type OpenResult, type Push, type StreamClient, type StreamSession,
} from './stream.ts';

export interface StreamClientOptions {
  /** The WebSocket URL (the spec does not show its path). */
  url: string;
  /** Sent when `open()` is given no key. */
  primaryKey: string;
  /** Receives every open, frame and close of every session. */
  record: (e: Evidence) => void;
  /** Largest frame accepted, bytes; default 1 MiB: the protocol's frames are well under 1 KiB (ws's own default is 100 MiB). */
  maxPayload?: number;
  /** Applied to every recorded text; the key header is always masked. */
  redact?: (s: string) => string;
  /** Default wait for a reply or a frame, ms; default 5000. */
  waitMs?: number;
  /** Deadline for the whole handshake (a peer dribbling its 101 gets no more), ms; default 5000. */
  handshakeTimeoutMs?: number;
  /** Frames per second a session accepts before it drops a flooding peer; default 20000. */
  maxFramesPerSecond?: number;
  /** Frames recorded as evidence per session before the rest is only counted; default 1000. */
  maxRecordedFrames?: number;
  /** Frames a session keeps for `frames` and `pushes`; older ones are dropped (a flooding peer stays bounded); default 20000. */
  maxKeptFrames?: number;
  /** Characters of frame text a session keeps; older frames are dropped past it (huge frames stay bounded); default 4 Mi. */
  maxKeptChars?: number;
  /** Monotonic clock, ms; default `performance.now`. */
  clock?: () => number;
  /** Aborts every open and wait and terminates every session (check timeout, run stop). */
  signal?: AbortSignal;
}

const DEFAULTS = { maxPayload: 1024 * 1024, waitMs: 5000, handshakeTimeoutMs: 5000, maxRecordedFrames: 1000, maxKeptFrames: 20_000, maxKeptChars: 4 * 1024 * 1024, maxFramesPerSecond: 20_000 } as const;
/** A recorded frame shows this many characters; the transcript stays readable and small. */
const MAX_EVIDENCE_CHARS = 4096;
/** Longer than any key: a key straddling the cut is still whole when redacted. */
const KEY_MARGIN = 256;
const MASK = '[redacted]';
/** A peer that does not answer our close within this long is dropped. */
const CLOSE_WAIT_MS = 1000;

/** Creates the stream client the checks use: one per check, recording into that check's evidence. */
export function createStreamClient(options: StreamClientOptions): StreamClient {
  const clock = options.clock ?? (() => performance.now());
  const keys = new Set<string>([options.primaryKey]);
  // Keys are masked even when the caller's redactor does not know them (a key given to open()).
  const redact = (s: string): string => {
    let out = options.redact ? options.redact(s) : s;
    for (const k of keys) if (k) out = out.split(k).join(MASK);
    return out;
  };
  const sessions = new Set<WsSession>();
  const signal = options.signal;
  const onAbort = (): void => { for (const s of sessions) s.terminate('aborted'); };
  signal?.addEventListener('abort', onAbort, { once: true });

  return {
    now: clock,
    async closeAll() {
      await Promise.all([...sessions].map((s) => s.close(1000, 'check ended').catch(() => undefined)));
    },
    open(open: OpenOptions = {}): Promise<OpenResult> {
      const key = open.key === undefined ? options.primaryKey : open.key;
      if (key) keys.add(key);
      const headerName = open.keyHeader ?? API_KEY_HEADER;
      const headers: Record<string, string> = key === null ? {} : { [headerName]: key };
      const shownHeaders = Object.fromEntries(Object.entries(headers).map(([h, v]) => [h, redact(v)]));
      const base = { kind: 'ws-open' as const, url: redact(options.url), headers: shownHeaders, ...(open.localAddress ? { localAddress: open.localAddress } : {}) };
      const recordOpen = (outcome: string): void => options.record({ ...base, outcome: redact(outcome), atMs: clock() });

      return new Promise<OpenResult>((resolve, reject) => {
        if (signal?.aborted) return reject(new StreamError('CONFORM_ABORTED', 'aborted before the handshake'));
        let settled = false;
        const startedAtMs = clock();
        const deadlineMs = open.timeoutMs ?? options.handshakeTimeoutMs ?? DEFAULTS.handshakeTimeoutMs;
        const ws = new WebSocket(options.url, {
          headers,
          maxPayload: options.maxPayload ?? DEFAULTS.maxPayload,
          // ws's own timeout is a socket idle timeout, which a dribbling peer resets; the deadline below is absolute.
          handshakeTimeout: deadlineMs,
          // A redirect is reported as a refusal, never followed: the key must not go to another origin.
          followRedirects: false,
          perMessageDeflate: false,
          ...(open.localAddress ? { localAddress: open.localAddress } : {}),
        });
        const settle = (fn: () => void): void => {
          if (settled) return;
          settled = true;
          clearTimeout(deadline);
          signal?.removeEventListener('abort', abortOpen);
          fn();
        };
        const deadline = setTimeout(() => settle(() => {
          ws.terminate();
          recordOpen(`error: no complete handshake within ${deadlineMs} ms`);
          reject(new StreamError('CONFORM_TIMEOUT', `the WebSocket handshake did not complete within ${deadlineMs} ms`));
        }), deadlineMs);
        const abortOpen = (): void => settle(() => {
          ws.terminate();
          recordOpen('aborted');
          reject(new StreamError('CONFORM_ABORTED', 'aborted during the handshake'));
        });
        signal?.addEventListener('abort', abortOpen, { once: true });

        ws.once('open', () => settle(() => {
          recordOpen('open');
          const session = new WsSession(ws, startedAtMs, clock(), clock, options, redact);
          sessions.add(session);
          void session.closed.then(() => sessions.delete(session));
          resolve({ ok: true, session });
        }));
        ws.once('unexpected-response', (_req, res: IncomingMessage) => {
          // The body is read up to 64 KiB, then the transfer stops (handshake-refusal.ts).
          readRefusal(res).then((refusal) => settle(() => {
            recordOpen(`refused: HTTP ${refusal.status} ${refusal.text}`);
            ws.terminate();
            resolve(refusal);
          }), (err: Error) => settle(() => {
            ws.terminate();
            recordOpen(`error: ${err.message}`);
            reject(new StreamError('CONFORM_NETWORK', `handshake response unreadable: ${redact(err.message)}`));
          }));
        });
        ws.on('error', (err: NodeJS.ErrnoException) => settle(() => {
          const code = err.code === 'EADDRNOTAVAIL' || err.code === 'EINVAL' || err.code === 'EAFNOSUPPORT' ? 'CONFORM_BIND'
            : /timed out/i.test(err.message) ? 'CONFORM_TIMEOUT' : 'CONFORM_NETWORK';
          recordOpen(`error: ${err.code ?? ''} ${err.message}`.trim());
          reject(new StreamError(code, `WebSocket open failed: ${redact(err.message)}${err.code ? ` (${err.code})` : ''}`));
        }));
      });
    },
  };
}

interface Waiter {
  predicate: (frame: InboundFrame) => boolean;
  resolve: (frame: InboundFrame) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/** One open connection; checks see it as a StreamSession. */
class WsSession implements StreamSession {
  readonly frames: InboundFrame[] = [];
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
    private readonly ws: WebSocket,
    readonly startedAtMs: number,
    readonly openedAtMs: number,
    private readonly clock: () => number,
    private readonly options: StreamClientOptions,
    private readonly redact: (s: string) => string,
  ) {
    this.closed = new Promise((resolve) => { this.resolveClosed = resolve; });
    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => this.onMessage(data, isBinary));
    ws.on('error', (err: NodeJS.ErrnoException) => this.onError(err));
    ws.once('close', (code: number, reason: Buffer) => this.onClose(code, reason.toString('utf8')));
  }

  get isOpen(): boolean { return this.ws.readyState === WebSocket.OPEN; }

  send(message: unknown): void { this.sendText(JSON.stringify(message)); }

  sendText(text: string): void {
    if (!this.isOpen) {
      const c = this.closeInfo;
      throw new StreamError('CONFORM_WAIT_CLOSED', `cannot send: the connection is closed${c ? ` (${c.code}${c.reason ? ` ${c.reason}` : ''}, by ${c.by})` : ''}`);
    }
    this.recordFrame('out', text);
    this.ws.send(text);
  }

  request(message: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>> {
    const id = message.id;
    const what = id === undefined ? `a notice answering ${String(message.method)}` : `a notice with id ${JSON.stringify(id)}`;
    const reply = this.nextMatching((f) => {
      const o = jsonObject(f);
      if (!o || !('method' in o)) return false;
      return id === undefined || o.id === id;
    }, timeoutMs, what);
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
    if (this.ws.readyState !== WebSocket.CLOSED) {
      // A close already in flight (CLOSING) gets the same deadline.
      if (this.ws.readyState !== WebSocket.CLOSING) this.ws.close(code, reason);
      // A peer that never answers the close still lets the check end.
      const timer = setTimeout(() => this.ws.terminate(), CLOSE_WAIT_MS);
      timer.unref();
      void this.closed.then(() => clearTimeout(timer));
    }
    return this.closed;
  }

  /** Drops the connection at once (abort). */
  terminate(why: string): void {
    if (this.closeInfo) return;
    this.closingByClient = true;
    this.options.record({ kind: 'note', text: `terminated: ${why}`, atMs: this.clock() });
    for (const w of [...this.waiters]) this.finish(w, new StreamError('CONFORM_ABORTED', `wait aborted: ${why}`));
    this.ws.terminate();
  }

  private nextMatching(predicate: (frame: InboundFrame) => boolean, timeoutMs: number | undefined, what: string): Promise<InboundFrame> {
    return new Promise<InboundFrame>((resolve, reject) => {
      if (this.options.signal?.aborted) return reject(new StreamError('CONFORM_ABORTED', 'aborted'));
      if (this.closeInfo) return reject(closedError(this.closeInfo, what));
      const ms = timeoutMs ?? this.options.waitMs ?? DEFAULTS.waitMs;
      const waiter: Waiter = {
        predicate,
        resolve,
        reject,
        timer: setTimeout(() => this.finish(waiter, new StreamError('CONFORM_WAIT_TIMEOUT', `waited ${ms} ms for ${what}: none came`)), ms),
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

  private onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    const atMs = this.clock();
    if (this.failure) return;
    // A flood costs a parse per frame: past the rate a live service needs, the peer is dropped.
    if (atMs - this.rateStartMs >= 1000) { this.rateStartMs = atMs; this.rateCount = 0; }
    const rate = this.options.maxFramesPerSecond ?? DEFAULTS.maxFramesPerSecond;
    if (++this.rateCount > rate) {
      this.failConnection(`flood: more than ${rate} frames within one second`);
      return;
    }
    const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    let frame: InboundFrame;
    if (isBinary) {
      frame = { kind: 'binary', bytes: buf.length, atMs };
      this.recordFrame('in', `<binary ${buf.length} bytes>`);
    } else {
      const text = buf.toString('utf8');
      this.recordFrame('in', text);
      let value: unknown;
      let parsed = false;
      try { value = JSON.parse(text); parsed = true; } catch { /* plain text, e.g. `Pong!` */ }
      frame = parsed ? { kind: 'json', text, value, atMs } : { kind: 'text', text, atMs };
    }
    this.frames.push(frame);
    if (frame.kind !== 'binary') {
      this.keptChars += frame.text.length;
      const budget = this.options.maxKeptChars ?? DEFAULTS.maxKeptChars;
      while (this.keptChars > budget && this.frames.length > 1) {
        const old = this.frames.shift()!;
        if (old.kind !== 'binary') this.keptChars -= old.text.length;
        this.noteDropped(`more than ${budget} characters of frames received: the oldest are no longer kept`, atMs);
      }
    }
    const keep = this.options.maxKeptFrames ?? DEFAULTS.maxKeptFrames;
    // Drop in chunks of a tenth, so a flood costs amortised O(1) per frame.
    if (this.frames.length > keep + Math.ceil(keep / 10)) {
      for (const old of this.frames.splice(0, this.frames.length - keep)) if (old.kind !== 'binary') this.keptChars -= old.text.length;
      this.noteDropped(`more than ${keep} frames received: the oldest are no longer kept`, atMs);
    }
    for (const w of [...this.waiters]) {
      let hit = false;
      try { hit = w.predicate(frame); } catch (err) { this.finish(w, err as Error); continue; }
      if (hit) this.finish(w, frame);
    }
  }

  /**
   * The peer broke the protocol (bad frame, oversized message, invalid UTF-8) or the socket failed.
   * RFC 6455 7.1.7 lets the client drop the connection when it fails it: waiting for the peer's
   * close answer would keep the socket (and the process) alive for ws's 30 s close timeout.
   */
  private onError(err: NodeJS.ErrnoException): void {
    this.failConnection(`${err.message}${err.code ? ` (${err.code})` : ''}`);
  }

  /** Drops the connection because the peer misbehaved; `why` becomes the close reason. */
  private failConnection(why: string): void {
    this.options.record({ kind: 'note', text: `socket error: ${this.redact(why)}`, atMs: this.clock() });
    if (this.closeInfo) return;
    this.failure ??= why;
    this.closingByClient = true;
    this.ws.terminate();
  }

  private onClose(code: number, wireReason: string): void {
    const reason = this.failure ? `failed by the client: ${this.failure}` : wireReason;
    const info: CloseInfo = { code, reason, atMs: this.clock(), by: this.closingByClient ? 'client' : 'server' };
    this.closeInfo = info;
    if (this.unrecorded > 0) this.options.record({ kind: 'note', text: `${this.unrecorded} further frames not recorded (limit ${this.limit})`, atMs: info.atMs });
    this.options.record({ kind: 'close', code, reason: this.redact(reason), by: info.by, atMs: info.atMs });
    for (const w of [...this.waiters]) this.finish(w, closedError(info, 'the frame'));
    this.resolveClosed(info);
  }

  private noteDropped(text: string, atMs: number): void {
    if (this.droppedNoted) return;
    this.droppedNoted = true;
    this.options.record({ kind: 'note', text, atMs });
  }

  private get limit(): number { return this.options.maxRecordedFrames ?? DEFAULTS.maxRecordedFrames; }

  private recordFrame(direction: 'in' | 'out', text: string): void {
    if (this.recorded >= this.limit) { this.unrecorded++; return; }
    this.recorded++;
    // A slice of a string keeps its whole parent alive in V8: the cut goes through a fresh copy,
    // or every recorded huge frame would stay in memory as evidence.
    const data = text.length <= MAX_EVIDENCE_CHARS ? this.redact(text)
      : `${Buffer.from(this.redact(text.slice(0, MAX_EVIDENCE_CHARS + KEY_MARGIN)).slice(0, MAX_EVIDENCE_CHARS)).toString()}… (${text.length} characters in all)`;
    this.options.record({ kind: 'frame', direction, data, atMs: this.clock() });
  }
}

function closedError(info: CloseInfo, what: string): StreamError {
  return new StreamError('CONFORM_WAIT_CLOSED', `connection closed (${info.code}${info.reason ? ` ${info.reason}` : ''}, by ${info.by}) before ${what}`);
}
