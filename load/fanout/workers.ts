/**
 * Spawn: the worker threads of a fan-out run. Each gets its share of the plan's clients and the
 * run's settings; what they send goes to the aggregator, and every wait of the run races the
 * failure of any of them.
 */
import { Worker } from 'node:worker_threads';
import { moduleUrl } from '../../src/module-url.ts';
import { API_KEY_HEADER } from '../../src/spec.ts';
import type { FanoutAggregator } from './aggregate.ts';
import type { FanoutPlan } from './plan.ts';
import type { CoordinatorMessage, WorkerConfig, WorkerMessage } from './protocol.ts';

const BOOT = new URL('./worker-boot.mjs', import.meta.url);
const WORKER = moduleUrl('./client-worker.ts', import.meta.url).href;

/** What every worker of a run is told besides its clients. */
export interface SharedWorkerConfig {
  wsUrl: string;
  pairs: string[];
  /** Local wall ms = mono ms + this. */
  wallOffsetMs: number;
  /** The target's clock offset estimated before the run, which latency is first recorded with. */
  serverOffsetMs: number;
  localAddress?: string;
  /** Connect only, and subscribe when told (`--subscribe-after-ramp`). */
  holdSubscribe?: boolean;
  /** CA certificates a wss: stream's certificate is verified against (the `ca` of its TLS connection). */
  ca?: string[];
}

/** The running workers of a fan-out run. */
export class WorkerPool {
  /** The first error a worker threw (the run fails with it). */
  failure: Error | null = null;
  /** Rejects with the first error a worker throws: every wait of the run races it. */
  readonly failed: Promise<never>;
  private readonly workers: Worker[] = [];
  private readonly finished = new Set<number>();
  private readyCount = 0;
  private onReady: () => void = () => {};
  private onDone: () => void = () => {};
  private onFailure: (e: Error) => void = () => {};

  constructor(configs: readonly WorkerConfig[], agg: FanoutAggregator) {
    for (const config of configs) {
      const worker = new Worker(BOOT, { workerData: { ...config, entry: WORKER } });
      worker.on('message', (msg: WorkerMessage) => {
        if (msg.type === 'tick') agg.addTick(msg);
        else if (msg.type === 'ready') {
          if (++this.readyCount === this.workers.length) this.onReady();
        } else if (msg.type === 'done') {
          this.finished.add(msg.workerIndex);
          if (this.finished.size === this.workers.length) this.onDone();
        }
      });
      worker.on('error', (err) => {
        this.failure = err;
        this.onFailure(err);
      });
      this.workers.push(worker);
    }
    this.failed = new Promise<never>((_, reject) => {
      this.onFailure = reject;
    });
    this.failed.catch(() => {});
  }

  /** Sends `msg` to every worker. */
  post(msg: CoordinatorMessage): void {
    for (const w of this.workers) w.postMessage(msg);
  }

  /** Resolves when every worker is ready for the start. */
  ready(): Promise<void> {
    return Promise.race([
      new Promise<void>((r) => {
        this.onReady = r;
        if (this.readyCount === this.workers.length) r();
      }),
      this.failed,
    ]);
  }

  /** Resolves when every worker has closed its clients and sent its last tick. */
  done(): Promise<void> {
    return Promise.race([
      new Promise<void>((r) => {
        this.onDone = r;
        if (this.finished.size === this.workers.length) r();
      }),
      this.failed,
    ]);
  }

  /** Stops every worker, whatever it is doing. */
  async terminate(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** Starts the plan's workers, each with its share of the clients, feeding `agg`. */
export function spawnWorkers(plan: FanoutPlan, shared: SharedWorkerConfig, agg: FanoutAggregator): WorkerPool {
  const { o } = plan;
  const configs = plan.perWorker.map((clients, w): WorkerConfig => {
    agg.setWorkerClients(w, clients.length);
    return {
      workerIndex: w,
      wsUrl: shared.wsUrl,
      keyHeader: API_KEY_HEADER,
      clients,
      pairs: shared.pairs,
      pingIntervalMs: o.pingIntervalMs,
      connectTimeoutMs: o.connectTimeoutMs,
      tickMs: o.tickMs,
      updateWindowMs: o.updateWindowMs,
      validatePerSecond: o.validatePerSecond,
      wallOffsetMs: shared.wallOffsetMs,
      serverOffsetMs: shared.serverOffsetMs,
      msPerUnit: null,
      ...(shared.localAddress ? { localAddress: shared.localAddress } : {}),
      ...(shared.holdSubscribe ? { holdSubscribe: true } : {}),
      ...(shared.ca ? { ca: shared.ca } : {}),
      ...(plan.frameWindow ? { frameWindow: plan.frameWindow } : {}),
    };
  });
  return new WorkerPool(configs, agg);
}
