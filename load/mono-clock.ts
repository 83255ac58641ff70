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
   * How far mono + offset may be from `Date.now()`'s clock, ms: half the bracket its tick was read
   * in (half a millisecond more if no tick was seen), and this thread's base.
   */
  uncertaintyMs: number;
}

/**
 * The mapping of the monotonic clock to the wall clock, to within microseconds. Date.now() counts
 * whole milliseconds: one reading places the wall clock only somewhere in a millisecond, and its
 * midpoint is up to half of one off, an error that moves every latency measured against it by the
 * same amount and differs from run to run. The moment Date.now() ticks over is placed exactly,
 * between the monotonic readings either side of the tick: the mapping waits for `samples` ticks (a
 * millisecond each at most) and keeps the tightest. Ten, not a few: on a loaded machine a reading
 * the thread was preempted in is wide, and three in a row can be (one mapping in 300 was, with three
 * busy processes on two cores; none in 600 of ten). Written here: Node's one sub-millisecond wall
 * clock, `performance.timeOrigin`, is read once at the thread's start and would miss the wall clock
 * slewing or stepping during a run, and a native addon would need a compiler at install.
 */
export function wallMapping(samples = 10): WallMapping {
  let best = Number.POSITIVE_INFINITY;
  let offset = 0;
  for (let i = 0; i < samples; i++) {
    let before = monoNow();
    const first = Date.now();
    let start = monoNow();
    let wall = Date.now();
    let end = monoNow();
    // Bounded: the wall clock ticks within a millisecond, unless the thread is preempted.
    const limit = start + 5;
    while (wall === first && end < limit) {
      before = start;
      start = monoNow();
      wall = Date.now();
      end = monoNow();
    }
    if (wall === first) {
      // No tick seen: the reading's own bracket, and the middle of its millisecond.
      if (0.5 + (end - start) / 2 < best) {
        best = 0.5 + (end - start) / 2;
        offset = wall + 0.5 - (start + end) / 2;
      }
      continue;
    }
    // The wall clock read `first` after `before` and `wall` before `end`: it reached `wall` between.
    if ((end - before) / 2 < best) {
      best = (end - before) / 2;
      offset = wall - (before + end) / 2;
    }
  }
  return { offsetMs: offset, uncertaintyMs: best + MONO_BASE.errorMs };
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
