/**
 * Measure: one worker thread of the fan-out generator. Opens its share of the clients on the
 * ramp schedule, subscribes, keeps the ping alive, and for each frame takes the receipt time
 * first thing, then records latency, server latency and the (code, last_updated) update it
 * carries. Every tick it sends plain aggregates (encoded HDR histograms, counts) to the
 * coordinator; it prints nothing.
 */
import { isUtf8 } from 'node:buffer';
import { parentPort, workerData } from 'node:worker_threads';
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import { METHOD, STATUS, TEXT } from '../../src/spec.ts';
import { validator } from '../../src/validator.ts';
import { guessTimeUnit, MS_PER_UNIT } from '../clock.ts';
import { monoNow } from '../mono-clock.ts';
import { FastRecorder } from '../histogram.ts';
import { codeOf, hashBytes, scanPushFrame, scannedFrame, type ScannedFrame } from './frame-scan.ts';
import { WireSocket } from './wire-socket.ts';
import type { CoordinatorMessage, Tick, UpdateRecord, WorkerConfig } from './protocol.ts';

const cfg = workerData as WorkerConfig;
const port = parentPort!;

interface Client {
  index: number;
  key: string;
  ws: WireSocket | null;
  startedAt: number;
  openedAt: number;
  subscribeSentAt: number;
  subscribedAt: number;
  firstFrameAt: number;
  nextPingAt: number;
  refused: boolean;
  done: boolean;
  /** Last `last_updated` seen per code index, to count an update once per client. */
  lastSeen: Float64Array;
  /** Called once when the socket has closed (the stop waits for it). */
  onClosed: (() => void) | null;
}

/**
 * Recent updates of one code in this worker, oldest first, in a ring of typed arrays: looking up
 * an update is a few comparisons from the newest, with no allocation (a Map keyed by a
 * 13-digit `last_updated` boxes every key).
 */
const RING = 256;
interface UpdateRing {
  lu: Float64Array;
  first: Float64Array;
  last: Float64Array;
  receivers: Int32Array;
  head: number;
  size: number;
}
const newRing = (): UpdateRing => ({
  lu: new Float64Array(RING),
  first: new Float64Array(RING),
  last: new Float64Array(RING),
  receivers: new Int32Array(RING),
  head: 0,
  size: 0,
});
/** Updates pushed out of a full ring before their window ended; sent with the next tick. */
let evicted: UpdateRecord[] = [];

const MAX_CODES = cfg.pairs.length + 64;
const codeIndex = new Map<string, number>();
const codeNames: string[] = [];
const codeBytes: Buffer[] = [];
/** Hash of a code's bytes → its index: the scanner hands over bytes, not strings. */
const byHash = new Map<number, number>();
const updates: UpdateRing[] = [];
function indexOfCode(code: string): number {
  let i = codeIndex.get(code);
  if (i === undefined) {
    if (codeNames.length >= MAX_CODES) return -1;
    i = codeNames.length;
    codeIndex.set(code, i);
    codeNames.push(code);
    const bytes = Buffer.from(code, 'latin1');
    codeBytes.push(bytes);
    const h = hashBytes(bytes, 0, bytes.length);
    if (!byHash.has(h)) byHash.set(h, i);
    updates.push(newRing());
  }
  return i;
}
function indexOfScanned(buf: Buffer, f: ScannedFrame): number {
  const i = byHash.get(f.codeHash);
  if (i !== undefined) {
    const known = codeBytes[i]!;
    const len = f.codeEnd - f.codeStart;
    if (known.length === len) {
      let k = 0;
      while (k < len && buf[f.codeStart + k] === known[k]) k++;
      if (k === len) return i;
    }
  }
  // New code or a hash collision: the slow way, by string.
  return indexOfCode(codeOf(buf, f));
}
for (const p of cfg.pairs) indexOfCode(p);

const validate = validator.compiled('push-frame');
const subscribeText = (index: number): string =>
  JSON.stringify({ id: `c${index}`, method: METHOD.subscribe, params: { pairs: cfg.pairs } });
const pingText = JSON.stringify({ method: METHOD.ping });

// Per-tick state, reset by flush().
const latency = new FastRecorder();
// Receipts before sent_at on the clock in use, by how much: never clamped to 0, they tell the
// coordinator that its clock estimate was off (it narrows it and shifts both histograms back).
const latencyBelowZero = new FastRecorder();
let belowZero = 0;
let framesWithoutSentAt = 0;
const serverLatency = new FastRecorder();
let frames = 0;
let windowFrames = 0;
let duplicates = 0;
let outOfOrder = 0;
let notices = 0;
let pongs = 0;
let validated = 0;
let violations = 0;
let violationSamples: string[] = [];
let connectMs: number[] = [];
let openedAt: number[] = [];
let subscribeMs: number[] = [];
let firstFrameMs: number[] = [];
let subscribed: [number, number][] = [];
let closed: [number, number, number][] = [];
let subscribeFailed = 0;
let refusals: Record<string, number> = {};
let connectErrors: Record<string, number> = {};
let noticeErrors: Record<string, number> = {};
let maxSentMinusReceived = Number.NEGATIVE_INFINITY;
let open = 0;
let steady = false;
let stopping = false;

let msPerUnit = cfg.msPerUnit;
let sentAtUnit: string | null = null;
// Validate every `sampleEvery`-th frame on average, adapted to the frame rate over windows of at
// least RATE_WINDOW_MS (a short window between two flushes made the stride 1 for a whole second).
// The stride is drawn at random around its mean: pairs come in the same order every tick, and a
// fixed stride could keep landing on the same pair.
let sampleEvery = cfg.validatePerSecond > 0 ? 1 : 0;
let sampleCountdown = 1;
const RATE_WINDOW_MS = 500;
let rateFrames = 0;
let rateSince = monoNow();

const clients: Client[] = cfg.clients.map((c) => ({
  index: c.index,
  key: c.key,
  ws: null,
  startedAt: c.startAtMs,
  openedAt: 0,
  subscribeSentAt: 0,
  subscribedAt: 0,
  firstFrameAt: 0,
  nextPingAt: 0,
  refused: false,
  done: false,
  lastSeen: new Float64Array(MAX_CODES).fill(Number.NaN),
  onClosed: null,
}));

const scanned: ScannedFrame = scannedFrame();

function bump(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

function burn(ms: number): void {
  const until = monoNow() + ms;
  while (monoNow() < until) {
    /* a deliberately slow generator */
  }
}

function onPush(client: Client, t: number, idx: number, lastUpdated: number, sentAt: number): void {
  frames++;
  if (client.firstFrameAt === 0) {
    client.firstFrameAt = t;
    firstFrameMs.push(t - client.subscribeSentAt);
  }
  if (Number.isNaN(sentAt)) framesWithoutSentAt++;
  else {
    if (msPerUnit === null) {
      const unit = guessTimeUnit(sentAt, t + cfg.wallOffsetMs);
      if (unit) {
        msPerUnit = MS_PER_UNIT[unit];
        sentAtUnit = unit;
      }
    }
    if (msPerUnit !== null) {
      const receivedWall = t + cfg.wallOffsetMs;
      const sentMs = sentAt * msPerUnit;
      const d = sentMs - receivedWall;
      if (d > maxSentMinusReceived) maxSentMinusReceived = d;
      const v = receivedWall - (sentMs - cfg.serverOffsetMs);
      if (v >= 0) latency.recordMs(v);
      else {
        latencyBelowZero.recordMs(-v);
        belowZero++;
      }
      const w = cfg.frameWindow;
      if (w && sentMs - cfg.serverOffsetMs >= w.startWallMs && sentMs - cfg.serverOffsetMs < w.endWallMs)
        windowFrames++;
    }
  }
  // Without last_updated a frame names no update: it counts, but not for skew, loss or order.
  if (Number.isNaN(lastUpdated)) return;
  if (idx < 0) return;
  const prev = client.lastSeen[idx]!;
  if (prev === lastUpdated) {
    duplicates++;
    return;
  }
  // Only the first frame of an update shows the server's delay; a repeat only shows its age.
  if (msPerUnit !== null && !Number.isNaN(sentAt)) serverLatency.recordMs((sentAt - lastUpdated) * msPerUnit);
  if (lastUpdated < prev) outOfOrder++;
  client.lastSeen[idx] = lastUpdated;
  const r = updates[idx]!;
  for (let k = 1; k <= r.size; k++) {
    const j = (r.head - k) & (RING - 1);
    if (r.lu[j] === lastUpdated) {
      if (t > r.last[j]!) r.last[j] = t;
      r.receivers[j]!++;
      return;
    }
  }
  if (r.size === RING) {
    const j = (r.head - RING) & (RING - 1);
    evicted.push([codeNames[idx]!, r.lu[j]!, r.first[j]!, r.last[j]!, r.receivers[j]!]);
    r.size--;
  }
  const j = r.head;
  r.lu[j] = lastUpdated;
  r.first[j] = t;
  r.last[j] = t;
  r.receivers[j] = 1;
  r.head = (j + 1) & (RING - 1);
  r.size++;
}

function checkSample(value: unknown): void {
  validated++;
  if (validate(value) !== true) {
    violations++;
    if (violationSamples.length < 5) violationSamples.push(validator.validate('push-frame', value).errors.join('; '));
  }
}

/**
 * A fan-out service writes the same bytes to every subscriber of the same pairs: a chunk equal to
 * the last one scanned holds the same messages, so their scanned fields are reused, not re-read.
 */
const CACHE_FRAMES = 256;
const NOT_CACHED = -2;
const cache = {
  chunk: null as Buffer | null,
  count: 0,
  start: new Int32Array(CACHE_FRAMES),
  code: new Int32Array(CACHE_FRAMES),
  lastUpdated: new Float64Array(CACHE_FRAMES),
  sentAt: new Float64Array(CACHE_FRAMES),
};
/** The current chunk equals cache.chunk / is being recorded into the cache. */
let replay = false;
let fill = false;
/** Index of the current chunk's next message. */
let cursor = 0;

function onChunk(buf: Buffer, clean: boolean): void {
  cursor = 0;
  const last = cache.chunk;
  replay = clean && last !== null && last.length === buf.length && last.equals(buf);
  fill = clean && !replay;
  if (fill) {
    cache.chunk = buf;
    cache.count = 0;
  }
}

/** One message: bytes [start, end) of `buf`; `t` is when its bytes reached the socket, read before any parsing. */
function onMessage(client: Client, buf: Buffer, start: number, end: number, t: number): void {
  if (cfg.burnMsPerFrame) burn(cfg.burnMsPerFrame);
  const k = cursor++;
  if (fill) {
    if (k < CACHE_FRAMES) {
      cache.start[k] = start;
      cache.code[k] = NOT_CACHED;
      cache.count = k + 1;
    } else {
      cache.chunk = null;
      fill = false;
    }
  }
  if (buf[start] !== 0x7b) {
    if (end - start === TEXT.pong.length && buf.toString('latin1', start, end) === TEXT.pong) pongs++;
    else notices++;
    return;
  }
  let sample = false;
  if (sampleEvery > 0 && --sampleCountdown <= 0) {
    sample = true;
    sampleCountdown = sampleEvery === 1 ? 1 : 1 + Math.floor(Math.random() * (2 * sampleEvery - 1));
  }
  if (!sample) {
    if (replay && k < cache.count && cache.code[k] !== NOT_CACHED && cache.start[k] === start) {
      onPush(client, t, cache.code[k]!, cache.lastUpdated[k]!, cache.sentAt[k]!);
      return;
    }
    if (scanPushFrame(buf, scanned, start, end)) {
      const idx = indexOfScanned(buf, scanned);
      if (fill) {
        cache.code[k] = idx;
        cache.lastUpdated[k] = scanned.lastUpdated;
        cache.sentAt[k] = scanned.sentAt;
      }
      onPush(client, t, idx, scanned.lastUpdated, scanned.sentAt);
      return;
    }
  }
  const data = buf.subarray(start, end);
  if (sample && !isUtf8(data)) {
    validated++;
    violations++;
    if (violationSamples.length < 5) violationSamples.push('text frame is not valid UTF-8');
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(data.toString());
  } catch {
    violations++;
    if (violationSamples.length < 5) violationSamples.push(`not JSON: ${data.toString().slice(0, 80)}`);
    return;
  }
  const o = value as Record<string, unknown>;
  if (typeof o.method === 'string') {
    notices++;
    if (o.method === METHOD.subscribe && o.code === STATUS.OK) {
      if (client.subscribedAt === 0) {
        client.subscribedAt = t;
        subscribeMs.push(t - client.subscribeSentAt);
        subscribed.push([client.index, t]);
      }
    } else if (o.method === METHOD.error) {
      bump(noticeErrors, String(o.code));
      if (client.subscribedAt === 0 && o.id === `c${client.index}`) subscribeFailed++;
    }
    return;
  }
  if (sample) checkSample(value);
  // last_updated and sent_at appear in the spec's example but are not required fields.
  if (typeof o.code === 'string') {
    onPush(
      client,
      t,
      indexOfCode(o.code),
      typeof o.last_updated === 'number' ? o.last_updated : Number.NaN,
      typeof o.sent_at === 'number' ? o.sent_at : Number.NaN,
    );
  } else {
    frames++;
    if (!sample) {
      violations++;
      if (violationSamples.length < 5) violationSamples.push(`frame without code: ${data.toString().slice(0, 80)}`);
    }
  }
}

let released = false;
const isOpen = (c: Client): boolean => c.ws !== null && c.ws.state === 'open';
function sendSubscribe(client: Client): void {
  client.subscribeSentAt = monoNow();
  client.ws!.send(subscribeText(client.index));
}

function startClient(client: Client): void {
  const t0 = monoNow();
  client.startedAt = t0;
  let ws: WireSocket;
  try {
    ws = new WireSocket(
      cfg.wsUrl,
      {
        headers: { [cfg.keyHeader]: client.key },
        handshakeTimeoutMs: cfg.connectTimeoutMs,
        ...(cfg.localAddress ? { localAddress: cfg.localAddress } : {}),
      },
      {
        open: () => {
          const t = monoNow();
          client.openedAt = t;
          open++;
          connectMs.push(t - t0);
          openedAt.push(t);
          client.nextPingAt = t + cfg.pingIntervalMs;
          if (!cfg.holdSubscribe || released) sendSubscribe(client);
        },
        message: (buf, start, end, t) => onMessage(client, buf, start, end, t),
        chunk: onChunk,
        refused: (status, body) => {
          client.refused = true;
          let key = `http ${status}`;
          try {
            const parsed = JSON.parse(body.toString()) as { status_number?: unknown };
            if (typeof parsed.status_number === 'string') key = parsed.status_number;
          } catch {
            /* not JSON: keep the HTTP status */
          }
          bump(refusals, key);
        },
        error: (err) => {
          if (client.openedAt === 0 && !client.refused) bump(connectErrors, err.code ?? err.message.slice(0, 60));
        },
        close: (code) => {
          client.done = true;
          if (client.openedAt > 0) {
            open--;
            closed.push([client.index, monoNow(), code]);
          }
          client.onClosed?.();
        },
      },
    );
  } catch (err) {
    bump(connectErrors, (err as Error).message.slice(0, 60));
    client.done = true;
    return;
  }
  client.ws = ws;
}

// Open-model ramp: each client starts at its own scheduled time, whatever happened to the others.
let nextClient = 0;
let rampTimer: NodeJS.Timeout | null = null;
function ramp(): void {
  rampTimer = null;
  if (stopping) return;
  const now = monoNow();
  while (nextClient < clients.length && clients[nextClient]!.startedAt <= now) startClient(clients[nextClient++]!);
  if (nextClient < clients.length)
    rampTimer = setTimeout(ramp, Math.max(0, clients[nextClient]!.startedAt - monoNow()));
}

const pingTimer = setInterval(
  () => {
    const now = monoNow();
    for (const c of clients) {
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

function takeUpdates(all: boolean, now: number): UpdateRecord[] {
  const out = evicted;
  evicted = [];
  const cutoff = now - cfg.updateWindowMs;
  for (let i = 0; i < updates.length; i++) {
    const r = updates[i]!;
    // Oldest first: entries were added in order of their first receipt here.
    while (r.size > 0) {
      const j = (r.head - r.size) & (RING - 1);
      if (!all && r.first[j]! >= cutoff) break;
      out.push([codeNames[i]!, r.lu[j]!, r.first[j]!, r.last[j]!, r.receivers[j]!]);
      r.size--;
    }
  }
  return out;
}

function flush(final = false): void {
  const now = monoNow();
  const u = performance.eventLoopUtilization(elu);
  elu = performance.eventLoopUtilization();
  const tick: Tick = {
    type: 'tick',
    workerIndex: cfg.workerIndex,
    atMs: now,
    steady,
    frames,
    duplicates,
    outOfOrder,
    notices,
    pongs,
    latency: latency.takeEncoded(),
    latencyBelowZero: belowZero ? latencyBelowZero.takeEncoded() : null,
    framesWithoutSentAt,
    serverLatency: serverLatency.takeEncoded(),
    connectMs,
    openedAt,
    subscribeMs,
    firstFrameMs,
    subscribed,
    closed,
    subscribeFailed,
    refusals,
    connectErrors,
    noticeErrors,
    updates: takeUpdates(final, now),
    validated,
    violations,
    violationSamples,
    open,
    eventLoopDelayP99Ms: delayP99(eld),
    steadyEventLoopDelayP99Ms: delayP99(eldSteady),
    utilization: u.utilization,
    maxSentMinusReceivedMs: maxSentMinusReceived,
    windowFrames,
    sentAtUnit,
    heapUsedBytes: process.memoryUsage().heapUsed,
  };
  rateFrames += frames;
  if (cfg.validatePerSecond > 0 && now - rateSince >= RATE_WINDOW_MS) {
    // No frames in the window says nothing about the next one's rate: keep the stride.
    if (rateFrames > 0) {
      const rate = (rateFrames * 1000) / (now - rateSince);
      sampleEvery = Number.isFinite(cfg.validatePerSecond) ? Math.max(1, Math.ceil(rate / cfg.validatePerSecond)) : 1;
    }
    rateFrames = 0;
    rateSince = now;
  }
  port.postMessage(tick);
  eld.reset();
  frames = windowFrames = duplicates = outOfOrder = notices = pongs = validated = violations = subscribeFailed = 0;
  violationSamples = [];
  connectMs = [];
  openedAt = [];
  subscribeMs = [];
  firstFrameMs = [];
  subscribed = [];
  closed = [];
  refusals = {};
  connectErrors = {};
  noticeErrors = {};
  maxSentMinusReceived = Number.NEGATIVE_INFINITY;
  belowZero = framesWithoutSentAt = 0;
}

const tickTimer = setInterval(() => flush(), cfg.tickMs);

port.on('message', (msg: CoordinatorMessage) => {
  if (msg.type === 'start') {
    for (const c of clients) c.startedAt += msg.atMs;
    ramp();
  } else if (msg.type === 'subscribe') {
    released = true;
    for (const c of clients) if (isOpen(c) && c.subscribeSentAt === 0) sendSubscribe(c);
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
        const pending = clients.filter((c) => c.ws && !c.done);
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
