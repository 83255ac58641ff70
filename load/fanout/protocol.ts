/** Messages between the fan-out coordinator (main thread) and its client workers. Plain data. */

/** One client the worker opens: its global index, key and start, ms after the ramp begins. */
export interface ClientPlan {
  index: number;
  key: string;
  startAtMs: number;
}

export interface WorkerConfig {
  workerIndex: number;
  wsUrl: string;
  keyHeader: string;
  clients: ClientPlan[];
  pairs: string[];
  /** Each client pings this often (the spec closes a connection after 30 s without one). */
  pingIntervalMs: number;
  /** Gives up on a handshake after this long. */
  connectTimeoutMs: number;
  /** Ticks (aggregates sent to the coordinator) this often. */
  tickMs: number;
  /** An update is complete this long after its first receipt in this worker. */
  updateWindowMs: number;
  /** Frames validated against the push-frame schema per second, at most (Infinity = every frame, 0 = none). */
  validatePerSecond: number;
  /** Local wall ms = mono ms + this. */
  wallOffsetMs: number;
  /** Target clock − local wall clock, ms: the correction estimated before the run (load/clock.ts). */
  serverOffsetMs: number;
  /** ms per unit of `sent_at`/`last_updated`; null = guess from the first frame. */
  msPerUnit: number | null;
  /** Source address for the client sockets (loopback). */
  localAddress?: string;
  /** Connect only; subscribe when the coordinator says so (a ramp measured before traffic starts). */
  holdSubscribe?: boolean;
  /** CA certificates a wss: stream's certificate is verified against: Node's own and the run's `--ca`. */
  ca?: string[];
  /**
   * A window of the target's send times, on the local wall clock (ms): frames whose `sent_at`
   * falls in it are counted apart, so hosts on a shared schedule (--start-at) count the same frames.
   */
  frameWindow?: { startWallMs: number; endWallMs: number };
}

/** An update as seen by one worker: first and last receipt (mono ms) and distinct receivers. */
export type UpdateRecord = [code: string, lastUpdated: number, firstMs: number, lastMs: number, receivers: number];

export interface Tick {
  type: 'tick';
  workerIndex: number;
  atMs: number;
  /** Whether this tick lies entirely in the measured (steady) phase. */
  steady: boolean;
  frames: number;
  duplicates: number;
  outOfOrder: number;
  notices: number;
  pongs: number;
  /**
   * This tick's counts of the load/metrics.ts counts the workers tally (`ClientState.count`), by
   * metric name; the aggregator sums the measured phase's into each row's field.
   */
  counts: Record<string, number>;
  latency: string;
  /** Receipts before sent_at on the clock in use (how far before, encoded like latency); null when none. */
  latencyBelowZero: string | null;
  /**
   * With a frameWindow: the latency of the frames sent inside it, and of those received before
   * their sent_at (encoded like latency; null when none). Absent without a window.
   */
  windowLatency?: string;
  windowLatencyBelowZero?: string | null;
  /** Push frames without a numeric sent_at (latency not measurable for them). */
  framesWithoutSentAt: number;
  serverLatency: string;
  /** Mono ms at which connections opened. */
  openedAt: number[];
  /**
   * Once-per-client times (ms) of this tick for distributions of load/metrics.ts, by metric name:
   * `connect` (handshake), `subscribe` (subscribe sent → notice), `first_frame` (subscribe sent →
   * first push), `connect_time` (handshake start → subscribe notice).
   */
  clientTimes: Record<string, number[]>;
  /** Clients whose subscribe notice arrived: [client index, mono ms]. */
  subscribed: [number, number][];
  /** Clients that closed: [client index, mono ms, close code]. */
  closed: [number, number, number][];
  /** Clients whose subscribe was answered with an error notice (they get no pushes). */
  subscribeFailed: number;
  refusals: Record<string, number>;
  connectErrors: Record<string, number>;
  noticeErrors: Record<string, number>;
  updates: UpdateRecord[];
  validated: number;
  violations: number;
  violationSamples: string[];
  open: number;
  /** Event-loop delay p99 of this tick, ms, and event-loop utilisation (busy share, 0..1). */
  eventLoopDelayP99Ms: number;
  /** Event-loop delay p99 over the whole measured phase so far, ms (0 before it starts). */
  steadyEventLoopDelayP99Ms: number;
  utilization: number;
  /** Largest sent_at − receipt seen (ms, server clock − local), to bound the clock offset. */
  maxSentMinusReceivedMs: number;
  /** Frames whose sent_at fell in the config's frameWindow (0 without one). */
  windowFrames: number;
  sentAtUnit: string | null;
  heapUsedBytes: number;
}

export type WorkerMessage = Tick | { type: 'ready'; workerIndex: number } | { type: 'done'; workerIndex: number };

export type CoordinatorMessage =
  | { type: 'start'; atMs: number }
  | { type: 'subscribe' }
  | { type: 'steady' }
  | { type: 'stop'; closeAtMs: number };
