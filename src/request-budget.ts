/**
 * The run's REST request budget. A key's rate limit is a resource of the target that the engine
 * owns and checks borrow from, like a key's connection allowance: every paced request of a key
 * takes the key's next slot, so no check trips the limit for another, and a 50006 the harness
 * provoked is waited out and retried instead of judged.
 *
 * The spec shows no counts or windows (Limits: "REST rate limit: exists"), so a key is paced at
 * the rate its profile entry declares (`rateLimit`), else at the rate the target advertises in an
 * IETF `RateLimit-Policy` header, and a key with neither is sent at once until the target
 * throttles it: then it waits out the target's `Retry-After` (or a doubling back-off) and is
 * spaced further apart from then on. A `RateLimit` header that says the quota is spent holds the
 * key's requests until it resets, before the target has to refuse one.
 *
 * A wait is honoured however long the target asks (a per-minute limit answers `Retry-After: 60`),
 * up to a bound on the run's whole time spent waiting on the limit, which the user sets. Waiting
 * is the run's, not a check's: the budget tells who waits, so the check's time limit stops meanwhile.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { ThrottledError } from './errors.ts';
import { PACING } from './timing/index.ts';

/** A key's declared rate limit: `requests` per `windowMs`. */
export interface RateLimit {
  requests: number;
  windowMs: number;
}

/** Who hears a request's wait on the limit: the runner stops the waiting check's time limit. */
export type WaitListener = (waiting: boolean) => void;

interface KeyPace {
  spacingMs: number;
  /** Whether the spacing is the profile's declaration (a header never overrides it). */
  declared: boolean;
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

/** A member's parameters of a structured-field list (`"default";q=10;w=60, …`), lower-cased names. */
function members(header: string | undefined): Map<string, string>[] {
  if (!header) return [];
  return header.split(',').map((member) => {
    const params = new Map<string, string>();
    const [item, ...rest] = member.split(';').map((p) => p.trim());
    // An older draft wrote the quota as the bare item (`10;w=1`).
    if (item && /^\d+$/.test(item)) params.set('q', item);
    for (const p of item?.includes('=') ? [item, ...rest] : rest) {
      const at = p.indexOf('=');
      if (at > 0)
        params.set(
          p.slice(0, at).trim().toLowerCase(),
          p
            .slice(at + 1)
            .trim()
            .replace(/^"|"$/g, ''),
        );
    }
    return params;
  });
}

const whole = (v: string | undefined): number | undefined =>
  v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;

/**
 * What an answer's IETF rate-limit headers say (draft-ietf-httpapi-ratelimit-headers): the
 * tightest policy (`RateLimit-Policy`: `q` requests per `w` seconds) and, when a quota is spent
 * (`RateLimit`: `r=0`, or the older `RateLimit-Remaining: 0`), how long until it resets (`t`, or
 * `RateLimit-Reset`), ms. Absent or unreadable headers say nothing.
 */
export function rateLimitHeaders(headers: Readonly<Record<string, string>>): { policy?: RateLimit; resetMs?: number } {
  const out: { policy?: RateLimit; resetMs?: number } = {};
  for (const m of members(headers['ratelimit-policy'])) {
    const q = whole(m.get('q'));
    const w = whole(m.get('w')) ?? 1;
    if (q === undefined || q === 0 || w === 0) continue;
    const rate = { requests: q, windowMs: w * 1000 };
    if (!out.policy || rate.windowMs / rate.requests > out.policy.windowMs / out.policy.requests) out.policy = rate;
  }
  const spent: number[] = [];
  // An older draft wrote one dictionary (`limit=10, remaining=0, reset=7`): its members read as one.
  const current = members(headers.ratelimit);
  const older = new Map(current.flatMap((m) => [...m]));
  for (const m of current.some((m) => m.has('r')) ? current : [older]) {
    const r = whole(m.get('r') ?? m.get('remaining'));
    const t = whole(m.get('t') ?? m.get('reset'));
    if (r === 0 && t !== undefined) spent.push(t * 1000);
  }
  const legacyReset = whole(headers['ratelimit-reset']);
  if (whole(headers['ratelimit-remaining']) === 0 && legacyReset !== undefined) spent.push(legacyReset * 1000);
  if (spent.length > 0) out.resetMs = Math.max(...spent);
  return out;
}

/** The shared request pace of one run, per key value. */
export class RequestBudget {
  private readonly keys = new Map<string, KeyPace>();
  private readonly declared: ReadonlyMap<string, RateLimit>;
  private readonly clock: () => number;
  /** The run's bound on its time spent waiting on the limit, ms. */
  readonly maxWaitMs: number;
  private waiters = 0;
  private waitingSince = 0;
  private waitedMs = 0;

  /** `declared`: key value → the rate its profile entry states; `maxWaitMs`: the run's bound on waiting. */
  constructor(
    declared: ReadonlyMap<string, RateLimit> = new Map(),
    options: { maxWaitMs?: number; clock?: () => number } = {},
  ) {
    this.declared = declared;
    this.clock = options.clock ?? (() => performance.now());
    this.maxWaitMs = options.maxWaitMs ?? PACING.maxRunWaitMs;
  }

  /** The run's time so far during which at least one request waited on the limit, ms. */
  waited(): number {
    return this.waitedMs + (this.waiters > 0 ? this.clock() - this.waitingSince : 0);
  }

  /**
   * Waits on the limit until `untilMs` (the clock's time), counted as the run's waiting and told to
   * `onWait`; refuses a wait past the run's bound. A timer may fire a moment early: the wait ends
   * only once the clock has reached `untilMs`, so a request sent after it counts as sent after the block.
   */
  private async wait(
    untilMs: number,
    signal: AbortSignal | undefined,
    onWait: WaitListener | undefined,
  ): Promise<void> {
    const ms = untilMs - this.clock();
    if (ms <= 0) return;
    const left = this.maxWaitMs - this.waited();
    if (ms > left)
      throw new ThrottledError(
        `the rate limit asked for a wait of ${Math.ceil(ms / 1000)} s, past what is left of the run's ` +
          `${Math.round(this.maxWaitMs / 1000)} s bound on waiting for it (--max-rate-wait, profile maxRateWaitMs)`,
      );
    if (this.waiters++ === 0) this.waitingSince = this.clock();
    onWait?.(true);
    try {
      for (let rest = ms; rest > 0; rest = untilMs - this.clock())
        await sleep(Math.ceil(rest), undefined, signal ? { signal } : undefined);
    } finally {
      if (--this.waiters === 0) this.waitedMs += this.clock() - this.waitingSince;
      onWait?.(false);
    }
  }

  private pace(key: string): KeyPace {
    let p = this.keys.get(key);
    if (!p) {
      const rate = this.declared.get(key);
      // A declared rate of zero requests cannot be paced: such a key is throttled by design (a probe of 50006).
      const spacingMs = rate && rate.requests > 0 ? spacingOf(rate) : 0;
      p = { spacingMs, declared: rate !== undefined, nextAtMs: 0, blockedUntilMs: 0, backoffMs: PACING.firstBackoffMs };
      this.keys.set(key, p);
    }
    return p;
  }

  /** Whether the key can be paced: not a key declared at zero requests, whose every answer is a 50006 by design. */
  paces(key: string): boolean {
    return this.declared.get(key)?.requests !== 0;
  }

  /**
   * Reserves the key's next slot and waits for it; no wait for a key never throttled and without a
   * known rate. Throws ThrottledError when the wait would pass the run's bound.
   */
  async take(key: string, signal?: AbortSignal, onWait?: WaitListener): Promise<void> {
    const p = this.pace(key);
    const now = this.clock();
    const at = Math.max(now, p.nextAtMs, p.blockedUntilMs);
    p.nextAtMs = at + p.spacingMs;
    await this.wait(at, signal, onWait);
  }

  /**
   * What an answer of `key` said of the limit in IETF headers: an advertised policy paces a key
   * whose profile declares none; a spent quota holds the key's requests until it resets.
   */
  advised(key: string, headers: Readonly<Record<string, string>>): void {
    const { policy, resetMs } = rateLimitHeaders(headers);
    const p = this.pace(key);
    if (policy && !p.declared) p.spacingMs = Math.max(p.spacingMs, spacingOf(policy));
    if (resetMs !== undefined) p.blockedUntilMs = Math.max(p.blockedUntilMs, this.clock() + resetMs);
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
    const waitMs = retryAfter ?? p.backoffMs;
    if (sentAtMs >= p.blockedUntilMs) {
      if (retryAfter === undefined) p.backoffMs = Math.min(p.backoffMs * 2, PACING.maxBackoffMs);
      // A spacing already wider (a slow declared or advertised rate) is never narrowed.
      p.spacingMs = Math.max(
        p.spacingMs,
        Math.min(Math.max(p.spacingMs * 2, PACING.firstSpacingMs), PACING.maxSpacingMs),
      );
      p.blockedUntilMs = Math.max(p.blockedUntilMs, now + waitMs);
    }
    return Math.max(0, p.blockedUntilMs - now);
  }
}

/** The spacing of a rate used at its share, ms. */
const spacingOf = (rate: RateLimit): number => rate.windowMs / (rate.requests * PACING.declaredShare);

/** The declared rate of every key of a profile that states one, by key value. */
export function declaredRates(
  keys: Record<string, { key: string; rateLimit?: RateLimit } | undefined>,
): Map<string, RateLimit> {
  const out = new Map<string, RateLimit>();
  for (const entry of Object.values(keys)) if (entry?.rateLimit) out.set(entry.key, entry.rateLimit);
  return out;
}
