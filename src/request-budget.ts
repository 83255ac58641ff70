/**
 * The run's REST request budget. A key's rate limit is a resource of the target that the engine
 * owns and checks borrow from, like a key's connection allowance: every paced request of a key
 * takes the key's next slot, so no check trips the limit for another, and a 50006 the harness
 * provoked is waited out and retried instead of judged.
 *
 * The spec shows no counts or windows (Limits: "REST rate limit: exists"), so a key is paced at
 * the rate its profile entry declares (`rateLimit`), and a key without one is sent at once until
 * the target throttles it: then it waits out the target's `Retry-After` (or a doubling back-off)
 * and is spaced further apart from then on.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';

/** A key's declared rate limit: `requests` per `windowMs`. */
export interface RateLimit {
  requests: number;
  windowMs: number;
}

/**
 * Pacing constants. A declared rate is used at 80 %, so arrival jitter never puts one request
 * too many into one of the target's windows; an undeclared key that was throttled is spaced at
 * least 20 ms apart, doubling on each further 50006 up to 2 s; a 50006 without `Retry-After`
 * waits 500 ms, doubling up to 8 s; a `Retry-After` beyond 30 s is waited 30 s at a time.
 */
export const PACING = {
  declaredShare: 0.8,
  firstSpacingMs: 20,
  maxSpacingMs: 2000,
  firstBackoffMs: 500,
  maxBackoffMs: 8000,
  maxRetryAfterMs: 30_000,
} as const;

interface KeyPace {
  spacingMs: number;
  nextAtMs: number;
  blockedUntilMs: number;
  backoffMs: number;
}

/** `Retry-After` in ms: delta-seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(header: string | undefined, nowMs = Date.now()): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** The shared request pace of one run, per key value. */
export class RequestBudget {
  private readonly keys = new Map<string, KeyPace>();

  /** `declared`: key value → the rate its profile entry states. */
  constructor(
    private readonly declared: ReadonlyMap<string, RateLimit> = new Map(),
    private readonly clock: () => number = () => performance.now(),
  ) {}

  private pace(key: string): KeyPace {
    let p = this.keys.get(key);
    if (!p) {
      const rate = this.declared.get(key);
      // A declared rate of zero requests cannot be paced: such a key is throttled by design (a probe of 50006).
      const spacingMs = rate && rate.requests > 0 ? rate.windowMs / (rate.requests * PACING.declaredShare) : 0;
      p = { spacingMs, nextAtMs: 0, blockedUntilMs: 0, backoffMs: PACING.firstBackoffMs };
      this.keys.set(key, p);
    }
    return p;
  }

  /** Whether the key can be paced: not a key declared at zero requests, whose every answer is a 50006 by design. */
  paces(key: string): boolean {
    return this.declared.get(key)?.requests !== 0;
  }

  /** Reserves the key's next slot and waits for it; no wait for a key never throttled and without a declared rate. */
  async take(key: string, signal?: AbortSignal): Promise<void> {
    const p = this.pace(key);
    const now = this.clock();
    const at = Math.max(now, p.nextAtMs, p.blockedUntilMs);
    p.nextAtMs = at + p.spacingMs;
    if (at > now) await sleep(at - now, undefined, signal ? { signal } : undefined);
  }

  /**
   * The target answered 50006 to a request of `key` sent at `sentAtMs`: the key's requests wait
   * `retryAfter` (or the back-off) from now and are spaced further apart. Only a request sent
   * after the last wait ended escalates: answers to requests sent before it are the same throttling.
   * Returns how long the next request of the key waits.
   */
  throttled(key: string, retryAfter: number | undefined, sentAtMs: number): number {
    const p = this.pace(key);
    const now = this.clock();
    const waitMs = Math.min(retryAfter ?? p.backoffMs, PACING.maxRetryAfterMs);
    if (sentAtMs >= p.blockedUntilMs) {
      if (retryAfter === undefined) p.backoffMs = Math.min(p.backoffMs * 2, PACING.maxBackoffMs);
      p.spacingMs = Math.min(Math.max(p.spacingMs * 2, PACING.firstSpacingMs), PACING.maxSpacingMs);
      p.blockedUntilMs = Math.max(p.blockedUntilMs, now + waitMs);
    }
    return Math.max(0, p.blockedUntilMs - now);
  }
}

/** The declared rate of every key of a profile that states one, by key value. */
export function declaredRates(
  keys: Record<string, { key: string; rateLimit?: RateLimit } | undefined>,
): Map<string, RateLimit> {
  const out = new Map<string, RateLimit>();
  for (const entry of Object.values(keys)) if (entry?.rateLimit) out.set(entry.key, entry.rateLimit);
  return out;
}
