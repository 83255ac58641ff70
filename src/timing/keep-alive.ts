/**
 * The keep-alive timing (spec: Limits, "Ping interval: 30 seconds"): the target's window, the grace
 * the harness allows after it, how long the ping check holds a pinged connection, how often a
 * session kept open pings, and the margins of the keep-alive checks.
 */
import { LIMITS } from '../spec.ts';
import type { StatedTiming } from './waits.ts';

/**
 * The harness's keep-alive default where the profile sets none: a grace of half a window after it,
 * so a close up to 1.5 windows after the last ping passes (the spec says the connection "is closed
 * if no ping arrives within 30 seconds" and sets no deadline after that: an idle sweep every 10 to
 * 15 s closes between 30 and 45 s). A profile tightens the grace with `timing.pingGraceMs`.
 */
export const KEEPALIVE_DEFAULTS = { graceWindows: 0.5 } as const;
/**
 * How far past the window and its grace the ping check holds its connection by default: a server
 * that ignores pings has closed it by the window and its grace (ws.keepalive.timeout fails one that
 * closes later), and this second more lets that close reach us before the hold ends. That is all the
 * rule asks to prove; a longer hold adds only the run's length.
 */
const HOLD_PAST_GRACE_MS = 1000;

/** The target's keep-alive window, the grace after it, and how many windows the ping check holds. */
export interface KeepAliveTiming {
  windowMs: number;
  graceMs: number;
  holdWindows: number;
}

/**
 * The keep-alive timing of a target: what its profile states, else the spec's window, the default
 * grace, and a hold just past both (36 s at the spec's window, 33 s with 2 s of grace stated).
 */
export function keepAliveTiming(profile: { readonly timing?: StatedTiming }): KeepAliveTiming {
  const t = profile.timing;
  const windowMs = t?.pingTimeoutMs ?? LIMITS.pingTimeoutMs;
  const graceMs = t?.pingGraceMs ?? Math.round(windowMs * KEEPALIVE_DEFAULTS.graceWindows);
  // A hold that ends before the window and its grace could not tell a server that ignores pings
  // (closing anywhere up to window + grace) from one that resets its timer.
  const holdWindows = t?.keepAliveHoldWindows ?? (windowMs + graceMs + HOLD_PAST_GRACE_MS) / windowMs;
  return { windowMs, graceMs, holdWindows };
}

/** Shortest period a session kept open pings at, however short the target's window. */
const KEEP_OPEN_MIN_PING_MS = 50;

/** How often a session kept open under a check pings: every third of the window, never more often than 50 ms. */
export const keepOpenPingMs = (t: KeepAliveTiming): number =>
  Math.max(KEEP_OPEN_MIN_PING_MS, Math.floor(t.windowMs / 3));

/** How often the keep-alive checks send on a connection they hold: every third of the window. */
export const keepAliveSendMs = (t: KeepAliveTiming): number => t.windowMs / 3;
/** No ping of the ping check starts this close to the end of its hold, ms. */
export const LAST_PING_MARGIN_MS = 5;
/** Timer granularity allowed before the window's lower bound: Node timers may fire up to ~1 ms early. */
export const EARLY_TOLERANCE_MS = 5;
/** How long past the window and its grace a keep-alive check still waits for the target's close. */
const CLOSE_SLACK_MS = 1000;
/** Headroom of a keep-alive check's time limit over its longest wait. */
const KEEPALIVE_HEADROOM_MS = 10_000;

/** Latest a target must have closed a connection left silent, ms after it opened: the window and its grace. */
export const closeByMs = (t: KeepAliveTiming): number => t.windowMs + t.graceMs;
/** How long a keep-alive check waits for the close of a connection that sends no ping. */
export const closeWaitMs = (t: KeepAliveTiming): number => closeByMs(t) + CLOSE_SLACK_MS;
/** Time limit of a check that waits for the close of a connection that sends no ping. */
export const closeCheckTimeoutMs = (t: KeepAliveTiming): number => closeByMs(t) + KEEPALIVE_HEADROOM_MS;
/** Time limit of the ping check: its hold and the headroom. */
export const holdCheckTimeoutMs = (t: KeepAliveTiming): number => t.windowMs * t.holdWindows + KEEPALIVE_HEADROOM_MS;
