/**
 * k6 REST scenario, the distributed twin of `conform load rest`: GET /v1/price (cycling PAIRS)
 * or /v1/pairs at a constant arrival rate, recording latency and the envelope's status_number.
 * Same threshold names as conform (latency.*, errors, rate_limited, non_200_status).
 * Run: k6 run -e TARGET_REST=… -e API_KEY=… -e PAIRS=… load/k6/dist/rest.js
 */
import { check } from 'k6';
import http from 'k6/http';
import { Counter, Trend } from 'k6/metrics';
import type { Options } from 'k6/options';
import { restConfig, thresholdsFromEnv } from './lib/config.ts';

const cfg = restConfig();
if (cfg.endpoint === 'price' && cfg.pairs.length === 0) throw new Error('k6 script: PAIRS is required for ENDPOINT=price');

const latency = new Trend('latency', true);
const errors = new Counter('errors');
const rateLimited = new Counter('rate_limited');
const non200Status = new Counter('non_200_status');
const requests = new Counter('requests');

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
  thresholds: thresholdsFromEnv('rest'),
};

export default function (): void {
  const url = cfg.endpoint === 'price'
    ? `${cfg.restUrl}/v1/price?code=${encodeURIComponent(cfg.pairs[__ITER % cfg.pairs.length]!)}`
    : `${cfg.restUrl}/v1/pairs?per_page=10`;
  const res = http.get(url, { headers: { [cfg.keyHeader]: cfg.key }, redirects: 0, tags: { name: `/v1/${cfg.endpoint}` } });
  requests.add(1);
  latency.add(res.timings.duration);
  let status: unknown;
  try {
    status = (JSON.parse(String(res.body)) as { status_number?: unknown }).status_number;
  } catch {
    status = undefined;
  }
  if (res.error_code || status === undefined) errors.add(1);
  if (status === '50006') rateLimited.add(1, { status_number: '50006' });
  if (status !== undefined && status !== '200') non200Status.add(1, { status_number: String(status) });
  check(status, { 'the envelope carries a status_number': (s) => typeof s === 'string' });
}
