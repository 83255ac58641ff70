/**
 * Push data frames: their schema and prices (spec: WebSocket push data frame; What the service
 * does: prices are decimal strings), and what the spec leaves open about them.
 */
import type { Check, CheckContext } from '../../src/check.ts';
import { isPush, type Push } from '../../src/transports/stream.ts';
import { PUSH_EXPECTED } from '../../src/push-inspection.ts';
import { pushWatchTimeoutMs } from '../../src/timing/index.ts';
import { needLivePairs, subscribeOk } from './pair-choice.ts';
import { awaitPushes, noPushes } from './pushes.ts';
import { isSilence, openSession } from './sessions.ts';
import { midReading, places, priceProblems, timestampUnit } from './rules.ts';

/** Pairs a push check watches, and how many frames it wants per pair. */
const WATCH_PAIRS = 3;
const FRAMES_PER_PAIR = 5;
/** Violations listed per check before the rest is only counted. */
const MAX_LISTED = 20;

/** Subscribes to a few live pairs and returns the pushes seen within the watch. */
async function watchPushes(ctx: CheckContext, pairs: string[]): Promise<Push[]> {
  const session = await openSession(ctx);
  // In place: the caller judges the pairs subscribed, a listed pair refused with 50104 replaced.
  pairs.splice(0, pairs.length, ...(await subscribeOk(ctx, session, pairs, 'conform-watch', { live: true })));
  const from = ctx.stream.now();
  // The first push may be seconds away when pushes come only on change; then the rest gather for a while.
  const first = await session
    .find((f) => isPush(f), ctx.waits.firstPushMs)
    .catch((err: unknown) => {
      if (isSilence(err)) return undefined;
      throw err;
    });
  if (!first) noPushes(ctx, `subscribed to ${pairs.join(', ')} for ${ctx.waits.firstPushMs} ms`);
  await Promise.all(pairs.map((p) => awaitPushes(session, p, FRAMES_PER_PAIR, from, ctx.waits.pushMs)));
  return session.pushes();
}

/** Records one violation per problem, up to MAX_LISTED, then a count of the rest. */
/** Records how the pushes' prices relate to the exact mid of their ask and bid (the service's mid: never judged). */
function observeMids(ctx: CheckContext, values: readonly Record<string, unknown>[]): void {
  const counts: Record<string, number> = {};
  for (const v of values) {
    const reading = midReading(v);
    if (reading) counts[reading] = (counts[reading] ?? 0) + 1;
  }
  ctx.observe('mid', Object.keys(counts).sort(), 'pushed prices against the exact mid of ask and bid');
}

function listViolations(ctx: CheckContext, problems: string[], expected: string): void {
  for (const received of problems.slice(0, MAX_LISTED)) ctx.violation({ received, expected });
  if (problems.length > MAX_LISTED)
    ctx.violation({
      received: `${problems.length - MAX_LISTED} more frame(s) with the same kind of problem`,
      expected,
    });
}

export const pushChecks: readonly Check[] = [
  {
    id: 'ws.push.schema',
    enforces: [
      'field:push:code',
      'rule:service:decimal-strings',
      'field:push:ask',
      'field:push:bid',
      'field:push:price',
      'field:push:last_updated',
      'field:push:sent_at',
      'event:push',
    ],
    catches: ['push-missing-bid', 'push-price-number', 'push-changed-missing-bid'],
    clause: {
      section: 'Resources and their fields',
      rule:
        'WebSocket push data frame: code, ask, bid, price required, prices decimal ' +
        'strings; last_updated, sent_at integers',
    },
    title: `subscribes to ${WATCH_PAIRS} live pairs and validates every push frame`,
    expectation: 'every push matches push-frame (prices as decimal strings, timestamps integers, no status_number)',
    severity: 'must',
    tags: ['ws', 'push'],
    needs: ['ws'],
    timeoutMs: (_p, w) => pushWatchTimeoutMs(w),
    async run(ctx) {
      const pushes = await watchPushes(ctx, await needLivePairs(ctx, WATCH_PAIRS, 1));
      const problems: string[] = [];
      for (const p of pushes) {
        const result = ctx.validator.validate('push-frame', p.value);
        for (const line of result.errors) problems.push(`push ${p.text.slice(0, 200)}: ${line}`);
      }
      listViolations(ctx, problems, PUSH_EXPECTED.schema);
    },
  },
  {
    id: 'ws.push.mid',
    enforces: ['field:push:price'],
    catches: ['price-not-mid', 'price-bid-above-ask'],
    clause: {
      section: 'Resources and their fields',
      rule: 'WebSocket push data frame: ask, bid and price the mid-price, so bid <= price <= ask',
    },
    title:
      `subscribes to ${WATCH_PAIRS} live pairs and compares bid, price and ` +
      `ask of every push with decimal arithmetic`,
    expectation:
      "bid <= price <= ask (the mid-price is the service's: how it relates to the exact mid of ask and bid " +
      'is recorded)',
    severity: 'must',
    tags: ['ws', 'push', 'price'],
    needs: ['ws'],
    timeoutMs: (_p, w) => pushWatchTimeoutMs(w),
    async run(ctx) {
      const pairs = await needLivePairs(ctx, WATCH_PAIRS, 1);
      // Only frames of the subscribed pairs with decimal prices can be judged here: a stray pair is
      // ws.push.only-subscribed's rule and a malformed price ws.push.schema's.
      const comparable = (await watchPushes(ctx, pairs)).filter(
        (p) =>
          pairs.includes(p.value.code as string) &&
          places(p.value.ask) !== undefined &&
          places(p.value.bid) !== undefined &&
          places(p.value.price) !== undefined,
      );
      if (comparable.length === 0)
        ctx.skip(
          'no push of the subscribed pairs carried decimal-string ask, bid and ' +
            'price to compare (ws.push.schema judges their form)',
        );
      ctx.note(`${comparable.length} push(es) compared`);
      const problems = comparable.flatMap((p) =>
        priceProblems(p.value).map((why) => `push ${p.text.slice(0, 200)}: ${why}`),
      );
      listViolations(ctx, problems, PUSH_EXPECTED.quote);
      observeMids(
        ctx,
        comparable.map((p) => p.value),
      );
    },
  },
  {
    id: 'ws.push.observe-interval',
    enforces: ['event:push'],
    clause: { section: 'Events', rule: 'the interval and trigger of push frames: not shown' },
    title: `subscribes to ${WATCH_PAIRS} live pairs and times their pushes`,
    expectation: 'recorded: the median and largest interval between pushes of one pair',
    severity: 'observe',
    tags: ['ws', 'push'],
    needs: ['ws'],
    timeoutMs: (_p, w) => pushWatchTimeoutMs(w),
    async run(ctx) {
      const pairs = await needLivePairs(ctx, WATCH_PAIRS, 1);
      const pushes = await watchPushes(ctx, pairs);
      for (const pair of pairs) {
        const times = pushes.filter((p) => p.value.code === pair).map((p) => p.atMs);
        const gaps = times
          .slice(1)
          .map((t, i) => t - times[i]!)
          .sort((a, b) => a - b);
        if (gaps.length === 0) {
          ctx.observe(`interval-ms:${pair}`, null, `${times.length} push(es) seen, too few to time`);
          continue;
        }
        ctx.observe(`interval-ms:${pair}`, {
          median: Math.round(gaps[Math.floor(gaps.length / 2)]!),
          max: Math.round(gaps.at(-1)!),
          samples: gaps.length,
        });
      }
    },
  },
  {
    id: 'ws.push.observe-timestamps',
    enforces: ['field:push:last_updated', 'field:push:sent_at'],
    clause: {
      section: 'Resources and their fields',
      rule: 'REST envelope: unit of ts, last_updated and sent_at not shown',
    },
    title: `subscribes to ${WATCH_PAIRS} live pairs and reads last_updated and sent_at of every push`,
    expectation:
      'recorded: whether last_updated is monotonic per pair, whether sent_at >= last_updated, and the unit of both',
    severity: 'observe',
    tags: ['ws', 'push'],
    needs: ['ws'],
    timeoutMs: (_p, w) => pushWatchTimeoutMs(w),
    async run(ctx) {
      const pairs = await needLivePairs(ctx, WATCH_PAIRS, 1);
      const pushes = (await watchPushes(ctx, pairs)).filter((p) => pairs.includes(p.value.code as string));
      const last = new Map<string, number>();
      let backwards = 0;
      let sentBefore = 0;
      let both = 0;
      const units = new Set<string>();
      for (const p of pushes) {
        const { code, last_updated: lu, sent_at: sa } = p.value;
        if (typeof lu === 'number') {
          units.add(`last_updated:${timestampUnit(lu)}`);
          const prev = last.get(String(code));
          if (prev !== undefined && lu < prev) backwards++;
          last.set(String(code), lu);
        }
        if (typeof sa === 'number') units.add(`sent_at:${timestampUnit(sa)}`);
        if (typeof lu === 'number' && typeof sa === 'number') {
          both++;
          if (sa < lu) sentBefore++;
        }
      }
      ctx.observe('last-updated-monotonic', backwards === 0, `${backwards} step(s) back over ${pushes.length} pushes`);
      ctx.observe(
        'sent-at-not-before-last-updated',
        both === 0 ? null : sentBefore === 0,
        `${sentBefore} of ${both} frames with sent_at < last_updated`,
      );
      ctx.observe('timestamp-unit', [...units].sort());
    },
  },
];
