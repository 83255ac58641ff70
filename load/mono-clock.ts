/**
 * The generator's own clocks. One monotonic clock per host (CLOCK_MONOTONIC through hrtime),
 * shared by every worker thread, so skew between clients needs no clock sync; a wall-clock
 * offset maps it to wall time. The target's clock is another matter: load/clock.ts.
 */

/**
 * Per-thread base: `performance.now()` is cheap but each thread has its own origin. The base is
 * read between two `performance.now()` calls and the tightest of several brackets wins: a thread
 * preempted between two reads (a loaded machine) would otherwise put its timestamps that many ms
 * off the other threads', and the frames' bound on the target's clock with them.
 */
const MONO_BASE = ((): { ms: number; errorMs: number } => {
  let best = Number.POSITIVE_INFINITY;
  let base = 0;
  for (let i = 0; i < 9; i++) {
    const a = performance.now();
    const h = Number(process.hrtime.bigint()) / 1e6;
    const b = performance.now();
    if (b - a < best) {
      best = b - a;
      base = h - (a + b) / 2;
    }
  }
  return { ms: base, errorMs: best / 2 };
})();
const MONO_BASE_MS = MONO_BASE.ms;

/** Monotonic milliseconds on the host's one clock, comparable across worker threads. */
export function monoNow(): number {
  return performance.now() + MONO_BASE_MS;
}

/** Our wall clock as the monotonic clock plus an offset, and how far it may stand from the host's. */
export interface WallMapping {
  /** wall-clock ms = mono ms + this. */
  offsetMs: number;
  /**
   * How far mono + offset may be from `Date.now()`'s clock, ms: half of Date.now()'s millisecond
   * (the midpoint is guessed), half the bracket the reading was taken in, and this thread's base.
   */
  uncertaintyMs: number;
}

/** The mapping of the monotonic clock to the wall clock; the best of a few samples. */
export function wallMapping(samples = 5): WallMapping {
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
  return { offsetMs: offset, uncertaintyMs: 0.5 + best / 2 + MONO_BASE.errorMs };
}

/**
 * How far our time scale may have stood from the wall clock over a run mapped at `start` and again
 * at `end`: the start's own uncertainty, plus the drift between the two beyond what their
 * uncertainties explain (the wall clock slewed, or a reading was taken late on a loaded machine).
 */
export function mappingTolerance(start: WallMapping, end: WallMapping): number {
  const drift = Math.abs(end.offsetMs - start.offsetMs) - start.uncertaintyMs - end.uncertaintyMs;
  return start.uncertaintyMs + Math.max(0, drift);
}
