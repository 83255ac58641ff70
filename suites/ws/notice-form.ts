import type { Check } from '../../src/check.ts';
import { METHOD } from '../../src/spec.ts';
import { isNotice, jsonObject, type JsonObject } from '../../src/transports/stream.ts';
import { answers, ask, subscribe, unsubscribe } from './notices.ts';
import { needPairs, subscribeListed, UNKNOWN_PAIR } from './pair-choice.ts';
import { awaitPushes, noPushes } from './pushes.ts';
import { isSilence, openSession, sendOrFail } from './sessions.ts';

const subscribeClause = (rule: string) => ({ section: 'Method subscribe', rule });

/** The frame-form checks, in registry order. */
export const noticeFormChecks: readonly Check[] = [
  {
    id: 'ws.notice.id-echo',
    enforces: ['field:notice:id', 'parameter:subscribe:id', 'rule:subscribe:unknown-pair-message'],
    catches: ['notice-id-not-echoed'],
    clause: subscribeClause('id: client identifier, echoed in the reply (success and error)'),
    title: 'sends a subscribe, a failing subscribe and an unsubscribe, each with its own id',
    expectation: 'each notice carries the id of its request',
    severity: 'must',
    tags: ['ws', 'session'],
    needs: ['ws'],
    async run(ctx) {
      const session = await openSession(ctx);
      const first = await subscribeListed(ctx, session, await needPairs(ctx, 1), 'conform-echo-ok');
      const pairs = first.pairs;
      const steps: [string, JsonObject, JsonObject?][] = [
        ['subscribe success', subscribe(pairs, 'conform-echo-ok'), first.notice],
        ['subscribe error (unknown pair)', subscribe([UNKNOWN_PAIR], 'conform-echo-err')],
        ['unsubscribe', unsubscribe(pairs, 'conform-echo-unsub')],
      ];
      for (const [what, message, answered] of steps) {
        const notice = answered ?? (await ask(ctx, session, message, `a notice echoing id ${String(message.id)}`));
        if (notice.id !== message.id)
          ctx.violation({
            received:
              `${what}: id ${'id' in notice ? JSON.stringify(notice.id) : 'absent'} ` + `in ${JSON.stringify(notice)}`,
            expected: `id ${JSON.stringify(message.id)} echoed`,
          });
      }
    },
  },
  {
    id: 'ws.notice.schema',
    enforces: [
      'field:notice:method',
      'field:notice:message',
      'field:notice:code',
      'field:notice:data',
      'event:notice-error',
      'notice:200',
      'rule:service:json-bodies',
    ],
    catches: ['notice-code-number', 'notice-subscribe-message-lowercase', 'unsubscribe-message-capitalized'],
    clause: {
      section: 'Resources and their fields',
      rule: 'WebSocket notice frame: method, message, code (a string) required; id string; data object or null',
    },
    title: 'provokes success and error notices: subscribe, unsubscribe, unknown pair, unknown method, empty pairs',
    expectation: 'each matches notice-success or notice-error (code a string; error codes from the documented list)',
    severity: 'must',
    tags: ['ws', 'session'],
    needs: ['ws'],
    async run(ctx) {
      const pairs = await needPairs(ctx, 1);
      const session = await openSession(ctx);
      const requests: JsonObject[] = [
        subscribe(pairs, 'n1'),
        unsubscribe(pairs, 'n2'),
        subscribe([UNKNOWN_PAIR], 'n3'),
        { id: 'n4', method: 'conform-unknown' },
        subscribe([], 'n5'),
      ];
      // All requests go out at once and share one wait, so a silent target costs one timeout, not five.
      const replies = requests.map((message) =>
        session
          .next((f) => isNotice(f) && answers(message, jsonObject(f)!), ctx.waits.noticeMs)
          .catch((err: unknown) => {
            if (isSilence(err)) return undefined;
            throw err;
          }),
      );
      for (const message of requests)
        sendOrFail(ctx, session, message, 'the connection stays open for the next request');
      let answered = 0;
      const kinds = new Set<string>();
      for (const [i, frame] of (await Promise.all(replies)).entries()) {
        const message = requests[i]!;
        // A request left unanswered is the rule of its own check (ws.request.*, ws.subscribe.*), not of this one.
        if (!frame) {
          ctx.note(`no notice answered ${JSON.stringify(message)} within ${ctx.waits.noticeMs} ms`);
          continue;
        }
        answered++;
        const notice = jsonObject(frame)!;
        kinds.add(notice.method === METHOD.error ? 'error' : 'success');
        ctx.expectSchema(
          notice.method === METHOD.error ? 'notice-error' : 'notice-success',
          notice,
          `notice answering ${JSON.stringify(message)}`,
        );
      }
      if (answered === 0) ctx.skip('no request was answered with a notice, so there is no notice to validate');
      // One notice of five is not the notice frame judged: what went unanswered is named.
      if (!kinds.has('success')) ctx.notJudged?.('no success notice answered', ['notice:200']);
      if (!kinds.has('error')) ctx.notJudged?.('no error notice answered', ['event:notice-error']);
      if (answered < requests.length)
        ctx.partly(`${answered} of ${requests.length} requests answered with a notice`, [
          'field:notice:method',
          'field:notice:message',
          'field:notice:code',
          'field:notice:data',
        ]);
    },
  },
  {
    id: 'ws.frames.no-status-number',
    enforces: ['rule:handshake:no-status-after-connect'],
    catches: ['notice-status-number'],
    catchesUnderDialects: ['keepalive-ping-not-reset'],
    clause: { section: 'Errors', rule: 'Handshake errors: post-connect frames never carry status_number' },
    title: 'subscribes, receives pushes, provokes an error, unsubscribes',
    expectation: 'no JSON frame received after connecting has a field status_number',
    severity: 'must',
    tags: ['ws', 'session', 'push'],
    needs: ['ws'],
    async run(ctx) {
      const pairs = await needPairs(ctx, 1);
      const session = await openSession(ctx);
      await ask(ctx, session, subscribe(pairs, 'f1'), 'a notice');
      const pushed = await awaitPushes(session, pairs[0]!, 2, 0, ctx.waits.pushMs);
      await ask(ctx, session, subscribe([UNKNOWN_PAIR], 'f2'), 'a notice');
      await ask(ctx, session, unsubscribe(pairs, 'f3'), 'a notice');
      const carrying = session.frames.filter((f) => {
        const o = jsonObject(f);
        return o !== undefined && 'status_number' in o;
      });
      // Without a push, only notices were seen: a clean result would speak for frames never judged.
      if (carrying.length === 0 && !pushed && session.pushes().length === 0)
        noPushes(ctx, `subscribed to ${pairs[0]!}; the notices carried no status_number`);
      if (carrying.length > 0)
        ctx.fail({
          received:
            `${carrying.length} frame(s) with status_number, ` +
            `first: ${carrying[0]!.kind === 'json' ? carrying[0]!.text : ''}`,
          expected: 'post-connect frames never carry status_number (notices use code)',
        });
    },
  },
];
