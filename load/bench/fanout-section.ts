/**
 * The `cpu` scenario's section of docs/benchmarks.md: CPU per frame of `conform load fanout` beside
 * a minimal loop and k6, round by round, and where the milliseconds of its latency p99 go: the
 * resolution of the `sent_at` it is measured from, how long the reference service takes to write
 * every client's frames of one tick (read from the service's own counters), and how long the
 * generator's event loop made a chunk wait.
 */
import { decode } from '../histogram.ts';
import type { FanoutReport } from '../fanout/run.ts';
import type { ServerStreamStats } from '../target.ts';
import { type BenchmarkSection, table } from './benchmarks-doc.ts';

/** One round of the scenario, as bench-load.json holds it. */
export interface CpuRound {
  minimal: number;
  fanout: number;
  ratio: number;
  k6: number | null;
  k6Ratio: number | null;
  /** The fan-out run's latency and health, and the service's ticks during it. */
  framesPerSecond: number;
  latencyMs: { p1: number | null; p50: number | null; p99: number | null; max: number | null };
  skewP99Ms: number | null;
  eventLoopDelayP99Ms: number;
  trustworthy: boolean;
  reasons: string[];
  /** The reference service's push ticks during the run: mean and longest, ms (null when it could not say). */
  serverTickMs: { mean: number; max: number } | null;
  loadAverage: number;
  k6P99Ms: number | null;
}

const round2 = (x: number | null): number | null => (x === null ? null : Math.round(x * 100) / 100);

/** The latency's first percentile, ms: how soon the first clients read a tick's frames. */
function firstPercentile(fan: FanoutReport): number | null {
  const encoded = (fan as { histograms?: { latency?: string } }).histograms?.latency;
  if (!encoded) return null;
  const h = decode(encoded);
  const p1 = h.totalCount ? h.getValueAtPercentile(1) / 1000 : null;
  h.destroy();
  return p1;
}

/** The service's ticks between two readings of its counters: their mean and the longest, ms. */
export function tickSpan(before: ServerStreamStats | null, after: ServerStreamStats | null): CpuRound['serverTickMs'] {
  if (!before || !after || after.ticks <= before.ticks) return null;
  return {
    mean: round2((after.tickMsTotal - before.tickMsTotal) / (after.ticks - before.ticks))!,
    max: round2(after.tickMsMax)!,
  };
}

/** The fan-out figures of one round. */
export function fanoutFigures(
  fan: FanoutReport,
  serverTickMs: CpuRound['serverTickMs'],
): Omit<CpuRound, 'minimal' | 'fanout' | 'ratio' | 'k6' | 'k6Ratio' | 'loadAverage' | 'k6P99Ms'> {
  return {
    framesPerSecond: fan.framesPerSecond,
    latencyMs: {
      p1: round2(firstPercentile(fan)),
      p50: fan.latencyMs.p50,
      p99: fan.latencyMs.p99,
      max: fan.latencyMs.max,
    },
    skewP99Ms: fan.skewMs.p99,
    eventLoopDelayP99Ms: fan.generator.eventLoopDelayP99Ms,
    trustworthy: fan.trustworthy,
    reasons: fan.generator.reasons,
    serverTickMs,
  };
}

const median = (xs: readonly (number | null)[]): number | null => {
  const s = xs.filter((x): x is number => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return null;
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** The longest run of rounds in a row that were trustworthy with p99 under `goalMs`. */
function inARow(rounds: readonly CpuRound[], goalMs: number): number {
  let best = 0;
  let run = 0;
  for (const r of rounds) {
    run = r.trustworthy && r.latencyMs.p99 !== null && r.latencyMs.p99 < goalMs ? run + 1 : 0;
    best = Math.max(best, run);
  }
  return best;
}

/** `part` as a share of `whole`, in words. */
const share = (part: number | null, whole: number | null): string =>
  part === null || !whole ? 'an unknown share' : `${Math.round((100 * part) / whole)}%`;

/** Where the milliseconds of p99 go, from the rounds' medians, in words. */
function whereTheMillisecondsGo(rounds: readonly CpuRound[], clients: number): string {
  const p99 = median(rounds.map((r) => r.latencyMs.p99));
  const p1 = median(rounds.map((r) => r.latencyMs.p1));
  const tick = median(rounds.map((r) => r.serverTickMs?.mean ?? null));
  const tickMax = median(rounds.map((r) => r.serverTickMs?.max ?? null));
  const eld = median(rounds.map((r) => r.eventLoopDelayP99Ms));
  const skew = median(rounds.map((r) => r.skewP99Ms));
  return (
    `Where the milliseconds of p99 go (medians of the rounds): p99 ${round2(p99)} ms. The reference stamps ` +
    "`sent_at` from its clock as it writes each client's frames (again whenever the whole millisecond has moved " +
    'on), so a latency runs from that write to the read, and carries 0–1 ms, 0.5 on average, of truncation. The ' +
    `first clients read a tick's frames ${round2(p1)} ms after their \`sent_at\` (p1): loopback and a worker's ` +
    `read. The reference writes one tick to ${clients.toLocaleString('en-US')} sockets one after another in ` +
    `${round2(tick)} ms on average (longest ${round2(tickMax)} ms): that is the spread between the first and the ` +
    `last client to read one update (skew p99 ${round2(skew)} ms), and, while it writes, the core it takes is not ` +
    "the generator's. The rest is the generator's: a chunk waits while its worker reads the chunks that came " +
    `before it in the same pass of its event loop (batching), event-loop delay p99 ${round2(eld)} ` +
    `(${share(eld, p99)} of p99), while the service's writes and both workers share the machine's two cores.`
  );
}

/** The scenario's section. */
export function cpuSection(o: {
  clients: number;
  pairs: number;
  durationS: number;
  workers: number;
  rounds: readonly CpuRound[];
  ratioOfMedians: number;
  k6RatioOfMedians: number | null;
}): BenchmarkSection {
  const { rounds } = o;
  const goalMs = 30;
  const row = (r: CpuRound, i: number): (string | number | null)[] => [
    i + 1,
    r.minimal,
    r.fanout,
    `${r.ratio}×`,
    r.k6 === null ? null : `${r.k6} (${r.k6Ratio}×)`,
    r.framesPerSecond.toLocaleString('en-US'),
    `${r.latencyMs.p50} / **${r.latencyMs.p99}** / ${r.latencyMs.max}`,
    r.serverTickMs ? `${r.serverTickMs.mean} / ${r.serverTickMs.max}` : null,
    r.eventLoopDelayP99Ms,
    r.trustworthy ? 'yes' : `no (${r.reasons.join('; ')})`,
    r.loadAverage,
  ];
  return {
    id: 'load-cpu',
    title: 'Load generator: CPU per frame beside a minimal loop and k6',
    method:
      `\`cpu\`: ${o.clients} clients × ${o.pairs} pairs × 10 Hz ` +
      `(${(o.clients * o.pairs * 10).toLocaleString('en-US')} frames/s) against the reference service in ` +
      `its own process, ${o.durationS} s per round, ${o.workers} ` +
      'worker threads; each round runs a minimal `ws` loop, `conform load fanout` and the k6 fan-out script ' +
      '(when `CONFORM_K6` names one) at the same N and divides CPU time by frames received. Goals: fanout ≤ ' +
      `1.2× the minimal loop; every round trustworthy with latency p99 < ${goalMs} ms.`,
    body: [
      table(
        [
          'round',
          'minimal µs/frame',
          'fanout µs/frame',
          'fanout ÷ minimal',
          'k6 µs/frame',
          'fanout frames/s',
          'latency p50 / p99 / max ms',
          'reference tick mean / max ms',
          'event-loop p99 ms',
          'trustworthy',
          'load average',
        ],
        rounds.map(row),
      ),
      '',
      `Ratio of medians: fanout ${o.ratioOfMedians}× the minimal loop` +
        `${o.k6RatioOfMedians === null ? '; k6 not run' : `, k6 ${o.k6RatioOfMedians}×`}. ` +
        `Trustworthy with p99 < ${goalMs} ms: ${inARow(rounds, goalMs)} rounds in a row of ${rounds.length}.`,
      '',
      whereTheMillisecondsGo(rounds, o.clients),
    ].join('\n'),
  };
}
