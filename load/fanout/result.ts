/**
 * Aggregate, last step: the fan-out report as plain data, from the aggregator's measurements, the
 * target's clock as estimated at the end, the plan and the phases' figures. load/report/ formats
 * it; nothing here writes or prints.
 */
import { resolutionMs, type ClockEstimate, type TimeUnit } from '../clock.ts';
import { flatMetrics } from '../metrics.ts';
import type { LoadTarget } from '../target.ts';
import type { ThresholdResult } from '../thresholds.ts';
import { saturationReasons } from './aggregate.ts';
import type { FanoutMeasurements, WorkerHealth } from './measurements.ts';
import type { FanoutOptions, FanoutPlan } from './plan.ts';
import type { RunPhases } from './phases.ts';

/** The fan-out report: plain data, formatted by load/report/*. */
export interface FanoutReport extends FanoutMeasurements {
  kind: 'fanout';
  /** `calibrate` when the target was the trivial broadcast server (the generator's floor). */
  mode: 'fanout' | 'calibrate';
  startedAt: string;
  target: { rest: string; ws: string; embedded: boolean };
  options: {
    clients: number;
    pairs: string[];
    durationMs: number;
    rampRate: number;
    workers: number;
    keys: number;
    updateWindowMs: number;
    validatePerSecond: number;
  };
  /** Set with a shard: this host's share (clients and options.clients are the whole run's). */
  shard?: { index: number; count: number; clients: number };
  /** Set with a coordinated start: the shared window and the frames sent inside it. */
  window?: { startAt: string; endAt: string; frames: number };
  /** From the first connection opened to the last: the span `achievedRampRate` is measured over. */
  rampMs: number;
  /** Connections opened per second, first open to last. */
  achievedRampRate: number;
  /**
   * The measured phase on the timeline's clock (seconds since the ramp's start): the seconds of
   * the timeline outside it are ramp, warm-up or close, and no figure of the summary comes from them.
   */
  measuredPhase: { fromS: number; toS: number };
  /**
   * The target's clock against ours (load/clock.ts), from REST `ts` round trips narrowed by the
   * frames; latency is corrected by `offsetMs` when the bounds exclude zero, and not reported when
   * `status` is unknown. `latencyBoundMs` adds the resolution of `sent_at` to the clock's bound.
   */
  clock: ClockEstimate & { tsUnit: string | null; sentAtUnit: string | null; latencyBoundMs: number | null };
  generator: {
    eventLoopDelayP99Ms: number;
    cpuPercent: number;
    saturated: boolean;
    reasons: string[];
    workers: WorkerHealth[];
    /** CPU of this whole process (main + workers) over the measured phase, % of one core. */
    processCpuPercent: number;
    /** CPU µs per received frame (process-wide, measured phase). */
    cpuMicrosPerFrame: number | null;
    rssBytes: number;
    memoryPerConnectionBytes: number | null;
  };
  trustworthy: boolean;
  thresholds: ThresholdResult[];
  observations: string[];
}

/** Flat metric values for thresholds, read as load/metrics.ts says. */
export function fanoutMetrics(r: Omit<FanoutReport, 'thresholds'>): Record<string, number | null> {
  return flatMetrics('fanout', r as unknown as Record<string, unknown>);
}

/**
 * The target's clock as the report states it: the final estimate, unknown when frames came
 * without a sent_at we could read, and the bound latency then carries.
 */
export function fanoutClock(
  estimate: ClockEstimate,
  m: FanoutMeasurements,
  tsUnit: string | null,
): FanoutReport['clock'] {
  const sentAtResolution = m.sentAtUnit ? resolutionMs(m.sentAtUnit as TimeUnit) : null;
  return {
    ...estimate,
    ...(m.framesReceived > 0 && m.sentAtUnit === null
      ? {
          status: 'unknown' as const,
          offsetMs: null,
          reason:
            m.framesWithoutSentAt >= m.framesReceived
              ? 'push frames carry no sent_at'
              : 'the unit of sent_at could not be guessed (not within a day of our clock in s, ms, µs or ns)',
        }
      : {}),
    tsUnit,
    sentAtUnit: m.sentAtUnit,
    // A stamp in whole units is up to one unit before the true send time.
    latencyBoundMs:
      estimate.boundMs === null || sentAtResolution === null
        ? null
        : Math.round((estimate.boundMs + sentAtResolution) * 1000) / 1000,
  };
}

/** The generator's own health over the measured phase, and whether it was saturated. */
function generatorHealth(m: FanoutMeasurements, phases: RunPhases): FanoutReport['generator'] {
  const reasons = saturationReasons(m.workers);
  const measuredMs = Math.max(1, phases.stopAt - phases.steadyAt);
  const cpuMs = (phases.cpu.user + phases.cpu.system) / 1000;
  const { rssSteady } = phases;
  return {
    eventLoopDelayP99Ms: Math.max(0, ...m.workers.map((w) => w.eventLoopDelayP99Ms)),
    cpuPercent: Math.max(0, ...m.workers.map((w) => w.cpuPercent)),
    saturated: reasons.length > 0,
    reasons,
    workers: m.workers,
    processCpuPercent: Math.round((cpuMs / measuredMs) * 1000) / 10,
    cpuMicrosPerFrame: m.framesReceived ? Math.round(((cpuMs * 1000) / m.framesReceived) * 100) / 100 : null,
    rssBytes: rssSteady,
    memoryPerConnectionBytes: m.connected ? Math.round((rssSteady - phases.rssBefore) / m.connected) : null,
  };
}

/** Everything a fan-out report is made of. */
export interface FanoutResultParts {
  plan: FanoutPlan;
  shard: FanoutOptions['shard'];
  target: LoadTarget;
  pairs: string[];
  startedAt: string;
  measurements: FanoutMeasurements;
  clock: FanoutReport['clock'];
  phases: RunPhases;
  /** Connections opened per second, first open to last. */
  achievedRampRate: number;
  /** The ms from the first connection opened to the last. */
  rampSpanMs: number;
}

/** The report of a run, thresholds not yet judged; its observations are the phases' so far. */
export function fanoutResult(p: FanoutResultParts): Omit<FanoutReport, 'thresholds'> {
  const { plan, measurements: m, phases } = p;
  const { o, frameWindow } = plan;
  const generator = generatorHealth(m, phases);
  return {
    kind: 'fanout',
    mode: 'fanout',
    startedAt: p.startedAt,
    target: { rest: p.target.rest, ws: p.target.ws, embedded: p.target.embedded },
    options: {
      clients: o.clients,
      pairs: p.pairs,
      durationMs: o.durationMs,
      rampRate: o.rampRate,
      workers: plan.perWorker.length,
      keys: new Set(plan.keys.slice(plan.shard.from, plan.shard.to)).size,
      updateWindowMs: o.updateWindowMs,
      validatePerSecond: o.validatePerSecond,
    },
    ...m,
    ...(p.shard ? { shard: { ...p.shard, clients: plan.clients } } : {}),
    ...(frameWindow
      ? {
          window: {
            startAt: new Date(frameWindow.startWallMs).toISOString(),
            endAt: new Date(frameWindow.endWallMs).toISOString(),
            frames: m.windowFrames,
          },
        }
      : {}),
    rampMs: p.rampSpanMs,
    achievedRampRate: p.achievedRampRate,
    measuredPhase: {
      fromS: Math.round(phases.steadyAt - phases.t0) / 1000,
      toS: Math.round(phases.stopAt - phases.t0) / 1000,
    },
    clock: p.clock,
    generator,
    trustworthy: !generator.saturated,
    observations: [...phases.observations],
  };
}
