/**
 * `npm run bench:load`: the load generator measured against the reference service in its own
 * process. Scenarios (all by default, or name them: `npm run bench:load -- cpu ramp`):
 *   cpu   CPU per received frame of `conform load fanout` (all its measuring included) beside a
 *         minimal ws client loop (connect, subscribe, count) and the k6 fan-out script on a real
 *         k6 (when CONFORM_K6 names one the user installed) at the same N, one run; also whether
 *         fanout stays trustworthy at that rate (default 2,000 clients × 10 pairs × 10 Hz =
 *         200,000 frames/s) and each generator's latency p99.
 *   ramp  10,000 connections ramped at 3,000/s before traffic (subscribe after the ramp), held; memory per connection.
 *   rest  `conform load rest` beside wrk by CPU per request: closed loop and fixed rates, one
 *         thread each and two (rest-bench.ts).
 * Sizes come from the environment: BENCH_CLIENTS, BENCH_DURATION_S, BENCH_REPEAT, RAMP_CLIENTS, RAMP_RATE,
 * REST_BENCH_CONNECTIONS, REST_BENCH_DURATION_S, REST_BENCH_REPEAT, REST_BENCH_PROBE_S.
 * The figures are printed, written to conform-reports/bench-load.json, and each scenario's to its
 * section of docs/benchmarks.md.
 */
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { API_KEY_HEADER } from '../../src/spec.ts';
import { runFanout, type FanoutReport } from '../fanout/run.ts';
import { buildK6 } from '../k6/build.ts';
import { k6Binary, runK6 } from '../k6/run-k6.ts';
import { distributionOf } from '../metrics.ts';
import { fanoutSchedule } from '../schedule.ts';
import { assignKeys, pickPairs, startReferenceProcess, type LoadTarget } from '../target.ts';
import { table, writeBenchmarkSection } from './benchmarks-doc.ts';
import { restScenario, restSection } from './rest-bench.ts';
import { cpuSection, type CpuRound, fanoutFigures, tickSpan } from './fanout-section.ts';

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
async function minimalLoop(
  target: LoadTarget,
  clients: number,
  pairs: string[],
  durationS: number,
  rampRate: number,
): Promise<{ cpuMicrosPerFrame: number; framesPerSecond: number; subscribed: number }> {
  const keys = assignKeys(clients, target.keys);
  const workers: Worker[] = [];
  const replies = new Map<Worker, (m: { frames: number; subscribed: number }) => void>();
  for (let w = 0; w < WORKERS; w++) {
    const mine = keys.filter((_, i) => i % WORKERS === w);
    const worker = new Worker(BOOT, {
      workerData: {
        entry: MINIMAL,
        wsUrl: target.ws,
        keyHeader: API_KEY_HEADER,
        keys: mine,
        pairs,
        rampRate,
        workers: WORKERS,
        offset: w,
      },
    });
    await new Promise<void>((r) => worker.once('message', () => r()));
    worker.on('message', (m: { frames: number; subscribed: number }) => replies.get(worker)?.(m));
    workers.push(worker);
  }
  const count = async (): Promise<{ frames: number; subscribed: number }> => {
    const all = await Promise.all(
      workers.map(
        (w) =>
          new Promise<{ frames: number; subscribed: number }>((r) => {
            replies.set(w, r);
            w.postMessage('count');
          }),
      ),
    );
    return all.reduce((a, b) => ({ frames: a.frames + b.frames, subscribed: a.subscribed + b.subscribed }), {
      frames: 0,
      subscribed: 0,
    });
  };
  const deadline = Date.now() + (clients / rampRate) * 1000 + 20_000;
  let c = await count();
  while (c.subscribed < clients && Date.now() < deadline) {
    await sleep(200);
    c = await count();
  }
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
  return {
    cpuMicrosPerFrame: frames ? (cpu.user + cpu.system) / frames : Number.NaN,
    framesPerSecond: Math.round(frames / elapsed),
    subscribed: c.subscribed,
  };
}

/** CPU time (user + system) of a process so far, µs, from /proc (Linux). */
async function processCpuMicros(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/**
 * The k6 fan-out script at the same N: k6 CPU per frame over its measured window (read from
 * /proc at the window's edges, which the shared schedule fixes in advance) and its latency p99.
 */
async function k6Loop(
  target: LoadTarget,
  clients: number,
  pairs: string[],
  durationS: number,
  rampRate: number,
): Promise<
  | { cpuMicrosPerFrame: number; framesPerSecond: number; latencyP99Ms: number | null; connected: number }
  | { skipped: string }
> {
  try {
    k6Binary();
  } catch (err) {
    return { skipped: (err as Error).message };
  }
  const dir = await mkdtemp(join(tmpdir(), 'conform-bench-k6-'));
  const [script] = await buildK6(dir);
  const startAtMs = Date.now() + 5000;
  const warmupMs = 2000;
  const schedule = fanoutSchedule({ clients, rampRate, warmupMs, durationS, startAtMs });
  const settings: Record<string, string> = {
    TARGET_WS: target.ws,
    TARGET_REST: target.rest,
    PAIRS: pairs.join(','),
    CLIENTS: String(clients),
    CONNECTIONS_PER_VU: '50',
    RAMP_RATE: String(rampRate),
    DURATION: String(durationS),
    WARMUP: String(warmupMs / 1000),
    START_AT: String(startAtMs),
    REPORT_DIR: dir,
    REPORT_NAME: 'bench',
  };
  const args = ['run', '--quiet', ...Object.entries(settings).flatMap(([k, v]) => ['-e', `${k}=${v}`]), script!];
  let cpu0 = 0;
  let cpu1 = 0;
  const edges: Promise<void>[] = [];
  const run = runK6(args, {
    cwd: dir,
    env: { API_KEY: target.keys[0]!.key },
    timeoutMs: schedule.maxDurationMs + 180_000,
    onSpawn: (pid) => {
      edges.push(
        sleep(startAtMs + schedule.windowStartMs - Date.now()).then(async () => {
          cpu0 = await processCpuMicros(pid);
        }),
      );
      edges.push(
        sleep(startAtMs + schedule.windowEndMs - Date.now()).then(async () => {
          cpu1 = await processCpuMicros(pid);
        }),
      );
    },
  });
  let done: Awaited<typeof run>;
  try {
    done = await run;
  } catch (err) {
    return { skipped: `k6 did not finish in time (saturated?): ${(err as Error).message.split('\n')[0]}` };
  }
  await Promise.all(edges);
  if (done.code !== 0 && done.code !== 99)
    return { skipped: `k6 exited ${done.code}: ${done.stderr.trim().split('\n').pop() ?? ''}` };
  const r = JSON.parse(await readFile(join(dir, 'bench.json'), 'utf8')) as {
    framesReceived: number;
    framesPerSecond: number;
    connected: number;
    latencyMs: { p99: number | null };
  };
  return {
    cpuMicrosPerFrame: r.framesReceived ? Math.round(((cpu1 - cpu0) / r.framesReceived) * 100) / 100 : Number.NaN,
    framesPerSecond: r.framesPerSecond,
    latencyP99Ms: r.latencyMs.p99,
    connected: r.connected,
  };
}

// The load average says whether other work shared the machine: figures from a busy one are noise.
const results: Record<string, unknown> = {
  machine: {
    cores: availableParallelism(),
    node: process.version,
    loadAverageAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
  },
};
const target = await startReferenceProcess({ tickMs: 100, moveProbability: 1 });
try {
  const pairs = await pickPairs(target, 10);
  if (run('cpu')) {
    const rampRate = 2000;
    console.log(
      `load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
    console.log(
      `cpu: ${CLIENTS} clients × ${pairs.length} pairs × 10 Hz, ${DURATION_S} s ` +
        `each, ${WORKERS} workers, ${REPEAT} rounds (minimal, fanout alternating)`,
    );
    const rounds: CpuRound[] = [];
    let k6Last: Awaited<ReturnType<typeof k6Loop>> | null = null;
    let last: FanoutReport | null = null;
    let base: Awaited<ReturnType<typeof minimalLoop>> | null = null;
    for (let round = 1; round <= REPEAT; round++) {
      base = await minimalLoop(target, CLIENTS, pairs, DURATION_S, rampRate);
      await sleep(2000);
      const loadAverage = Math.round(loadavg()[0]! * 100) / 100;
      const ticksBefore = (await target.serverStats?.()) ?? null;
      const fan: FanoutReport = await runFanout(target, {
        clients: CLIENTS,
        pair: pairs,
        durationMs: DURATION_S * 1000,
        rampRate,
        workers: WORKERS,
      });
      const serverTickMs = tickSpan(ticksBefore, (await target.serverStats?.()) ?? null);
      await sleep(2000);
      const k6 = await k6Loop(target, CLIENTS, pairs, DURATION_S, rampRate);
      k6Last = k6;
      await sleep(2000);
      const ratio = (fan.generator.cpuMicrosPerFrame ?? Number.NaN) / base.cpuMicrosPerFrame;
      const k6Ratio = 'skipped' in k6 ? null : Math.round((k6.cpuMicrosPerFrame / base.cpuMicrosPerFrame) * 100) / 100;
      rounds.push({
        minimal: Math.round(base.cpuMicrosPerFrame * 100) / 100,
        fanout: fan.generator.cpuMicrosPerFrame ?? Number.NaN,
        ratio: Math.round(ratio * 100) / 100,
        k6: 'skipped' in k6 ? null : k6.cpuMicrosPerFrame,
        k6Ratio,
        // The minimal loop measures no latency.
        k6P99Ms: 'skipped' in k6 ? null : k6.latencyP99Ms,
        loadAverage,
        ...fanoutFigures(fan, serverTickMs),
      });
      console.log(
        `  round ${round}: minimal ws loop ${base.cpuMicrosPerFrame.toFixed(2)} µs CPU/frame ` +
          `at ${base.framesPerSecond} frames/s; fanout ${fan.generator.cpuMicrosPerFrame} µs ` +
          `CPU/frame at ${fan.framesPerSecond} frames/s; ratio ${ratio.toFixed(2)}×`,
      );
      console.log(
        `    fanout latency p50/p99/max ${fan.latencyMs.p50}/${fan.latencyMs.p99}/${fan.latencyMs.max} ` +
          `ms, skew p99 ${fan.skewMs.p99} ms, lost ${fan.lost}, errors ${fan.errors} ` +
          `of ${fan.validated} validated`,
      );
      console.log(
        'skipped' in k6
          ? `    k6: skipped (${k6.skipped})`
          : `    k6 (${k6.connected} connected): ${k6.cpuMicrosPerFrame} µs CPU/frame ` +
              `at ${k6.framesPerSecond} frames/s, ratio to minimal ${k6Ratio}×, to fanout ` +
              `${(k6.cpuMicrosPerFrame / (fan.generator.cpuMicrosPerFrame ?? Number.NaN)).toFixed(2)}×; ` +
              `latency p99 ${k6.latencyP99Ms} ms (fanout ${fan.latencyMs.p99} ms)`,
      );
      console.log(
        `    generator: event-loop p99 ${fan.generator.eventLoopDelayP99Ms} ` +
          `ms, busiest worker ${fan.generator.cpuPercent}%, ` +
          `${fan.trustworthy ? 'trustworthy' : `UNTRUSTWORTHY (${fan.generator.reasons.join('; ')})`}; ` +
          `reference tick mean/max ${serverTickMs?.mean}/${serverTickMs?.max} ms; load average ${loadAverage}`,
      );
      last = fan;
    }
    const median = (xs: number[]): number => {
      const s = [...xs].sort((a, b) => a - b);
      return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
    };
    const ratio = median(rounds.map((r) => r.fanout)) / median(rounds.map((r) => r.minimal));
    console.log(
      `  median: minimal ${median(rounds.map((r) => r.minimal)).toFixed(2)} µs, ` +
        `fanout ${median(rounds.map((r) => r.fanout)).toFixed(2)} µs per frame: ratio ${ratio.toFixed(2)}×`,
    );
    const k6s = rounds.flatMap((r) => (r.k6 === null ? [] : [r.k6]));
    const k6Ratio = k6s.length ? median(k6s) / median(rounds.map((r) => r.minimal)) : null;
    if (k6Ratio !== null)
      console.log(
        `  k6 median ${median(k6s).toFixed(2)} µs per frame: ${k6Ratio.toFixed(2)}× the minimal ` +
          `loop, ${(median(k6s) / median(rounds.map((r) => r.fanout))).toFixed(2)}× fanout`,
      );
    const fan = last!;
    results.cpu = {
      clients: CLIENTS,
      pairs: pairs.length,
      pushHz: 10,
      durationS: DURATION_S,
      workers: WORKERS,
      rounds,
      ratioOfMedians: Math.round(ratio * 100) / 100,
      k6RatioOfMedians: k6Ratio === null ? null : Math.round(k6Ratio * 100) / 100,
      minimal: base,
      k6: k6Last,
      fanout: {
        cpuMicrosPerFrame: fan.generator.cpuMicrosPerFrame,
        framesPerSecond: fan.framesPerSecond,
        latencyMs: fan.latencyMs,
        skewMs: fan.skewMs,
        lost: fan.lost,
        errors: fan.errors,
        validated: fan.validated,
        generator: fan.generator,
        trustworthy: fan.trustworthy,
      },
    };
    writeBenchmarkSection(
      cpuSection({
        clients: CLIENTS,
        pairs: pairs.length,
        durationS: DURATION_S,
        workers: WORKERS,
        rounds,
        ratioOfMedians: Math.round(ratio * 100) / 100,
        k6RatioOfMedians: k6Ratio === null ? null : Math.round(k6Ratio * 100) / 100,
      }),
    );
    await sleep(2000);
  }
  if (run('ramp')) {
    console.log(`ramp: ${RAMP_CLIENTS} connections at ${RAMP_RATE}/s, 1 pair × 10 Hz, held 10 s`);
    const fan = await runFanout(target, {
      clients: RAMP_CLIENTS,
      pair: pairs.slice(0, 1),
      durationMs: 10_000,
      rampRate: RAMP_RATE,
      workers: WORKERS,
      connectTimeoutMs: 20_000,
      subscribeAfterRamp: true,
    });
    const perConn = fan.generator.memoryPerConnectionBytes;
    console.log(
      `  connected ${fan.connected}/${RAMP_CLIENTS}, opened at ${fan.achievedRampRate} conn/s ` +
        `(first to last in ${fan.rampMs} ms), connect p99 ${distributionOf('fanout', fan, 'connect')?.p99} ms`,
    );
    console.log(
      `  refused ${JSON.stringify(fan.refusals)}, connect errors ${JSON.stringify(fan.connectErrors)}, ` +
        `disconnects ${JSON.stringify(fan.disconnects)}`,
    );
    console.log(
      `  memory: ${perConn === null ? '—' : (perConn / 1024).toFixed(1)} ` +
        `KB per connection (process RSS growth / connections), worker heaps ` +
        `${fan.generator.workers.map((w) => `${(w.heapUsedBytes / 1048576).toFixed(0)} MB`).join(', ')}`,
    );
    console.log(
      `  ${fan.framesPerSecond} frames/s, latency p99 ${fan.latencyMs.p99} ` +
        `ms, ${fan.trustworthy ? 'trustworthy' : `UNTRUSTWORTHY (${fan.generator.reasons.join('; ')})`}`,
    );
    results.ramp = {
      clients: RAMP_CLIENTS,
      rampRate: RAMP_RATE,
      connected: fan.connected,
      achievedRampRate: fan.achievedRampRate,
      rampMs: fan.rampMs,
      connectMs: distributionOf('fanout', fan, 'connect'),
      refusals: fan.refusals,
      connectErrors: fan.connectErrors,
      memoryPerConnectionBytes: perConn,
      workerHeapBytes: fan.generator.workers.map((w) => w.heapUsedBytes),
      framesPerSecond: fan.framesPerSecond,
      latencyMs: fan.latencyMs,
      trustworthy: fan.trustworthy,
      generator: fan.generator,
    };
    const connect = distributionOf('fanout', fan, 'connect');
    writeBenchmarkSection({
      id: 'load-ramp',
      title: 'Load generator: connections ramped and held',
      method:
        `\`ramp\`: ${RAMP_CLIENTS.toLocaleString('en-US')} connections opened at ${RAMP_RATE}/s against the ` +
        'reference service in its own process, subscribed after the ramp (one pair, 10 Hz) and held 10 s; memory per ' +
        'connection is process RSS growth ÷ connections. Goals: 10,000 held, ramped at ≥ 3,000/s, ≤ 20 KB each. ' +
        'One pair per client makes every frame a chunk of its own, so this scenario measures the ramp and ' +
        'the memory, not the frame rate.',
      body: table(
        ['connected', 'opened at', 'connect p99', 'memory per connection', 'worker heaps', 'trustworthy'],
        [
          [
            `${fan.connected.toLocaleString('en-US')} of ${RAMP_CLIENTS.toLocaleString('en-US')}`,
            `${fan.achievedRampRate}/s`,
            connect?.p99 === undefined || connect?.p99 === null ? null : `${connect.p99} ms`,
            perConn === null ? null : `${(perConn / 1024).toFixed(1)} KB`,
            fan.generator.workers.map((w) => `${(w.heapUsedBytes / 1048576).toFixed(0)} MB`).join(', '),
            fan.trustworthy ? 'yes' : `no (${fan.generator.reasons.join('; ')})`,
          ],
        ],
      ),
    });
  }
  if (run('rest')) {
    const rest = await restScenario(target, pairs[0]!);
    results.rest = rest;
    const section = restSection(rest);
    if (section) writeBenchmarkSection(section);
  }
} finally {
  await target.close();
}
(results.machine as Record<string, unknown>).loadAverageAtEnd = loadavg().map((x) => Math.round(x * 100) / 100);
await mkdir('conform-reports', { recursive: true });
await writeFile('conform-reports/bench-load.json', `${JSON.stringify(results, null, 2)}\n`);
console.log('wrote conform-reports/bench-load.json');
