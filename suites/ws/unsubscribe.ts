/** Method unsubscribe (spec: Method unsubscribe; Subscription on one WebSocket connection). */
import {
  inFlightMs,
  stopCheckTimeoutMs,
  unsubscribeManyTimeoutMs,
  WAIT_DEFAULTS,
  watchMs,
  watchNote,
} from '../../src/timing/index.ts';
import type { Check } from '../../src/check.ts';
import { METHOD, STATUS, TEXT } from '../../src/spec.ts';
import { ask, expectNotice, unsubscribe } from './notices.ts';
import { needLivePairs, needPairs, subscribeOk, UNKNOWN_PAIR } from './pair-choice.ts';
import {
  awaitPushes,
  keptPushing,
  skipIfClosed,
  learnCadence,
  movedWithin,
  noPushes,
  observeInFlight,
  pushTimes,
  quotesAt,
  stoppedPairMoved,
} from './pushes.ts';
import { openSession, until } from './sessions.ts';

const clause = (rule: string) => ({ section: 'Method unsubscribe', rule });

export const unsubscribeChecks: readonly Check[] = [
  {
    id: 'ws.unsubscribe.notice',
    enforces: [
      'rule:unsubscribe:success-reply',
      'event:notice-unsubscribe',
      'notice:200',
      'transition:subscribed/unsubscribe',
      'field:notice:method',
      'field:notice:message',
    ],
    catches: ['notice-code-number', 'unsubscribe-message-capitalized'],
    clause: clause('Success reply: method unsubscribe, message success, code 200'),
    title: 'subscribes to two pairs, then unsubscribes from one',
    expectation: '{method "unsubscribe", message "success", code "200" (a string)}',
    severity: 'must',
    tags: ['ws', 'session'],
    needs: ['ws'],
    async run(ctx) {
      const session = await openSession(ctx);
      const pairs = await subscribeOk(ctx, session, await needPairs(ctx, 2));
      const notice = await ask(
        ctx,
        session,
        unsubscribe([pairs[0]], 'conform-unsub'),
        'the unsubscribe success notice',
      );
      expectNotice(
        ctx,
        notice,
        { method: METHOD.unsubscribe, message: TEXT.unsubscribeSuccess, code: STATUS.OK },
        'the unsubscribe notice',
      );
    },
  },
  {
    id: 'ws.unsubscribe.stops',
    enforces: ['transition:subscribed/unsubscribe'],
    catches: ['unsubscribe-keeps-pushing', 'push-unsubscribed-pair', 'unsubscribe-stops-all'],
    clause: {
      section: 'States and transitions',
      rule: 'unsubscribe while subscribed: pushes for the listed pairs stop (and only for them)',
    },
    title: 'subscribes to pairs A and B, waits for two pushes of each, unsubscribes from A',
    expectation:
      `after the notice, and a window for frames in flight (four of A's push gaps, at least ` +
      `${WAIT_DEFAULTS.stopMs} ms), no push for A over three of its push gaps, while B is still pushed ` +
      '(once its REST price moves after that window, when pushes come only on change)',
    severity: 'must',
    tags: ['ws', 'session', 'push'],
    needs: ['ws'],
    timeoutMs: (_p, w) => stopCheckTimeoutMs(w),
    async run(ctx) {
      const session = await openSession(ctx);
      const [a, b] = (await subscribeOk(ctx, session, await needLivePairs(ctx, 2), 'conform-sub', {
        live: true,
      })) as [string, string];
      // Two pushes each: their gap says how long a silence of A means it stopped (the cadence is not shown).
      const both = await Promise.all([
        awaitPushes(session, a, 2, 0, ctx.waits.cadenceMs),
        awaitPushes(session, b, 2, 0, ctx.waits.cadenceMs),
      ]);
      if (!both.every(Boolean)) noPushes(ctx, `two pushes of each of ${[a, b].join(' and ')}`);
      await learnCadence(ctx, session, [a, b]);
      await skipIfClosed(ctx, session, 'the unsubscribe was sent');
      const notice = await ask(ctx, session, unsubscribe([a], 'conform-stop'), 'the unsubscribe notice');
      if (String(notice.code) !== STATUS.OK)
        ctx.fail({
          received: `unsubscribe answered ${JSON.stringify(notice)}`,
          expected: 'the unsubscribe succeeds (code "200")',
        });
      const stopped = ctx.stream.now();
      const window = inFlightMs(ctx.waits, pushTimes(session), a);
      const cutoff = stopped + window;
      const atCutoff = quotesAt(ctx, [a, b], cutoff);
      const watch = watchMs(ctx.waits, pushTimes(session), a);
      await until(ctx, cutoff + watch);
      const late = session.pushes({ pair: a, sinceMs: cutoff });
      observeInFlight(ctx, session, a, stopped, window);
      const after = `more than ${window} ms after its unsubscribe notice (the window for frames in flight)`;
      if (late.length > 0)
        ctx.fail({
          received: `${late.length} push(es) for ${a} ${after}`,
          expected: `pushes for ${a} stop`,
        });
      ctx.note(watchNote(ctx.waits, watch, a));
      await stoppedPairMoved(ctx, session, a, await atCutoff, 'the unsubscribe');
      // B, still subscribed, must go on; its silence alone proves nothing (pushes may come only on
      // change), but not once its REST price moved. Nor would A's silence prove anything then.
      const kept = await keptPushing(ctx, session, b, await atCutoff, cutoff);
      if (kept === false)
        ctx.fail({
          received: `no push for ${b} after the unsubscribe from ${a} alone, while the REST price of ${b} moved`,
          expected: `pushes stop only for the listed pairs: ${b}, still subscribed, goes on`,
        });
      if (kept === undefined)
        ctx.skip(
          `no push for ${b} (still subscribed) after the unsubscribe, and its REST price did not move ` +
            `either, so A's silence proves nothing (the push trigger is not shown)`,
        );
    },
  },
  {
    id: 'ws.unsubscribe.stops-several',
    enforces: ['transition:subscribed/unsubscribe'],
    // It keeps one pair subscribed and holds its pushes to its REST price: a service that stops all meets it.
    catches: [
      'unsubscribe-keeps-pushing',
      'unsubscribe-first-pair-only',
      'push-unsubscribed-pair',
      'unsubscribe-stops-all',
    ],
    clause: {
      section: 'States and transitions',
      rule: 'unsubscribe while subscribed: pushes for the listed pairs stop (every listed pair)',
    },
    title: 'subscribes to pairs A, B and C, waits for pushes of all three, unsubscribes from A and B in one request',
    expectation:
      `after the notice, and a window for frames in flight (four of their push gaps, at least ` +
      `${WAIT_DEFAULTS.stopMs} ms), no push for A or B, even once their REST prices move, while ` +
      'pushes for C go on (a pair whose REST price does not move is not judged)',
    severity: 'must',
    tags: ['ws', 'session', 'push'],
    needs: ['ws'],
    timeoutMs: (_p, w) => unsubscribeManyTimeoutMs(w),
    async run(ctx) {
      const session = await openSession(ctx);
      const [a, b, c] = (await subscribeOk(ctx, session, await needLivePairs(ctx, 3), 'conform-sub', {
        live: true,
      })) as [string, string, string];
      const all = await Promise.all([a, b, c].map((p) => awaitPushes(session, p, 1, 0, ctx.waits.pushMs)));
      if (!all.every(Boolean)) noPushes(ctx, `subscribed to ${[a, b, c].filter((_, i) => !all[i]).join(', ')}`);
      await learnCadence(ctx, session, [a, b, c]);
      await skipIfClosed(ctx, session, 'the unsubscribe was sent');
      const notice = await ask(ctx, session, unsubscribe([a, b], 'conform-stop-several'), 'the unsubscribe notice');
      if (String(notice.code) !== STATUS.OK)
        ctx.fail({
          received: `unsubscribe from ${a}, ${b} answered ${JSON.stringify(notice)}`,
          expected: 'the unsubscribe succeeds (code "200")',
        });
      const window = Math.max(
        inFlightMs(ctx.waits, pushTimes(session), a),
        inFlightMs(ctx.waits, pushTimes(session), b),
      );
      const cutoff = ctx.stream.now() + window;
      const atCutoff = quotesAt(ctx, [a, b, c], cutoff);
      // Two watches side by side, each as long as it was: C's pushes, and the settle wait, go on
      // while A's and B's prices are watched from the cutoff. On-change pushes show a pair still
      // subscribed only after its price moves: wait for the move, then a push wait for a push.
      const [moved] = await Promise.all([
        (async () => {
          const m = await movedWithin(ctx, [a, b], await atCutoff, ctx.waits.pushMs);
          if (m.length > 0) await Promise.race(m.map((p) => awaitPushes(session, p, 1, cutoff, ctx.waits.pushMs)));
          return m;
        })(),
        (async () => {
          await awaitPushes(session, c, 3, cutoff, cutoff - ctx.stream.now() + ctx.waits.pushMs);
          await until(ctx, cutoff + ctx.waits.settleMs);
        })(),
      ]);
      // A connection the target closed (its keep-alive, say) stops every push: silence after that
      // says nothing of the unsubscribe, only pushes that came before it do.
      const closed = session.isOpen ? null : await session.closed;
      let judged = 0;
      for (const stopped of [a, b]) {
        const late = session.pushes({ pair: stopped, sinceMs: cutoff });
        if (late.length > 0)
          ctx.violation({
            received:
              `${late.length} push(es) for ${stopped} more than ${window} ms after the notice of an ` +
              `unsubscribe listing ${a} and ${b} (the window for frames in flight)`,
            expected: `pushes stop for every listed pair, ${stopped} included`,
          });
        if (late.length > 0 || (moved.includes(stopped) && !closed)) judged++;
        else if (!closed)
          ctx.note(
            `${stopped}: no push after the unsubscribe, but its REST price did not move ` +
              `within ${ctx.waits.pushMs} ms either, so its stop is not proven`,
          );
      }
      if (closed)
        ctx.skip(
          `the target closed the connection (code ${closed.code}) before the watch ended: the pushes ` +
            'that stopped with it prove nothing of the unsubscribe',
        );
      // C goes on: once its REST price moves it owes a push, however quiet it was.
      const kept = await keptPushing(ctx, session, c, await atCutoff, cutoff);
      if (kept === false)
        ctx.violation({
          received: `no push for ${c} after unsubscribing ${a} and ${b}, while its REST price moved`,
          expected: `pushes for ${c}, still subscribed, go on`,
        });
      if (kept === undefined)
        ctx.note(
          `no push for ${c} after the unsubscribe and its REST price did not move: whether it goes on is not judged`,
        );
      if (judged === 0 && kept !== false)
        ctx.skip(
          `neither ${a} nor ${b} moved on REST after the unsubscribe, so whether ` +
            `their pushes stopped cannot be told from quiet`,
        );
    },
  },
  {
    id: 'ws.unsubscribe.observe-not-subscribed',
    enforces: ['event:notice-unsubscribe', 'rule:unsubscribe:success-reply'],
    clause: clause('Behavior for pairs that are not currently subscribed: not shown'),
    title: 'subscribes to one pair, then unsubscribes from another known pair and from an unknown pair',
    expectation: 'recorded: the notices the target answers with',
    severity: 'observe',
    tags: ['ws', 'session'],
    needs: ['ws'],
    async run(ctx) {
      const listed = await needPairs(ctx, 3);
      const session = await openSession(ctx);
      const [subscribed] = (await subscribeOk(ctx, session, [listed[0]!])) as [string];
      const other = listed.find((p) => p !== subscribed && !ctx.pairLedger.isRefused(p));
      if (!other) ctx.skip('no second listed pair left to unsubscribe from');
      ctx.observe(
        'known-pair-never-subscribed',
        await ask(ctx, session, unsubscribe([other], 'conform-not-sub'), 'a notice'),
      );
      ctx.observe(
        'unknown-pair',
        await ask(ctx, session, unsubscribe([UNKNOWN_PAIR], 'conform-unknown-unsub'), 'a notice'),
      );
    },
  },
];
