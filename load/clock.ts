/**
 * Clocks of a load run. One monotonic clock per host (CLOCK_MONOTONIC through hrtime), shared by
 * every worker thread, so skew between clients needs no clock sync; a wall-clock offset maps it
 * to the target's `sent_at`, whose unit the spec does not show.
 */

/**
 * Per-thread base: `performance.now()` is cheap but each thread has its own origin. Set on first
 * use, not at load, so the pure estimates below bundle into k6 scripts, which have no `process`.
 */
let monoBaseMs: number | undefined;

/** Monotonic milliseconds on the host's one clock, comparable across worker threads. */
export function monoNow(): number {
  monoBaseMs ??= Number(process.hrtime.bigint()) / 1e6 - performance.now();
  return performance.now() + monoBaseMs;
}

/** Offset such that wall-clock ms = mono ms + offset; the best of a few samples. */
export function wallOffsetMs(samples = 5): number {
  let best = Number.POSITIVE_INFINITY;
  let offset = 0;
  for (let i = 0; i < samples; i++) {
    const a = monoNow();
    const wall = Date.now();
    const b = monoNow();
    // Date.now() has 1 ms resolution; the midpoint of the shortest bracket is the best guess.
    if (b - a < best) {
      best = b - a;
      offset = wall + 0.5 - (a + b) / 2;
    }
  }
  return offset;
}

/** Unit of a timestamp, guessed from its magnitude around the present (the spec does not show it). */
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

/** One NTP-style sample: local send/receive wall times around a server timestamp (all ms). */
export interface OffsetSample { sentMs: number; receivedMs: number; serverMs: number }

/** Estimated server-clock offset (server − local, ms) with its error bound. */
export interface ClockOffset {
  offsetMs: number;
  /** The true offset is within offsetMs ± errorBoundMs. */
  errorBoundMs: number;
  method: 'loopback' | 'rest-ts' | 'none';
  samples: number;
}

/**
 * NTP-style estimate from REST round trips: the server stamped `ts` somewhere between our send and
 * our receipt, so offset ∈ [ts − received, ts − sent]; the tightest round trip wins. `resolutionMs`
 * widens the bound by the server timestamp's own resolution.
 */
export function estimateOffset(samples: readonly OffsetSample[], resolutionMs = 1): ClockOffset {
  let lo = Number.NEGATIVE_INFINITY;
  let hi = Number.POSITIVE_INFINITY;
  for (const s of samples) {
    // Intersecting every interval is at least as tight as the shortest round trip alone.
    lo = Math.max(lo, s.serverMs - s.receivedMs);
    hi = Math.min(hi, s.serverMs + resolutionMs - s.sentMs);
  }
  if (!samples.length || lo > hi) {
    if (!samples.length) return { offsetMs: 0, errorBoundMs: Number.POSITIVE_INFINITY, method: 'none', samples: 0 };
    // Inconsistent samples (server clock stepped): fall back to the shortest round trip.
    const best = [...samples].sort((a, b) => (a.receivedMs - a.sentMs) - (b.receivedMs - b.sentMs))[0]!;
    const rtt = best.receivedMs - best.sentMs;
    return { offsetMs: best.serverMs - (best.sentMs + best.receivedMs) / 2, errorBoundMs: rtt / 2 + resolutionMs, method: 'rest-ts', samples: samples.length };
  }
  return { offsetMs: (lo + hi) / 2, errorBoundMs: (hi - lo) / 2, method: 'rest-ts', samples: samples.length };
}

/**
 * Frames narrow the offset from one side: a frame cannot arrive before it was sent, so
 * offset ≥ sent_at − received for every frame. Returns the offset raised to that bound if needed.
 */
export function tightenWithFrames(offset: ClockOffset, maxSentMinusReceivedMs: number): ClockOffset {
  if (!Number.isFinite(maxSentMinusReceivedMs) || offset.method === 'loopback') return offset;
  const lo = offset.offsetMs - offset.errorBoundMs;
  const hi = offset.offsetMs + offset.errorBoundMs;
  const newLo = Math.max(lo, maxSentMinusReceivedMs);
  if (newLo <= lo) return offset;
  const top = Math.max(newLo, hi);
  return { ...offset, offsetMs: (newLo + top) / 2, errorBoundMs: (top - newLo) / 2 };
}
