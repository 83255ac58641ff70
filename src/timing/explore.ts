/**
 * The explorer's times: its default budget, how long it idles, how long a sequence waits for its
 * windows to close, and how long shrinking a failure may take. The windows a step is judged by are
 * the scripted checks' own (stream-windows.ts, keep-alive.ts); nothing here is a bound on the target.
 */
import { closeWaitMs, type KeepAliveTiming } from './keep-alive.ts';
import { maxWatchMs } from './stream-windows.ts';
import type { Waits } from './waits.ts';

/** How long `conform explore` and `--explore` explore when no budget is given. */
export const EXPLORE_BUDGET_MS = 60_000;
/** Shortest budget worth a sequence: below it the explorer would judge nothing. */
export const EXPLORE_MIN_BUDGET_MS = 1000;
/** Longest budget a run takes (a bound against a typo such as --explore 60h). */
export const EXPLORE_MAX_BUDGET_MS = 24 * 60 * 60_000;

/** A short idle: a quarter of the keep-alive window, never more than this. */
const SHORT_IDLE_MAX_MS = 500;
/** A short idle between steps: long enough for a few pushes, well inside any keep-alive window. */
export const shortIdleMs = (k: KeepAliveTiming): number => Math.min(SHORT_IDLE_MAX_MS, Math.floor(k.windowMs / 4));
/** A long idle: past the window and its grace, so a connection left silent must have been closed. */
export const longIdleMs = (k: KeepAliveTiming): number => closeWaitMs(k);

/**
 * Pushes of a pair on the watching connection after which the same pair must have been pushed to a
 * connection subscribed to it: one move is no cadence, three are (stream-windows.ts, CADENCE_PUSHES).
 */
export const WATCHED_PUSHES = 3;

/**
 * Longest a request, or the end of a sequence, waits for the windows its steps opened: a pair kept
 * subscribed is judged once the watching connection saw it move after one window for frames in
 * flight and before another (the window and the watch are each at most the wait for two pushes).
 */
export const sequenceSettleMs = (w: Waits): number => 2 * maxWatchMs(w) + maxWatchMs(w);

/** Time set aside for the explorer's setup (pairs, the watching connection) in its time limit. */
export const EXPLORE_SETUP_MS = 30_000;
/**
 * Shrinking a failure may take as long as the exploration did, at least this long: each attempt runs
 * a sequence against the target again.
 */
export const SHRINK_MIN_MS = 20_000;
/** Shrinking a failure takes at most this much time: the budget, at least SHRINK_MIN_MS. */
export const shrinkBudgetMs = (budgetMs: number): number => Math.max(SHRINK_MIN_MS, budgetMs);
/** Time limit of the explorer: setup, exploration, shrinking and the confirming run. */
export const exploreTimeoutMs = (budgetMs: number, w: Waits): number =>
  EXPLORE_SETUP_MS + budgetMs + shrinkBudgetMs(budgetMs) + 2 * sequenceSettleMs(w) + w.releaseMs;

/** How often the end of a sequence judges again while it waits for its windows to close. */
export const EXPLORE_POLL_MS = 50;

/**
 * The next pause before a key's slots are probed again while shrinking a failure of its allowance:
 * twice the last, since a refused probe may itself be what keeps a slot.
 */
export const settleBackoffMs = (last: number): number => 2 * last;
