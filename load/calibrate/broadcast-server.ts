/**
 * A trivial broadcast server: accepts any key, answers subscribe with the success notice and
 * ping with `Pong!`, and every tick pushes one frame per subscribed pair with a fresh
 * `last_updated`, serialised once and sent to every subscriber. It is the floor the generator
 * is calibrated against, and (through `plan`) the scripted server of the load tests.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { textFrame } from '../../src/ws-frame.ts';
import { METHOD, PATHS, STATUS, TEXT } from '../../src/spec.ts';
import type { LoadTarget } from '../target.ts';

/** What to do with one frame for one client: send now, delay by ms, or drop it. */
export type Delivery = 'send' | 'drop' | { delayMs: number };

export interface BroadcastOptions {
  tickMs?: number;
  /** Decides each delivery; clients are numbered by connection order from 0. */
  plan?: (client: number, code: string, update: number) => Delivery;
  /** Stop pushing after this many ticks with subscribers (0 = no limit). */
  maxTicks?: number;
  /** Replaces the frame of a tick (tests: malformed frames); undefined keeps the normal one. */
  frame?: (code: string, tick: number, normal: Record<string, unknown>) => string | Buffer | undefined;
  /** The server's clock runs this many ms ahead of the machine's (negative: behind); default 0. */
  clockOffsetMs?: number;
  /** Unit of `ts`, `last_updated` and `sent_at`; default ms. */
  stampUnit?: 's' | 'ms';
  /** Whether `GET …/v1/pairs` answers with an envelope carrying `ts` (default true; false: without `ts`). */
  restTs?: boolean;
}

export interface BroadcastServer {
  target: LoadTarget;
  /** Updates pushed so far (per pair, one per tick). */
  readonly ticks: number;
  /** For each subscribe received, how many connections were open at that moment. */
  readonly openAtSubscribe: readonly number[];
  /** For each frame `plan` delayed: ms actually passed from stamping it to sending it. */
  readonly delivered: readonly number[];
  close(): Promise<void>;
}

interface Sub {
  index: number;
  ws: WebSocket;
  socket: Socket;
  pairs: string[];
  pairsKey: string;
}

/** What the server keeps between ticks: its subscribers and what the tests read back. */
interface Broadcast {
  readonly options: BroadcastOptions;
  /** The server's clock, in the unit of its stamps. */
  readonly clock: () => number;
  readonly wss: WebSocketServer;
  readonly subs: Set<Sub>;
  nextIndex: number;
  ticks: number;
  readonly openAtSubscribe: number[];
  readonly delivered: number[];
  readonly timers: Set<NodeJS.Timeout>;
}

/** REST only as far as the load generator reads it: its pairs and its clock. */
function pairsHandler(
  options: BroadcastOptions,
  clock: () => number,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (!new URL(req.url ?? '/', 'http://x').pathname.endsWith(PATHS.pairs)) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({ status_number: STATUS.OK, ...(options.restTs === false ? {} : { ts: clock() }), data: [] }),
    );
  };
}

/** A new connection: answers its ping with `Pong!` and its subscribe with the success notice. */
function accept(b: Broadcast, ws: WebSocket, req: IncomingMessage): void {
  const sub: Sub = { index: b.nextIndex++, ws, socket: req.socket as Socket, pairs: [], pairsKey: '' };
  ws.on('message', (data) => {
    const text = data.toString();
    let msg: { id?: string; method?: string; params?: { pairs?: string[] } };
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    if (msg.method === METHOD.ping) {
      ws.send(TEXT.pong);
      return;
    }
    if (msg.method === METHOD.subscribe && Array.isArray(msg.params?.pairs)) {
      b.openAtSubscribe.push(b.wss.clients.size);
      sub.pairs = msg.params.pairs;
      sub.pairsKey = sub.pairs.join('\n');
      b.subs.add(sub);
      ws.send(
        JSON.stringify({
          method: METHOD.subscribe,
          message: TEXT.subscribeSuccess,
          code: STATUS.OK,
          ...(msg.id ? { id: msg.id } : {}),
          data: null,
        }),
      );
    }
  });
  ws.on('close', () => b.subs.delete(sub));
}

/** One tick: every subscriber gets one frame per pair it subscribed to, as `plan` delivers it. */
function tick(b: Broadcast): void {
  const options = b.options;
  // Ticks count from the first subscriber, so a test's schedule does not depend on start-up time.
  if (b.subs.size === 0 || (options.maxTicks && b.ticks >= options.maxTicks)) return;
  const ticks = ++b.ticks;
  const stampedAt = performance.now();
  const now = b.clock();
  const frames = new Map<string, string | Buffer>();
  const frame = (code: string): string | Buffer => {
    let f = frames.get(code);
    if (!f) {
      const normal = { code, ask: '100.01', bid: '99.99', price: '100.00', last_updated: now - 1, sent_at: now };
      f = options.frame?.(code, ticks, normal) ?? JSON.stringify(normal);
      frames.set(code, f);
    }
    return f;
  };
  // Unscripted, like a real fan-out: the frames of a pair set framed once, one write per client
  // (whole unmasked frames, so writing them beside ws's own sends is safe). A send per frame
  // per client made this server, not the generator, the floor that calibrate measured.
  const written = new Map<string, Buffer>();
  for (const s of b.subs) {
    if (!options.plan) {
      let bytes = written.get(s.pairsKey);
      if (!bytes) {
        bytes = Buffer.concat(s.pairs.map((code) => textFrame(frame(code))));
        written.set(s.pairsKey, bytes);
      }
      if (s.ws.readyState === s.ws.OPEN) s.socket.write(bytes);
      continue;
    }
    for (const code of s.pairs) {
      const d = options.plan ? options.plan(s.index, code, ticks) : 'send';
      if (d === 'drop') continue;
      if (d === 'send') s.ws.send(frame(code), { binary: false });
      else {
        const text = frame(code);
        const t = setTimeout(() => {
          b.timers.delete(t);
          if (s.ws.readyState !== s.ws.OPEN) return;
          b.delivered.push(performance.now() - stampedAt);
          s.ws.send(text, { binary: false });
        }, d.delayMs);
        b.timers.add(t);
      }
    }
  }
}

/** Starts the server on 127.0.0.1, port 0. */
export async function startBroadcastServer(options: BroadcastOptions = {}): Promise<BroadcastServer> {
  const tickMs = options.tickMs ?? 100;
  const clock = (): number => {
    const ms = Date.now() + (options.clockOffsetMs ?? 0);
    return options.stampUnit === 's' ? Math.floor(ms / 1000) : ms;
  };
  const server: Server = createServer(pairsHandler(options, clock));
  const b: Broadcast = {
    options,
    clock,
    wss: new WebSocketServer({ server, perMessageDeflate: false }),
    subs: new Set(),
    nextIndex: 0,
    ticks: 0,
    openAtSubscribe: [],
    delivered: [],
    timers: new Set(),
  };
  b.wss.on('connection', (ws, req) => accept(b, ws, req));
  const ticker = setInterval(() => tick(b), tickMs);

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const rest = `http://127.0.0.1:${port}`;
  const key = 'broadcast-any-key';
  return {
    target: {
      rest,
      ws: `ws://127.0.0.1:${port}/`,
      keys: [{ key }],
      profile: { rest, ws: `ws://127.0.0.1:${port}/`, keys: { primary: { key } } },
      embedded: false,
      close: async () => {},
    },
    get ticks() {
      return b.ticks;
    },
    openAtSubscribe: b.openAtSubscribe,
    delivered: b.delivered,
    async close() {
      clearInterval(ticker);
      for (const t of b.timers) clearTimeout(t);
      for (const c of b.wss.clients) c.terminate();
      await new Promise<void>((r) => b.wss.close(() => r()));
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
