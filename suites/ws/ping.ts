/** Method ping: the reply is the plain text `Pong!` (spec: Method ping; Events). */
import type { Check } from '../../src/check.ts';
import { METHOD, TEXT } from '../../src/spec.ts';
import { isPush } from '../../src/transports/stream.ts';
import { needPairs, subscribeOk } from './pair-choice.ts';
import { openSession, sendOrFail, waitFrame } from './sessions.ts';

/**
 * Ping requests from the spec's field table (`id` and `params` are both optional), and a ping on a
 * subscribed connection: a ping is answered whatever the connection's state.
 */
const PING_CASES = [
  { id: 'bare', title: 'sends {"method":"ping"}', message: { method: METHOD.ping }, subscribed: false },
  {
    id: 'with-id',
    title: 'sends a ping with an id',
    message: { id: 'ping-1', method: METHOD.ping },
    subscribed: false,
  },
  {
    id: 'with-params',
    title: 'sends a ping with an id and empty params',
    message: { id: 'ping-2', method: METHOD.ping, params: {} },
    subscribed: false,
  },
  {
    id: 'subscribed',
    title: 'subscribes to a pair, then sends {"method":"ping"} while its pushes come',
    message: { method: METHOD.ping },
    subscribed: true,
  },
] as const;

export const pingChecks: readonly Check[] = PING_CASES.map(
  (c): Check => ({
    id: `ws.ping.pong.${c.id}`,
    enforces: [
      'event:pong',
      'rule:service:json-bodies',
      'rule:ping:reply',
      ...(c.id === 'bare' ? (['rule:requests:id-optional'] as const) : []),
    ],
    catches: [
      'ping-reply-json',
      'ping-reply-lowercase',
      ...(c.subscribed ? (['pong-stops-when-subscribed'] as const) : []),
    ],
    clause: { section: 'Method ping', rule: 'Reply: the plain text `Pong!`' },
    title: c.title,
    expectation: 'a text frame that is exactly `Pong!`, not JSON',
    severity: 'must',
    tags: ['ws', 'session', 'keepalive'],
    needs: ['ws'],
    async run(ctx) {
      // A subscribed connection is kept alive while it waits: any ping's reply is a Pong!, ours or not.
      const session = await openSession(ctx, { keepAlive: c.subscribed });
      if (c.subscribed) await subscribeOk(ctx, session, await needPairs(ctx, 1), 'conform-ping-sub');
      const from = ctx.stream.now();
      sendOrFail(ctx, session, c.message, 'the connection stays open to answer the ping');
      // The subscribe (if any) was answered already, so the first frame after the ping that is not a push answers it.
      const reply = await waitFrame(ctx, session, (f) => f.atMs >= from && !isPush(f), 'a reply to the ping');
      if (reply.kind !== 'text' || reply.text !== TEXT.pong) {
        ctx.fail({
          received:
            reply.kind === 'binary'
              ? `a binary frame of ${reply.bytes} bytes`
              : `${reply.kind} frame ${JSON.stringify(reply.text)}`,
          expected: `the text frame ${JSON.stringify(TEXT.pong)}`,
        });
      }
    },
  }),
);
