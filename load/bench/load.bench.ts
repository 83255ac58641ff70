/**
 * `npm run bench:load`: the load generator measured against the reference service in its own
 * process. Scenarios (all by default, or name them: `npm run bench:load -- cpu ramp`):
 *   cpu   CPU per received frame of `conform load fanout` (all its measuring included) beside a
 *         minimal ws client loop (connect, subscribe, count) at the same N, same threads, one run;
 *         also whether fanout stays trustworthy at that rate (default 2,000 clients × 10 pairs
 *         × 10 Hz = 200,000 frames/s).
 *   ramp  10,000 connections ramped at 3,000/s before traffic (subscribe after the ramp), held; memory per connection.
 *   rest  `conform load rest` beside wrk: throughput ratio at --rate max, percentiles at a fixed rate (rest-bench.ts).
 * Sizes come from the environment: BENCH_CLIENTS, BENCH_DURATION_S, BENCH_REPEAT, RAMP_CLIENTS, RAMP_RATE,
 * REST_BENCH_CONNECTIONS, REST_BENCH_DURATION_S, REST_BENCH_RATE, REST_BENCH_REPEAT.
 * The figures are printed and written to conform-reports/bench-load.json.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { API_KEY_HEADER } from '../../src/spec.ts';
import { runFanout, type FanoutReport } from '../fanout/run.ts';
import { assignKeys, pickPairs, startReferenceProcess, type LoadTarget } from '../target.ts';
import { restScenario } from './rest-bench.ts';

const env = (name: string, fallback: number): number => (process.env[name] ? Number(process.env[name]) : fallback);
const CLIENTS = env('BENCH_CLIENTS', 2000);
const DURATION_S = env('BENCH_DURATION_S', 15);
const RAMP_CLIENTS = env('RAMP_CLIENTS', 10_000);
const RAMP_RATE = env('RAMP_RATE', 3000);
const REPEAT = env('BENCH_REPEAT', 2);
const WORKERS = availableParallelism();
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const run = (name: string): boolean => wanted.length === 0 || wanted.includes(name);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const BOOT = new URL('../fanout/worker-boot.mjs', import.meta.url);
const MINIMAL = new URL('./minimal-client-worker.ts', import.meta.url).href;

/** The baseline: W workers of the minimal loop; CPU of this process per frame over the window. */
async function minimalLoop(target: LoadTarget, clients: number, pairs: string[], durationS: number, rampRate: number): Promise<{ cpuMicrosPerFrame: number; framesPerSecond: number; subscribed: number }> {
  const keys = assignKeys(clients, target.keys);
  const workers: Worker[] = [];
  const replies = new Map<Worker, (m: { frames: number; subscribed: number }) => void>();
  for (let w = 0; w < WORKERS; w++) {
    const mine = keys.filter((_, i) => i % WORKERS === w);
    const worker = new Worker(BOOT, { workerData: { entry: MINIMAL, wsUrl: target.ws, keyHeader: API_KEY_HEADER, keys: mine, pairs, rampRate, workers: WORKERS, offset: w } });
    await new Promise<void>((r) => worker.once('message', () => r()));
    worker.on('message', (m: { frames: number; subscribed: number }) => replies.get(worker)?.(m));
    workers.push(worker);
  }
  const count = async (): Promise<{ frames: number; subscribed: number }> => {
    const all = await Promise.all(workers.map((w) => new Promise<{ frames: number; subscribed: number }>((r) => { replies.set(w, r); w.postMessage('count'); })));
    return all.reduce((a, b) => ({ frames: a.frames + b.frames, subscribed: a.subscribed + b.subscribed }), { frames: 0, subscribed: 0 });
  };
  const deadline = Date.now() + (clients / rampRate) * 1000 + 20_000;
  let c = await count();
  while (c.subscribed < clients && Date.now() < deadline) { await sleep(200); c = await count(); }
  await sleep(1000);
  const f0 = (await count()).frames;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await sleep(durationS * 1000);
  const cpu = process.cpuUsage(cpu0);
  const f1 = (await count()).frames;
  const elapsed = (performance.now() - t0) / 1000;
  for (const w of workers) w.postMessage('close');
  await sleep(500);
  await Promise.all(workers.map((w) => w.terminate()));
  const frames = f1 - f0;
  return { cpuMicrosPerFrame: frames ? (cpu.user + cpu.system) / frames : Number.NaN, framesPerSecond: Math.round(frames / elapsed), subscribed: c.subscribed };
}

// The load average says whether other jobs shared the machine: figures from a busy one are noise.
const results: Record<string, unknown> = { machine: { cores: availableParallelism(), node: process.version, loadAverageAtStart: loadavg().map((x) => Math.round(x * 100) / 100) } };
const target = await startReferenceProcess({ tickMs: 100, moveProbability: 1 });
try {
  const pairs = await pickPairs(target, 10);
  if (run('cpu')) {
    const rampRate = 2000;
    console.log(`load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    console.log(`cpu: ${CLIENTS} clients × ${pairs.length} pairs × 10 Hz, ${DURATION_S} s each, ${WORKERS} workers, ${REPEAT} rounds (minimal, fanout alternating)`);
    const rounds: { minimal: number; fanout: number; ratio: number }[] = [];
    let last: FanoutReport | null = null;
    let base: Awaited<ReturnType<typeof minimalLoop>> | null = null;
    for (let round = 1; round <= REPEAT; round++) {
      base = await minimalLoop(target, CLIENTS, pairs, DURATION_S, rampRate);
      await sleep(2000);
      const fan: FanoutReport = await runFanout(target, { clients: CLIENTS, pair: pairs, durationMs: DURATION_S * 1000, rampRate, workers: WORKERS });
      await sleep(2000);
      const ratio = (fan.generator.cpuMicrosPerFrame ?? Number.NaN) / base.cpuMicrosPerFrame;
      rounds.push({ minimal: Math.round(base.cpuMicrosPerFrame * 100) / 100, fanout: fan.generator.cpuMicrosPerFrame ?? Number.NaN, ratio: Math.round(ratio * 100) / 100 });
      console.log(`  round ${round}: minimal ws loop ${base.cpuMicrosPerFrame.toFixed(2)} µs CPU/frame at ${base.framesPerSecond} frames/s; fanout ${fan.generator.cpuMicrosPerFrame} µs CPU/frame at ${fan.framesPerSecond} frames/s; ratio ${ratio.toFixed(2)}×`);
      console.log(`    fanout latency p50/p99/max ${fan.latencyMs.p50}/${fan.latencyMs.p99}/${fan.latencyMs.max} ms, skew p99 ${fan.skewMs.p99} ms, lost ${fan.lost}, errors ${fan.errors} of ${fan.validated} validated`);
      console.log(`    generator: event-loop p99 ${fan.generator.eventLoopDelayP99Ms} ms, busiest worker ${fan.generator.cpuPercent}%, ${fan.trustworthy ? 'trustworthy' : `UNTRUSTWORTHY (${fan.generator.reasons.join('; ')})`}`);
      last = fan;
    }
    const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2; };
    const ratio = median(rounds.map((r) => r.fanout)) / median(rounds.map((r) => r.minimal));
    console.log(`  median: minimal ${median(rounds.map((r) => r.minimal)).toFixed(2)} µs, fanout ${median(rounds.map((r) => r.fanout)).toFixed(2)} µs per frame: ratio ${ratio.toFixed(2)}×`);
    const fan = last!;
    results.cpu = {
      clients: CLIENTS, pairs: pairs.length, pushHz: 10, durationS: DURATION_S, workers: WORKERS, rounds, ratioOfMedians: Math.round(ratio * 100) / 100,
      minimal: base,
      fanout: { cpuMicrosPerFrame: fan.generator.cpuMicrosPerFrame, framesPerSecond: fan.framesPerSecond, latencyMs: fan.latencyMs, skewMs: fan.skewMs, lost: fan.lost, errors: fan.errors, validated: fan.validated, generator: fan.generator, trustworthy: fan.trustworthy },
    };
    await sleep(2000);
  }
  if (run('ramp')) {
    console.log(`ramp: ${RAMP_CLIENTS} connections at ${RAMP_RATE}/s, 1 pair × 10 Hz, held 10 s`);
    const fan = await runFanout(target, { clients: RAMP_CLIENTS, pair: pairs.slice(0, 1), durationMs: 10_000, rampRate: RAMP_RATE, workers: WORKERS, connectTimeoutMs: 20_000, subscribeAfterRamp: true });
    const perConn = fan.generator.memoryPerConnectionBytes;
    console.log(`  connected ${fan.connected}/${RAMP_CLIENTS}, opened at ${fan.achievedRampRate} conn/s (ramp phase ${fan.rampMs} ms), connect p99 ${fan.connectMs.p99} ms`);
    console.log(`  refused ${JSON.stringify(fan.refusals)}, connect errors ${JSON.stringify(fan.connectErrors)}, disconnects ${JSON.stringify(fan.disconnects)}`);
    console.log(`  memory: ${perConn === null ? '—' : (perConn / 1024).toFixed(1)} KB per connection (process RSS growth / connections), worker heaps ${fan.generator.workers.map((w) => (w.heapUsedBytes / 1048576).toFixed(0) + ' MB').join(', ')}`);
    console.log(`  ${fan.framesPerSecond} frames/s, latency p99 ${fan.latencyMs.p99} ms, ${fan.trustworthy ? 'trustworthy' : `UNTRUSTWORTHY (${fan.generator.reasons.join('; ')})`}`);
    results.ramp = {
      clients: RAMP_CLIENTS, rampRate: RAMP_RATE, connected: fan.connected, achievedRampRate: fan.achievedRampRate, rampMs: fan.rampMs,
      connectMs: fan.connectMs, refusals: fan.refusals, connectErrors: fan.connectErrors, memoryPerConnectionBytes: perConn,
      workerHeapBytes: fan.generator.workers.map((w) => w.heapUsedBytes), framesPerSecond: fan.framesPerSecond, latencyMs: fan.latencyMs, trustworthy: fan.trustworthy, generator: fan.generator,
    };
  }
  if (run('rest')) results.rest = await restScenario(target, pairs[0]!);
} finally {
  await target.close();
}
(results.machine as Record<string, unknown>).loadAverageAtEnd = loadavg().map((x) => Math.round(x * 100) / 100);
await mkdir('conform-reports', { recursive: true });
await writeFile('conform-reports/bench-load.json', `${JSON.stringify(results, null, 2)}\n`);
console.log('wrote conform-reports/bench-load.json');
