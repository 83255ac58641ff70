/** REST rate limiting (spec: Limits: a rate limit exists, status 50006; counts and windows not shown). */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Check } from '../../src/check.ts';
import type { RestExchange } from '../../src/transports/rest.ts';
import { retryAfterMs } from '../../src/request-budget.ts';
import { PATHS, STATUS } from '../../src/spec.ts';
import {
  RATE_LIMIT_CHECK_TIMEOUT_MS,
  RATE_LIMIT_RECOVERY_MAX_MS,
  RATE_LIMIT_RECOVERY_POLL_MS,
} from '../../src/timing/index.ts';
import { clause, restCheck, statusOf } from './support.ts';

/** Bounds of the burst: requests sent at most, and in flight at once. */
export const BURST = { maxRequests: 400, parallel: 8 } as const;

export const rateLimitChecks: readonly Check[] = [
  restCheck({
    id: 'rest.rate-limit',
    enforces: ['limit:rest-rate-limit', 'status:50006'],
    tags: ['disruptive', 'limits'],
    timeoutMs: RATE_LIMIT_CHECK_TIMEOUT_MS,
    clause: clause('Limits', 'a REST rate limit exists and answers status 50006'),
    title:
      `up to ${BURST.maxRequests} GET /v1/pairs with one key (keys.burst if the ` +
      `profile has it, else primary), ${BURST.parallel} at a time`,
    expectation: 'a 50006 answer is an error envelope (data null, message); requests succeed again after a pause',
    async run(ctx) {
      // keys.burst: a key with a small limit, so the burst stays small on a real target. Unpaced:
      // this check provokes the limit on purpose, so its 50006 answers come back to it.
      const key = ctx.profile.keys.burst?.key;
      let sent = 0;
      let throttled: RestExchange | undefined;
      const lane = async (): Promise<void> => {
        while (!throttled && sent < BURST.maxRequests && !ctx.signal.aborted) {
          sent++;
          const ex = await ctx.rest.get({ path: PATHS.pairs, key, paced: false });
          if (statusOf(ex) === STATUS.RATE_LIMITED) throttled ??= ex;
        }
      };
      await Promise.all(Array.from({ length: BURST.parallel }, lane));
      if (!throttled) return ctx.skip(`no 50006 within ${BURST.maxRequests} requests (the limit's size is not shown)`);
      ctx.observe('http-status', throttled.status, `HTTP status of 50006; the first came after ${sent} requests`);
      ctx.expectSchema('rest-error', throttled.json, 'the 50006 answer');
      // A per-minute limit asks for a minute: recovery is looked for over what the answer asks, too.
      const asked = retryAfterMs(throttled.headers['retry-after']) ?? 0;
      const recoveryMaxMs = Math.max(RATE_LIMIT_RECOVERY_MAX_MS, asked + RATE_LIMIT_RECOVERY_MAX_MS);
      ctx.extendTimeLimit?.(Math.max(0, recoveryMaxMs - RATE_LIMIT_RECOVERY_MAX_MS));
      const start = Date.now();
      while (Date.now() - start < recoveryMaxMs) {
        await sleep(RATE_LIMIT_RECOVERY_POLL_MS, undefined, { signal: ctx.signal });
        const ex = await ctx.rest.get({ path: PATHS.pairs, key, paced: false });
        if (statusOf(ex) === STATUS.OK) {
          ctx.observe('recovers', true, `200 again after ${Date.now() - start} ms`);
          return;
        }
      }
      ctx.observe('recovers', false, `still throttled after ${recoveryMaxMs} ms`);
    },
  }),
];
