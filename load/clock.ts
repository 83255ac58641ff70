/**
 * The target's clock against ours. A service's clock is its own, on loopback too (containers,
 * test doubles, a skewed VM), so the offset (target clock − ours) is always estimated: REST
 * round trips bound it from both sides (the envelope's `ts` was stamped between our send and our
 * receipt), frames bound it from below (none can arrive before it was sent). Latency is corrected
 * by the offset when the bounds exclude zero, and is unknown, with the reason, when no estimate
 * holds. Pure and import-free (no Node API), so the k6 scripts bundle it too.
 */

/** Unit of a timestamp (the spec does not show the unit of `ts`, `last_updated` or `sent_at`). */
export type TimeUnit = 's' | 'ms' | 'us' | 'ns';
/** Milliseconds per unit. */
export const MS_PER_UNIT: Readonly<Record<TimeUnit, number>> = { s: 1000, ms: 1, us: 1e-3, ns: 1e-6 };

/**
 * Guesses the unit of an epoch timestamp by comparing it with the local wall clock; null when no
 * unit puts it within a day of now (then latency cannot be computed and the report says so).
 */
export function guessTimeUnit(value: number, nowMs = Date.now()): TimeUnit | null {
  const day = 86_400_000;
  for (const unit of ['ms', 's', 'us', 'ns'] as const) {
    if (Math.abs(value * MS_PER_UNIT[unit] - nowMs) < day) return unit;
  }
  return null;
}

/** The resolution of a timestamp in `unit`, ms: an integer stamp covers [v, v + 1 unit). */
export function resolutionMs(unit: TimeUnit): number {
  return Math.max(MS_PER_UNIT[unit], 1e-3);
}

/** One REST round trip: our wall clock at send and at receipt, and the envelope's `ts` in ms. */
export interface OffsetSample {
  sentMs: number;
  receivedMs: number;
  serverMs: number;
}

/** What is known of the target's clock, and what latency may do with it. */
export interface ClockEstimate {
  /**
   * same-clock: the bounds hold zero, latency is not corrected; corrected: they exclude zero,
   * latency is corrected by `offsetMs`; unknown: no estimate holds, latency is not reported.
   */
  status: 'same-clock' | 'corrected' | 'unknown';
  /** The correction applied to latency (target − ours, ms): 0 when same-clock, null when unknown. */
  offsetMs: number | null;
  /** The offset lies in [lowMs, highMs] (null when unknown). */
  lowMs: number | null;
  highMs: number | null;
  /** Latency is true within ± this many ms as far as the clocks go (null when unknown). */
  boundMs: number | null;
  /** Whether frames raised the lower bound above what the round trips gave. */
  narrowedByFrames: boolean;
  /**
   * How far our own time scale may stand from our host's wall clock (ms): an offset within this
   * of zero cannot be told from our own clock, so it is not corrected (0 where the samples were
   * taken on the wall clock itself).
   */
  toleranceMs: number;
  /** REST round trips the estimate rests on. */
  samples: number;
  /** Why latency is unknown (null otherwise). */
  reason: string | null;
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

function unknown(samples: number, reason: string): ClockEstimate {
  return {
    status: 'unknown',
    offsetMs: null,
    lowMs: null,
    highMs: null,
    boundMs: null,
    narrowedByFrames: false,
    toleranceMs: 0,
    samples,
    reason,
  };
}

/**
 * Estimates the target's clock offset from REST round trips of stamp resolution `stampResolutionMs`,
 * narrowed by the frames' largest `sent_at − receipt` (ms, on our wall clock; −∞ when no frame).
 * `ownToleranceMs` is how far the time scale the samples were taken on may stand from our host's
 * wall clock, as measured (load/mono-clock.ts `wallMapping`: the wall clock's millisecond, the
 * bracket of the reading, the drift over the run); 0 when they were read from the wall clock itself.
 *
 * NTP's bound: the target stamped `ts` somewhere between our send and our receipt, and a stamp
 * covers [ts, ts + resolution), so offset ∈ [ts − received, ts + resolution − sent]; every round
 * trip holds, so the intervals intersect. A frame received at r with `sent_at` s was sent before r
 * on the target's clock: s ≤ r + offset, so offset ≥ s − r.
 */
export function estimateClock(
  samples: readonly OffsetSample[],
  stampResolutionMs: number,
  maxSentMinusReceivedMs = Number.NEGATIVE_INFINITY,
  ownToleranceMs = 0,
): ClockEstimate {
  if (!samples.length)
    return unknown(0, "no REST reply carried a numeric `ts`: nothing bounds the target's clock from above");
  let low = Number.NEGATIVE_INFINITY;
  let high = Number.POSITIVE_INFINITY;
  for (const s of samples) {
    low = Math.max(low, s.serverMs - s.receivedMs);
    high = Math.min(high, s.serverMs + stampResolutionMs - s.sentMs);
  }
  if (low > high)
    return unknown(
      samples.length,
      `REST round trips disagree on the target's clock by ${round3(low - high)} ms (it stepped while being read?)`,
    );
  const narrowed = maxSentMinusReceivedMs > low;
  if (narrowed) low = maxSentMinusReceivedMs;
  if (low > high) {
    return unknown(
      samples.length,
      `frames arrived up to ${round3(low - high)} ms before their sent_at on the clock ` +
        `the REST ts gives: the target's sent_at and ts disagree`,
    );
  }
  // Note: the correction is made only when zero is excluded, by more than our own scale's
  // uncertainty: a clock that may be ours is not moved. The bound below still spans [low, high].
  const same = low - ownToleranceMs <= 0 && high + ownToleranceMs >= 0;
  const offset = same ? 0 : (low + high) / 2;
  return {
    status: same ? 'same-clock' : 'corrected',
    offsetMs: round3(offset),
    lowMs: round3(low),
    highMs: round3(high),
    boundMs: round3(Math.max(offset - low, high - offset)),
    narrowedByFrames: narrowed,
    toleranceMs: round3(ownToleranceMs),
    samples: samples.length,
    reason: null,
  };
}
