/**
 * k6 fan-out scenario, the distributed twin of `conform load fanout`: each iteration opens one
 * WebSocket client (open-model arrival at RAMP_RATE per second until CLIENTS are open),
 * subscribes to PAIRS, keeps the ping alive and records, per push frame, latency (receipt −
 * sent_at), server latency (sent_at − last_updated), and counts frames and schema errors.
 * Same metric and threshold names as conform; skew and loss need one view of every client and
 * stay with conform. Run: k6 run -e TARGET_WS=… -e API_KEY=… -e PAIRS=… load/k6/dist/fanout.js
 */
import { check } from 'k6';
import { Counter, Trend } from 'k6/metrics';
import type { Options } from 'k6/options';
import { clearInterval, setInterval, setTimeout } from 'k6/timers';
import { WebSocket, type MessageEvent } from 'k6/websockets';
import { fanoutConfig, thresholdsFromEnv } from './lib/config.ts';

const cfg = fanoutConfig();

const latency = new Trend('latency', true);
const serverLatency = new Trend('server_latency', true);
const connectTime = new Trend('connect', true);
const subscribeTime = new Trend('subscribe', true);
const firstFrame = new Trend('first_frame', true);
const frames = new Counter('frames');
const errors = new Counter('errors');

const rampSeconds = Math.max(1, Math.ceil(cfg.clients / cfg.rampRate));

export const options: Options = {
  scenarios: {
    fanout: {
      executor: 'constant-arrival-rate',
      rate: cfg.rampRate,
      timeUnit: '1s',
      duration: `${rampSeconds}s`,
      preAllocatedVUs: cfg.clients,
      maxVUs: cfg.clients,
      gracefulStop: `${cfg.durationS + 30}s`,
    },
  },
  thresholds: thresholdsFromEnv('fanout'),
};

const DECIMAL = /^-?[0-9]+(\.[0-9]+)?$/;

/** The push-frame rules the schema holds, kept dependency-free for k6. */
function pushFrameProblems(f: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (typeof f.code !== 'string') problems.push('code must be a string');
  for (const k of ['ask', 'bid', 'price']) if (typeof f[k] !== 'string' || !DECIMAL.test(f[k] as string)) problems.push(`${k} must be a decimal string`);
  for (const k of ['last_updated', 'sent_at']) if (f[k] !== undefined && !Number.isInteger(f[k])) problems.push(`${k} must be an integer`);
  return problems;
}

export default function (): void {
  const started = Date.now();
  const ws = new WebSocket(cfg.wsUrl, null, { headers: { [cfg.keyHeader]: cfg.key } });
  let subscribeSent = 0;
  let gotFirst = false;
  let subscribed = false;

  ws.onopen = () => {
    connectTime.add(Date.now() - started);
    subscribeSent = Date.now();
    ws.send(JSON.stringify({ id: `vu${__VU}`, method: 'subscribe', params: { pairs: cfg.pairs } }));
    const ping = setInterval(() => ws.send(JSON.stringify({ method: 'ping' })), cfg.pingIntervalMs);
    setTimeout(() => { clearInterval(ping); ws.close(); }, cfg.durationS * 1000);
  };

  ws.onmessage = (event?: MessageEvent) => {
    if (!event) return;
    // k6 stamps the event when the frame arrives, before this handler runs.
    const receivedAt = event.timestamp;
    const text = typeof event.data === 'string' ? event.data : '';
    if (!text.startsWith('{')) return; // Pong! and other plain text
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(text) as Record<string, unknown>;
    } catch {
      errors.add(1);
      return;
    }
    if (typeof value.method === 'string') {
      if (value.method === 'subscribe' && value.code === '200' && !subscribed) {
        subscribed = true;
        subscribeTime.add(receivedAt - subscribeSent);
      }
      return;
    }
    frames.add(1);
    if (!gotFirst) { gotFirst = true; firstFrame.add(receivedAt - subscribeSent); }
    const problems = pushFrameProblems(value);
    if (problems.length) errors.add(1);
    // sent_at is read as epoch ms here; conform load fanout guesses the unit, k6 keeps it simple.
    if (typeof value.sent_at === 'number') latency.add(receivedAt - value.sent_at);
    if (typeof value.sent_at === 'number' && typeof value.last_updated === 'number') serverLatency.add(value.sent_at - value.last_updated);
  };

  ws.onclose = () => {
    check(subscribed, { 'the subscribe request is answered with code 200': (s) => s });
    check(gotFirst, { 'push frames arrive after subscribing': (g) => g });
  };
  ws.onerror = () => { errors.add(1); };
}
