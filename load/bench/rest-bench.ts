/**
 * The `rest` scenario of `npm run bench:load`: `conform load rest` beside wrk (Debian's package,
 * scripts/install-wrk.sh) against the same reference process, one pair, the same connections, by
 * CPU time per request: the figure that says whether the generator or the server is the limit.
 *   max    closed model: conform `--rate max` and wrk's closed loop; requests per second and CPU.
 *   rates  1,000 and 5,000 requests/s and the highest both hold (probed down from nine tenths of
 *          the lower of the two closed-model maxima): conform's open model (latency from the intended send time)
 *          and wrk paced to the same rate by a Lua `delay()` that keeps an absolute schedule (wrk
 *          has no rate option; latency from the actual send).
 * Each is run with one generator thread each (conform in this thread, `wrk -t1`), then with both
 * cores (`wrk -t2`, conform `--workers auto`: the threads the rate needs), the two tools in turn
 * and in alternating order round by round, so drift of the machine cancels. CPU per request is
 * each process's own accounting over its run: conform's `generator.cpuMicrosPerRequest`
 * (process.cpuUsage over the measured phase, every thread), wrk's `os.clock()` in its `done()`
 * hook (the process's CPU time, every thread, read as it ends). Every figure is printed with the
 * load average of the moment, and goes to its section of docs/benchmarks.md.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { API_KEY_HEADER, PATHS, QUERY } from '../../src/spec.ts';
import { runRest } from '../rest/run.ts';
import { REST_DEFAULTS } from '../options.ts';
import type { LoadTarget } from '../target.ts';
import { type BenchmarkSection, table } from './benchmarks-doc.ts';

const run = promisify(execFile);
const env = (name: string, fallback: number): number => (process.env[name] ? Number(process.env[name]) : fallback);
const load1 = (): number => Math.round(loadavg()[0]! * 100) / 100;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// wrk prints its summary in units of its choosing; this hook prints the figures as JSON (µs), with
// the process's CPU time: LuaJIT's os.clock() is C's clock(), every thread of the process.
const DONE_LUA = `
done = function(summary, latency, requests)
  io.write(string.format('\\nCONFORM {"requests":%d,"durationUs":%d,"errors":%d,"cpuUs":%d,' ..
    '"p50":%d,"p90":%d,"p99":%d,"p999":%d,"max":%d}\\n',
    summary.requests, summary.duration,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status
      + summary.errors.timeout, os.clock() * 1e6,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max))
end
`;

/**
 * wrk paced to `perThread` requests per second on each of its threads: every request takes the
 * next slot of an absolute schedule (the monotonic clock through LuaJIT's FFI), so the rate holds
 * whatever the latency; a thread that fell behind sends at once, as conform's open model does.
 */
const paceLua = (perThread: number): string => `
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } conform_timespec;
int clock_gettime(int clk_id, conform_timespec *tp);
]]
local ts = ffi.new("conform_timespec")
local function now_ms() ffi.C.clock_gettime(1, ts); return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6 end
local interval = ${1000 / perThread}
local next_at = nil
delay = function()
  local now = now_ms()
  if next_at == nil then next_at = now end
  local wait = next_at - now
  next_at = next_at + interval
  if wait <= 0 then return 0 end
  return math.floor(wait + 0.5)
end
`;

type Latency = { p50: number | null; p90: number | null; p99: number | null; p999: number | null; max: number | null };

/** One tool's run: what it achieved and what it cost. */
export interface ToolRun {
  rps: number;
  cpuMicrosPerRequest: number | null;
  /** CPU time over the run ÷ its duration, % of one core. */
  cpuPercentOfCore: number | null;
  latencyMs: Latency;
  errors: number;
  loadAverage: number;
  /** conform only: the threads it sent from (`--workers auto` chooses them by the rate). */
  threads?: number;
  /** conform only: whether it called its own figures trustworthy, and why not. */
  trustworthy?: boolean;
  reasons?: string[];
}

async function wrk(
  url: string,
  key: string,
  o: { connections: number; durationS: number; threads: number; rate: number | 'max' },
): Promise<ToolRun> {
  const dir = await mkdtemp(join(tmpdir(), 'conform-wrk-'));
  try {
    const file = join(dir, 'bench.lua');
    await writeFile(file, (o.rate === 'max' ? '' : paceLua(o.rate / o.threads)) + DONE_LUA);
    const loadAverage = load1();
    const { stdout } = await run(
      'wrk',
      [`-t${o.threads}`, `-c${o.connections}`, `-d${o.durationS}s`, '-H', `${API_KEY_HEADER}: ${key}`, '-s', file, url],
      { timeout: (o.durationS + 30) * 1000 },
    );
    const line = stdout.split('\n').find((l) => l.startsWith('CONFORM '));
    if (!line) throw new Error(`wrk printed no summary: ${stdout.slice(-300)}`);
    const r = JSON.parse(line.slice('CONFORM '.length)) as Record<string, number>;
    const ms = (us: number | undefined): number => Math.round(us ?? 0) / 1000;
    return {
      rps: Math.round((r.requests! * 1e6) / r.durationUs!),
      cpuMicrosPerRequest: r.requests ? Math.round((r.cpuUs! / r.requests) * 100) / 100 : null,
      cpuPercentOfCore: Math.round((r.cpuUs! / r.durationUs!) * 1000) / 10,
      latencyMs: { p50: ms(r.p50), p90: ms(r.p90), p99: ms(r.p99), p999: ms(r.p999), max: ms(r.max) },
      errors: r.errors!,
      loadAverage,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function conform(
  target: LoadTarget,
  pair: string,
  o: { connections: number; durationS: number; threads: number; rate: number | 'max' },
): Promise<ToolRun> {
  const loadAverage = load1();
  const r = await runRest(target, {
    pair: [pair],
    rate: o.rate,
    connections: o.connections,
    durationMs: o.durationS * 1000,
    warmupMs: 1000,
    // Both cores are conform's to use as `--workers auto` sees fit: a thread per core for the
    // closed loop, and only the threads a fixed rate needs (more cost CPU per request).
    workers: o.threads === 1 ? 1 : 'auto',
  });
  const cpu = r.generator.cpuMicrosPerRequest;
  return {
    rps: r.rps,
    cpuMicrosPerRequest: cpu,
    cpuPercentOfCore: cpu === null ? null : Math.round((cpu * r.rps) / 100) / 100,
    latencyMs: r.latencyMs,
    errors: r.errors,
    loadAverage,
    threads: r.options.workers,
    trustworthy: r.trustworthy,
    reasons: r.generator.reasons,
  };
}

/** One comparison: the load asked, and each round's pair of runs. */
export interface RestComparison {
  threads: number;
  rate: number | 'max';
  rounds: { conform: ToolRun; wrk: ToolRun }[];
}

/** The figures of the scenario, as bench-load.json holds them. */
export interface RestBenchResult {
  connections: number;
  durationS: number;
  rounds: number;
  pair: string;
  loadAverageAtStart: number[];
  comparisons: RestComparison[];
}

const median = (xs: readonly number[]): number | null => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return null;
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const medianOf = (runs: readonly ToolRun[], f: (r: ToolRun) => number | null): number | null =>
  median(runs.map(f).filter((x): x is number => x !== null));
const round2 = (x: number | null): number | null => (x === null ? null : Math.round(x * 100) / 100);

/** Runs both tools `rounds` times at one load, in alternating order. */
async function compare(
  target: LoadTarget,
  pair: string,
  url: string,
  o: { connections: number; durationS: number; threads: number; rate: number | 'max'; rounds: number },
): Promise<RestComparison> {
  const key = target.keys[0]!.key;
  const rounds: RestComparison['rounds'] = [];
  for (let i = 0; i < o.rounds; i++) {
    const runConform = (): Promise<ToolRun> => conform(target, pair, o);
    const runWrk = (): Promise<ToolRun> => wrk(url, key, o);
    // ABBA: conform first in even rounds, wrk first in odd ones.
    const first = i % 2 === 0 ? await runConform() : await runWrk();
    await sleep(1000);
    const second = i % 2 === 0 ? await runWrk() : await runConform();
    await sleep(1000);
    const [c, w] = i % 2 === 0 ? [first, second] : [second, first];
    rounds.push({ conform: c, wrk: w });
    const label = `${o.threads} thread${o.threads > 1 ? 's' : ''}, ${o.rate === 'max' ? 'max' : `${o.rate}/s`}`;
    console.log(
      `  ${label} round ${i + 1}: conform ${c.rps}/s ${c.cpuMicrosPerRequest} µs CPU/req (p50 ` +
        `${c.latencyMs.p50} p99 ${c.latencyMs.p99} ms` +
        `${c.trustworthy ? '' : `, UNTRUSTWORTHY: ${c.reasons!.join('; ')}`}` +
        `), wrk ${w.rps}/s ${w.cpuMicrosPerRequest} µs CPU/req (p50 ${w.latencyMs.p50} p99 ` +
        `${w.latencyMs.p99} ms); load average ${c.loadAverage} / ${w.loadAverage}`,
    );
  }
  return { threads: o.threads, rate: o.rate, rounds };
}

/** A rate held: within 2 % of what was asked, and conform calls its own figures trustworthy. */
const holds = (r: ToolRun, rate: number): boolean => r.rps >= 0.98 * rate && r.trustworthy !== false;

/**
 * The highest rate both tools hold, probed down from nine tenths of the lower closed-loop maximum
 * in steps of a tenth of it (short runs, each tool once): an open model at its closed loop's
 * maximum queues without bound, so the rate both sustain lies below it, how far depends on the
 * server's variance. Null when neither step down to half of it holds.
 */
async function highestSustained(
  target: LoadTarget,
  pair: string,
  url: string,
  o: { connections: number; threads: number },
  lowerMax: number,
): Promise<number | null> {
  const key = target.keys[0]!.key;
  const probe = { connections: o.connections, threads: o.threads, durationS: env('REST_BENCH_PROBE_S', 4) };
  for (const share of [0.9, 0.8, 0.7, 0.6, 0.5]) {
    const rate = Math.floor((share * lowerMax) / 100) * 100;
    if (rate <= 5000) return null;
    const c = await conform(target, pair, { ...probe, rate });
    await sleep(500);
    const w = await wrk(url, key, { ...probe, rate });
    await sleep(500);
    console.log(
      `  ${o.threads} thread${o.threads > 1 ? 's' : ''}, probe ${rate}/s: conform ${c.rps}/s` +
        `${c.trustworthy ? '' : ' (untrustworthy)'}, wrk ${w.rps}/s`,
    );
    if (holds(c, rate) && holds(w, rate)) return rate;
  }
  return null;
}

/** Runs every comparison; returns the figures for bench-load.json (null when wrk is missing). */
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
  const rounds = env('REST_BENCH_REPEAT', 2);
  const url = `${target.rest}${PATHS.price}?${QUERY.price.code}=${encodeURIComponent(pair)}`;
  const loadAverageAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
  console.log(
    `rest: conform beside wrk, ${connections} connections, ${durationS} s each, one pair, ${rounds} ` +
      `rounds; load average ${loadAverageAtStart.join(' ')}`,
  );
  const comparisons: RestComparison[] = [];
  for (const threads of [1, 2]) {
    const base = { connections, durationS, threads, rounds };
    const max = await compare(target, pair, url, { ...base, rate: 'max' });
    comparisons.push(max);
    const lower = Math.min(
      medianOf(
        max.rounds.map((r) => r.conform),
        (r) => r.rps,
      ) ?? 0,
      medianOf(
        max.rounds.map((r) => r.wrk),
        (r) => r.rps,
      ) ?? 0,
    );
    const highest = await highestSustained(target, pair, url, { connections, threads }, lower);
    for (const rate of [1000, 5000, ...(highest !== null && highest > 5000 ? [highest] : [])])
      comparisons.push(await compare(target, pair, url, { ...base, rate }));
  }
  return { connections, durationS, rounds, pair, loadAverageAtStart, comparisons };
}

/** The medians of one comparison, as the section's table shows them. */
function row(c: RestComparison): (string | number | null)[] {
  const cs = c.rounds.map((r) => r.conform);
  const ws = c.rounds.map((r) => r.wrk);
  const cCpu = medianOf(cs, (r) => r.cpuMicrosPerRequest);
  const wCpu = medianOf(ws, (r) => r.cpuMicrosPerRequest);
  const cRps = medianOf(cs, (r) => r.rps);
  const wRps = medianOf(ws, (r) => r.rps);
  const lat = (runs: ToolRun[]): string =>
    `${round2(medianOf(runs, (r) => r.latencyMs.p50))} / ${round2(medianOf(runs, (r) => r.latencyMs.p99))}`;
  const untrusted = cs.filter((r) => !r.trustworthy).length;
  const used = [...new Set(cs.map((r) => r.threads ?? c.threads))].join(' or ');
  return [
    c.threads === 1
      ? '1 thread each'
      : `both cores: conform \`--workers auto\` (${used} thread${used === '1' ? '' : 's'}), \`wrk -t${c.threads}\``,
    c.rate === 'max' ? 'closed loop (max)' : `${c.rate.toLocaleString('en-US')}/s`,
    `${cRps === null ? '—' : Math.round(cRps).toLocaleString('en-US')} / ` +
      `${wRps === null ? '—' : Math.round(wRps).toLocaleString('en-US')}` +
      (c.rate === 'max' && cRps && wRps ? ` (**${round2(cRps / wRps)}×**)` : ''),
    round2(cCpu),
    round2(wCpu),
    cCpu !== null && wCpu ? `**${round2(cCpu / wCpu)}×**` : null,
    `${round2(medianOf(cs, (r) => r.cpuPercentOfCore))} / ${round2(medianOf(ws, (r) => r.cpuPercentOfCore))}`,
    `${lat(cs)} / ${lat(ws)}`,
    untrusted ? `${untrusted} of ${cs.length} untrustworthy` : 'yes',
    `${Math.min(...c.rounds.flatMap((r) => [r.conform.loadAverage, r.wrk.loadAverage]))}–` +
      `${Math.max(...c.rounds.flatMap((r) => [r.conform.loadAverage, r.wrk.loadAverage]))}`,
  ];
}

/** Whether the server, not either generator, held the closed loop back: neither used most of its cores. */
function serverBound(c: RestComparison): boolean {
  const busy = (runs: ToolRun[]): number => medianOf(runs, (r) => r.cpuPercentOfCore) ?? 100;
  const limit = 80 * c.threads;
  return busy(c.rounds.map((r) => r.conform)) < limit && busy(c.rounds.map((r) => r.wrk)) < limit;
}

/** The scenario's section of docs/benchmarks.md (null when wrk was missing and nothing ran). */
export function restSection(r: RestBenchResult | null): BenchmarkSection | null {
  if (!r) return null;
  const maxRows = r.comparisons.filter((c) => c.rate === 'max');
  const bound = maxRows.filter(serverBound).map((c) => `${c.threads} thread${c.threads > 1 ? 's' : ''} each`);
  return {
    id: 'load-rest',
    title: 'REST: conform load rest beside wrk',
    method:
      `\`rest\`: \`conform load rest\` and wrk against the reference service in its own process, one pair, ` +
      `${r.connections} connections, ${r.durationS} s per run, the two in turn and in alternating order, ` +
      `${r.rounds} rounds (medians shown): wrk's closed loop beside \`--rate max\`, then fixed rates: 1,000, ` +
      '5,000 and the highest both hold (probed down from nine tenths of the lower closed-loop maximum; wrk paced by ' +
      "a Lua `delay()` on an absolute schedule, conform's open model), with one generator thread each, then " +
      "both cores (`wrk -t2`, and conform's `--workers auto`, which takes a thread per core for the closed loop " +
      'and, at a fixed rate, one per ' +
      `${REST_DEFAULTS.requestsPerThread.toLocaleString('en-US')} requests/s). ` +
      "CPU per request is each process's own accounting: conform's " +
      "`generator.cpuMicrosPerRequest` (every thread, over the measured phase), wrk's `os.clock()` as it ends. " +
      `Load average ${r.loadAverageAtStart.join(' ')} at the start. Goals: conform's CPU per request at most ` +
      "1.5× wrk's at 1,000 and 5,000 req/s, its closed-loop throughput at least 0.8× wrk's.",
    body: [
      table(
        [
          'generators',
          'load',
          'req/s conform / wrk',
          'conform µs CPU/req',
          'wrk µs CPU/req',
          'conform ÷ wrk',
          '% of a core conform / wrk',
          'latency p50 / p99 ms, conform / wrk',
          'conform trustworthy',
          'load average',
        ],
        r.comparisons.map(row),
      ),
      '',
      bound.length
        ? `In the closed loop the server was the limit (${bound.join('; ')}): neither generator used ` +
          'four fifths of its cores, so the throughput ratio says how fast the server answered each, and the ' +
          'CPU per request is the figure that compares the generators.'
        : 'In the closed loop a generator used most of its cores: the throughput ratio compares the generators.',
      'Latency: conform from the intended send time (open model) or the actual send (closed loop), wrk from ' +
        'the actual send.',
    ].join('\n'),
  };
}
