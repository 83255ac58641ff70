/**
 * k6 REST scenario, the distributed twin of `conform load rest`: GET /v1/price (cycling PAIRS)
 * or /v1/pairs at a constant arrival rate, recording latency (Trend and mergeable buckets) and
 * the envelope's status_number. Same threshold names as conform (latency.*, errors,
 * rate_limited, non_200_status); handleSummary writes conform's load JSON, HTML and JUnit.
 * Run: API_KEY=… k6 run -e TARGET_REST=… -e PAIRS=… load/k6/dist/rest.js
 */
import { check } from 'k6';
import exec from 'k6/execution';
import http from 'k6/http';
import { Counter, Trend } from 'k6/metrics';
import type { Options } from 'k6/options';
import { K6ConfigError } from '../../src/errors.ts';
import { PATHS, QUERY, REST_STATUSES, STATUS } from '../../src/spec.ts';
import { reportConfig, restConfig, runtimeKeys, thresholdExprs, thresholdsFromEnv } from './lib/config.ts';
import { k6Metrics } from './lib/metrics.ts';
import { currentSegment } from './lib/segment.ts';
import { summaryOutputs, type SummaryData } from './lib/summary.ts';

const cfg = restConfig(__ENV);
const { countersByCode, distribution, flushMetrics } = k6Metrics({ Counter, Trend });
if (cfg.endpoint !== 'price' && cfg.endpoint !== 'pairs')
  throw new K6ConfigError('k6 script: ENDPOINT must be price or pairs');
if (cfg.endpoint === 'price' && cfg.pairs.length === 0)
  throw new K6ConfigError('k6 script: PAIRS is required for ENDPOINT=price');
const thresholds = thresholdExprs(__ENV, 'rest');

const latency = distribution('latency');
const errors = new Counter('errors');
const rateLimited = new Counter('rate_limited');
const non200Status = new Counter('non_200_status');
const requests = new Counter('requests');
const statusNumbers = countersByCode('status', REST_STATUSES);

export const options: Options = {
  scenarios: {
    rest: {
      executor: 'constant-arrival-rate',
      rate: cfg.rate,
      timeUnit: '1s',
      duration: `${cfg.durationS}s`,
      preAllocatedVUs: Math.min(cfg.maxVUs, Math.max(1, Math.ceil(cfg.rate / 10))),
      maxVUs: cfg.maxVUs,
    },
  },
  thresholds: thresholdsFromEnv(__ENV, 'rest'),
  summaryTrendStats: ['med', 'p(90)', 'p(99)', 'p(99.9)', 'max', 'count'],
};

export default function (): void {
  // A REST key has no connection allowance to honour: requests go round the keys by iteration.
  const keys = runtimeKeys(__ENV);
  const key = keys[exec.scenario.iterationInTest % keys.length]!.key;
  for (const c of [errors, rateLimited, non200Status]) c.add(0);
  const url =
    cfg.endpoint === 'price'
      ? `${cfg.restUrl}${PATHS.price}?${QUERY.price.code}=` +
        `${encodeURIComponent(cfg.pairs[exec.scenario.iterationInTest % cfg.pairs.length]!)}`
      : `${cfg.restUrl}${PATHS.pairs}?${QUERY.pairs.perPage}=10`;
  const res = http.get(url, { headers: { [cfg.keyHeader]: key }, redirects: 0, tags: { name: `/v1/${cfg.endpoint}` } });
  requests.add(1);
  if (!res.error_code) latency.add(res.timings.duration);
  // One request per iteration: its bucket count goes out at once.
  flushMetrics();
  let status: unknown;
  try {
    status = (JSON.parse(String(res.body)) as { status_number?: unknown }).status_number;
  } catch {
    status = undefined;
  }
  if (res.error_code || status === undefined) errors.add(1);
  else statusNumbers.add(String(status));
  if (status === STATUS.RATE_LIMITED) rateLimited.add(1);
  if (status !== undefined && String(status) !== STATUS.OK) non200Status.add(1);
  check(status, { 'the envelope carries a status_number': (s) => typeof s === 'string' });
}

export function handleSummary(data: SummaryData): Record<string, string> {
  return summaryOutputs(data, {
    kind: 'rest',
    report: reportConfig(__ENV, 'rest'),
    segment: currentSegment(),
    thresholds,
    options: { endpoint: cfg.endpoint, pairs: cfg.pairs, rate: cfg.rate, durationMs: cfg.durationS * 1000 },
  });
}
