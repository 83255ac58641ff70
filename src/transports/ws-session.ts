/**
 * The raw WebSocket transport of the stream session (ws): JSON text frames, the key in a
 * handshake header, refusals read from the HTTP response that replaced the upgrade. Every frame
 * in and out and every open and close is recorded as evidence, redacted.
 */
import { performance } from 'node:perf_hooks';
import type { IncomingMessage } from 'node:http';
import WebSocket, { type ClientOptions } from 'ws';
import type { Evidence } from '../check.ts';
import { readRefusal } from './handshake-refusal.ts';
import { HANDSHAKE_TIMEOUT_MS } from '../timing/index.ts';
import { AbortedError, BindError, NetworkError, TimeoutError } from '../errors.ts';
import type { OpenOptions, OpenResult, Push, StreamClient } from './stream.ts';
import { FrameSession, SessionSet, maskingRedactor, prepareHandshake, textFrame } from './frame-session.ts';
import { caOption, type TrustedCa } from './tls-trust.ts';

export interface StreamClientOptions {
  /** The WebSocket URL (the spec does not show its path). */
  url: string;
  /** CA certificates a wss: URL's certificate is verified against beside Node's own. */
  ca?: TrustedCa;
  /** Sent when `open()` is given no key. */
  primaryKey: string;
  /** Receives every open, frame and close of every session. */
  record: (e: Evidence) => void;
  /**
   * Largest frame accepted, bytes; default 1 MiB: the protocol's frames are well under 1 KiB (ws's
   * own default is 100 MiB).
   */
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
  /** Monotonic clock, ms; default `performance.now`. */
  clock?: () => number;
  /** Aborts every open and wait and terminates every session (check timeout, run stop). */
  signal?: AbortSignal;
  /** Told of every push frame any session receives. */
  onPush?: (push: Push) => void;
}

/** The handshake's defaults; a session's (waits, budgets) are FrameSession's SESSION_DEFAULTS. */
const DEFAULTS = { maxPayload: 1024 * 1024, handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS } as const;

/** ws's options of one handshake: its deadline, the run's CA, no redirect followed, no compression. */
function handshakeOptions(
  options: StreamClientOptions,
  open: OpenOptions,
  headers: Record<string, string>,
  deadlineMs: number,
): ClientOptions {
  return {
    headers,
    maxPayload: options.maxPayload ?? DEFAULTS.maxPayload,
    // ws's own timeout is a socket idle timeout, which a dribbling peer resets; the deadline is absolute.
    handshakeTimeout: deadlineMs,
    // A redirect is reported as a refusal, never followed: the key must not go to another origin.
    followRedirects: false,
    perMessageDeflate: false,
    ...caOption(options.ca),
    ...(open.localAddress ? { localAddress: open.localAddress } : {}),
  };
}

/** Creates the stream client the checks use: one per check, recording into that check's evidence. */
export function createStreamClient(options: StreamClientOptions): StreamClient {
  const clock = options.clock ?? (() => performance.now());
  // Keys are masked even when the caller's redactor does not know them (a key given to open()).
  const masker = maskingRedactor(options.primaryKey, options.redact);
  const redact = masker.redact;
  const sessions = new SessionSet<WsSession>(options.signal);
  const signal = options.signal;

  return {
    now: clock,
    closeAll: () => sessions.closeAll(),
    open(open: OpenOptions = {}): Promise<OpenResult> {
      const { headers, recordOpen } = prepareHandshake(options, open, masker, clock);

      return new Promise<OpenResult>((resolve, reject) => {
        if (signal?.aborted) return reject(new AbortedError('aborted before the handshake'));
        let settled = false;
        const startedAtMs = clock();
        const deadlineMs = open.timeoutMs ?? options.handshakeTimeoutMs ?? DEFAULTS.handshakeTimeoutMs;
        const ws = new WebSocket(options.url, handshakeOptions(options, open, headers, deadlineMs));
        const settle = (fn: () => void): void => {
          if (settled) return;
          settled = true;
          clearTimeout(deadline);
          signal?.removeEventListener('abort', abortOpen);
          fn();
        };
        const deadline = setTimeout(
          () =>
            settle(() => {
              ws.terminate();
              recordOpen(`error: no complete handshake within ${deadlineMs} ms`);
              reject(new TimeoutError(`the WebSocket handshake did not complete within ${deadlineMs} ms`));
            }),
          deadlineMs,
        );
        const abortOpen = (): void =>
          settle(() => {
            ws.terminate();
            recordOpen('aborted');
            reject(new AbortedError('aborted during the handshake'));
          });
        signal?.addEventListener('abort', abortOpen, { once: true });

        ws.once('open', () =>
          settle(() => {
            recordOpen('open');
            const session = new WsSession(ws, startedAtMs, clock(), clock, options, redact);
            sessions.add(session);
            resolve({ ok: true, session });
          }),
        );
        ws.once('unexpected-response', (_req, res: IncomingMessage) => {
          // The body is read up to 64 KiB, then the transfer stops (handshake-refusal.ts).
          readRefusal(res).then(
            (refusal) =>
              settle(() => {
                recordOpen(`refused: HTTP ${refusal.status} ${refusal.text}`);
                ws.terminate();
                resolve(refusal);
              }),
            (err: Error) =>
              settle(() => {
                ws.terminate();
                recordOpen(`error: ${err.message}`);
                reject(new NetworkError(`handshake response unreadable: ${redact(err.message)}`));
              }),
          );
        });
        ws.on('error', (err: NodeJS.ErrnoException) =>
          settle(() => {
            const Failure =
              err.code === 'EADDRNOTAVAIL' || err.code === 'EINVAL' || err.code === 'EAFNOSUPPORT'
                ? BindError
                : /timed out/i.test(err.message)
                  ? TimeoutError
                  : NetworkError;
            recordOpen(`error: ${err.code ?? ''} ${err.message}`.trim());
            reject(new Failure(`WebSocket open failed: ${redact(err.message)}${err.code ? ` (${err.code})` : ''}`));
          }),
        );
      });
    },
  };
}

/** One open raw WebSocket; the frame log, waits, budgets and close bookkeeping are FrameSession's. */
class WsSession extends FrameSession {
  constructor(
    private readonly ws: WebSocket,
    startedAtMs: number,
    openedAtMs: number,
    clock: () => number,
    options: StreamClientOptions,
    redact: (s: string) => string,
  ) {
    super(startedAtMs, openedAtMs, clock, options, redact);
    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => this.onMessage(data, isBinary));
    // A protocol error (bad frame, oversized message, invalid UTF-8) or a failed socket fails the connection.
    ws.on('error', (err: NodeJS.ErrnoException) =>
      this.failConnection(`${err.message}${err.code ? ` (${err.code})` : ''}`),
    );
    ws.once('close', (code: number, reason: Buffer) => this.ended(code, reason.toString('utf8')));
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  protected transmit(text: string): void {
    this.ws.send(text);
  }

  /** A close already in flight (CLOSING) only gets the close deadline. */
  protected shut(code: number, reason: string): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING)
      this.ws.close(code, reason);
  }

  protected kill(): void {
    this.ws.terminate();
  }

  private onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    const atMs = this.clock();
    if (!this.admitFrame(atMs)) return;
    const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    if (isBinary) this.receive({ kind: 'binary', bytes: buf.length, atMs });
    else this.receive(textFrame(buf.toString('utf8'), atMs));
  }
}
