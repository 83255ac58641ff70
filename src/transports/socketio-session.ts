/**
 * The Socket.IO transport of the stream session (socket.io-client): every JSON message travels as
 * one named event, the key goes in a handshake header, and a refused handshake is read from the
 * HTTP response that replaced the WebSocket upgrade. Socket.IO's own heartbeat runs underneath
 * and is not the spec's ping: checks keep sending the `ping` method themselves.
 *
 * The WebSocket transport only (no long-polling): the handshake is then one HTTP request, as with
 * raw WebSocket, so refusals, redirects and the local source address behave the same.
 */
import { performance } from 'node:perf_hooks';
import type { ClientRequest, IncomingMessage } from 'node:http';
import type WebSocket from 'ws';
import { io, NodeWebSocket, type ManagerOptions, type Socket, type SocketOptions } from 'socket.io-client';
import type { StreamClientOptions } from './ws-session.ts';
import { FrameSession, SessionSet, maskingRedactor, prepareHandshake, textFrame } from './frame-session.ts';
import { readRefusal } from './handshake-refusal.ts';
import { CLOSE_WAIT_MS, HANDSHAKE_TIMEOUT_MS } from '../timing/index.ts';
import { AbortedError, BindError, type ConformError, NetworkError, TimeoutError } from '../errors.ts';
import type { InboundFrame, OpenOptions, OpenResult, Refusal, StreamClient } from './stream.ts';
import { caOption } from './tls-trust.ts';

export interface SocketIoClientOptions extends StreamClientOptions {
  /** The event that carries the JSON messages both ways (the spec does not show its name). */
  event: string;
  /** The Socket.IO namespace (the spec shows none); default `/`. */
  namespace?: string;
}

/** maxPayload 1 MiB, as the raw WebSocket session: the protocol's messages are well under 1 KiB. */
const DEFAULTS = { maxPayload: 1024 * 1024, handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS } as const;
/** Socket.IO's default handshake path, used when the URL names none. */
export const DEFAULT_SOCKETIO_PATH = '/socket.io/';

/**
 * Where to connect: the URL's origin, and its path as the Socket.IO path (`/socket.io/` when the
 * URL has none). The namespace is the client option's, not the URL's.
 */
export function socketIoTarget(url: string): { origin: string; path: string } {
  const u = new URL(url);
  const path = u.pathname === '' || u.pathname === '/' ? DEFAULT_SOCKETIO_PATH : u.pathname;
  return { origin: `${u.protocol}//${u.host}`, path };
}

/** A refusal handed from the transport to `connect_error`. */
const REFUSAL = Symbol('refusal');
type Carried = { [REFUSAL]: Refusal };
const carried = (v: unknown): Refusal | undefined =>
  v !== null && typeof v === 'object' && REFUSAL in v ? (v as Carried)[REFUSAL] : undefined;

/**
 * engine.io's Node WebSocket transport, but a response other than 101 is read (status, headers,
 * body) and handed to `connect_error` as the transport error's context, instead of ws's bare
 * "Unexpected server response". A redirect is such a response too: never followed with the key.
 */
class RefusalReadingWebSocket extends NodeWebSocket {
  override createSocket(
    uri: string,
    protocols: string | string[] | undefined,
    opts: Record<string, unknown>,
  ): WebSocket {
    const ws = super.createSocket(uri, protocols, { ...opts, followRedirects: false }) as WebSocket;
    ws.once('unexpected-response', (_req: ClientRequest, res: IncomingMessage) => {
      readRefusal(res).then(
        (refusal) => {
          res.socket?.destroy();
          this.onError('handshake refused', refusal.status, { [REFUSAL]: refusal } satisfies Carried);
        },
        (err: Error) => {
          res.socket?.destroy();
          this.onError('handshake response unreadable', err);
        },
      );
    });
    return ws;
  }
}

type ConnectError = Error & { type?: string; description?: unknown; context?: unknown; data?: unknown };

/** The errno code inside an engine.io transport error (ws's ErrorEvent carries the socket error). */
function errnoOf(err: ConnectError): string | undefined {
  const d = err.description as { error?: { code?: unknown }; code?: unknown } | undefined;
  const code = d?.error?.code ?? d?.code;
  return typeof code === 'string' ? code : undefined;
}

/** What every open of one client shares: its options, clock, redaction, sessions and where it connects. */
interface SocketIoClientState {
  options: SocketIoClientOptions;
  clock: () => number;
  masker: ReturnType<typeof maskingRedactor>;
  sessions: SessionSet<SocketIoSession>;
  origin: string;
  path: string;
  namespace: string;
}

/** Creates the Socket.IO stream client the checks use: one per check, recording into that check's evidence. */
export function createSocketIoClient(options: SocketIoClientOptions): StreamClient {
  const clock = options.clock ?? (() => performance.now());
  const sessions = new SessionSet<SocketIoSession>(options.signal);
  const { origin, path } = socketIoTarget(options.url);
  const state: SocketIoClientState = {
    options,
    clock,
    masker: maskingRedactor(options.primaryKey, options.redact),
    sessions,
    origin,
    path,
    namespace: options.namespace ?? '/',
  };

  return {
    now: clock,
    closeAll: () => sessions.closeAll(),
    open(open: OpenOptions = {}): Promise<OpenResult> {
      return openSocketIo(state, open);
    },
  };
}

/** The options of one connection: its own Manager, WebSocket only, the key in the handshake headers. */
function ioOptionsFor(
  state: SocketIoClientState,
  open: OpenOptions,
  headers: Record<string, string>,
  timeoutMs: number,
): Partial<ManagerOptions & SocketOptions> {
  // localAddress, maxPayload and perMessageDeflate pass through engine.io to ws.
  const ioOptions: Partial<Omit<ManagerOptions, 'perMessageDeflate'> & SocketOptions> & {
    localAddress?: string;
    maxPayload?: number;
    perMessageDeflate?: boolean;
  } = {
    path: state.path,
    // One connection per open: no shared Manager, no reconnection, so counts per key are exact.
    forceNew: true,
    multiplex: false,
    reconnection: false,
    autoConnect: false,
    transports: [RefusalReadingWebSocket],
    extraHeaders: headers,
    timeout: timeoutMs,
    maxPayload: state.options.maxPayload ?? DEFAULTS.maxPayload,
    perMessageDeflate: false,
    // engine.io hands `ca` to ws: the same trust as the rest of the run.
    ...caOption(state.options.ca),
    ...(open.localAddress ? { localAddress: open.localAddress } : {}),
  };
  return ioOptions as Partial<ManagerOptions & SocketOptions>;
}

/** How a `connect_error` ends an open: a refusal to resolve with, or a failure to reject with. */
type ConnectErrorEnding = { outcome: string; refusal: Refusal } | { outcome: string; error: ConformError };

/** Reads a `connect_error`: the handshake's refusal, the namespace's CONNECT_ERROR, or a failure by kind. */
function connectErrorEnding(err: ConnectError, redact: (s: string) => string): ConnectErrorEnding {
  const refusal = carried(err.context);
  if (refusal) return { outcome: `refused: HTTP ${refusal.status} ${refusal.text}`, refusal };
  if ('data' in err) {
    // Refused by the namespace (a CONNECT_ERROR packet) after the upgrade succeeded.
    const json = err.data !== undefined ? err.data : { message: err.message };
    const text = JSON.stringify(json) ?? '';
    return {
      outcome: `refused: Socket.IO CONNECT_ERROR ${text}`,
      refusal: { ok: false, status: 101, headers: {}, text, json },
    };
  }
  const errno = errnoOf(err);
  const Failure =
    errno === 'EADDRNOTAVAIL' || errno === 'EINVAL' || errno === 'EAFNOSUPPORT'
      ? BindError
      : err.message === 'timeout'
        ? TimeoutError
        : NetworkError;
  // engine.io's words for a peer that does not speak its protocol.
  const notSocketIo =
    err.message === 'server error' || err.message === 'parser error'
      ? 'the peer does not speak Socket.IO (engine.io v4) at this URL and path'
      : '';
  const detail = errno ?? (typeof err.description === 'number' ? `HTTP ${err.description}` : notSocketIo);
  return {
    outcome: `error: ${err.message}${detail ? ` (${detail})` : ''}`,
    error: new Failure(`Socket.IO open failed: ${redact(err.message)}${detail ? ` (${detail})` : ''}`),
  };
}

/** Opens one Socket.IO connection: a session once the namespace is joined, else the refusal or the failure. */
function openSocketIo(state: SocketIoClientState, open: OpenOptions): Promise<OpenResult> {
  const { options, clock, masker, origin, path, namespace } = state;
  const redact = masker.redact;
  const signal = options.signal;
  const { headers, recordOpen } = prepareHandshake(options, open, masker, clock);
  const timeoutMs = open.timeoutMs ?? options.handshakeTimeoutMs ?? DEFAULTS.handshakeTimeoutMs;

  return new Promise<OpenResult>((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError('aborted before the handshake'));
    let settled = false;
    const startedAtMs = clock();
    // socket.io-client reads the namespace from the URL's path; the engine path is `path`.
    const socket = io(
      namespace === '/' ? origin : `${origin}${namespace}`,
      ioOptionsFor(state, open, headers, timeoutMs),
    );
    // Events that come before 'connect' fires (socket.io-client emits its buffer first) are kept.
    const early: { args: unknown[]; atMs: number }[] = [];
    const buffer = (...args: unknown[]): void => {
      early.push({ args, atMs: clock() });
    };
    socket.on(options.event, buffer);

    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', abortOpen);
      socket.off(options.event, buffer);
      fn();
    };
    const fail = (outcome: string, err: ConformError): void =>
      settle(() => {
        socket.disconnect();
        recordOpen(outcome);
        reject(err);
      });
    const abortOpen = (): void => fail('aborted', new AbortedError('aborted during the handshake'));
    signal?.addEventListener('abort', abortOpen, { once: true });
    // The Manager's timeout covers the engine.io handshake only, not the namespace connect.
    const timer = setTimeout(
      () => fail('error: handshake timed out', new TimeoutError(`Socket.IO open timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );

    socket.once('connect', () =>
      settle(() => {
        recordOpen('open');
        options.record({
          kind: 'note',
          text: `Socket.IO: path ${path}, namespace ${namespace}, event ${JSON.stringify(options.event)}`,
          atMs: clock(),
        });
        const session = new SocketIoSession(socket, options.event, startedAtMs, clock(), clock, options, redact);
        state.sessions.add(session);
        for (const e of early) session.onEvent(e.args, e.atMs);
        resolve({ ok: true, session });
      }),
    );
    socket.once('connect_error', (raw: Error) => {
      const ending = connectErrorEnding(raw as ConnectError, redact);
      if ('error' in ending) return fail(ending.outcome, ending.error);
      settle(() => {
        socket.disconnect();
        recordOpen(ending.outcome);
        resolve(ending.refusal);
      });
    });
    socket.connect();
  });
}

/** Why a Socket.IO disconnect happened, as Socket.IO and its WebSocket report it. */
type Details = { description?: unknown; context?: { code?: unknown; reason?: unknown } } | Error | undefined;

/** One open Socket.IO connection; checks see it as a StreamSession. */
class SocketIoSession extends FrameSession {
  /** The WebSocket under the connection: the close counts when it has closed, as over raw WebSocket. */
  private readonly ws: WebSocket | undefined;

  constructor(
    private readonly socket: Socket,
    private readonly event: string,
    startedAtMs: number,
    openedAtMs: number,
    clock: () => number,
    options: SocketIoClientOptions,
    redact: (s: string) => string,
  ) {
    super(startedAtMs, openedAtMs, clock, options, redact);
    this.ws = (socket.io.engine?.transport as unknown as { ws?: WebSocket } | undefined)?.ws;
    socket.on(event, (...args: unknown[]) => this.onEvent(args, this.clock()));
    socket.onAny((name: string, ...args: unknown[]) => {
      if (name !== event)
        this.note(`event ${JSON.stringify(name)} (not ${JSON.stringify(event)}) ignored: ${preview(args)}`);
    });
    socket.on('disconnect', (reason, details) => this.onDisconnect(reason, details as Details));
  }

  get isOpen(): boolean {
    return this.socket.connected;
  }

  /** A string payload is a text message, like a raw WebSocket text frame. */
  protected transmit(text: string): void {
    this.socket.emit(this.event, text);
  }

  /** A JSON message is emitted as the object itself. */
  protected override transmitValue(value: unknown): void {
    this.socket.emit(this.event, value);
  }

  /** Socket.IO has no close code or reason on the wire: the client sends DISCONNECT and closes. */
  protected shut(): void {
    if (this.socket.connected) this.socket.disconnect();
  }

  protected kill(): void {
    this.ws?.terminate();
    this.socket.disconnect();
  }

  /** One event on the message event: its first argument is the message. */
  onEvent(args: unknown[], atMs: number): void {
    if (!this.admitFrame(atMs)) return;
    // A trailing function is an acknowledgement callback the server asked for; the spec has none.
    const values = typeof args[args.length - 1] === 'function' ? args.slice(0, -1) : args;
    if (values.length !== 1)
      this.note(
        `event ${JSON.stringify(this.event)} carried ${values.length} arguments; the first is taken as the message`,
      );
    const payload = values[0];
    let frame: InboundFrame;
    let evidence: string;
    if (typeof payload === 'string') {
      // A string payload reads like a text frame: JSON when it parses, plain text (`Pong!`) otherwise.
      frame = textFrame(payload, atMs);
      evidence = JSON.stringify(payload);
    } else if (Buffer.isBuffer(payload) || payload instanceof ArrayBuffer || ArrayBuffer.isView(payload)) {
      const bytes = (payload as ArrayBuffer | ArrayBufferView).byteLength;
      frame = { kind: 'binary', bytes, atMs };
      evidence = `<binary ${bytes} bytes>`;
    } else {
      const text = JSON.stringify(payload) ?? 'undefined';
      frame = { kind: 'json', text, value: payload ?? null, atMs };
      evidence = text;
    }
    this.receive(frame, evidence);
  }

  private onDisconnect(reason: string, details: Details): void {
    // A WebSocket close under Socket.IO keeps its code and reason; an orderly DISCONNECT packet
    // has none (1000), and a lost transport or a missed Socket.IO heartbeat is abnormal (1006).
    const context = details && !(details instanceof Error) ? details.context : undefined;
    const wsCode = typeof context?.code === 'number' ? context.code : undefined;
    const wsReason = typeof context?.reason === 'string' ? context.reason : '';
    const code = wsCode ?? (reason === 'io server disconnect' || reason === 'io client disconnect' ? 1000 : 1006);
    const end = (): void => this.ended(code, wsReason ? `${reason}: ${wsReason}` : reason);
    // Socket.IO reports the disconnect before its WebSocket has closed; the peer has seen the
    // close (and freed the connection's slot) only once it has.
    const ws = this.ws;
    if (!ws || ws.readyState === ws.CLOSED) return end();
    ws.once('close', end);
    const timer = setTimeout(() => ws.terminate(), CLOSE_WAIT_MS);
    timer.unref();
    ws.once('close', () => clearTimeout(timer));
  }
}

function preview(args: unknown[]): string {
  let text: string;
  try {
    text = JSON.stringify(args) ?? '';
  } catch {
    text = '<unserialisable>';
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
