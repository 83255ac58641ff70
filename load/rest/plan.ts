import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { Histogram } from '../histogram.ts';

/**
 * One second of a run's measured phase (the last one partial): requests answered in it and, in the
 * open model, their latency. `t` is the end of its span, s from the measured phase's start; `rps`
 * the requests over the span.
 */
export interface TimelinePoint {
  t: number;
  rps: number;
  requests: number;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
}

/** What both REST load models are given: the target, the requests, the phases, the callbacks. */
export interface RestPlan {
  /** Protocol, host and port of the target. */
  origin: string;
  /** CA certificates an https: origin's certificate is verified against (Node's own and the run's `--ca`). */
  ca?: string[];
  /** Request paths (with query), used in turn. */
  paths: readonly string[];
  headers: Record<string, string>;
  /** Open model: most connections opened; closed model: connections sending back to back. */
  connections: number;
  /** Requests in flight on one connection at once (1: none pipelined). */
  pipelining: number;
  warmupMs: number;
  durationMs: number;
  timeoutMs: number;
  onSecond?: (p: { elapsedS: number; requests: number; rps: number }) => void;
  /** performance.now() at which the run starts, warm-up first (default: in a few ms). */
  startAt?: number;
  /**
   * This thread's part of a run spread over worker threads (rest-workers.ts): the open model sends
   * every `of`-th arrival of the whole schedule from the `index`-th; the closed model is given its
   * connections.
   */
  share?: { index: number; of: number };
  /** Each point of the timeline as it is made, with that second's latencies (open model), for a worker to pass on. */
  onTick?: (point: TimelinePoint, second: Histogram | null) => void;
  /** Given, once the run starts, the function that reads its figures so far (live metrics). */
  onLiveSource?: (read: () => Record<string, number | null>) => void;
}

const ELD_RESOLUTION_MS = 10;

/**
 * The generator watching itself over the measured phase: event-loop delay p99 (the timer's
 * resolution subtracted: the histogram records whole intervals) and the loop's busy share.
 */
export function watchEventLoop(): { start(): void; stop(): { eventLoopDelayP99Ms: number; busyPercent: number } } {
  const eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  let elu = performance.eventLoopUtilization();
  return {
    start() {
      eld.enable();
      elu = performance.eventLoopUtilization();
    },
    stop() {
      eld.disable();
      const u = performance.eventLoopUtilization(elu);
      const p99 = eld.count ? Math.max(0, eld.percentile(99) / 1e6 - ELD_RESOLUTION_MS) : 0;
      return { eventLoopDelayP99Ms: Math.round(p99 * 100) / 100, busyPercent: Math.round(u.utilization * 1000) / 10 };
    },
  };
}

/** CPU time of the whole process so far (every thread), µs: the generator's cost per request is read from it. */
export function processCpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** Adds one to `m[k]`. */
export function bump(m: Record<string, number>, k: string): void {
  m[k] = (m[k] ?? 0) + 1;
}

/** What every REST load run counts of its responses and failures, the model's own counts aside. */
export interface ResponseCounts {
  completed: number;
  timeouts: number;
  errors: Record<string, number>;
  httpStatus: Record<string, number>;
  statusNumbers: Record<string, number>;
}

/** Response counts at zero, for a run or for the merge of a run's threads. */
export function responseCounts(): ResponseCounts {
  return { completed: 0, timeouts: 0, errors: {}, httpStatus: {}, statusNumbers: {} };
}

/** Counts a response: its HTTP status, and its envelope's `status_number` (`(none)` when the body had none). */
export function countResponse(
  counts: { httpStatus: Record<string, number>; statusNumbers: Record<string, number> },
  status: number,
  statusNumber: string | undefined,
): void {
  bump(counts.httpStatus, String(status));
  bump(counts.statusNumbers, statusNumber ?? '(none)');
}

/** Counts a failed request: a timeout apart, any other failure by its code. */
export function countFailure(counts: { timeouts: number; errors: Record<string, number> }, code: string): void {
  if (code === 'timeout') counts.timeouts++;
  else bump(counts.errors, code);
}
