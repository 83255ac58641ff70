/**
 * `conform load fanout` as a library, in the steps autocannon takes: plan (plan.ts: options,
 * shards, keys, schedule), spawn and drive the workers (workers.ts, phases.ts), aggregate their
 * ticks into the report's data (aggregate.ts, result.ts), and present what the data says in words
 * (load/report/). It prints nothing; `onProgress` feeds a live line if the caller wants one.
 */
import { estimateClock } from '../clock.ts';
import { caCertificates, caOf } from '../../src/transports/tls-trust.ts';
import { mappingTolerance, monoNow, wallMapping } from '../mono-clock.ts';
import { fanoutObservations } from '../report/fanout-observations.ts';
import { pickPairs, sampleTargetClock, type LoadTarget } from '../target.ts';
import { evaluateThresholds } from '../thresholds.ts';
import { FanoutAggregator } from './aggregate.ts';
import { driveRun } from './phases.ts';
import { planFanout, type FanoutOptions } from './plan.ts';
import { fanoutClock, fanoutMetrics, fanoutResult, type FanoutReport } from './result.ts';
import { spawnWorkers } from './workers.ts';

// The library's types where its callers (the command, calibrate, the benchmarks) import them.
export type { FanoutOptions } from './plan.ts';
export type { FanoutReport } from './result.ts';

/** Runs the fan-out test against `target` (which the caller closes). */
export async function runFanout(target: LoadTarget, options: FanoutOptions = {}): Promise<FanoutReport> {
  const plan = planFanout(target.profile.transport, target.keys, options);
  const { o } = plan;
  const pairs = o.pair ?? (await pickPairs(target, o.pairs));
  const startedAt = new Date().toISOString();
  const mapping = wallMapping();
  const wallOffset = mapping.offsetMs;
  // The target's clock is read on the time scale frames are timed with (mono + wall offset).
  const clockSamples = await sampleTargetClock(target, () => monoNow() + wallOffset);
  // Workers record latency with this correction; frames may narrow it later (then it is shifted).
  const preOffsetMs =
    estimateClock(clockSamples.samples, clockSamples.resolutionMs, undefined, mapping.uncertaintyMs).offsetMs ?? 0;
  const agg = new FanoutAggregator({
    clients: plan.clients,
    updateWindowMs: o.updateWindowMs,
    settleMs: o.settleMs,
    tickMs: o.tickMs,
  });
  options.onLiveSource?.(() => agg.liveValues(monoNow()));
  const pool = spawnWorkers(
    plan,
    {
      wsUrl: target.ws,
      pairs,
      wallOffsetMs: wallOffset,
      serverOffsetMs: preOffsetMs,
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      ...(options.subscribeAfterRamp ? { holdSubscribe: true } : {}),
      ...(caOf(target.profile) ? { ca: caCertificates(caOf(target.profile))! } : {}),
    },
    agg,
  );
  try {
    const phases = await driveRun(plan, pool, agg, { wsUrl: target.ws, pairs, options });
    // Our time scale is the wall clock only within a measured tolerance: an offset inside it is ours.
    const tolerance = mappingTolerance(mapping, wallMapping());
    const estimate = estimateClock(
      clockSamples.samples,
      clockSamples.resolutionMs,
      agg.maxSentMinusReceivedMs,
      tolerance,
    );
    const measurements = agg.finish(estimate.offsetMs === null ? null : estimate.offsetMs - preOffsetMs);
    if (pool.failure) throw pool.failure;
    const report = fanoutResult({
      plan,
      shard: options.shard,
      target,
      pairs,
      startedAt,
      measurements,
      clock: fanoutClock(estimate, measurements, clockSamples.tsUnit),
      phases,
      achievedRampRate: agg.openRate.perSecond,
      rampSpanMs: agg.openRate.spanMs,
    });
    report.observations.push(...fanoutObservations(report));
    return { ...report, thresholds: evaluateThresholds(plan.thresholds, fanoutMetrics(report)) };
  } finally {
    await pool.terminate();
  }
}
