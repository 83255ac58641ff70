/**
 * `npm run bench:server`: the reference service's fan-out under 1,000 / 2,000 / 5,000 clients,
 * each subscribed to 10 pairs at a 100 ms tick. The server runs in this process (so its CPU is
 * this process's CPU); the clients run in a separate process on loopback
 * (load/bench/server-client.ts). Reports frames delivered per second, server CPU per delivered
 * frame, p99 send-to-receive latency and server memory. Bounded: each step measures for
 * BENCH_SECONDS (default 10) after a 3 s warm-up.
 *
 * Environment: BENCH_CLIENTS (comma list, default 1000,2000,5000), BENCH_SECONDS, BENCH_JSON=1 for JSON only,
 * BENCH_FANOUT=batched|per-frame|both (default batched; per-frame is the naive one-send-per-frame baseline).
 * The figures also go to their section of docs/benchmarks.md.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CONFIG, startReferenceServer } from '../../reference/index.ts';
import { table, writeBenchmarkSection } from './benchmarks-doc.ts';

const FANOUTS = (
  process.env.BENCH_FANOUT === 'both'
    ? ['batched', 'per-frame']
    : [process.env.BENCH_FANOUT === 'per-frame' ? 'per-frame' : 'batched']
) as ('batched' | 'per-frame')[];
const STEPS = (process.env.BENCH_CLIENTS ?? '1000,2000,5000')
  .split(',')
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0 && n <= 10_000);
const SECONDS = Math.min(60, Math.max(1, Number(process.env.BENCH_SECONDS ?? 10)));
const WARMUP_MS = 3000;
const TICK_MS = 100;
const PAIRS_PER_CLIENT = 10;
const BENCH_KEY = 'bench-fanout-key';
const CLIENT = fileURLToPath(new URL('./server-client.ts', import.meta.url));

interface ClientResult {
  frames: number;
  bytes: number;
  wallMs: number;
  closed: number;
  clientCpuMs: number;
  latencyMs: { p50: number; p99: number; max: number; samples: number };
}

export interface StepResult {
  fanOut: 'batched' | 'per-frame';
  clients: number;
  connected: number;
  seconds: number;
  framesPerSecond: number;
  expectedFramesPerSecond: number;
  serverCpuPercentOfOneCore: number;
  serverCpuMicrosPerFrame: number;
  clientCpuPercentOfOneCore: number;
  p50LatencyMs: number;
  p99LatencyMs: number;
  maxLatencyMs: number;
  serverRssMiB: number;
  serverHeapMiB: number;
  /** Mean and longest time the server spent in one tick (price step plus every client's write), ms. */
  tickMeanMs: number;
  tickMaxMs: number;
  framesSkipped: number;
  slowClientsDropped: number;
  /** The client process used most of a core: its lag may be in the latency figures. */
  clientSaturated: boolean;
}

const ask = (child: ChildProcess, cmd: string): void => {
  child.send({ cmd });
};
function reply<T>(child: ChildProcess, kind: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMsg = (m: { kind: string }): void => {
      if (m.kind === kind) {
        child.off('message', onMsg);
        resolve(m as T);
      }
    };
    child.on('message', onMsg);
    child.once('exit', (code) => reject(new Error(`client process exited (${code}) before ${kind}`)));
  });
}

async function step(clients: number, fanOut: 'batched' | 'per-frame'): Promise<StepResult> {
  const server = await startReferenceServer({
    tickMs: TICK_MS,
    config: {
      keys: { ...DEFAULT_CONFIG.keys, bench: { key: BENCH_KEY, connections: 10_000 } },
      maxMessagesPerSecond: 1000,
      fanOut,
    },
  });
  const pairs = server.profile.pairs!.sample!.slice(0, PAIRS_PER_CLIENT);
  const child = fork(
    CLIENT,
    [JSON.stringify({ url: server.wsUrl, key: BENCH_KEY, clients, pairs, pingEveryMs: 10_000 })],
    {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  try {
    const ready = await reply<{ connected: number; failed: number }>(child, 'ready');
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    const before = { ...server.stats };
    server.stats.tickMsMax = 0;
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    ask(child, 'start');
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const got = reply<ClientResult>(child, 'result');
    ask(child, 'stop');
    const result = await got;
    const cpu = process.cpuUsage(cpu0);
    const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const mem = process.memoryUsage();
    const serverCpuMs = (cpu.user + cpu.system) / 1000;
    return {
      fanOut,
      clients,
      connected: ready.connected,
      seconds: Math.round(result.wallMs) / 1000,
      framesPerSecond: Math.round(result.frames / (result.wallMs / 1000)),
      expectedFramesPerSecond: ready.connected * pairs.length * (1000 / TICK_MS),
      serverCpuPercentOfOneCore: Math.round((serverCpuMs / wallMs) * 1000) / 10,
      serverCpuMicrosPerFrame: Math.round(((serverCpuMs * 1000) / Math.max(1, result.frames)) * 100) / 100,
      clientCpuPercentOfOneCore: Math.round((result.clientCpuMs / result.wallMs) * 1000) / 10,
      p50LatencyMs: result.latencyMs.p50,
      p99LatencyMs: result.latencyMs.p99,
      maxLatencyMs: result.latencyMs.max,
      serverRssMiB: Math.round(mem.rss / 2 ** 20),
      serverHeapMiB: Math.round(mem.heapUsed / 2 ** 20),
      tickMeanMs:
        Math.round(
          ((server.stats.tickMsTotal - before.tickMsTotal) / Math.max(1, server.stats.ticks - before.ticks)) * 10,
        ) / 10,
      tickMaxMs: Math.round(server.stats.tickMsMax * 10) / 10,
      framesSkipped: server.stats.framesSkipped - before.framesSkipped,
      slowClientsDropped: server.stats.slowClientsDropped - before.slowClientsDropped,
      clientSaturated: result.clientCpuMs / result.wallMs > 0.9,
    };
  } finally {
    ask(child, 'exit');
    await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 3000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    await server.close();
  }
}

const results: StepResult[] = [];
for (const fanOut of FANOUTS) for (const clients of STEPS) results.push(await step(clients, fanOut));

if (process.env.BENCH_JSON === '1') {
  console.log(JSON.stringify(results, null, 2));
} else {
  console.log(
    `reference fan-out, ${PAIRS_PER_CLIENT} pairs per client, ${TICK_MS} ms tick, ${SECONDS} ` +
      `s per step (on a shared machine the figures are noisy)`,
  );
  console.log(
    'fan-out | clients | frames/s delivered (expected) | server CPU % of 1 core | server CPU µs/frame ' +
      '| client CPU % | p50 / p99 / max ms | tick mean / max ms | server RSS MiB | skipped | dropped',
  );
  for (const r of results) {
    console.log(
      `${r.fanOut} | ${r.connected}/${r.clients} | ${r.framesPerSecond.toLocaleString('en-US')} ` +
        `(${r.expectedFramesPerSecond.toLocaleString('en-US')}) | ${r.serverCpuPercentOfOneCore} ` +
        `| ${r.serverCpuMicrosPerFrame} | ` +
        `${r.clientCpuPercentOfOneCore}${r.clientSaturated ? ' (saturated)' : ''} | ${r.p50LatencyMs} ` +
        `/ ${r.p99LatencyMs} / ${r.maxLatencyMs} | ${r.tickMeanMs} / ${r.tickMaxMs} ` +
        `| ${r.serverRssMiB} | ${r.framesSkipped} | ${r.slowClientsDropped}`,
    );
  }
}
writeBenchmarkSection({
  id: 'server',
  title: 'Reference service fan-out',
  method:
    `\`npm run bench:server\`: the reference service in the bench process, the clients in a separate ` +
    `process on loopback, ${PAIRS_PER_CLIENT} pairs per client, a ${TICK_MS} ms tick, ${SECONDS} s per step ` +
    `after a ${WARMUP_MS / 1000} s warm-up. Latency runs from \`sent_at\` (the clock as the server writes ` +
    "each client's frames, to the millisecond) to the read that carried the frame. Goal: 500,000 frames/s at " +
    '5,000 clients under 50 % of one core.',
  body: table(
    [
      'fan-out',
      'clients',
      'frames/s delivered (expected)',
      'server CPU, % of one core',
      'server CPU per frame',
      'p50 / p99 / max ms',
      'tick mean / max ms',
      'server RSS',
      'skipped / dropped',
    ],
    results.map((r) => [
      r.fanOut,
      `${r.connected}/${r.clients}`,
      `${r.framesPerSecond.toLocaleString('en-US')} (${r.expectedFramesPerSecond.toLocaleString('en-US')})`,
      `${r.serverCpuPercentOfOneCore} %`,
      `${r.serverCpuMicrosPerFrame} µs`,
      `${r.p50LatencyMs} / ${r.p99LatencyMs} / ${r.maxLatencyMs}`,
      `${r.tickMeanMs} / ${r.tickMaxMs}`,
      `${r.serverRssMiB} MiB`,
      `${r.framesSkipped} / ${r.slowClientsDropped}${r.clientSaturated ? ' (client saturated)' : ''}`,
    ]),
  ),
});
