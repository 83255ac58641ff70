/**
 * The windows a stream check watches pushes for, as pure functions of the waits and of the push
 * times a session showed. The spec shows no push interval and no time within which a stopped pair's
 * frames stop arriving, so each window is measured against the cadence the session itself showed,
 * within bounds set by the waits.
 */
import type { KeepAliveTiming } from './keep-alive.ts';
import type { Waits } from './waits.ts';

/** When each push of a session arrived (stream clock, ms, in arrival order), by pair code. */
export type PushTimes = ReadonlyMap<string, readonly number[]>;

/**
 * Pushes of a pair whose gaps show its cadence: a service may push a snapshot right after the
 * subscribe, so the gap between the first two can be far shorter than the cadence.
 */
export const CADENCE_PUSHES = 3;
/** How long a check waits for a pair's third push before it measures a window against its gaps. */
export const cadenceWaitMs = (w: Waits): number => w.pushMs;

/** Longest a stop check watches for pushes that should have stopped: the wait for two pushes (ms). */
export const maxWatchMs = (w: Waits): number => w.cadenceMs;

/** The largest gap between successive push times (ms), or undefined with fewer than two. */
export function largestGap(times: readonly number[] | undefined): number | undefined {
  if (times === undefined) return undefined;
  let gap: number | undefined;
  for (let i = 1; i < times.length; i++) gap = Math.max(gap ?? 0, times[i]! - times[i - 1]!);
  return gap;
}

/** The largest gap between successive pushes of any one pair (ms), or undefined. */
function sessionGap(times: PushTimes): number | undefined {
  let gap: number | undefined;
  for (const pairTimes of times.values()) {
    const g = largestGap(pairTimes);
    if (g !== undefined) gap = Math.max(gap ?? 0, g);
  }
  return gap;
}

/** Push gaps of a pair a check watches before deciding its pushes stopped. */
const WATCH_GAPS = 3;

/**
 * How long to watch a pair that was pushing before deciding its pushes stopped: three of its
 * largest gaps so far on the session (the cadence and whether pushes come only on change are not
 * shown), at least the settle wait, at most `maxWatchMs`.
 */
export function watchMs(w: Waits, times: PushTimes, pair: string): number {
  return Math.min(
    maxWatchMs(w),
    Math.max(w.settleMs, WATCH_GAPS * (largestGap(times.get(pair)) ?? w.pushMs / WATCH_GAPS)),
  );
}

/** Push gaps of a pair during which its frames sent before the request that stopped it may still arrive. */
const IN_FLIGHT_GAPS = 4;

/**
 * How long after the notice of a replacing subscribe or an unsubscribe frames of `pair` may still
 * arrive: the spec states that pushes stop, not how fast, and a service may flush what it queued
 * before the request or take the pair out of its fan-out a moment later. Four of the largest push
 * gaps on the session (of the pair, or of any pair when larger; the wait for one push when the
 * pushes came all at once), at most the wait for two pushes, so a pair that is never stopped still
 * shows, and at least the stop wait (1.5 s unless the profile states `stopMs`) however fast the
 * cadence. A pair pushed fewer than three times shows no cadence: the wait for two pushes.
 */
export function inFlightMs(w: Waits, times: PushTimes, pair: string): number {
  const own = times.get(pair) ?? [];
  // Fewer than three pushes of the pair show no cadence (a snapshot and one change may come close
  // together): a frame queued before the request may come as late as the wait for two pushes.
  if (own.length < CADENCE_PUSHES) return Math.round(Math.max(w.stopMs, maxWatchMs(w)));
  // A pair's own gaps may all be short (a snapshot right before the first tick): the connection's
  // other pairs show the cadence too.
  const gap = Math.max(largestGap(own) ?? 0, sessionGap(times) ?? 0);
  // Pushes that all came at one instant (a burst) show no cadence either: a frame queued before the
  // request may come as late as the next push would, so the window is the wait for one push.
  const gaps = gap > 0 ? IN_FLIGHT_GAPS * gap : w.pushMs;
  // The stop wait is a floor: a fast cadence caps the push gaps, never the time a stop may take.
  return Math.round(Math.max(w.stopMs, Math.min(maxWatchMs(w), gaps)));
}

/** Share of the keep-alive window a check may leave a connection without a ping: past it, the target may close it. */
const UNPINGED_SHARE = 2 / 3;

/**
 * How long a check waits for the first push without sending anything, a ping included ("without
 * further requests"): the first-push wait and a push wait, within two thirds of the keep-alive window.
 */
export const unpingedWaitMs = (w: Waits, t: KeepAliveTiming): number =>
  Math.round(Math.min(w.firstPushMs + w.pushMs, t.windowMs * UNPINGED_SHARE));

/** The step in which the time a stopped pair took to stop is recorded, so a baseline compares steps, not jitter. */
export const STOP_RECORD_STEP_MS = 250;

/** The transcript line that says how long a stop was watched and why. */
export const watchNote = (w: Waits, watch: number, pair: string): string =>
  `watched ${watch} ms (three of ${pair}'s largest push gaps, within ${w.settleMs}..${maxWatchMs(w)} ms)`;
