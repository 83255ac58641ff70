/**
 * Requests without `id` (spec: Method subscribe and Method unsubscribe, `id` required: no; Method
 * ping, `id` optional). A service that serves only requests carrying an id breaks the field table;
 * every other check sends one, so these send none. The id-less ping is ws.ping.pong.bare.
 */
import type { Check, CheckContext } from '../../src/check.ts';
import type { JsonObject } from '../../src/transports/stream.ts';
import { METHOD, STATUS } from '../../src/spec.ts';
import { ask, expectNotice, unsubscribe } from './notices.ts';
import { needPairs, subscribeListed, subscribeOk } from './pair-choice.ts';
import { openSession } from './sessions.ts';

/** Records whether a reply to a request without id carried one anyway (the spec shows none to echo). */
function observeId(ctx: CheckContext, notice: JsonObject, method: string): void {
  ctx.observe(
    `${method}-reply-id`,
    'id' in notice ? JSON.stringify(notice.id) : 'absent',
    `the id field of the reply to a ${method} sent without id`,
  );
}

export const idLessChecks: readonly Check[] = [
  {
    id: 'ws.subscribe.without-id',
    enforces: ['parameter:subscribe:id', 'rule:requests:id-optional', 'transition:none/subscribe'],
    catches: ['request-without-id-refused'],
    clause: { section: 'Method subscribe', rule: 'id: string, required no' },
    title: 'subscribes to one pair with a request that has no id',
    expectation: 'the subscribe succeeds: a notice with method "subscribe" and code "200", as with an id',
    severity: 'must',
    tags: ['ws', 'session'],
    needs: ['ws'],
    async run(ctx) {
      const pairs = await needPairs(ctx, 1);
      const session = await openSession(ctx);
      // Sent without id, as every replacement of a listed pair the target refuses (50104) is.
      const { notice } = await subscribeListed(ctx, session, pairs);
      observeId(ctx, notice, METHOD.subscribe);
      expectNotice(
        ctx,
        notice,
        { method: METHOD.subscribe, code: STATUS.OK, looseCode: true },
        'the reply to a subscribe without id',
      );
    },
  },
  {
    id: 'ws.unsubscribe.without-id',
    enforces: ['parameter:subscribe:id', 'rule:requests:id-optional', 'transition:subscribed/unsubscribe'],
    catches: ['request-without-id-refused'],
    clause: { section: 'Method unsubscribe', rule: 'Request: same fields as subscribe (id not required)' },
    title: 'subscribes to one pair, then unsubscribes from it with a request that has no id',
    expectation: 'the unsubscribe succeeds: a notice with method "unsubscribe" and code "200", as with an id',
    severity: 'must',
    tags: ['ws', 'session'],
    needs: ['ws'],
    async run(ctx) {
      const pairs = await needPairs(ctx, 1);
      const session = await openSession(ctx);
      const subscribed = await subscribeOk(ctx, session, pairs, 'conform-before-id-less');
      const notice = await ask(
        ctx,
        session,
        unsubscribe(subscribed),
        'the unsubscribe without id answered with code "200"',
      );
      observeId(ctx, notice, METHOD.unsubscribe);
      expectNotice(
        ctx,
        notice,
        { method: METHOD.unsubscribe, code: STATUS.OK, looseCode: true },
        'the reply to an unsubscribe without id',
      );
    },
  },
];
