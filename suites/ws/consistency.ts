/**
 * Cross-channel consistency: a push and a REST /v1/price read of the same pair, taken close
 * together, describe the same instrument (spec: Price record; WebSocket push data frame).
 */
import type { Check } from '../../src/check.ts';
import { PATHS, QUERY } from '../../src/spec.ts';
import { WAIT, awaitPushes, needLivePairs, noPushes, openSession, streamPairs, subscribeOk } from './support.ts';
import { places, priceProblems, relativeGap } from './rules.ts';

/** Largest relative gap between a push price and the REST price read right after it (1 %). */
export const PRICE_BAND = 0.01;
/** Pairs sampled per asset type by the market-live observation. */
const LIVE_SAMPLE = 2;

export const consistencyChecks: readonly Check[] = [
  {
    id: 'ws.consistency.rest-agrees',
    clause: { section: 'Resources and their fields', rule: 'the push frame and the price record carry the same code, ask, bid and price (decimal strings)' },
    title: 'for a live pair, takes a push and then reads GET /v1/price for the same pair',
    expectation: `same code; bid <= price <= ask in both; prices within ${PRICE_BAND * 100} % of each other, compared as decimals (each channel may print its own number of places)`,
    severity: 'must',
    tags: ['ws', 'rest', 'consistency', 'price'],
    needs: ['ws'],
    async run(ctx) {
      const [pair] = await needLivePairs(ctx, 1) as [string];
      const session = await openSession(ctx);
      await subscribeOk(ctx, session, [pair]);
      if (!(await awaitPushes(session, pair, 1, 0, WAIT.pushMs))) noPushes(ctx, `subscribed to ${pair}`);
      const push = session.pushes({ pair }).at(-1)!.value;
      const res = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: pair } });
      const record = (res.json as { status_number?: unknown; data?: Record<string, unknown> } | undefined)?.data;
      if (!record || typeof record !== 'object') return ctx.fail({ received: `REST ${PATHS.price} for ${pair}: ${res.text.slice(0, 200)}`, expected: 'a price record to compare with the push' });
      if (record.code !== push.code) ctx.violation({ received: `push code ${JSON.stringify(push.code)}, REST code ${JSON.stringify(record.code)}`, expected: 'the same pair code' });
      // How many places each channel prints is not shown (trailing zeros trimmed on one, padded on
      // the other both conform): the places are recorded, the values compared as decimals.
      ctx.observe('places', Object.fromEntries((['ask', 'bid', 'price'] as const).map((f) => [f, { push: places(push[f]) ?? null, rest: places(record[f]) ?? null }])));
      for (const field of ['ask', 'bid', 'price'] as const) {
        const gap = relativeGap(push[field], record[field]);
        if (gap !== undefined && gap > PRICE_BAND) ctx.violation({ received: `${field}: push ${String(push[field])}, REST ${String(record[field])} (${(gap * 100).toFixed(2)} % apart)`, expected: `within ${PRICE_BAND * 100} %` });
      }
      for (const [channel, frame] of [['push', push], ['REST', record]] as const) {
        for (const why of priceProblems(frame)) ctx.violation({ received: `${channel}: ${why}`, expected: 'bid <= price <= ask, price the mid' });
      }
      ctx.observe('rest-status', (res.json as { status_number?: unknown } | undefined)?.status_number);
    },
  },
  {
    id: 'ws.consistency.observe-market-live',
    clause: { section: 'Events', rule: 'push data frames come when price data is available; whether closed markets push: not shown' },
    title: `subscribes to up to ${LIVE_SAMPLE} pairs of each asset type and compares their pushes with REST market.open`,
    expectation: 'recorded: per pair, market.open and reason from REST, and whether pushes arrived',
    severity: 'observe',
    tags: ['ws', 'rest', 'consistency', 'push'],
    needs: ['ws'],
    async run(ctx) {
      const sample = (await streamPairs(ctx, 200));
      const perType = new Map<string, string[]>();
      for (const code of sample) {
        const type = code.split(':')[0]!;
        const list = perType.get(type) ?? [];
        if (list.length < LIVE_SAMPLE) { list.push(code); perType.set(type, list); }
      }
      const pairs = [...perType.values()].flat();
      if (pairs.length === 0) ctx.skip(`the primary key lists no pair in ${PATHS.pairs}`);
      const session = await openSession(ctx);
      await subscribeOk(ctx, session, pairs);
      const from = ctx.stream.now();
      await Promise.all(pairs.map((p) => awaitPushes(session, p, 1, from, WAIT.pushMs / 2)));
      for (const pair of pairs) {
        const res = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: pair } });
        const market = (res.json as { data?: { market?: { open?: unknown; reason?: unknown } } } | undefined)?.data?.market;
        const pushed = session.pushes({ pair, sinceMs: from }).length;
        ctx.observe(`market-live:${pair}`, { open: market?.open, reason: market?.reason, pushes: pushed },
          market?.open === false && pushed === 0 ? 'closed market, no pushes' : market?.open === true && pushed === 0 ? 'open market but no pushes seen' : undefined);
      }
    },
  },
];
