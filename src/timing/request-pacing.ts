/**
 * How the run paces REST requests within a key's rate limit (src/request-budget.ts) and how long it
 * waits on the limit.
 */

/**
 * Pacing constants. A declared rate is used at 80 %, so arrival jitter never puts one request
 * too many into one of the target's windows; an undeclared key that was throttled is spaced at
 * least 20 ms apart, doubling on each further 50006 up to 2 s; a 50006 without `Retry-After`
 * waits 500 ms, doubling up to 8 s. A run waits on the limit 10 minutes in all unless the user
 * sets another bound (`--max-rate-wait`, profile `maxRateWaitMs`).
 */
export const PACING = {
  declaredShare: 0.8,
  firstSpacingMs: 20,
  maxSpacingMs: 2000,
  firstBackoffMs: 500,
  maxBackoffMs: 8000,
  maxRunWaitMs: 10 * 60_000,
} as const;
