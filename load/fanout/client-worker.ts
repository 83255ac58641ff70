/**
 * Measure: one worker thread of the fan-out generator, as glue. It opens its share of the clients
 * on the ramp schedule, subscribes, keeps the ping alive, hands every socket chunk and message to
 * its ClientState (client-state.ts), and every tick sends the state's counts with its own health
 * (event-loop delay and utilisation, heap) to the coordinator; it prints nothing.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import { METHOD } from '../../src/spec.ts';
import { monoNow } from '../mono-clock.ts';
import type { FanoutClient } from './client-connections.ts';
import { ClientState } from './client-state.ts';
import { WireSocket } from './wire-socket.ts';
import type { CoordinatorMessage, Tick, WorkerConfig } from './protocol.ts';

const cfg = workerData as WorkerConfig;
const port = parentPort!;
const state = new ClientState(cfg, monoNow());
const pingText = JSON.stringify({ method: METHOD.ping });

/** A client's connection, beside what the state measures of it. */
interface Connection {
  client: FanoutClient;
  ws: WireSocket | null;
  nextPingAt: number;
  done: boolean;
  /** Called once when the socket has closed (the stop waits for it). */
  onClosed: (() => void) | null;
}
const connections: Connection[] = state.clients.map((client) => ({
  client,
  ws: null,
  nextPingAt: 0,
  done: false,
  onClosed: null,
}));

let steady = false;
let stopping = false;
let released = false;
const isOpen = (c: Connection): boolean => c.ws !== null && c.ws.state === 'open';
function sendSubscribe(c: Connection): void {
  c.ws!.send(state.subscribe(c.client, monoNow()));
}

function startClient(c: Connection): void {
  const client = c.client;
  client.startedAt = monoNow();
  let ws: WireSocket;
  try {
    ws = new WireSocket(
      cfg.wsUrl,
      {
        headers: { [cfg.keyHeader]: client.key },
        handshakeTimeoutMs: cfg.connectTimeoutMs,
        ...(cfg.localAddress ? { localAddress: cfg.localAddress } : {}),
        ...(cfg.ca ? { ca: cfg.ca } : {}),
      },
      {
        open: () => {
          const t = monoNow();
          state.opened(client, t);
          c.nextPingAt = t + cfg.pingIntervalMs;
          if (!cfg.holdSubscribe || released) sendSubscribe(c);
        },
        message: (buf, start, end, t) => state.onMessage(client, buf, start, end, t),
        chunk: state.onChunk,
        refused: (status, body) => state.refused(client, status, body),
        error: (err) => state.connectError(client, err),
        close: (code) => {
          c.done = true;
          state.closedAt(client, monoNow(), code);
          c.onClosed?.();
        },
      },
    );
  } catch (err) {
    state.startError(err as Error);
    c.done = true;
    return;
  }
  c.ws = ws;
}

// Open-model ramp: each client starts at its own scheduled time, whatever happened to the others.
let nextClient = 0;
let rampTimer: NodeJS.Timeout | null = null;
function ramp(): void {
  rampTimer = null;
  if (stopping) return;
  const now = monoNow();
  while (nextClient < connections.length && connections[nextClient]!.client.startedAt <= now)
    startClient(connections[nextClient++]!);
  if (nextClient < connections.length)
    rampTimer = setTimeout(ramp, Math.max(0, connections[nextClient]!.client.startedAt - monoNow()));
}

const pingTimer = setInterval(
  () => {
    const now = monoNow();
    for (const c of connections) {
      if (isOpen(c) && now >= c.nextPingAt) {
        c.ws!.send(pingText);
        c.nextPingAt = now + cfg.pingIntervalMs;
      }
    }
  },
  Math.min(1000, cfg.pingIntervalMs),
);

// The histogram records whole timer intervals, resolution included: subtract it to get the delay.
const ELD_RESOLUTION_MS = 10;
const eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
const delayP99 = (h: typeof eld): number => (h.count ? Math.max(0, h.percentile(99) / 1e6 - ELD_RESOLUTION_MS) : 0);
eld.enable();
// Kept over the whole measured phase: a single slow tick should not decide the verdict alone.
const eldSteady = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
let elu: EventLoopUtilization = performance.eventLoopUtilization();

function flush(final = false): void {
  const now = monoNow();
  const u = performance.eventLoopUtilization(elu);
  elu = performance.eventLoopUtilization();
  const tick: Tick = {
    type: 'tick',
    workerIndex: cfg.workerIndex,
    atMs: now,
    steady,
    ...state.take(now, final),
    eventLoopDelayP99Ms: delayP99(eld),
    steadyEventLoopDelayP99Ms: delayP99(eldSteady),
    utilization: u.utilization,
    heapUsedBytes: process.memoryUsage().heapUsed,
  };
  port.postMessage(tick);
  eld.reset();
}

const tickTimer = setInterval(() => flush(), cfg.tickMs);

port.on('message', (msg: CoordinatorMessage) => {
  if (msg.type === 'start') {
    for (const c of connections) c.client.startedAt += msg.atMs;
    ramp();
  } else if (msg.type === 'subscribe') {
    released = true;
    for (const c of connections) if (isOpen(c) && c.client.subscribeSentAt === 0) sendSubscribe(c);
  } else if (msg.type === 'steady') {
    flush();
    steady = true;
    eldSteady.enable();
  } else if (msg.type === 'stop') {
    stopping = true;
    if (rampTimer) clearTimeout(rampTimer);
    setTimeout(
      () => {
        clearInterval(tickTimer);
        clearInterval(pingTimer);
        flush();
        steady = false;
        eldSteady.disable();
        const pending = connections.filter((c) => c.ws && !c.done);
        let left = pending.length;
        const finish = (): void => {
          flush(true);
          eld.disable();
          port.postMessage({ type: 'done', workerIndex: cfg.workerIndex });
        };
        if (!left) {
          finish();
          return;
        }
        const guard = setTimeout(() => {
          for (const c of pending) c.ws!.terminate();
        }, 3000);
        for (const c of pending) {
          c.onClosed = () => {
            if (--left === 0) {
              clearTimeout(guard);
              finish();
            }
          };
          c.ws!.close(1000);
        }
      },
      Math.max(0, msg.closeAtMs - monoNow()),
    );
  }
});

port.postMessage({ type: 'ready', workerIndex: cfg.workerIndex });
