/**
 * The pauses and polls inside checks: how long a check gives the target before it looks again.
 * None is a bound on the target; each keeps a check from asking faster than a service may allow,
 * or gives what is already on its way time to arrive.
 */

/**
 * Pause before a subscribe is sent again with a refused pair replaced: the spec states no message
 * rate, and a service may close a connection that sends many requests in a second.
 */
export const REPLACE_GAP_MS = 250;
/** How often a check reads REST prices again while it waits for them to move. */
export const MOVE_POLL_MS = 250;
/** How long an accepted connection is given to send an unsolicited notice before the first request. */
export const UNSOLICITED_WAIT_MS = 200;

/**
 * A close by another check may reach the target this long before our side hears of it (longer on a
 * loaded machine): a limit check waits so long before it measures the key's count.
 */
export const LIMIT_SETTLE_MS = 250;
/**
 * Before a limit check measures again, the key's count must have held still this long (other
 * checks' closes drain; the freeze stops new opens).
 */
export const LIMIT_QUIET_MS = 300;
/** Longest a limit check waits for that quiet. */
export const LIMIT_QUIET_MAX_MS = 5000;
/** How often a limit check looks whether the key's count still holds still. */
export const LIMIT_QUIET_POLL_MS = 50;

/** How often the rate-limit check tries again once throttled, to see the limit lift. */
export const RATE_LIMIT_RECOVERY_POLL_MS = 250;
/** Longest the rate-limit check looks for the limit to lift, beyond what the 50006 asked to wait. */
export const RATE_LIMIT_RECOVERY_MAX_MS = 10_000;
