/**
 * The capacity search over a step runner: double the load until an SLO fails or the maximum is
 * reached, then bisect between the last load that held and the first that failed. Each step is
 * whatever `runStep(load)` does (a warm-up and a short measured window of fan-out or REST load);
 * the search only reads what it returns, so the generator underneath can change. A step whose
 * generator, not the service, was the limit stops the search: its figures are the generator's.
 * Bounded in steps and in time. Pure but for the runner and the clock it is given.
 */
import { evaluateThresholds, type Threshold, type ThresholdResult } from '../thresholds.ts';

/** What one step at one load measured. */
export interface StepOutcome {
  /** Flat metric values (load/metrics.ts names) the SLOs are judged on. */
  metrics: Record<string, number | null>;
  /**
   * Why the generator, not the service, limited this step (empty: it kept up): it was saturated
   * (its event loop held up or busy), so the load asked was not the load sent.
   */
  generatorLimits: string[];
  /**
   * How the generator fell behind without being saturated (requests sent late): its lag is then in
   * the latency measured. A step that held despite it held (the service did at least as well); a
   * step that failed with it cannot tell whose failure it was, so it counts as the generator's.
   */
  generatorLag?: string[];
  /** The generator's own lag in the step (its late sends' p99, ms): what it may have added to latency. */
  generatorLagMs?: number | null;
  /** Latency p50 and p99 of the step, ms, for the latency-against-load curve. */
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  /** What the step reached, in the load's own unit (clients connected, requests per second answered). */
  achieved: number | null;
}

/** Runs one step at `load`: clients (fanout) or requests per second (rest). */
export type StepRunner = (load: number) => Promise<StepOutcome>;

/** One step of the search as the report shows it. */
export interface CapacityStep extends StepOutcome {
  index: number;
  phase: 'doubling' | 'bisecting';
  load: number;
  slos: ThresholdResult[];
  /** Every SLO held and the generator kept up. */
  held: boolean;
  ms: number;
}

export interface SearchOptions {
  slos: Threshold[];
  /** First load. */
  start: number;
  /** Highest load to try (`--max-clients`, `--max-rate`). */
  max: number;
  maxSteps: number;
  maxTimeMs: number;
  resolution: number;
  /** Loads are whole numbers (clients). */
  integer: boolean;
  /** Told of each step as it ends. */
  onStep?: (s: CapacityStep) => void;
}

export interface CapacityResult {
  /**
   * `knee`: the highest load at which every SLO held, with the lowest that failed above it;
   * `max-held`: every SLO held up to the maximum; `generator-limit`: a step's generator was the
   * limit, so no knee is reported; `none-held`: not even the lowest load tried held;
   * `budget`: steps or time ran out before the bisection narrowed the knee.
   */
  outcome: 'knee' | 'max-held' | 'generator-limit' | 'none-held' | 'budget';
  /** The highest load at which every SLO held; null when none did, or when the generator was the limit. */
  capacity: number | null;
  /** The lowest load that failed an SLO (null: none failed). */
  failedAt: number | null;
  /** The highest load that held before the generator became the limit (with `generator-limit`). */
  heldBelowGeneratorLimit: number | null;
  steps: CapacityStep[];
  /** The outcome in words. */
  reason: string;
}

/**
 * What a step's figures say: its SLOs, whether the generator limited it, whether it held. A failure
 * the generator's lag may explain (every SLO would hold with that lag taken off the latency) is
 * the generator's; one that fails even without it is the service's, lag or no lag.
 */
function judgeStep(out: StepOutcome, slos: readonly Threshold[]): StepOutcome & Pick<CapacityStep, 'slos' | 'held'> {
  const judged = evaluateThresholds(slos, out.metrics);
  const ok = judged.every((x) => x.ok);
  const lagMs = out.generatorLagMs ?? Number.POSITIVE_INFINITY;
  const withoutLag = Object.fromEntries(
    Object.entries(out.metrics).map(([k, v]) => [
      k,
      k.startsWith('latency.') && v !== null ? Math.max(0, v - lagMs) : v,
    ]),
  );
  const explained = evaluateThresholds(slos, withoutLag).every((x) => x.ok);
  const lagged = !ok && out.generatorLimits.length === 0 && out.generatorLag?.length && explained;
  const generatorLimits = lagged
    ? out.generatorLag!.map((l) => `${l}, and an SLO failed with that lag in its figures`)
    : out.generatorLimits;
  return { ...out, generatorLimits, slos: judged, held: generatorLimits.length === 0 && ok };
}

/** Runs the search; `now` is the clock the time bound is read on. */
export async function searchCapacity(
  runStep: StepRunner,
  o: SearchOptions,
  now: () => number = Date.now,
): Promise<CapacityResult> {
  const steps: CapacityStep[] = [];
  const began = now();
  let lo: number | null = null;
  let hi: number | null = null;
  const canStep = (): boolean => {
    if (steps.length >= o.maxSteps) return false;
    const longest = Math.max(0, ...steps.map((s) => s.ms));
    return now() - began + longest <= o.maxTimeMs;
  };
  const step = async (load: number, phase: CapacityStep['phase']): Promise<CapacityStep> => {
    const t = now();
    const out = await runStep(load);
    const s: CapacityStep = { ...judgeStep(out, o.slos), index: steps.length + 1, phase, load, ms: now() - t };
    steps.push(s);
    o.onStep?.(s);
    return s;
  };
  const result = (outcome: CapacityResult['outcome'], reason: string, generatorLimited = false): CapacityResult => ({
    outcome,
    capacity: generatorLimited ? null : lo,
    failedAt: hi,
    heldBelowGeneratorLimit: generatorLimited ? lo : null,
    steps,
    reason,
  });
  const limited = (s: CapacityStep): CapacityResult =>
    result(
      'generator-limit',
      `the generator, not the service, was the limit at ${s.load}: ${s.generatorLimits.join('; ')}. ` +
        'No knee is reported: the figures of that step are the generator’s. Give it more CPU or spread ' +
        'the load over hosts (--shard), then search again' +
        (lo === null ? '' : `; every SLO held up to ${lo}`),
      true,
    );
  let load = Math.min(o.start, o.max);
  // Doubling: up to the first load that fails, or the maximum.
  for (;;) {
    if (!canStep()) return result('budget', `steps or time ran out while doubling; every SLO held up to ${lo ?? '—'}`);
    const s = await step(load, 'doubling');
    if (s.generatorLimits.length) return limited(s);
    if (!s.held) {
      hi = load;
      break;
    }
    lo = load;
    if (load >= o.max) return result('max-held', `every SLO held up to the maximum, ${o.max}`);
    load = Math.min(o.max, o.integer ? Math.max(load + 1, Math.round(load * 2)) : load * 2);
  }
  // Bisecting between the last load that held (or none) and the first that failed.
  for (;;) {
    const low = lo ?? 0;
    const high: number = hi ?? load;
    if (high - low <= o.resolution * Math.max(low, o.integer ? 1 : 1e-9)) break;
    const mid: number = o.integer ? Math.floor((low + high) / 2) : (low + high) / 2;
    if (mid <= low || mid >= high) break;
    if (!canStep()) return result('budget', `steps or time ran out; the knee lies between ${lo ?? 0} and ${hi}`);
    const s = await step(mid, 'bisecting');
    if (s.generatorLimits.length) return limited(s);
    if (s.held) lo = mid;
    else hi = mid;
  }
  if (lo === null) return result('none-held', `no load held every SLO; the lowest tried, ${hi}, failed`);
  return result('knee', `every SLO held at ${lo} and one failed at ${hi}`);
}
