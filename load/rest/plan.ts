import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

/** What both REST load models are given: the target, the requests, the phases, the callbacks. */
export interface RestPlan {
  /** Protocol, host and port of the target. */
  origin: string;
  /** Request paths (with query), used in turn. */
  paths: readonly string[];
  headers: Record<string, string>;
  /** Open model: most connections opened; closed model: connections sending back to back. */
  connections: number;
  warmupMs: number;
  durationMs: number;
  timeoutMs: number;
  /** Each response's HTTP status and body, measured phase only. */
  onResponse?: (status: number, body: string) => void;
  onSecond?: (p: { elapsedS: number; requests: number; rps: number }) => void;
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
