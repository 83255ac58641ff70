/**
 * The `rest` scenario of `npm run bench:load`: `conform load rest` beside wrk (Debian's package,
 * scripts/install-wrk.sh) against the same reference process, one pair, one generator thread each.
 *   max   closed model: conform `--rate max` (autocannon) and `wrk -t1`, the same connections and
 *         duration, alternating; the ratio of their requests per second.
 *   rate  a fixed rate: conform's open model (latency from the intended send time) and wrk paced
 *         by a Lua `delay()` (wrk has no rate option; latency from the actual send), percentiles
 *         side by side.
 * Every figure is printed with the load average of the moment, and goes to its section of
 * docs/benchmarks.md.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { API_KEY_HEADER, PATHS, QUERY } from '../../src/spec.ts';
import { runRest } from '../rest/run.ts';
import type { LoadTarget } from '../target.ts';
import { type BenchmarkSection, table } from './benchmarks-doc.ts';

const run = promisify(execFile);
const env = (name: string, fallback: number): number => (process.env[name] ? Number(process.env[name]) : fallback);
const load = (): number[] => loadavg().map((x) => Math.round(x * 100) / 100);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// wrk prints its summary in units of its choosing; this hook prints the figures as JSON (µs).
const DONE_LUA = `
done = function(summary, latency, requests)
  io.write(string.format('\\nCONFORM {"requests":%d,"durationUs":%d,"errors":%d,' ..
    '"p50":%d,"p90":%d,"p99":%d,"p999":%d,"max":%d}\\n',
    summary.requests, summary.duration,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status
      + summary.errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max))
end
`;

interface WrkResult {
  requests: number;
  rps: number;
  errors: number;
  latencyMs: { p50: number; p90: number; p99: number; p999: number; max: number };
}

async function wrk(
  url: string,
  key: string,
  connections: number,
  durationS: number,
  script: string,
): Promise<WrkResult> {
  const dir = await mkdtemp(join(tmpdir(), 'conform-wrk-'));
  try {
    const file = join(dir, 'bench.lua');
    await writeFile(file, script + DONE_LUA);
    const { stdout } = await run(
      'wrk',
      ['-t1', `-c${connections}`, `-d${durationS}s`, '-H', `${API_KEY_HEADER}: ${key}`, '-s', file, url],
      { timeout: (durationS + 30) * 1000 },
    );
    const line = stdout.split('\n').find((l) => l.startsWith('CONFORM '));
    if (!line) throw new Error(`wrk printed no summary: ${stdout.slice(-300)}`);
    const r = JSON.parse(line.slice('CONFORM '.length)) as {
      requests: number;
      durationUs: number;
      errors: number;
      p50: number;
      p90: number;
      p99: number;
      p999: number;
      max: number;
    };
    const ms = (us: number): number => Math.round(us) / 1000;
    return {
      requests: r.requests,
      rps: Math.round((r.requests * 1e6) / r.durationUs),
      errors: r.errors,
      latencyMs: { p50: ms(r.p50), p90: ms(r.p90), p99: ms(r.p99), p999: ms(r.p999), max: ms(r.max) },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

type Percentiles = {
  p50: number | null;
  p90: number | null;
  p99: number | null;
  p999: number | null;
  max: number | null;
};

/** The figures of the scenario, as bench-load.json holds them. */
export interface RestBenchResult {
  connections: number;
  durationS: number;
  pair: string;
  max: {
    loadAverage: number[];
    conform: { rps: number; latencyMs: unknown; trustworthy: boolean };
    wrk: WrkResult;
    ratio: number;
  }[];
  rate: {
    rate: number;
    loadAverage: number[];
    conform: {
      rps: number;
      latencyMs: Percentiles;
      sendLagMs: unknown;
      late: number;
      scheduled: number;
      trustworthy: boolean;
      reasons: string[];
    };
    wrk: WrkResult;
  };
}

/** Runs both comparisons; returns the figures for bench-load.json (null when wrk is missing). */
export async function restScenario(target: LoadTarget, pair: string): Promise<RestBenchResult | null> {
  try {
    await run('wrk', ['--version']).catch((err: { stdout?: string }) => {
      if (!err.stdout?.includes('wrk')) throw err;
    });
  } catch {
    console.log('rest: wrk is not installed (scripts/install-wrk.sh): skipped');
    return null;
  }
  const connections = env('REST_BENCH_CONNECTIONS', 10);
  const durationS = env('REST_BENCH_DURATION_S', 10);
  const rate = env('REST_BENCH_RATE', 500);
  const repeat = env('REST_BENCH_REPEAT', 1);
  const key = target.keys[0]!.key;
  const url = `${target.rest}${PATHS.price}?${QUERY.price.code}=${encodeURIComponent(pair)}`;
  const common = { pair: [pair], durationMs: durationS * 1000, warmupMs: 1000, connections };

  console.log(`rest max: closed model, ${connections} connections, ${durationS} s, one pair, ${repeat} round(s)`);
  const max: {
    loadAverage: number[];
    conform: { rps: number; latencyMs: unknown; trustworthy: boolean };
    wrk: WrkResult;
    ratio: number;
  }[] = [];
  for (let i = 0; i < repeat; i++) {
    const c = await runRest(target, { ...common, rate: 'max' });
    await sleep(1000);
    const w = await wrk(url, key, connections, durationS, '');
    const ratio = Math.round((c.rps / w.rps) * 100) / 100;
    const la = load();
    max.push({
      loadAverage: la,
      conform: { rps: c.rps, latencyMs: c.latencyMs, trustworthy: c.trustworthy },
      wrk: w,
      ratio,
    });
    console.log(
      `  conform ${c.rps}/s (p50 ${c.latencyMs.p50} p99 ${c.latencyMs.p99} ms, ${c.errors} ` +
        `errors), wrk ${w.rps}/s (p50 ${w.latencyMs.p50} p99 ${w.latencyMs.p99} ms, ${w.errors} ` +
        `errors): ratio ${ratio}×; load average ${la.join(' ')}`,
    );
    await sleep(1000);
  }

  console.log(`rest rate: ${rate} requests/s, ${connections} connections, ${durationS} s`);
  const c = await runRest(target, { ...common, rate });
  await sleep(1000);
  // Each connection waits its share of the interval after every response: wrk's closest to a rate.
  const w = await wrk(
    url,
    key,
    connections,
    durationS,
    `delay = function() return ${(connections * 1000) / rate} end\n`,
  );
  const la = load();
  const row = (
    name: string,
    rps: number,
    l: { p50: number | null; p90: number | null; p99: number | null; p999: number | null; max: number | null },
  ): string =>
    `  ${name.padEnd(44)} ${String(rps).padStart(6)}/s  p50 ${l.p50}  p90 ${l.p90}  ` +
    `p99 ${l.p99}  p99.9 ${l.p999}  max ${l.max} ms`;
  console.log(row('conform (open model, from the intended time)', c.rps, c.latencyMs));
  console.log(row('wrk (paced by delay(), from the actual send)', w.rps, w.latencyMs));
  console.log(
    `  conform send lag p50 ${c.sendLagMs?.p50} p99 ${c.sendLagMs?.p99} ms, late ${c.late}/${c.scheduled}` +
      `, ${c.trustworthy ? 'trustworthy' : `UNTRUSTWORTHY (${c.generator.reasons.join('; ')})`}; ` +
      `load average ${la.join(' ')}`,
  );
  return {
    connections,
    durationS,
    pair,
    max,
    rate: {
      rate,
      loadAverage: la,
      conform: {
        rps: c.rps,
        latencyMs: c.latencyMs,
        sendLagMs: c.sendLagMs,
        late: c.late,
        scheduled: c.scheduled,
        trustworthy: c.trustworthy,
        reasons: c.generator.reasons,
      },
      wrk: w,
    },
  };
}

/** The scenario's section of docs/benchmarks.md (null when wrk was missing and nothing ran). */
export function restSection(r: RestBenchResult | null): BenchmarkSection | null {
  if (!r) return null;
  const pct = (l: Percentiles): string => `${l.p50} / ${l.p90} / ${l.p99} / ${l.p999} / ${l.max}`;
  const c = r.rate.conform;
  return {
    id: 'load-rest',
    title: 'REST: conform load rest beside wrk',
    method:
      `\`rest\`: \`conform load rest\` and \`wrk -t1\` against the reference service in its own process, one ` +
      `pair, ${r.connections} connections, ${r.durationS} s each: at \`--rate max\` against wrk's closed loop, ` +
      `then at ${r.rate.rate} requests/s against wrk paced by a Lua \`delay()\` (conform's latency runs from ` +
      "the intended send time, wrk's from the actual send). The load average beside each row says how busy " +
      'the machine was.',
    body: [
      table(
        ['round', 'conform req/s', 'wrk req/s', 'conform ÷ wrk', 'load average'],
        r.max.map((m, i) => [`max ${i + 1}`, m.conform.rps, m.wrk.rps, `${m.ratio}×`, m.loadAverage[0] ?? null]),
      ),
      '',
      table(
        ['at a fixed rate', 'achieved', 'p50 / p90 / p99 / p99.9 / max ms', 'load average'],
        [
          [
            `conform (${c.trustworthy ? 'trustworthy' : `untrustworthy: ${c.reasons.join('; ')}`})`,
            `${c.rps}/s (${c.late} of ${c.scheduled} late)`,
            pct(c.latencyMs),
            r.rate.loadAverage[0] ?? null,
          ],
          ['wrk (paced)', `${r.rate.wrk.rps}/s`, pct(r.rate.wrk.latencyMs), r.rate.loadAverage[0] ?? null],
        ],
      ),
    ].join('\n'),
  };
}
