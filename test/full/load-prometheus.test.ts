import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCli } from '../helpers/load-cli.ts';

// Debian's Prometheus, installed by scripts/install-prometheus.sh (pinned upstream version). Without
// it the test skips and says so, unless the environment asks for the outside tools (CI), where a
// missing tool fails.
const PROMETHEUS = '/usr/bin/prometheus';
const present = existsSync(PROMETHEUS);
if (!present && process.env.CONFORM_REQUIRE_TOOLS)
  throw new Error(`prometheus missing at ${PROMETHEUS}: run scripts/install-prometheus.sh`);

const dir = mkdtempSync(path.join(tmpdir(), 'conform-prometheus-'));
let prometheus: ChildProcess | undefined;
let base = '';

/** A port free on loopback now: Prometheus does not say which port 0 gave it. */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

async function query(promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const res = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await res.json()) as {
    status: string;
    data: { result: { metric: Record<string, string>; value: [number, string] }[] };
  };
  expect(body.status).toBe('success');
  return body.data.result;
}

beforeAll(async () => {
  if (!present) return;
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const config = path.join(dir, 'prometheus.yml');
  // Nothing to scrape: the run's metrics arrive by remote write.
  writeFileSync(config, 'global:\n  scrape_interval: 15s\nscrape_configs: []\n');
  prometheus = spawn(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--web.enable-remote-write-receiver',
    ],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 100; i++) {
    const ready = await fetch(`${base}/-/ready`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ready) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('prometheus did not become ready');
}, 60_000);

afterAll(() => {
  prometheus?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!present)('live metrics in Prometheus', () => {
  it('receives the run every second, and PromQL returns its p99 within 1 % of the report', {
    timeout: 120_000,
  }, async () => {
    const night = randomBytes(4).toString('hex');
    const r = await loadCli([
      'load',
      'rest',
      '--rate',
      '200',
      '--duration',
      '6s',
      '--warmup',
      '1s',
      '--remote-write',
      `${base}/api/v1/write`,
      '--label',
      `night=${night}`,
      '--report',
      'json',
      '--out',
      dir,
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/live metrics: \d+ pushes to http:\/\/127\.0\.0\.1:\d+\/api\/v1\/write \(run=/);
    expect(r.out).not.toMatch(/failed \(last/);
    const report = JSON.parse(readFileSync(path.join(dir, 'load-rest.json'), 'utf8'));
    const p99 = await query(`conform_load_latency_p99_ms{night="${night}"}`);
    expect(p99).toHaveLength(1);
    expect(p99[0]!.metric).toMatchObject({ job: 'conform-load', mode: 'rest', night });
    const value = Number(p99[0]!.value[1]);
    expect(Math.abs(value - report.latencyMs.p99) / report.latencyMs.p99).toBeLessThanOrEqual(0.01);
    // A sample a second while it ran: the measured phase's 6 s and the warm-up's.
    const samples = await query(`count_over_time(conform_load_requests{night="${night}"}[10m])`);
    expect(Number(samples[0]!.value[1])).toBeGreaterThanOrEqual(6);
    const requests = await query(`conform_load_requests{night="${night}"}`);
    expect(Number(requests[0]!.value[1])).toBe(report.requests);
  });
});
