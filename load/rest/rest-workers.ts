/**
 * A REST run spread over worker threads (`--workers N`), for a generator that needs more than one
 * core: each worker runs the model on its share (the open model every N-th arrival of the one
 * schedule, each its part of the connections), all from the same instant; their
 * figures are added here (histograms merged, counts summed, the timeline second by second).
 */
import { Worker } from 'node:worker_threads';
import { moduleUrl } from '../../src/module-url.ts';
import { addEncoded, createHistogram, summarize, type Histogram } from '../histogram.ts';
import type { ClosedModelResult } from './closed-model.ts';
import type { OpenModelPlan, OpenModelResult } from './open-model.ts';
import { responseCounts, type RestPlan, type TimelinePoint } from './plan.ts';

const BOOT = new URL('../fanout/worker-boot.mjs', import.meta.url);
const ENTRY = moduleUrl('./rest-worker.ts', import.meta.url).href;
/** The workers start together this long after the last is ready, so each has its start in hand. */
const START_DELAY_MS = 50;

/** The open model's own settings, beside the plan every worker shares. */
export type OpenSettings = Pick<OpenModelPlan, 'rate' | 'arrival' | 'seed' | 'lateMs'>;

/** What a worker is given. */
export interface RestWorkerData {
  entry: string;
  index: number;
  of: number;
  /** The plan without its callbacks (they stay on the main thread). */
  plan: Omit<RestPlan, 'onSecond' | 'onTick' | 'onLiveSource' | 'share' | 'startAt'>;
  /** Present for the open model. */
  open: OpenSettings | null;
}

/** A worker's figures, the histograms encoded. */
export type RestWorkerResult = Omit<OpenModelResult | ClosedModelResult, 'latency' | 'sendLag' | 'ownSendLag'> & {
  latency: string;
  sendLag: string | null;
  ownSendLag: string | null;
  scheduled?: number;
  late?: number;
  lateOnOwn?: number;
  waitedForConnection?: number;
  dropped?: number;
};

export type RestWorkerMessage =
  | { type: 'ready' }
  | { type: 'tick'; n: number; point: TimelinePoint; second: string | null }
  | { type: 'done'; result: RestWorkerResult }
  | { type: 'failed'; message: string };

/** The merged figures of every worker: what one thread's model returns. */
export type MergedResult = Omit<OpenModelResult, 'sendLag' | 'ownSendLag'> & {
  sendLag: Histogram | null;
  ownSendLag: Histogram | null;
};

const add = (into: Record<string, number>, from: Record<string, number>): void => {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
};

/**
 * Adds the seconds the workers passed on, by their place in each worker's timeline (the n-th
 * second of every worker is the same span, all started at one instant; the last is partial):
 * requests summed, latencies merged, in order, each ending at the latest of its workers' ends.
 */
class Seconds {
  private readonly at = new Map<
    number,
    { t: number; rps: number; requests: number; reported: number; h: Histogram | null }
  >();
  private total = 0;

  constructor(
    private readonly workers: number,
    private readonly onSecond: RestPlan['onSecond'],
  ) {}

  add(n: number, point: TimelinePoint, second: string | null): void {
    const s = this.at.get(n) ?? { t: 0, rps: 0, requests: 0, reported: 0, h: null };
    this.at.set(n, s);
    s.t = Math.max(s.t, point.t);
    s.rps += point.rps;
    s.requests += point.requests;
    s.reported++;
    if (second) {
      s.h ??= createHistogram();
      addEncoded(s.h, second);
    }
    if (s.reported === this.workers) {
      this.total += s.requests;
      this.onSecond?.({ elapsedS: s.t, requests: this.total, rps: s.rps });
    }
  }

  timeline(): TimelinePoint[] {
    return [...this.at.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, s]) => {
        const p = s.h ? summarize(s.h) : null;
        s.h?.destroy();
        const latency = { latencyP50Ms: p?.p50 ?? null, latencyP99Ms: p?.p99 ?? null };
        return { t: s.t, rps: s.rps, requests: s.requests, ...latency };
      });
  }
}

/** Adds every worker's figures into one result. */
function merge(results: readonly RestWorkerResult[], seconds: Seconds, open: boolean): MergedResult {
  const latency = createHistogram();
  const sendLag = open ? createHistogram() : null;
  const ownSendLag = open ? createHistogram() : null;
  const m: MergedResult = {
    latency,
    sendLag,
    ownSendLag,
    ...responseCounts(),
    scheduled: 0,
    late: 0,
    lateOnOwn: 0,
    waitedForConnection: 0,
    dropped: 0,
    timeline: seconds.timeline(),
    measuredMs: 0,
    eventLoopDelayP99Ms: 0,
    busyPercent: 0,
    cpuMicros: 0,
  };
  for (const r of results) {
    addEncoded(latency, r.latency);
    if (sendLag && r.sendLag) addEncoded(sendLag, r.sendLag);
    if (ownSendLag && r.ownSendLag) addEncoded(ownSendLag, r.ownSendLag);
    m.scheduled += r.scheduled ?? 0;
    m.completed += r.completed;
    m.late += r.late ?? 0;
    m.lateOnOwn += r.lateOnOwn ?? 0;
    m.waitedForConnection += r.waitedForConnection ?? 0;
    m.dropped += r.dropped ?? 0;
    m.timeouts += r.timeouts;
    add(m.errors, r.errors);
    add(m.httpStatus, r.httpStatus);
    add(m.statusNumbers, r.statusNumbers);
    m.measuredMs = Math.max(m.measuredMs, r.measuredMs);
    m.eventLoopDelayP99Ms = Math.max(m.eventLoopDelayP99Ms, r.eventLoopDelayP99Ms);
    m.busyPercent = Math.max(m.busyPercent, r.busyPercent);
    // Each worker read the whole process's CPU over the same measured phase: one figure, not a sum.
    m.cpuMicros = Math.max(m.cpuMicros, r.cpuMicros);
  }
  return m;
}

/** Runs `plan` on `workers` threads (open model with `open`, else closed) and merges their figures. */
export async function runInWorkers(plan: RestPlan, open: OpenSettings | null, workers: number): Promise<MergedResult> {
  const { onSecond, onTick: _onTick, onLiveSource: _live, share: _share, startAt: _startAt, ...shared } = plan;
  const seconds = new Seconds(workers, onSecond);
  const threads: Worker[] = [];
  const results: RestWorkerResult[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      let ready = 0;
      for (let index = 0; index < workers; index++) {
        // The connections are shared out: the run never holds more than it was given.
        const connections = Math.max(1, Math.floor(plan.connections / workers));
        const data: RestWorkerData = { entry: ENTRY, index, of: workers, plan: { ...shared, connections }, open };
        const worker = new Worker(BOOT, { workerData: data });
        worker.on('message', (msg: RestWorkerMessage) => {
          if (msg.type === 'ready' && ++ready === workers) {
            const startEpochMs = performance.timeOrigin + performance.now() + START_DELAY_MS;
            for (const w of threads) w.postMessage({ startEpochMs });
          } else if (msg.type === 'tick') seconds.add(msg.n, msg.point, msg.second);
          else if (msg.type === 'done') {
            results.push(msg.result);
            if (results.length === workers) resolve();
          } else if (msg.type === 'failed') reject(new Error(`load rest worker ${index}: ${msg.message}`));
        });
        worker.on('error', reject);
        threads.push(worker);
      }
    });
  } finally {
    await Promise.all(threads.map((w) => w.terminate()));
  }
  return merge(results, seconds, open !== null);
}
