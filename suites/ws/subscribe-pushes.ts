/**
 * What a subscribe starts on the stream (spec: Method subscribe, "After success the server pushes
 * data frames without further requests"; Events; States and transitions, a subscribe while
 * subscribed): pushes begin, come only for subscribed pairs, come for every pair listed, and a
 * second subscribe replaces the first.
 */
import {
  inFlightMs,
  keepAliveTiming,
  pushesStartTimeoutMs,
  unpingedWaitMs,
  stopCheckTimeoutMs,
  WAIT_DEFAULTS,
  watchMs,
  watchNote,
} from '../../src/timing/index.ts';
import type { Check } from '../../src/check.ts';
import { isPush, jsonObject, type InboundFrame } from '../../src/transports/stream.ts';
import { needLivePairs, subscribeOk } from './pair-choice.ts';
import {
  awaitPushes,
  keptPushing,
  learnCadence,
  noPushes,
  observeInFlight,
  pushTimes,
  quotesAt,
  restQuotes,
  skipIfClosed,
  stoppedPairMoved,
  unpushedMoves,
} from './pushes.ts';
import { isSilence, openSession, pause, until } from './sessions.ts';

const subscribeClause = (rule: string) => ({ section: 'Method subscribe', rule });

const byPair = (pairs: readonly string[]): string => pairs.join(', ');
/** Open pairs ws.subscribe.pushes-start subscribes to. */
const PUSH_START_PAIRS = 3;
/** Pairs ws.subscribe.pushes-every-pair lists in one subscribe. */
const EVERY_PAIR_COUNT = 3;

/** The checks of what a subscribe starts, in registry order. */
export const subscribePushChecks: readonly Check[] = [
  {
    id: 'ws.subscribe.pushes-start',
    enforces: ['transition:none/subscribe', 'event:push', 'rule:subscribe:pushes-without-requests'],
    catches: ['push-never-starts', 'push-after-ping'],
    clause: subscribeClause('After success the server pushes data frames without further requests'),
    title:
      `subscribes to up to ${PUSH_START_PAIRS} pairs whose market is open and sends nothing more, ` +
      'not even a ping, for the first-push wait (at most two thirds of the keep-alive window)',
    expectation:
      'a push frame for one of them arrives before any further request (within the first-push wait, ' +
      'timing.firstPushMs, and a push wait: pushes may come only when a price changes); when none ' +
      'does, a pair whose REST price moved over the wait fails, and prices that did not move cannot be judged',
    severity: 'must',
    tags: ['ws', 'session', 'push'],
    needs: ['ws'],
    timeoutMs: (_p, w) => pushesStartTimeoutMs(w),
    async run(ctx) {
      const live = await needLivePairs(ctx, PUSH_START_PAIRS, 1);
      // No ping: "without further requests" is the rule, and a ping is a request.
      const session = await openSession(ctx, { keepAlive: false });
      const from = ctx.stream.now();
      const pairs = await subscribeOk(ctx, session, live, 'conform-sub', { live: true });
      // Read after the notice: a service that pushes on change owes a push only for a move after the subscribe.
      const before = await restQuotes(ctx, pairs);
      const ours = (f: InboundFrame): boolean =>
        f.atMs >= from && isPush(f) && pairs.includes(jsonObject(f)!.code as string);
      // Several pairs: with pushes on change only, one pair may stay still for seconds, not all of them.
      const wait = unpingedWaitMs(ctx.waits, keepAliveTiming(ctx.profile));
      let first = await session.find(ours, wait).catch((err: unknown) => {
        if (isSilence(err)) return undefined;
        throw err;
      });
      if (!first) {
        const after = await restQuotes(ctx, pairs);
        const moved = pairs.filter(
          (p) => before.get(p) !== undefined && after.get(p) !== undefined && after.get(p) !== before.get(p),
        );
        for (const p of moved) ctx.pairLedger.moved(p);
        first = session.frames.find(ours);
        if (!first && moved.length > 0)
          return ctx.fail({
            received:
              `no push for ${byPair(pairs)} within ${Math.round(ctx.stream.now() - from)} ms of the success ` +
              `notice, with no request sent since, while the REST price of ${byPair(moved)} moved`,
            expected: 'pushes start without further requests',
          });
        if (!first)
          return ctx.skip(
            `no push for ${byPair(pairs)} within ${wait} ms, and their REST prices did not ` +
              'move over the wait: a service may push only on a change, so the silence proves nothing',
          );
      }
      ctx.observe('first-push-after-ms', Math.round(first.atMs - from));
    },
  },
  {
    id: 'ws.push.only-subscribed',
    enforces: ['field:push:code', 'transition:none/subscribe'],
    catches: ['push-unsubscribed-pair'],
    clause: { section: 'Events', rule: 'push data frames come for subscribed pairs' },
    title: 'subscribes to two pairs and watches every push',
    expectation: 'no push frame for any other pair',
    severity: 'must',
    tags: ['ws', 'push'],
    needs: ['ws'],
    async run(ctx) {
      const session = await openSession(ctx);
      const pairs = await subscribeOk(ctx, session, await needLivePairs(ctx, 2), 'conform-sub', { live: true });
      const from = ctx.stream.now();
      await awaitPushes(session, pairs[0]!, 3, from, ctx.waits.pushMs);
      await pause(ctx.waits.watchMs / 3, ctx);
      const seen = session.pushesByPair();
      if (seen.size === 0) noPushes(ctx, `subscribed to ${byPair(pairs)}`);
      const others = [...seen.keys()].filter((c) => !pairs.includes(c));
      if (others.length > 0)
        ctx.fail({
          received: `pushes for ${byPair(others)} (subscribed: ${byPair(pairs)})`,
          expected: 'pushes only for the subscribed pairs',
        });
    },
  },
  {
    id: 'ws.subscribe.pushes-every-pair',
    enforces: ['transition:none/subscribe', 'event:push'],
    catches: ['push-first-pair-only'],
    clause: {
      section: 'Events',
      rule:
        'a push data frame is sent when price data is available for a subscribed pair: ' +
        'every pair of the subscription, not only the first',
    },
    title: `subscribes to ${EVERY_PAIR_COUNT} live pairs in one request and waits for pushes of each`,
    expectation:
      `a push for every listed pair; a pair without one whose REST price moved meanwhile fails ` +
      '(given a push wait more), one whose price did not move cannot be judged',
    severity: 'must',
    tags: ['ws', 'session', 'push'],
    needs: ['ws'],
    async run(ctx) {
      const session = await openSession(ctx);
      const live = await needLivePairs(ctx, EVERY_PAIR_COUNT, 2);
      const pairs = await subscribeOk(ctx, session, live, 'conform-every-pair', { live: true });
      const from = ctx.stream.now();
      const before = await restQuotes(ctx, pairs);
      await Promise.all(pairs.map((p) => awaitPushes(session, p, 1, 0, ctx.waits.pushMs)));
      if (session.pushes().length === 0) noPushes(ctx, `subscribed to ${byPair(pairs)}`);
      const { missed, quiet } = await unpushedMoves(ctx, session, pairs, before, 0);
      ctx.note(`pushed: ${byPair(pairs.filter((p) => session.pushes({ pair: p }).length > 0))}`);
      for (const pair of missed) {
        ctx.violation({
          received:
            `no push for ${pair} within ${Math.round(ctx.stream.now() - from)} ms of ` +
            `subscribing to ${byPair(pairs)}, while its REST price moved`,
          expected: `pushes for every subscribed pair, ${pair} included`,
        });
      }
      if (missed.length === 0 && quiet.length > 0)
        ctx.skip(
          `no push for ${byPair(quiet)} ` +
            `and ${quiet.length === 1 ? 'its REST price' : 'their REST prices'} did not move within the ` +
            `wait, so whether ${quiet.length === 1 ? 'it is' : 'they are'} pushed cannot be judged`,
        );
    },
  },
  {
    id: 'ws.subscribe.replaces',
    enforces: ['transition:subscribed/subscribe', 'limit:subscriptions-per-connection'],
    catches: ['subscribe-extends', 'push-unsubscribed-pair', 'subscribe-replace-drops-kept'],
    clause: {
      section: 'States and transitions',
      rule: 'a subscribe while subscribed: subscribed to exactly the newly listed pairs; the earlier set is replaced',
    },
    title:
      'subscribes to pairs A and B, waits for two pushes of A, then subscribes to B and C: the new set ' +
      'keeps one pair of the earlier one',
    expectation:
      `after the second notice, and a window for frames in flight (four of A's push gaps, at least ` +
      `${WAIT_DEFAULTS.stopMs} ms), no push for A over three of its push gaps; pushes for C, and for B, ` +
      'still subscribed, once its REST price moves after that window',
    severity: 'must',
    tags: ['ws', 'session', 'push'],
    needs: ['ws'],
    timeoutMs: (_p, w) => stopCheckTimeoutMs(w),
    async run(ctx) {
      const session = await openSession(ctx);
      const [a, b] = (await subscribeOk(ctx, session, await needLivePairs(ctx, 2), 'conform-first', {
        live: true,
      })) as [string, string];
      // Two pushes: their gap says how long a silence of A means it stopped (the cadence is not shown).
      if (!(await awaitPushes(session, a, 2, 0, ctx.waits.cadenceMs))) noPushes(ctx, `two pushes of ${a}`);
      await learnCadence(ctx, session, [a, b]);
      // Picked again: a refused pair is left out now.
      const other = (await needLivePairs(ctx, 4, 3)).find((p) => p !== a && p !== b)!;
      await skipIfClosed(ctx, session, 'the replacing subscribe was sent');
      const [, c] = (await subscribeOk(ctx, session, [b, other], 'conform-second', { live: true })) as [string, string];
      const stopped = ctx.stream.now();
      const window = inFlightMs(ctx.waits, pushTimes(session), a);
      const cutoff = stopped + window;
      const atCutoff = quotesAt(ctx, [a, b], cutoff);
      const watch = watchMs(ctx.waits, pushTimes(session), a);
      // Pushes of C count from the cutoff on: the wait runs until then, and a push wait past it.
      const cWait = Math.max(watch, ctx.waits.pushMs);
      const cPushed = awaitPushes(session, c, 1, cutoff, cutoff - ctx.stream.now() + cWait);
      await until(ctx, cutoff + watch);
      const late = session.pushes({ pair: a, sinceMs: cutoff });
      observeInFlight(ctx, session, a, stopped, window);
      if (late.length > 0)
        ctx.violation({
          received:
            `${late.length} push(es) for ${a} more than ${window} ms after the notice replacing [${a}, ${b}] ` +
            `with [${b}, ${c}] (the window for frames in flight)`,
          expected: `the set is replaced: no pushes for ${a}`,
        });
      ctx.note(watchNote(ctx.waits, watch, a));
      // B, kept from the earlier set, must go on: once its price moves it owes a push.
      const kept = await keptPushing(ctx, session, b, await atCutoff, cutoff);
      if (kept === false)
        ctx.violation({
          received: `no push for ${b} after the subscribe to [${b}, ${c}], while its REST price moved`,
          expected: `subscribed to exactly the newly listed pairs: ${b} among them`,
        });
      if (late.length === 0) await stoppedPairMoved(ctx, session, a, await atCutoff, 'the replacing subscribe');
      // A pair may be quiet for a while when pushes come on change: C's silence is no violation,
      // but A's then proves nothing.
      if (!(await cPushed) && late.length === 0 && kept !== false)
        ctx.skip(
          `no push for ${c} within ${cWait} ms of the window for frames in flight, so A's ` +
            `silence cannot be told from a stream gone quiet (the push trigger is not shown)`,
        );
    },
  },
];
