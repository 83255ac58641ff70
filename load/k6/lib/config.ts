/**
 * Settings of the k6 scripts, read from the environment in this one place (`k6 run -e NAME=…`
 * or the TestRun's env). Dependency-free: k6 is not Node, so only k6 modules and plain code.
 *
 * The keys are read at run time only (`runtimeKeys`, from the process environment), never in the
 * init context: `k6 archive` and k6-operator's initializer run the init context without them, and
 * an archive must not carry them.
 *
 * Every function takes the environment as its first argument (the scripts pass k6's `__ENV`), so
 * the same code runs under Node in the unit tests with a plain object.
 */
import { K6ConfigError } from '../../../src/errors.ts';
import { API_KEY_HEADER } from '../../../src/spec.ts';
import { parseKeyLines, totalAllowance, type KeyAllowance } from '../../keys.ts';
import { metricOf } from '../../metrics.ts';
import { parseThresholds, toK6Thresholds, type LoadKind } from '../../thresholds.ts';

/** k6's `__ENV`, or any plain map of the same shape. */
export type K6Env = Readonly<Record<string, string | undefined>>;

const read = (e: K6Env, name: string, fallback?: string): string => {
  const v = e[name];
  if (v !== undefined && v !== '') return v;
  if (fallback === undefined) throw new K6ConfigError(`k6 script: environment variable ${name} is required`);
  return fallback;
};

const positive = (e: K6Env, name: string, fallback: string): number => {
  const n = Number(read(e, name, fallback));
  if (!(n > 0)) throw new K6ConfigError(`k6 script: ${name} must be a positive number`);
  return n;
};

const whole = (e: K6Env, name: string, fallback: string): number => {
  const n = positive(e, name, fallback);
  if (!Number.isInteger(n)) throw new K6ConfigError(`k6 script: ${name} must be a whole number`);
  return n;
};

/** Epoch ms from `START_AT` (epoch ms or an ISO date), or null. */
function startAt(e: K6Env): number | null {
  const v = e.START_AT;
  if (v === undefined || v === '') return null;
  const n = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(n))
    throw new K6ConfigError(`k6 script: START_AT must be epoch milliseconds or an ISO date, got ${JSON.stringify(v)}`);
  return n;
}

/**
 * The thresholds of `THRESHOLDS` as given (`latency.p99<50,errors==0`), checked for this tool: a
 * metric only conform measures (load/metrics.ts says why) is an error, never a silently ignored
 * threshold.
 */
export function thresholdExprs(e: K6Env, kind: LoadKind): string[] {
  const list = parseThresholds([read(e, 'THRESHOLDS', '')], kind);
  for (const t of list) {
    const m = metricOf(kind, t.metric);
    if (m && 'absent' in m.k6) throw new K6ConfigError(`k6 script: threshold '${t.expr}' ${m.k6.absent}`);
  }
  return list.map((t) => t.expr);
}

/**
 * Thresholds in k6's form, same metric names, plus `checks: rate==1`: a failed check() fails the
 * run instead of only printing a cross.
 */
export function thresholdsFromEnv(e: K6Env, kind: LoadKind): Record<string, string[]> {
  return { ...toK6Thresholds(parseThresholds(thresholdExprs(e, kind), kind), kind), checks: ['rate==1'] };
}

/** The keys, read at run time: `API_KEYS` (a keys file's text: `KEY[,CONNECTIONS]` lines) or `API_KEY`. */
export function runtimeKeys(e: K6Env): KeyAllowance[] {
  const text = e.API_KEYS;
  if (text) {
    const parsed = parseKeyLines(text);
    if ('badLine' in parsed)
      throw new K6ConfigError(`k6 script: API_KEYS line ${parsed.badLine} must be KEY or KEY,CONNECTIONS`);
    if (parsed.keys.length) return parsed.keys;
  }
  const key = e.API_KEY;
  if (key) return [{ key }];
  throw new K6ConfigError(
    'k6 script: give the key at run time as API_KEY, or several as API_KEYS (KEY,CONNECTIONS lines)',
  );
}

/** Throws unless the keys allow `clients` connections together. */
export function checkAllowance(keys: readonly KeyAllowance[], clients: number): void {
  const total = totalAllowance(keys);
  if (total < clients)
    throw new K6ConfigError(
      `k6 script: CLIENTS=${clients} but the keys allow only ${total} connections; give more keys in API_KEYS`,
    );
}

/**
 * Where handleSummary writes and under what name (`REPORT_DIR`, `REPORT_NAME`); `RESULT=stdout`
 * also prints the result as one `conform-result {…}` line (a runner pod's log is then a result).
 */
export const reportConfig = (e: K6Env, kind: LoadKind) => ({
  resultOnStdout: read(e, 'RESULT', 'files') === 'stdout',
  dir: read(e, 'REPORT_DIR', '.').replace(/\/+$/, ''),
  name: read(e, 'REPORT_NAME', `load-${kind}-k6`),
  /** A label for this machine in merged reports (`HOST`, default: the execution segment). */
  host: e.HOST ?? '',
});

/** The fan-out scenario's settings. */
export const fanoutConfig = (e: K6Env) => ({
  wsUrl: read(e, 'TARGET_WS'),
  /** REST base URL: the clock offset is estimated from its `ts`; without it clocks are taken as synchronised. */
  restUrl: read(e, 'TARGET_REST', '').replace(/\/+$/, ''),
  keyHeader: read(e, 'API_KEY_HEADER', API_KEY_HEADER),
  pairs: read(e, 'PAIRS')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean),
  clients: whole(e, 'CLIENTS', '100'),
  /** WebSocket connections each VU holds (k6/websockets runs them on the VU's event loop). */
  connectionsPerVU: whole(e, 'CONNECTIONS_PER_VU', '10'),
  rampRate: positive(e, 'RAMP_RATE', '100'),
  warmupMs: positive(e, 'WARMUP', '1') * 1000,
  durationS: positive(e, 'DURATION', '30'),
  pingIntervalMs: positive(e, 'PING_INTERVAL_MS', '15000'),
  /** Common start of every machine's schedule; default: this instance's scenario start. */
  startAtMs: startAt(e),
});

/** The REST scenario's settings. */
export const restConfig = (e: K6Env) => ({
  restUrl: read(e, 'TARGET_REST').replace(/\/+$/, ''),
  keyHeader: read(e, 'API_KEY_HEADER', API_KEY_HEADER),
  endpoint: read(e, 'ENDPOINT', 'price'),
  pairs: read(e, 'PAIRS', '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean),
  rate: positive(e, 'RATE', '200'),
  durationS: positive(e, 'DURATION', '30'),
  maxVUs: positive(e, 'MAX_VUS', '200'),
});
