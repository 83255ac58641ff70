/**
 * k6 fan-out scenario, the distributed twin of `conform load fanout`. Each VU holds
 * CONNECTIONS_PER_VU WebSocket clients (k6/websockets runs them on the VU's event loop); client g
 * (unique across execution segments) opens at START_AT + g / RAMP_RATE with its own key from the
 * keys' allowances, subscribes to PAIRS and pings. Every machine shares one schedule: the measured
 * window opens after the whole ramp plus WARMUP and lasts DURATION; a push frame counts when its
 * `sent_at` (unit guessed, the target's clock estimated from REST `ts` in setup as conform does)
 * falls in the window, so two machines together count what one would. handleSummary narrows the
 * clock estimate by the frames (none arrives before it was sent), moves latency to it, and writes
 * conform's load JSON (with mergeable latency buckets), HTML and JUnit.
 * Run: API_KEYS="$(cat keys.txt)" k6 run -e TARGET_WS=… -e TARGET_REST=… -e PAIRS=… load/k6/dist/fanout.js
 */
import { check } from 'k6';
import exec from 'k6/execution';
import http from 'k6/http';
import { Counter, Trend } from 'k6/metrics';
import type { Options } from 'k6/options';
import { clearInterval, clearTimeout, setInterval, setTimeout } from 'k6/timers';
import ws from 'k6/ws';
import { WebSocket, type MessageEvent } from 'k6/websockets';
import { estimateClock, guessTimeUnit, MS_PER_UNIT, resolutionMs, type OffsetSample, type TimeUnit } from '../clock.ts';
import { assignKeyList } from '../keys.ts';
import { METHOD, NOTICE_ERROR_CODES, PATHS, QUERY, REST_STATUSES, STATUS } from '../../src/spec.ts';
import {
  checkAllowance,
  fanoutConfig,
  reportConfig,
  runtimeKeys,
  thresholdExprs,
  thresholdsFromEnv,
} from './lib/config.ts';
import { k6Metrics } from './lib/metrics.ts';
import { currentSegment } from './lib/segment.ts';
import { pushFrameProblems } from './lib/push-frame.ts';
import { fanoutSchedule } from '../schedule.ts';
import { summaryOutputs, type SummaryData } from './lib/summary.ts';

const cfg = fanoutConfig(__ENV);
const { countersByCode, distribution, flushMetrics, peak, tally } = k6Metrics({ Counter, Trend });
const thresholds = thresholdExprs(__ENV, 'fanout');
const iterations = Math.ceil(cfg.clients / cfg.connectionsPerVU);
const schedule = fanoutSchedule(cfg);
const k6Thresholds = thresholdsFromEnv(__ENV, 'fanout');
// A run in which not one client connected says nothing about the target: it fails.
k6Thresholds.connected ??= [];
k6Thresholds.connected.push('count>0');

const latency = distribution('latency');
// Magnitudes of latencies below zero on setup's clock estimate: never clamped, moved at the end.
const latencyBelowZero = distribution('latency_below_zero');
// Largest sent_at − receipt (ms): the frames' lower bound on the target's clock offset.
const frameLead = peak('clock_frame_lead');
const serverLatency = distribution('server_latency');
const handshakeTime = distribution('connect');
// Handshake start to subscribe acknowledged: how long a client waits before it can get prices.
const connectTime = distribution('connect_time');
const subscribeTime = distribution('subscribe');
const firstFrame = distribution('first_frame');
const clients = new Counter('clients');
const connected = new Counter('connected');
const subscribed = new Counter('subscribed');
const frames = tally('frames');
const errors = new Counter('errors');
const violations = new Counter('violations');
const refused = new Counter('refused');
const refusedBy = countersByCode('refused', REST_STATUSES);
const refusedHttp = countersByCode('refused_http', ['4xx', '5xx']);
const connectErrors = new Counter('connect_errors');
const noticeErrors = countersByCode('notice', NOTICE_ERROR_CODES);
const disconnects = new Counter('disconnects');
const closed = new Counter('closed');
// How late each VU's once-a-second timer fires: its event-loop delay, conform's saturation signal.
const vuLag = new Trend('vu_lag', true);
// Test hook: busy-spin per frame, a deliberately slow generator (the saturation verdict's test).
const burnMsPerFrame = Number(__ENV.BURN_MS_PER_FRAME ?? 0);

export const options: Options = {
  scenarios: {
    fanout: {
      // One iteration per VU, each holding its share of the clients until the common end.
      executor: 'shared-iterations',
      vus: iterations,
      iterations,
      maxDuration: `${Math.ceil(schedule.maxDurationMs / 1000)}s`,
    },
  },
  thresholds: k6Thresholds,
  summaryTrendStats: ['med', 'p(90)', 'p(99)', 'p(99.9)', 'max', 'count'],
  setupTimeout: '60s',
};

/**
 * REST round trips to the target's clock and the correction the VUs record latency with (null:
 * no estimate holds, latency is not recorded); handleSummary estimates again with the frames.
 */
interface SetupData {
  clock: { samples: OffsetSample[]; resolutionMs: number; tsUnit: TimeUnit | null; offsetMs: number | null };
}

/** The target's clock from REST `ts` (load/clock.ts, the same estimate as conform load fanout). */
export function setup(): SetupData {
  if (!cfg.restUrl) return { clock: { samples: [], resolutionMs: 1, tsUnit: null, offsetMs: null } };
  const key = runtimeKeys(__ENV)[0]!.key;
  const samples: OffsetSample[] = [];
  let unit: TimeUnit | null = null;
  for (let i = 0; i < 8; i++) {
    const sentMs = Date.now();
    const res = http.get(`${cfg.restUrl}${PATHS.pairs}?${QUERY.pairs.perPage}=1`, {
      headers: { [cfg.keyHeader]: key },
      redirects: 0,
      tags: { name: 'clock' },
    });
    const receivedMs = Date.now();
    let ts: unknown;
    try {
      ts = (JSON.parse(String(res.body)) as { ts?: unknown }).ts;
    } catch {
      ts = undefined;
    }
    if (typeof ts !== 'number') continue;
    const u = guessTimeUnit(ts);
    if (!u) continue;
    unit = u;
    samples.push({ sentMs, receivedMs, serverMs: ts * MS_PER_UNIT[u] });
  }
  const resolution = unit ? resolutionMs(unit) : 1;
  return {
    clock: { samples, resolutionMs: resolution, tsUnit: unit, offsetMs: estimateClock(samples, resolution).offsetMs },
  };
}

/** The readyState of an open socket (the WHATWG value; k6 defines no WebSocket.OPEN at run time). */
const OPEN = 1;

let keys: string[] | null = null;

export default function (data: SetupData): void {
  if (!keys) {
    const allowances = runtimeKeys(__ENV);
    checkAllowance(allowances, cfg.clients);
    keys = assignKeyList(cfg.clients, allowances);
  }
  // Counters that stay empty still appear in the summary, and their thresholds are evaluated.
  for (const c of [errors, refused, connected, subscribed, disconnects, connectErrors, violations]) c.add(0);
  const base = cfg.startAtMs ?? exec.scenario.startTime;
  const first = exec.scenario.iterationInTest * cfg.connectionsPerVU;
  const last = Math.min(cfg.clients, first + cfg.connectionsPerVU);
  let left = last - first;
  let due = Date.now() + 1000;
  const flushing = setInterval(() => {
    const now = Date.now();
    vuLag.add(Math.max(0, now - due));
    due = now + 1000;
    flushMetrics();
  }, 1000);
  const done = (): void => {
    if (--left > 0) return;
    clearInterval(flushing);
    flushMetrics();
  };
  for (let g = first; g < last; g++) {
    const key = keys[g]!;
    setTimeout(
      () => client(g, key, base, data.clock.offsetMs, done),
      Math.max(0, base + schedule.openAtMs(g) - Date.now()),
    );
  }
  if (left <= 0) {
    clearInterval(flushing);
    flushMetrics();
  }
}

/** One client's connection and what it has seen so far. */
interface ClientRun {
  /** When the client began its handshake (epoch ms). */
  started: number;
  socket: WebSocket;
  /** The shared window, on our clock (epoch ms), and the target's clock offset the VUs record with. */
  windowStart: number;
  windowEnd: number;
  offsetMs: number | null;
  opened: boolean;
  subscribeSent: number;
  isSubscribed: boolean;
  gotFirst: boolean;
  failedNotice: boolean;
  /** The unit of sent_at, guessed from the first frame. */
  unit: TimeUnit | null;
  /** Last `last_updated` per code: a repeated frame shows the price's age, not the server's delay. */
  lastUpdated: Map<string, unknown>;
}

/** One WebSocket client: open, subscribe, ping, count frames in the window, close at the common end. */
function client(g: number, key: string, base: number, offsetMs: number | null, done: () => void): void {
  clients.add(1);
  const c: ClientRun = {
    // The handshake is timed from before the socket is made.
    started: Date.now(),
    socket: new WebSocket(cfg.wsUrl, null, { headers: { [cfg.keyHeader]: key } }),
    windowStart: base + schedule.windowStartMs,
    windowEnd: base + schedule.windowEndMs,
    offsetMs,
    opened: false,
    subscribeSent: 0,
    isSubscribed: false,
    gotFirst: false,
    failedNotice: false,
    unit: null,
    lastUpdated: new Map(),
  };
  const { socket } = c;
  let ping: ReturnType<typeof setInterval> | null = null;
  let end: ReturnType<typeof setTimeout> | null = null;

  socket.onopen = () => {
    c.opened = true;
    connected.add(1);
    handshakeTime.add(Date.now() - c.started);
    c.subscribeSent = Date.now();
    socket.send(JSON.stringify({ id: `c${g}`, method: METHOD.subscribe, params: { pairs: cfg.pairs } }));
    // A socket closing (ours or the server's) is no longer OPEN: sending then throws in k6.
    ping = setInterval(() => {
      if (socket.readyState === OPEN) socket.send(JSON.stringify({ method: METHOD.ping }));
    }, cfg.pingIntervalMs);
    end = setTimeout(
      () => {
        if (ping) clearInterval(ping);
        socket.close();
      },
      Math.max(0, base + schedule.closeAtMs - Date.now()),
    );
  };

  socket.onmessage = (event?: MessageEvent) => {
    if (event) onFrame(c, event);
  };

  socket.onerror = () => {
    if (c.opened) return; // the close that follows is counted there
    refusal(key);
    done();
  };

  socket.onclose = () => {
    if (ping) clearInterval(ping);
    if (end) clearTimeout(end);
    if (!c.opened) return;
    closed.add(1);
    done();
    if (Date.now() < c.windowEnd) disconnects.add(1);
    check(c.isSubscribed, { 'the subscribe request is answered with code 200': (s) => s });
    check(c.failedNotice, { 'no error notice answers the subscribe request': (f) => !f });
    check(c.gotFirst, { 'push frames arrive after subscribing': (f) => f });
  };
}

/** One message of a client: a notice, a push frame, or plain text (Pong!). */
function onFrame(c: ClientRun, event: MessageEvent): void {
  // k6 stamps the event when the frame is read, before this handler runs.
  const receivedAt = event.timestamp;
  const text = typeof event.data === 'string' ? event.data : '';
  if (!text.startsWith('{')) return; // Pong! and other plain text
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    violations.add(1);
    errors.add(1);
    return;
  }
  if (typeof value.method === 'string') onNotice(c, value, receivedAt);
  else onPush(c, value, receivedAt);
}

/** A notice: the subscribe's answer, or an error. */
function onNotice(c: ClientRun, value: Record<string, unknown>, receivedAt: number): void {
  if (value.method === METHOD.error) {
    errors.add(1);
    noticeErrors.add(String(value.code));
    if (!c.isSubscribed) c.failedNotice = true;
  } else if (value.method === METHOD.subscribe && String(value.code) === STATUS.OK && !c.isSubscribed) {
    c.isSubscribed = true;
    subscribed.add(1);
    subscribeTime.add(receivedAt - c.subscribeSent);
    connectTime.add(receivedAt - c.started);
  }
}

/** A push frame: validated, counted and timed when it was sent inside the window. */
function onPush(c: ClientRun, value: Record<string, unknown>, receivedAt: number): void {
  if (pushFrameProblems(value).length) {
    violations.add(1);
    errors.add(1);
  }
  if (!c.gotFirst) {
    c.gotFirst = true;
    firstFrame.add(receivedAt - c.subscribeSent);
  }
  if (burnMsPerFrame > 0)
    for (const until = Date.now() + burnMsPerFrame; Date.now() < until; ) {
      /* a deliberately slow generator */
    }
  if (typeof value.sent_at !== 'number') return;
  c.unit ??= guessTimeUnit(value.sent_at);
  if (!c.unit) return;
  const sentServerMs = value.sent_at * MS_PER_UNIT[c.unit];
  frameLead.add(sentServerMs - receivedAt);
  // offset = server − local, so the frame left at local time sent − offset (the window is judged
  // on our clock as if the same when no estimate holds).
  const sentLocalMs = sentServerMs - (c.offsetMs ?? 0);
  if (sentLocalMs < c.windowStart || sentLocalMs >= c.windowEnd) return;
  frames.add(1);
  if (c.offsetMs !== null) {
    const v = receivedAt - sentLocalMs;
    if (v >= 0) latency.add(v);
    else latencyBelowZero.add(-v);
  }
  const code = String(value.code);
  // Server latency on the first frame of each update only: a repeated frame shows the price's age.
  if (typeof value.last_updated === 'number' && c.lastUpdated.get(code) !== value.last_updated) {
    c.lastUpdated.set(code, value.last_updated);
    serverLatency.add(sentServerMs - value.last_updated * MS_PER_UNIT[c.unit]);
  }
}

/**
 * k6/websockets does not expose a refused handshake's reply, so one more handshake with k6/ws
 * (which returns status and body) reads its HTTP status and `status_number`. It is a retry of a
 * connection the key's allowance covers; if it is accepted this time, it is closed at once.
 */
function refusal(key: string): void {
  let status = 0;
  let body = '';
  try {
    const res = ws.connect(cfg.wsUrl, { headers: { [cfg.keyHeader]: key } }, (s) => {
      s.on('open', () => s.close());
    });
    status = res ? res.status : 0;
    body = res && typeof res.body === 'string' ? res.body : '';
  } catch {
    status = 0;
  }
  check(status, { 'the handshake is accepted': (s) => s === 101 });
  if (status === 0) {
    connectErrors.add(1);
    errors.add(1);
    return;
  }
  if (status === 101) {
    connectErrors.add(1);
    errors.add(1);
    return;
  } // refused once, accepted on retry
  refused.add(1);
  refusedHttp.add(status >= 400 && status < 500 ? '4xx' : status >= 500 && status < 600 ? '5xx' : String(status));
  let sn: unknown;
  try {
    sn = (JSON.parse(body) as { status_number?: unknown }).status_number;
  } catch {
    sn = undefined;
  }
  refusedBy.add(String(sn));
}

export function handleSummary(data: SummaryData): Record<string, string> {
  const setupClock = (data.setup_data as SetupData | undefined)?.clock ?? {
    samples: [],
    resolutionMs: 1,
    tsUnit: null,
    offsetMs: null,
  };
  const lead = data.metrics.clock_frame_lead?.values.max;
  const estimate = estimateClock(
    setupClock.samples,
    setupClock.resolutionMs,
    typeof lead === 'number' ? lead : Number.NEGATIVE_INFINITY,
  );
  const shiftMs =
    estimate.offsetMs === null || setupClock.offsetMs === null
      ? null
      : Math.round((estimate.offsetMs - setupClock.offsetMs) * 1000) / 1000;
  return summaryOutputs(data, {
    clock: { report: { ...estimate, tsUnit: setupClock.tsUnit }, shiftMs, belowZero: latencyBelowZero.name },
    kind: 'fanout',
    report: reportConfig(__ENV, 'fanout'),
    segment: currentSegment(),
    thresholds,
    options: {
      clients: cfg.clients,
      pairs: cfg.pairs,
      durationMs: cfg.durationS * 1000,
      rampRate: cfg.rampRate,
      connectionsPerVU: cfg.connectionsPerVU,
      startAt: cfg.startAtMs,
      window: { startMs: schedule.windowStartMs, endMs: schedule.windowEndMs },
    },
  });
}
