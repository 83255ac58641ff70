/**
 * `conform load capacity fanout | rest` as a library: where the service breaks. The target is
 * started once; each step runs the mode's own load (runFanout at N clients, runRest at R requests
 * per second) for a warm-up and a short measured window, and the search (search.ts) doubles, then
 * bisects, on what each step measured. Returns the report as plain data.
 */
import type { FanoutOptions } from '../fanout/run.ts';
import { runFanout } from '../fanout/run.ts';
import { fanoutMetrics } from '../fanout/result.ts';
import type { LoadKind } from '../metrics.ts';
import { SATURATION } from '../options.ts';
import { REST_SATURATION, restMetrics, runRest, type RestOptions, type RestReport } from '../rest/run.ts';
import type { LoadTarget } from '../target.ts';
import { parseThresholds } from '../thresholds.ts';
import {
  searchCapacity,
  type CapacityResult,
  type CapacityStep,
  type SearchOptions,
  type StepRunner,
} from './search.ts';

export interface CapacityOptions {
  kind: LoadKind;
  /** SLOs in the threshold syntax (`latency.p99<50`): a step holds when every one does. */
  slos: string[];
  search: Omit<SearchOptions, 'slos' | 'integer' | 'onStep'>;
  /** Measured window and warm-up of each step, ms. */
  stepMs: number;
  warmupMs: number;
  /** The mode's own options for every step (the load itself is the search's). */
  fanout: FanoutOptions;
  rest: RestOptions;
  /** Told of each step as it ends. */
  onStep?: (s: CapacityStep) => void;
}

/** The report of a capacity search. */
export interface CapacityReport extends CapacityResult {
  kind: LoadKind;
  startedAt: string;
  target: { rest: string; ws: string; embedded: boolean };
  /** What the load counts: clients (fanout), requests per second (rest). */
  unit: 'clients' | 'requests/s';
  slos: string[];
  options: {
    start: number;
    max: number;
    stepMs: number;
    warmupMs: number;
    maxSteps: number;
    maxTimeMs: number;
    resolution: number;
  };
}

/** Why the REST generator was saturated in a step: its event loop held up, or busy. */
export function restGeneratorLimits(r: RestReport): string[] {
  const out: string[] = [];
  if (r.generator.eventLoopDelayP99Ms > SATURATION.eventLoopDelayP99Ms)
    out.push(`event-loop delay p99 ${r.generator.eventLoopDelayP99Ms} ms > ${SATURATION.eventLoopDelayP99Ms} ms`);
  if (r.generator.cpuPercent > SATURATION.cpuPercent)
    out.push(`busy ${r.generator.cpuPercent}% > ${SATURATION.cpuPercent}%`);
  return out;
}

/**
 * How the REST generator fell behind in a step without being saturated: requests sent late
 * although a connection was free (late requests that waited for a connection waited on the
 * target's answers, which is the target's limit, not the generator's).
 */
export function restGeneratorLag(r: RestReport): string[] {
  return r.scheduled > 0 && r.lateOnOwn / r.scheduled > REST_SATURATION.lateShare
    ? [
        `${r.lateOnOwn} of ${r.scheduled} requests sent more than ${r.lateMs} ms late with a connection free ` +
          `(> ${REST_SATURATION.lateShare * 100}%)`,
      ]
    : [];
}

/** The step runner of a mode against a started target. */
export function stepRunner(target: LoadTarget, o: CapacityOptions): StepRunner {
  if (o.kind === 'rest')
    return async (rate) => {
      const r = await runRest(target, { ...o.rest, rate, durationMs: o.stepMs, warmupMs: o.warmupMs, thresholds: [] });
      return {
        metrics: restMetrics(r),
        generatorLimits: restGeneratorLimits(r),
        generatorLag: restGeneratorLag(r),
        generatorLagMs: r.ownSendLagMs?.p99 ?? null,
        latencyP50Ms: r.latencyMs.p50,
        latencyP99Ms: r.latencyMs.p99,
        achieved: r.rps,
      };
    };
  return async (clients) => {
    const r = await runFanout(target, {
      ...o.fanout,
      clients,
      durationMs: o.stepMs,
      warmupMs: o.warmupMs,
      thresholds: [],
    });
    return {
      metrics: fanoutMetrics(r),
      generatorLimits: r.generator.reasons,
      latencyP50Ms: r.latencyMs.p50,
      latencyP99Ms: r.latencyMs.p99,
      achieved: r.connected,
    };
  };
}

/** Runs the search against `target` (which the caller closes); `runStep` replaces the mode's own steps. */
export async function runCapacity(
  target: LoadTarget,
  o: CapacityOptions,
  runStep: StepRunner = stepRunner(target, o),
): Promise<CapacityReport> {
  const slos = parseThresholds(o.slos, o.kind);
  const startedAt = new Date().toISOString();
  const result = await searchCapacity(runStep, {
    ...o.search,
    slos,
    integer: o.kind === 'fanout',
    ...(o.onStep ? { onStep: o.onStep } : {}),
  });
  return {
    ...result,
    kind: o.kind,
    startedAt,
    target: { rest: target.rest, ws: target.ws, embedded: target.embedded },
    unit: o.kind === 'fanout' ? 'clients' : 'requests/s',
    slos: slos.map((s) => s.expr),
    options: { ...o.search, stepMs: o.stepMs, warmupMs: o.warmupMs },
  };
}
