/**
 * The fan-out aggregate's types: its options and what it hands over, the client side's
 * measurements of a run as plain data, before the target, the clock and the options are added
 * (result.ts's FanoutReport).
 */
import type { Percentiles } from '../histogram.ts';

/** The run's figures the aggregator judges updates and seconds by. */
export interface AggregatorOptions {
  clients: number;
  /** An update is judged this long after its first receipt (receipts later than that are lost). */
  updateWindowMs: number;
  /** A client counts for an update only if subscribed at least this long before the update's first receipt. */
  settleMs: number;
  tickMs: number;
}

/** One worker thread's own health over the measured phase. */
export interface WorkerHealth {
  workerIndex: number;
  clients: number;
  eventLoopDelayP99Ms: number;
  /** Event-loop utilisation over the measured phase: the worker thread's busy share, in %. */
  cpuPercent: number;
  heapUsedBytes: number;
}

/** One second of the run. */
export interface TimelinePoint {
  /** Seconds since the ramp began. */
  t: number;
  /**
   * Frames per second over the time each worker's samples in this second cover; null when a
   * worker sent no sample for it (`missingWorkers`): unknown, never drawn as a drop.
   */
  framesPerSecond: number | null;
  /** Open connections at the workers' samples; null when a worker's sample is missing. */
  connections: number | null;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  steady: boolean;
  /** Workers that were running but sent no sample for this second (its figures came later). */
  missingWorkers: number[];
}

/** Everything measured on the client side, before the coordinator adds target, clock and options. */
export interface FanoutMeasurements {
  clients: number;
  connected: number;
  framesReceived: number;
  framesPerSecond: number;
  measuredMs: number;
  /** Of the measured phase's frames; with a shared window (--start-at), of the frames sent inside it. */
  latencyMs: Percentiles;
  serverLatencyMs: Percentiles;
  skewMs: { count: number; p50: number | null; p90: number | null; p99: number | null; max: number | null };
  updates: number;
  lost: number;
  lostUpdates: number;
  lossRate: number;
  lateReceipts: number;
  duplicates: number;
  outOfOrder: number;
  errors: number;
  validated: number;
  violationSamples: string[];
  refusals: Record<string, number>;
  connectErrors: Record<string, number>;
  noticeErrors: Record<string, number>;
  disconnects: Record<string, number>;
  pongs: number;
  sentAtUnit: string | null;
  maxSentMinusReceivedMs: number;
  /** Frames sent inside the shared window (--start-at), whenever they arrived. */
  windowFrames: number;
  /** Frames received before their sent_at on the clock estimated before the run (the estimate was then narrowed). */
  receiptsBeforeSentAt: number;
  /** Push frames without a numeric sent_at. */
  framesWithoutSentAt: number;
  /** Latencies still below zero after the final correction (bucket rounding only; reported, never clamped). */
  latencyBelowZeroAfterCorrection: number;
  workers: WorkerHealth[];
  timeline: TimelinePoint[];
  latencyCurve: { percentile: number; ms: number }[];
  skewHistogram: { fromMs: number; toMs: number; count: number }[];
  /**
   * The measured distributions as encoded HDR histograms (µs, hdr-histogram-js compressed
   * base64), keyed by threshold metric name: what `conform load merge` adds across hosts.
   */
  histograms: Record<'server_latency' | 'skew', string> & Record<string, string> & { latency?: string };
}
