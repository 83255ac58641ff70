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
const MONO_BASE_MS = ((): number => {
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
  return base;
})();

/** Monotonic milliseconds on the host's one clock, comparable across worker threads. */
export function monoNow(): number {
  return performance.now() + MONO_BASE_MS;
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
