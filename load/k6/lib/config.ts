/**
 * Settings of the k6 scripts, read from the environment in this one place (`k6 run -e NAME=…`
 * or the TestRun's env). Dependency-free: k6 is not Node, so only k6 modules and plain code.
 */
import { parseThresholds, toK6Thresholds, type LoadKind } from '../../thresholds.ts';

const env = (name: string, fallback?: string): string => {
  const v = __ENV[name];
  if (v !== undefined && v !== '') return v;
  if (fallback === undefined) throw new Error(`k6 script: environment variable ${name} is required`);
  return fallback;
};

const positive = (name: string, fallback: string): number => {
  const n = Number(env(name, fallback));
  if (!(n > 0)) throw new Error(`k6 script: ${name} must be a positive number`);
  return n;
};

/**
 * Metrics that need one view of every client (skew, loss) exist only in `conform load fanout`;
 * naming one here is an error, never a silently ignored threshold.
 */
const FANOUT_ONLY = ['skew', 'lost', 'loss_rate', 'connected', 'refused', 'disconnects', 'saturated'];
/** conform's generator self-monitoring has no k6 counterpart; k6 reports its own HTTP failures. */
const REST_ONLY = ['timeouts', 'non_2xx', 'saturated'];

/** Thresholds from `THRESHOLDS` (`latency.p99<50,errors==0`), in k6's form, same metric names. */
export function thresholdsFromEnv(kind: LoadKind): Record<string, string[]> {
  const list = parseThresholds([env('THRESHOLDS', '')], kind);
  for (const t of list) {
    const base = t.metric.split('.')[0]!;
    if (kind === 'fanout' && FANOUT_ONLY.includes(base)) {
      throw new Error(`k6 script: threshold '${t.expr}' needs every client's view (skew, loss) or conform's self-monitoring: run it with conform load fanout`);
    }
    if (kind === 'rest' && REST_ONLY.includes(base)) {
      throw new Error(`k6 script: threshold '${t.expr}' exists only in conform load rest; k6 has http_req_failed for failures`);
    }
  }
  return toK6Thresholds(list);
}

/** The fan-out scenario's settings. */
export const fanoutConfig = () => ({
  wsUrl: env('TARGET_WS'),
  key: env('API_KEY'),
  keyHeader: env('API_KEY_HEADER', 'X-API-Key'),
  pairs: env('PAIRS').split(',').map((p) => p.trim()).filter(Boolean),
  clients: positive('CLIENTS', '100'),
  rampRate: positive('RAMP_RATE', '100'),
  durationS: positive('DURATION', '30'),
  pingIntervalMs: positive('PING_INTERVAL_MS', '15000'),
});

/** The REST scenario's settings. */
export const restConfig = () => ({
  restUrl: env('TARGET_REST').replace(/\/+$/, ''),
  key: env('API_KEY'),
  keyHeader: env('API_KEY_HEADER', 'X-API-Key'),
  endpoint: env('ENDPOINT', 'price'),
  pairs: env('PAIRS', '').split(',').map((p) => p.trim()).filter(Boolean),
  rate: positive('RATE', '200'),
  durationS: positive('DURATION', '30'),
  maxVUs: positive('MAX_VUS', '200'),
});
