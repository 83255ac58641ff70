/**
 * How long the run waits for the target, in one place. The spec shows no push interval, no reply
 * time and no slot release time, so every wait comes from, in order:
 *
 * 1. the profile's `timing`: what the operator states of the target (its push interval, how soon
 *    it answers, how soon it frees a slot), with the harness's margin on top;
 * 2. what the run observed: the release time the connection budget measured before the first
 *    check, and, within a session, the push gaps that session showed (`watchMs`, `inFlightMs` in
 *    stream-windows.ts). An observation only lengthens a wait: evidence that a target was fast so
 *    far is no promise that it stays fast;
 * 3. the defaults below, generous for a live service across a network.
 *
 * A target that states nothing is waited for as long as the defaults say (or longer, when it
 * showed itself slower), so stating less never makes a verdict stricter.
 */

/** What a profile may state of the target's timing (all optional; `profile.timing`). */
export interface StatedTiming {
  /** Keep-alive window; the spec's 30 s by default. */
  pingTimeoutMs?: number;
  /** Slack allowed after the window before the close; default half the window. */
  pingGraceMs?: number;
  /** How many windows the ping check holds a pinged connection open. */
  keepAliveHoldWindows?: number;
  /** Longest gap between two pushes of a subscribed pair whose price moves. */
  pushIntervalMs?: number;
  /** Longest from a subscribe's success notice to the first push (default: the push interval). */
  firstPushMs?: number;
  /** Longest the target takes to answer a request with a notice (or a ping with its pong). */
  noticeMs?: number;
  /** Longest from a connection's close until its slot of the key's allowance is free again. */
  slotReleaseMs?: number;
  /**
   * Longest from the notice of an unsubscribe or a replacing subscribe until the dropped pairs'
   * pushes stop (default: 1.5 s or four push gaps, whichever is longer; the spec states that pushes
   * stop, not how fast).
   */
  stopMs?: number;
  /**
   * Longest the run waits out a 50009 for a connection within the key's allowance when the target
   * states no release time (`--slot-release-wait` sets it too): the spec states none, so the
   * run waits rather than blame the target; default 30 s.
   */
  slotReleaseWaitMs?: number;
}

/** The waits a run uses, ms. */
export interface Waits {
  /** For a notice answering a request. */
  noticeMs: number;
  /** For the first push of any of several open pairs after a subscribe. */
  firstPushMs: number;
  /** For the next push of one subscribed pair. */
  pushMs: number;
  /** For two pushes of a pair, whose gap says its cadence. */
  cadenceMs: number;
  /**
   * How long a 50009 for a connection within the allowance is waited out (a slot closed a moment
   * ago). The check's time limit pauses meanwhile: the wait is the target's pace, not the check's.
   */
  releaseMs: number;
  /** After a failed subscribe, frames of the earlier pairs already sent may still arrive this long. */
  inFlightMs: number;
  /**
   * After a replacing subscribe or an unsubscribe notice, the dropped pairs may still be pushed this
   * long (or four push gaps, when longer): frames in flight, and a fan-out that learns of the drop late.
   */
  stopMs: number;
  /** How long a check watches the pushes of a subscription. */
  watchMs: number;
  /** How long after the in-flight allowance a check keeps watching for pushes that should have stopped. */
  settleMs: number;
}

/** The waits for a target that states nothing and has shown nothing yet. */
export const WAIT_DEFAULTS: Readonly<Waits> = Object.freeze({
  noticeMs: 5000,
  firstPushMs: 15_000,
  pushMs: 5000,
  cadenceMs: 10_000,
  releaseMs: 30_000,
  inFlightMs: 250,
  stopMs: 1500,
  watchMs: 1500,
  settleMs: 750,
});

/**
 * The harness's margin over a stated or observed time: twice it, plus a second for the network and
 * the timers of a busy client. A stated figure is the target's promise, not a bound it meets to the
 * millisecond.
 */
export const margin = (ms: number): number => Math.ceil(2 * ms + 1000);

/** What the run has observed of the target so far. */
export interface ObservedTiming {
  /** How long the target took to free a closed connection's slot, as the connection budget measured it. */
  slotReleaseMs?: number;
}

/** The waits for a target: stated, else observed (lengthening only), else the defaults. */
export function waitsFor(profile: { readonly timing?: StatedTiming }, observed: ObservedTiming = {}): Waits {
  const t = profile.timing ?? {};
  const interval = t.pushIntervalMs;
  const stated: Partial<Waits> = {
    ...(t.noticeMs === undefined ? {} : { noticeMs: margin(t.noticeMs) }),
    ...(interval === undefined ? {} : { pushMs: margin(interval), cadenceMs: margin(2 * interval) }),
    ...((t.firstPushMs ?? interval) === undefined ? {} : { firstPushMs: margin((t.firstPushMs ?? interval)!) }),
    ...(t.slotReleaseMs === undefined ? {} : { releaseMs: margin(t.slotReleaseMs) }),
    ...(t.stopMs === undefined ? {} : { stopMs: margin(t.stopMs) }),
  };
  const bound = t.slotReleaseWaitMs ?? WAIT_DEFAULTS.releaseMs;
  const w: Waits = { ...WAIT_DEFAULTS, releaseMs: bound, ...stated };
  // A measured release lengthens the wait, but never past the bound the operator set.
  if (observed.slotReleaseMs !== undefined)
    w.releaseMs = Math.max(w.releaseMs, Math.min(bound, margin(observed.slotReleaseMs)));
  return w;
}

/**
 * How much longer than the defaults the run waits (at least 1): a target that states a slower
 * cadence or a slower reply stretches the per-check timeout by as much, so a check that waits as
 * the statement asks is not cut off by a timeout sized for the defaults. The release wait is not
 * among them: the time limit pauses while a slot is waited for.
 */
export function waitStretch(w: Waits): number {
  const keys = ['noticeMs', 'firstPushMs', 'pushMs', 'cadenceMs'] as const;
  return Math.max(1, ...keys.map((k) => w[k] / WAIT_DEFAULTS[k]));
}

/**
 * The run's timing: the profile's statement and what the run measured. The runner makes it and
 * hands it to the connection budget, which reports the release time it measures, and to every
 * check's context, which reads the waits as the check starts.
 */
export class RunTiming {
  private readonly observed: ObservedTiming = {};
  private slowest = 0;

  constructor(private readonly profile: { readonly timing?: StatedTiming }) {}

  /** The waits as of now. */
  get waits(): Waits {
    return waitsFor(this.profile, this.observed);
  }

  /** The connection budget measured how long the target takes to free a slot. */
  observeSlotRelease(ms: number): void {
    this.observed.slotReleaseMs = Math.max(this.observed.slotReleaseMs ?? 0, ms);
  }

  /** A check's REST request was answered after `ms`. */
  observeRestAnswer(ms: number): void {
    this.slowest = Math.max(this.slowest, ms);
  }

  /** The slowest REST answer of the run's checks so far, ms (0 before the first). */
  get slowestRestAnswerMs(): number {
    return this.slowest;
  }
}
