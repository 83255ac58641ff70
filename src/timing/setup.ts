/**
 * The waits of a run's setup, before its first check: the preflight requests (src/preflight.ts) and
 * discovery (src/discovery.ts).
 */

/** Longest wait for the first HTTP response of a run. */
export const PREFLIGHT_TIMEOUT_MS = 10_000;

/**
 * How long discovery waits, ms: a notice, the pushes it measures, a slot being freed, and in all
 * (a target that answers slowly gets the checks' own verdict, not a discovery that never ends);
 * and the pauses while a 50009 is waited out, doubling from the first to the last.
 */
export const DISCOVERY_WAITS = {
  noticeMs: 2000,
  socketIoNoticeMs: 1000,
  pushWindowMs: 2500,
  releaseMs: 5000,
  totalMs: 30_000,
  firstRetryMs: 100,
  maxRetryMs: 1000,
} as const;

/** A push interval's order of magnitude: what a baseline compares, where the figure itself jitters. */
export function cadenceBand(ms: number): string {
  if (ms < 100) return 'under 100 ms';
  if (ms < 1000) return '100 ms to 1 s';
  if (ms < 10_000) return '1 s to 10 s';
  return '10 s or more';
}
