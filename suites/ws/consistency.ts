/**
 * Cross-channel consistency: a push and a REST /v1/price read of the same pair, taken close
 * together, describe the same instrument (spec: Price record; WebSocket push data frame).
 */
import type { Check, CheckContext } from '../../src/check.ts';
import { PATHS, QUERY, STATUS } from '../../src/spec.ts';
import type { RestExchange } from '../../src/transports/rest.ts';
import type { JsonObject, StreamSession } from '../../src/transports/stream.ts';
import { needLivePairs, streamPairs, subscribeOk } from './pair-choice.ts';
import { awaitPushes, noPushes } from './pushes.ts';
import { openSession, pause } from './sessions.ts';
import { Decimal } from 'decimal.js';
import { places, priceProblems, relativeGap } from './rules.ts';

/** Largest relative gap between a push price and the REST price read right after it (1 %). */
export const PRICE_BAND = 0.01;
/** Live pairs rest-agrees chooses from. */
const CANDIDATES = 3;
/** Units of its last decimal place a compared price must hold: a move of a few units then stays far inside the band. */
const MIN_UNITS = 10_000;

/** How many units of its last significant decimal place a decimal string holds (0 when it is none). */
function unitsOf(value: unknown): number {
  if (places(value) === undefined) return 0;
  // decimalPlaces() leaves trailing zeros out: a price padded to 8 places is priced in its real unit.
  const d = new Decimal(value as string);
  return d.abs().toNumber() * 10 ** d.decimalPlaces();
}

/** REST reads rest-agrees makes at most for a live price (not a delayed one). */
const LIVE_READS = 4;

/**
 * A REST read of `pair` that answers with a live price (HTTP 200, status_number 200), and the
 * stream's price as of that answer: the latest push received before it. A 50102 may carry a
 * delayed price (spec: 50102, "may not reflect real-time conditions"), which is no measure of the
 * stream; it is recorded and read again, up to LIVE_READS times.
 */
async function liveRead(
  ctx: CheckContext,
  session: StreamSession,
  pair: string,
): Promise<{ res: RestExchange; push: JsonObject; gapMs: number } | undefined> {
  for (let n = 1; n <= LIVE_READS; n++) {
    const res = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: pair } });
    const answered = ctx.stream.now();
    const status = (res.json as { status_number?: unknown } | undefined)?.status_number;
    const push = session
      .pushes({ pair })
      .filter((p) => p.atMs <= answered)
      .at(-1);
    if (res.status === 200 && String(status) === STATUS.OK && push)
      return { res, push: push.value, gapMs: Math.round(answered - push.atMs) };
    ctx.observe(
      `rest-read-${n}`,
      { http: res.status, status_number: status ?? null },
      'not a live price: not compared',
    );
    await pause(ctx.waits.inFlightMs, ctx);
  }
  return undefined;
}

/** Pairs sampled per asset type by the market-live observation. */
const LIVE_SAMPLE = 2;

export const consistencyChecks: readonly Check[] = [
  {
    id: 'ws.consistency.rest-agrees',
    enforces: [
      'rule:resources:price-agrees-across-transports',
      'field:price:code',
      'rule:service:decimal-strings',
      'field:push:price',
    ],
    clause: {
      section: 'Resources and their fields',
      rule: 'the push frame and the price record carry the same code, ask, bid and price (decimal strings)',
    },
    title:
      `subscribes to up to ${CANDIDATES} live pairs, takes the latest push of the most ` +
      `finely priced one and then reads GET /v1/price for it`,
    expectation:
      `same code; bid <= price <= ask in both; prices within ${PRICE_BAND * 100} % of each ` +
      `other, compared as decimals (each channel may print its own number of places)`,
    severity: 'must',
    tags: ['ws', 'rest', 'consistency', 'price'],
    needs: ['ws'],
    async run(ctx) {
      const session = await openSession(ctx);
      const candidates = await subscribeOk(ctx, session, await needLivePairs(ctx, CANDIDATES, 1), 'conform-sub', {
        live: true,
      });
      await Promise.all(candidates.map((p) => awaitPushes(session, p, 1, 0, ctx.waits.pushMs)));
      // The price may move between the push and the REST read, by a few units of its last place:
      // only a pair priced in many such units keeps that move inside the band.
      const fine = candidates
        .map((p) => ({ p, units: unitsOf(session.pushes({ pair: p }).at(-1)?.value.price) }))
        .sort((x, y) => y.units - x.units)[0]!;
      if (fine.units === 0) noPushes(ctx, `subscribed to ${candidates.join(', ')}`);
      if (fine.units < MIN_UNITS)
        ctx.skip(
          `no live pair is priced in ${MIN_UNITS} or more units of its last decimal ` +
            `place (best: ${fine.p}, ${fine.units}), so a move between the push and the ` +
            `REST read could leave the ${PRICE_BAND * 100} % band`,
        );
      const pair = fine.p;
      const read = await liveRead(ctx, session, pair);
      if (!read)
        return ctx.skip(
          `REST answered ${pair} with no live price (HTTP 200, status_number "${STATUS.OK}") in ` +
            `${LIVE_READS} reads: a delayed or stale price (${STATUS.PRICE_STALE}) may stand far from the ` +
            "stream's, so there is nothing to compare",
        );
      const { res, push } = read;
      const record = (res.json as { data?: Record<string, unknown> } | undefined)?.data;
      if (!record || typeof record !== 'object')
        return ctx.fail({
          received: `REST ${PATHS.price} for ${pair}: ${res.text.slice(0, 200)}`,
          expected: 'a price record to compare with the push',
        });
      if (record.code !== push.code)
        ctx.violation({
          received: `push code ${JSON.stringify(push.code)}, REST code ${JSON.stringify(record.code)}`,
          expected: 'the same pair code',
        });
      // How many places each channel prints is not shown (trailing zeros trimmed on one, padded on
      // the other both conform): the places are recorded, the values compared as decimals.
      ctx.observe(
        'places',
        Object.fromEntries(
          (['ask', 'bid', 'price'] as const).map((f) => [
            f,
            { push: places(push[f]) ?? null, rest: places(record[f]) ?? null },
          ]),
        ),
      );
      for (const field of ['ask', 'bid', 'price'] as const) {
        const gap = relativeGap(push[field], record[field]);
        if (gap !== undefined && gap > PRICE_BAND)
          ctx.violation({
            received:
              `${field}: push ${String(push[field])}, REST ${String(record[field])} ` +
              `(${(gap * 100).toFixed(2)} % apart)`,
            expected: `within ${PRICE_BAND * 100} %`,
          });
      }
      for (const [channel, frame] of [
        ['push', push],
        ['REST', record],
      ] as const) {
        // The mid-price of each channel is its owner's rule (ws.push.mid, rest.price.mid): cited here.
        for (const why of priceProblems(frame))
          ctx.violation({
            received: `${channel}: ${why}`,
            expected: 'bid <= price <= ask: the mid-price lies within the spread',
            ...(channel === 'push' ? { rule: 'field:push:price' } : { rule: 'field:price:price', channel: 'rest' }),
          });
      }
      ctx.observe('rest-status', (res.json as { status_number?: unknown } | undefined)?.status_number);
      ctx.observe('push-before-rest-ms', read.gapMs, 'from the push compared to the REST answer');
    },
  },
  {
    id: 'ws.consistency.observe-market-live',
    enforces: ['event:push', 'rule:market-session:transitions'],
    clause: {
      section: 'Events',
      rule: 'push data frames come when price data is available; whether closed markets push: not shown',
    },
    title:
      `subscribes to up to ${LIVE_SAMPLE} pairs of each asset type and compares ` +
      `their pushes with REST market.open`,
    expectation: 'recorded: per pair, market.open and reason from REST, and whether pushes arrived',
    severity: 'observe',
    tags: ['ws', 'rest', 'consistency', 'push'],
    needs: ['ws'],
    async run(ctx) {
      const sample = await streamPairs(ctx, 200);
      const perType = new Map<string, string[]>();
      for (const code of sample) {
        const type = code.split(':')[0]!;
        const list = perType.get(type) ?? [];
        if (list.length < LIVE_SAMPLE) {
          list.push(code);
          perType.set(type, list);
        }
      }
      const listed = [...perType.values()].flat();
      if (listed.length === 0) ctx.skip(`the primary key lists no pair in ${PATHS.pairs}`);
      const session = await openSession(ctx);
      const pairs = await subscribeOk(ctx, session, listed);
      const from = ctx.stream.now();
      await Promise.all(pairs.map((p) => awaitPushes(session, p, 1, from, ctx.waits.pushMs / 2)));
      for (const pair of pairs) {
        const res = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: pair } });
        const market = (res.json as { data?: { market?: { open?: unknown; reason?: unknown } } } | undefined)?.data
          ?.market;
        const pushed = session.pushes({ pair, sinceMs: from }).length;
        ctx.observe(
          `market-live:${pair}`,
          { open: market?.open, reason: market?.reason, pushes: pushed },
          market?.open === false && pushed === 0
            ? 'closed market, no pushes'
            : market?.open === true && pushed === 0
              ? 'open market but no pushes seen'
              : undefined,
        );
      }
    },
  },
];
