/**
 * A check's time limit, which stops counting while the check waits on what the run shares: a
 * connection slot another check holds, or the key's turn under the target's rate limit.
 */
import { performance } from 'node:perf_hooks';

/** A running time limit: `onExpire` fires once `ms` of unpaused time have passed, unless cleared first. */
export interface TimeLimit {
  /** Stops the clock; pauses nest (several waits of one check overlap), and it runs again once each has resumed. */
  pause(): void;
  resume(): void;
  /** Adds `ms` to the limit (work the check learns is bigger than it could know at its start). */
  extend(ms: number): void;
  clear(): void;
  /** Time spent paused so far, ms. */
  pausedMs(): number;
}

/** Starts a time limit of `ms`; time spent waiting on a resource of the run is not the check's own. */
export function timeLimit(ms: number, onExpire: () => void): TimeLimit {
  let left = ms;
  let since = performance.now();
  let cleared = false;
  let paused = 0;
  let depth = 0;
  let timer: NodeJS.Timeout | undefined = setTimeout(onExpire, left);
  return {
    pause() {
      if (cleared || depth++ > 0) return;
      clearTimeout(timer);
      timer = undefined;
      const now = performance.now();
      left -= now - since;
      since = now;
    },
    resume() {
      if (cleared || depth === 0 || --depth > 0) return;
      const now = performance.now();
      paused += now - since;
      since = now;
      timer = setTimeout(onExpire, Math.max(0, left));
    },
    extend(extra: number) {
      if (cleared || !(extra > 0)) return;
      left += extra;
      if (!timer) return;
      clearTimeout(timer);
      const now = performance.now();
      left -= now - since;
      since = now;
      timer = setTimeout(onExpire, Math.max(0, left));
    },
    pausedMs: () => paused + (depth > 0 && !cleared ? performance.now() - since : 0),
    clear() {
      cleared = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
