/**
 * The steps of the connection budget (src/connection-budget.ts): how it waits out a 50009 for a
 * connection within the key's allowance, how it times a slot's release, and how long it may look
 * for an allowance the profile does not state. How long a 50009 is waited out in all is the run's
 * release wait (`Waits.releaseMs`).
 */

/** Pauses between attempts while a 50009 within the allowance is waited out, ms; the last repeats. */
export const RETRY_STEPS_MS = [100, 200, 400, 800, 1000] as const;
/** Pause between attempts while timing a release, ms: even steps, so the measure is within one step of the truth. */
export const RELEASE_TIMING_STEP_MS = 250;
/** Slack added to a measured release time before a slot is lent again (the target's own timers drift). */
export const RELEASE_MARGIN_MS = 50;
/** Longest the search for one key's allowance may take (a slow handshake is not waited out ten times). */
export const ALLOWANCE_SEARCH_MAX_MS = 10_000;
