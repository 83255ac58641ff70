/**
 * The time limits of checks: the default a check runs under, and the limits of checks that wait
 * longer, each the waits it spends plus the headroom its own steps take. A check's limit pauses
 * while it waits for a connection slot or on the REST rate limit (src/time-limit.ts), and grows
 * with its REST answers that come slowly: those waits are the target's pace, not the check's.
 */
import { maxWatchMs } from './stream-windows.ts';
import { REPLACE_GAP_MS } from './check-pauses.ts';
import type { Waits } from './waits.ts';

/** A check's time limit unless it sets its own (`--timeout` overrides it). */
export const CHECK_TIMEOUT_MS = 15_000;

/**
 * How long each REST answer may take within a check's own time limit. The spec states no answer
 * time, and the limits here are sized for a target that answers at once: every answer that takes
 * longer lengthens its check's limit by the rest (src/answer-time.ts), so a target that answers
 * slowly (a large catalogue, a loaded host, a long way off) is waited for, not timed out.
 */
export const REST_ANSWER_ALLOWANCE_MS = 100;
/**
 * Most a check's time limit grows for slow REST answers, as a multiple of the limit it started
 * with: a target whose answers keep slowing still times out, and one that stops answering gains
 * nothing (only an answer lengthens the limit).
 */
export const SLOW_ANSWER_STRETCH_MAX = 3;

/** Headroom of a check's limit over its waits, for its REST reads, subscribes and judging. */
const STEPS_MS = 10_000;
/** The same for a check that reads the REST prices of its pairs before and after its waits. */
const LIVE_PAIR_STEPS_MS = 15_000;
/** The same for a check that subscribes to as many pairs as a request may name, replacing refused ones. */
const FULL_SUBSCRIBE_STEPS_MS = 20_000;

/** Time limit of a check that watches pushes: the wait for the first, the gathering after it, and its other steps. */
export const pushWatchTimeoutMs = (w: Waits): number => w.firstPushMs + w.pushMs + STEPS_MS;
/**
 * Time limit of the check that waits for pushes to start: the first-push wait, one push wait more
 * for a pair whose REST price moved, and its other steps.
 */
export const pushesStartTimeoutMs = (w: Waits): number => w.firstPushMs + w.pushMs + LIVE_PAIR_STEPS_MS;
/**
 * Time limit of a check that subscribes to `pairs` pairs at once: two notices, its other steps, and
 * a pause before each listed pair refused with 50104 is replaced.
 */
export const fullSubscribeTimeoutMs = (w: Waits, pairs: number): number =>
  2 * w.noticeMs + FULL_SUBSCRIBE_STEPS_MS + pairs * REPLACE_GAP_MS;
/**
 * Time limit of a check that learns a pair's cadence and then watches it stop: both waits, the
 * stop window (however fast the cadence, at least the stop wait), three push waits for a pair still
 * subscribed to show it goes on (a push, else a move of its REST price and a push after it), and the
 * rest of its steps.
 */
export const stopCheckTimeoutMs = (w: Waits): number =>
  w.cadenceMs + 4 * w.pushMs + w.stopMs + 2 * maxWatchMs(w) + STEPS_MS;

/**
 * Time limit of the check that unsubscribes from several pairs: it waits for pushes, for the
 * stopped pairs' prices to move and for pushes after that, each up to a push wait.
 */
export const unsubscribeManyTimeoutMs = (w: Waits): number => 10 * w.pushMs;
/**
 * Time limit of the check that provokes every error notice, one request at a time: a target that
 * leaves every other one unanswered costs a notice wait for each.
 */
export const errorNoticesTimeoutMs = (w: Waits): number => 8 * w.noticeMs;

/** Time limit of the REST rate-limit check: a burst of requests, then a wait for the limit to lift. */
export const RATE_LIMIT_CHECK_TIMEOUT_MS = 40_000;
/**
 * The catalogue check's time before the walk: waits on the rate limit do not count against it, and
 * each page and price read adds its share, so a catalogue of any size at any distance gets its time.
 */
export const CATALOGUE_BASE_TIMEOUT_MS = 60_000;
/** Added to a check's time limit per catalogue request, for the client's own work. */
export const PER_REQUEST_SLACK_MS = 20;
/**
 * How often a check waiting for a listing another check is reading lengthens its time limit by as
 * much: the read is the target's pace (pages behind a rate limit), not the waiting check's.
 */
export const LISTING_WAIT_STEP_MS = 1000;
