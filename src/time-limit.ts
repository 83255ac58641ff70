/** A check's time limit, which stops counting while the check waits for a connection slot. */
import { performance } from 'node:perf_hooks';

/** A running time limit: `onExpire` fires once `ms` of unpaused time have passed, unless cleared first. */
export interface TimeLimit {
  pause(): void;
  resume(): void;
  clear(): void;
  /** Time spent paused so far, ms. */
  pausedMs(): number;
}

/** Starts a time limit of `ms`; time spent waiting for another check to give a slot back is not the check's own. */
export function timeLimit(ms: number, onExpire: () => void): TimeLimit {
  let left = ms;
  let since = performance.now();
  let cleared = false;
  let paused = 0;
  let timer: NodeJS.Timeout | undefined = setTimeout(onExpire, left);
  return {
    pause() {
      if (!timer) return;
      clearTimeout(timer);
      timer = undefined;
      const now = performance.now();
      left -= now - since;
      since = now;
    },
    resume() {
      if (timer || cleared) return;
      const now = performance.now();
      paused += now - since;
      since = now;
      timer = setTimeout(onExpire, Math.max(0, left));
    },
    pausedMs: () => paused,
    clear() {
      cleared = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
