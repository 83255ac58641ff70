/**
 * Method subscribe, its notices and its errors (spec: Method subscribe; Subscription on one
 * WebSocket connection; Errors, WebSocket notice `code` values; Authentication 4).
 */
import { WAIT_DEFAULTS } from '../../src/timing.ts';
import type { Check, CheckContext } from '../../src/check.ts';
import type { StatementKey } from '../../src/matrix.ts';
import { KNOWN_ASSET_TYPES, LIMITS, METHOD, STATUS, TEXT, pairNotFoundMessage } from '../../src/spec.ts';
import { isNotice, isPush, jsonObject, type JsonObject, type StreamSession } from '../../src/transports/stream.ts';
import {
  watchNote,
  stopCheckTimeoutMs,
  UNKNOWN_PAIR,
  answers,
  watchMs,
  ask,
  isSilence,
  sendOrFail,
  awaitPushes,
  expectNotice,
  needLivePairs,
  needPairs,
  noPushes,
  openSession,
  pairsByAccess,
  restQuotes,
  unpushedMoves,
  until,
  pause,
  streamPairs,
  subscribe,
  subscribeOk,
  unsubscribe,
  type NoticeExpectation,
} from './support.ts';
import { REST_ANSWER_FAULTS } from '../rest/support.ts';

const subscribeClause = (rule: string) => ({ section: 'Method subscribe', rule });
const codesClause = (rule: string) => ({ section: 'Errors', rule: `WebSocket notice code values: ${rule}` });

/** One request the target must answer with an error notice. */
interface ErrorCase extends Pick<Check, 'enforces' | 'catches'> {
  id: string;
  clause: { section: string; rule: string };
  title: string;
  code: string;
  needs: string[];
  tags?: Check['tags'];
  /** The key to connect with; default primary. */
  key?: (ctx: CheckContext) => string;
  /** What to send: a JSON message, or raw text. */
  build(ctx: CheckContext): Promise<JsonObject | string>;
  /** The `message` the spec requires: a fixed text, or a rule with its description. */
  message?: (sent: JsonObject | string) => NonNullable<NoticeExpectation['message']>;
  /** A step before the request (e.g. a subscribe that must succeed). */
  before?: (ctx: CheckContext, session: StreamSession) => Promise<void>;
}

const firstPair = async (ctx: CheckContext): Promise<string> => (await needPairs(ctx, 1))[0]!;

/** The pair of another asset type than the key's, from the primary key's catalogue. */
async function pairOutsideAssetTypes(ctx: CheckContext, allowed: readonly string[]): Promise<string> {
  for (const type of KNOWN_ASSET_TYPES) {
    if (allowed.includes(type)) continue;
    const [code] = await streamPairs(ctx, 1, { assetType: type });
    if (code) return code;
  }
  ctx.skip(`the primary key lists no pair outside keys.cryptoOnly.assetTypes (${allowed.join(', ')})`);
}

/** What a subscribe naming an unknown pair (alone or among known ones) is judged by. */
const UNKNOWN_PAIR_STATEMENTS: readonly StatementKey[] = [
  'field:notice:message',
  'transition:attempt/subscribe',
  'status:50104',
  'notice:50104',
  'rule:subscribe:unknown-pair-message',
];

const ERROR_CASES: ErrorCase[] = [
  {
    id: 'ws.subscribe.invalid.empty-list',
    enforces: ['parameter:subscribe:params.pairs', 'notice:50004'],
    catches: ['subscribe-empty-accepted'],
    clause: codesClause('50004 for missing or invalid pairs'),
    title: 'subscribes with params.pairs an empty list',
    code: STATUS.INVALID_REQUEST,
    needs: ['ws'],
    build: async () => subscribe([], 'conform-empty'),
  },
  {
    id: 'ws.subscribe.invalid.missing-params',
    enforces: ['parameter:subscribe:params', 'notice:50004'],
    catches: ['subscribe-missing-params-accepted'],
    clause: codesClause('50004 for a malformed message or missing pairs'),
    title: 'subscribes without params',
    code: STATUS.INVALID_REQUEST,
    needs: ['ws'],
    build: async () => ({ id: 'conform-no-params', method: METHOD.subscribe }),
  },
  {
    id: 'ws.subscribe.invalid.pairs-not-array',
    enforces: ['parameter:subscribe:params.pairs', 'notice:50004'],
    catches: ['subscribe-pairs-string-accepted'],
    clause: codesClause('50004 for invalid pairs'),
    title: 'subscribes with params.pairs a string instead of an array',
    code: STATUS.INVALID_REQUEST,
    needs: ['ws'],
    build: async (ctx) => subscribe(await firstPair(ctx), 'conform-not-array'),
  },
  {
    id: 'ws.subscribe.too-many-pairs',
    enforces: ['parameter:subscribe:params.pairs', 'limit:pairs-per-connection', 'notice:50004'],
    catches: ['subscribe-accepts-101'],
    clause: {
      section: 'Limits',
      rule: `Pairs per connection: ${LIMITS.maxPairsPerSubscribe} maximum; exceeding it gives 50004`,
    },
    title: `subscribes to ${LIMITS.maxPairsPerSubscribe + 1} distinct pairs`,
    code: STATUS.INVALID_REQUEST,
    needs: ['ws'],
    tags: ['ws', 'session', 'limits'],
    build: async (ctx) => subscribe(await needPairs(ctx, LIMITS.maxPairsPerSubscribe + 1), 'conform-101'),
  },
  {
    id: 'ws.request.malformed-json',
    enforces: ['event:notice-error', 'notice:50004'],
    catches: ['notice-malformed-json-ignored'],
    clause: codesClause('50004 for a malformed message'),
    title: 'sends a text frame that is not valid JSON',
    code: STATUS.INVALID_REQUEST,
    needs: ['ws'],
    build: async () => '{"method":"subscribe","params":{"pairs":[',
  },
  {
    id: 'ws.request.unknown-method',
    enforces: ['parameter:subscribe:method', 'event:notice-error', 'notice:50004'],
    catches: ['notice-unknown-method-ignored'],
    clause: codesClause('50004 for an unknown method'),
    title: 'sends a request with method "conform-unknown"',
    code: STATUS.INVALID_REQUEST,
    needs: ['ws'],
    build: async () => ({ id: 'conform-unknown-method', method: 'conform-unknown', params: {} }),
  },
  {
    id: 'ws.subscribe.unknown-pair',
    enforces: UNKNOWN_PAIR_STATEMENTS,
    catches: ['subscribe-unknown-message'],
    clause: subscribeClause('an unknown pair: error notice, code 50104, message `pair not found: <pair_code>`'),
    title: `subscribes to the well-formed but unknown pair ${UNKNOWN_PAIR}`,
    code: STATUS.PAIR_NOT_FOUND,
    needs: ['ws'],
    build: async () => subscribe([UNKNOWN_PAIR], 'conform-unknown-pair'),
    message: () => pairNotFoundMessage(UNKNOWN_PAIR),
  },
  {
    id: 'ws.subscribe.unknown-among-known',
    enforces: UNKNOWN_PAIR_STATEMENTS,
    catches: ['subscribe-unknown-message', 'subscribe-unknown-among-known-dropped'],
    clause: {
      section: 'States and transitions',
      rule:
        'subscribe succeeds only when all pairs are valid; a pair unknown: error ' +
        'notice 50104 (`pair not found: <pair_code>`)',
    },
    title: `subscribes to two known pairs and, listed last, the unknown pair ${UNKNOWN_PAIR}`,
    code: STATUS.PAIR_NOT_FOUND,
    needs: ['ws'],
    build: async (ctx) => subscribe([...(await needPairs(ctx, 2)), UNKNOWN_PAIR], 'conform-known-and-unknown'),
    message: () => ({
      test: (m: string) => m.includes(UNKNOWN_PAIR),
      describe: `naming the unknown pair ${UNKNOWN_PAIR}`,
    }),
  },
  {
    id: 'ws.subscribe.inactive-pair',
    enforces: ['transition:attempt/subscribe', 'status:50104', 'notice:50104'],
    catches: ['subscribe-inactive-accepted'],
    clause: codesClause('50104 when the pair is inactive or suspended'),
    title: 'subscribes to pairs.inactive',
    code: STATUS.PAIR_NOT_FOUND,
    needs: ['ws', 'pairs.inactive'],
    build: async (ctx) => subscribe([ctx.profile.pairs!.inactive!], 'conform-inactive'),
  },
  {
    id: 'ws.subscribe.whitelist',
    enforces: ['status:50010', 'notice:50010', 'rule:auth:after-connection', 'rule:auth:entitlements'],
    catches: ['entitlement-whitelist-subscribe'],
    clause: { section: 'Authentication', rule: '4. lacking pair-whitelist access yields 50010' },
    title:
      'with keys.whitelisted, subscribes to a whitelisted pair (must succeed), then to a pair outside the whitelist',
    code: STATUS.ACCESS_DENIED,
    needs: ['ws', 'keys.whitelisted'],
    tags: ['ws', 'session', 'entitlements'],
    key: (ctx) => ctx.profile.keys.whitelisted!.key,
    before: async (ctx, session) => {
      await subscribeOk(ctx, session, [ctx.profile.keys.whitelisted!.pairs[0]!], 'conform-in-whitelist');
    },
    async build(ctx) {
      const allowed = new Set(ctx.profile.keys.whitelisted!.pairs);
      const outside = (await streamPairs(ctx, 200)).find((c) => !allowed.has(c));
      if (!outside) ctx.skip('the primary key lists no pair outside keys.whitelisted.pairs');
      return subscribe([outside], 'conform-outside-whitelist');
    },
  },
  {
    id: 'ws.subscribe.asset-type',
    enforces: ['status:50109', 'notice:50109', 'rule:auth:after-connection'],
    catches: ['entitlement-asset-type-ignored'],
    clause: { section: 'Authentication', rule: "4. lacking access to a pair's asset type yields 50109" },
    title: 'with keys.cryptoOnly, subscribes to a pair of an asset type outside keys.cryptoOnly.assetTypes',
    code: STATUS.ASSET_TYPE_DENIED,
    needs: ['ws', 'keys.cryptoOnly'],
    tags: ['ws', 'session', 'entitlements'],
    key: (ctx) => ctx.profile.keys.cryptoOnly!.key,
    build: async (ctx) =>
      subscribe(
        [await pairOutsideAssetTypes(ctx, ctx.profile.keys.cryptoOnly!.assetTypes)],
        'conform-other-asset-type',
      ),
  },
];

const messageRule = (m: NonNullable<NoticeExpectation['message']>): string =>
  typeof m === 'string' ? '`pair not found: <code>`' : m.describe;

const errorChecks: Check[] = ERROR_CASES.map(
  (c): Check => ({
    id: c.id,
    enforces: c.enforces,
    ...(c.catches ? { catches: c.catches } : {}),
    clause: c.clause,
    title: c.title,
    expectation:
      `an error notice: method "error", code ` +
      `"${c.code}"${c.message ? `, message ${messageRule(c.message({}))}` : ''}`,
    severity: 'must',
    tags: c.tags ?? ['ws', 'session'],
    needs: c.needs,
    async run(ctx) {
      const sent = await c.build(ctx);
      const session = await openSession(ctx, c.key ? { key: c.key(ctx) } : {});
      await c.before?.(ctx, session);
      const notice = await ask(ctx, session, sent, `method "error", code "${c.code}"`);
      expectNotice(
        ctx,
        notice,
        { method: METHOD.error, code: c.code, looseCode: true, ...(c.message ? { message: c.message(sent) } : {}) },
        'the reply',
      );
    },
  }),
);

const byPair = (pairs: readonly string[]): string => pairs.join(', ');
/** Open pairs ws.subscribe.pushes-start subscribes to. */
const PUSH_START_PAIRS = 3;
/** Pairs ws.subscribe.pushes-every-pair lists in one subscribe. */
const EVERY_PAIR_COUNT = 3;

export const subscribeChecks: readonly Check[] = [
  {
    id: 'ws.subscribe.notice',
    enforces: [
      'field:notice:method',
      'field:notice:message',
      'field:notice:code',
      'field:notice:data',
      'parameter:subscribe:method',
      'transition:none/subscribe',
      'event:notice-subscribe',
      'notice:200',
    ],
    catches: ['notice-code-number', 'notice-id-not-echoed', 'notice-subscribe-message-lowercase'],
    clause: subscribeClause('Success reply: method subscribe, message Success, code 200, id echoed, data null'),
    title: 'subscribes to one pair with id "conform-sub-notice"',
    expectation:
      'exactly {method "subscribe", message "Success", code "200" (a string), id "conform-sub-notice", data null}',
    severity: 'must',
    tags: ['ws', 'session'],
    needs: ['ws'],
    async run(ctx) {
      const pairs = await needPairs(ctx, 1);
      const session = await openSession(ctx);
      const notice = await ask(ctx, session, subscribe(pairs, 'conform-sub-notice'), 'the subscribe success notice');
      expectNotice(
        ctx,
        notice,
        {
          method: METHOD.subscribe,
          message: TEXT.subscribeSuccess,
          code: STATUS.OK,
          id: 'conform-sub-notice',
          dataNull: true,
        },
        'the subscribe notice',
      );
    },
  },
  {
    id: 'ws.subscribe.pushes-start',
    enforces: ['transition:none/subscribe', 'event:push', 'rule:subscribe:pushes-without-requests'],
    catches: ['push-never-starts'],
    clause: subscribeClause('After success the server pushes data frames without further requests'),
    title: `subscribes to up to ${PUSH_START_PAIRS} pairs whose market is open and sends nothing more`,
    expectation:
      'a push frame for one of them arrives (within the first-push wait, timing.firstPushMs: ' +
      'pushes may come only when a price changes)',
    severity: 'must',
    tags: ['ws', 'session', 'push'],
    needs: ['ws'],
    timeoutMs: (_p, w) => w.firstPushMs + 15_000,
    async run(ctx) {
      const pairs = await needLivePairs(ctx, PUSH_START_PAIRS, 1);
      const session = await openSession(ctx);
      const from = ctx.stream.now();
      await subscribeOk(ctx, session, pairs);
      // Several pairs: with pushes on change only, one pair may stay still for seconds, not all of them.
      const first = await session
        .find(
          (f) => f.atMs >= from && isPush(f) && pairs.includes(jsonObject(f)!.code as string),
          ctx.waits.firstPushMs,
        )
        .catch((err: unknown) => {
          if (isSilence(err)) return undefined;
          throw err;
        });
      if (!first)
        return ctx.fail({
          received: `no push for ${byPair(pairs)} within ${ctx.waits.firstPushMs} ms of the success notice`,
          expected: 'pushes start without further requests',
        });
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
      const pairs = await needLivePairs(ctx, 2);
      const session = await openSession(ctx);
      await subscribeOk(ctx, session, pairs);
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
      const pairs = await needLivePairs(ctx, EVERY_PAIR_COUNT, 2);
      const session = await openSession(ctx);
      await subscribeOk(ctx, session, pairs, 'conform-every-pair');
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
    catches: ['subscribe-extends', 'push-unsubscribed-pair', 'push-changed-missing-bid'],
    clause: {
      section: 'States and transitions',
      rule: 'a subscribe while subscribed: subscribed to exactly the newly listed pairs; the earlier set is replaced',
    },
    title: 'subscribes to pair A, waits for two of its pushes, then subscribes to pair B only',
    expectation:
      `after the second notice (plus ${WAIT_DEFAULTS.inFlightMs} ms for frames in flight) no ` +
      `push for A over three of its push gaps; pushes for B`,
    severity: 'must',
    tags: ['ws', 'session', 'push'],
    needs: ['ws'],
    timeoutMs: stopCheckTimeoutMs,
    async run(ctx) {
      const [a, b] = (await needLivePairs(ctx, 2)) as [string, string];
      const session = await openSession(ctx);
      await subscribeOk(ctx, session, [a], 'conform-first');
      // Two pushes: their gap says how long a silence of A means it stopped (the cadence is not shown).
      if (!(await awaitPushes(session, a, 2, 0, ctx.waits.cadenceMs))) noPushes(ctx, `two pushes of ${a}`);
      await subscribeOk(ctx, session, [b], 'conform-second');
      const cutoff = ctx.stream.now() + ctx.waits.inFlightMs;
      const watch = watchMs(ctx, session, a);
      const bPushed = awaitPushes(session, b, 1, cutoff, Math.max(watch, ctx.waits.pushMs));
      await until(ctx, cutoff + watch);
      const late = session.pushes({ pair: a, sinceMs: cutoff });
      if (late.length > 0)
        ctx.violation({
          received:
            `${late.length} push(es) for ${a} more than ${ctx.waits.inFlightMs} ms ` +
            `after the notice replacing it with ${b}`,
          expected: `the set is replaced: no pushes for ${a}`,
        });
      ctx.note(watchNote(ctx, watch, a));
      // A pair may be quiet for a while when pushes come on change: B's silence is no violation,
      // but A's then proves nothing.
      if (!(await bPushed) && late.length === 0)
        ctx.skip(
          `no push for ${b} within ${Math.max(watch, ctx.waits.pushMs)} ms of subscribing to it, so A's ` +
            `silence cannot be told from a stream gone quiet (the push trigger is not shown)`,
        );
    },
  },
  {
    id: 'ws.subscribe.max-pairs',
    enforces: ['parameter:subscribe:params.pairs', 'limit:pairs-per-connection'],
    catches: ['subscribe-limit-99'],
    clause: {
      section: 'Limits',
      rule:
        `Pairs per connection: ${LIMITS.maxPairsPerSubscribe} maximum ` +
        `(so ${LIMITS.maxPairsPerSubscribe} are accepted)`,
    },
    title: `subscribes to ${LIMITS.maxPairsPerSubscribe} distinct pairs`,
    expectation: 'the success notice, code "200"',
    severity: 'must',
    tags: ['ws', 'session', 'limits'],
    needs: ['ws'],
    async run(ctx) {
      const pairs = await needPairs(ctx, LIMITS.maxPairsPerSubscribe);
      const session = await openSession(ctx);
      const notice = await ask(ctx, session, subscribe(pairs, 'conform-100'), 'the success notice');
      expectNotice(
        ctx,
        notice,
        { method: METHOD.subscribe, code: STATUS.OK, looseCode: true },
        `subscribe to ${pairs.length} pairs`,
      );
    },
  },
  ...errorChecks,
  {
    id: 'ws.subscribe.asset-types',
    enforces: ['status:50109', 'notice:50109', 'rule:auth:after-connection', 'rule:auth:entitlements'],
    catches: [...REST_ANSWER_FAULTS, 'entitlement-asset-type-ignored', 'entitlement-asset-type-partial'],
    clause: {
      section: 'Authentication',
      rule:
        '4, 5. a key limited to asset types: a pair of another type yields ' +
        '50109; the data it reads depends on the key',
    },
    title: 'with keys.cryptoOnly, subscribes to one pair of every asset type in the catalogue, one request each',
    expectation:
      'every other asset type answered with an error notice, code "50109"; a pair of ' +
      'the key\'s own types answered with success (code "200")',
    severity: 'must',
    tags: ['ws', 'session', 'entitlements'],
    needs: ['ws', 'keys.cryptoOnly'],
    async run(ctx) {
      const limited = ctx.profile.keys.cryptoOnly!;
      const { own, other } = await pairsByAccess(ctx, limited.assetTypes);
      if (other.length === 0) ctx.skip(`the primary key lists no pair outside ${limited.assetTypes.join(', ')}`);
      const session = await openSession(ctx, { key: limited.key });
      for (const [i, code] of other.entries()) {
        const notice = await ask(
          ctx,
          session,
          subscribe([code], `conform-other-type-${i}`),
          `code "${STATUS.ASSET_TYPE_DENIED}" for ${code}`,
        );
        if (String(notice.code) !== STATUS.ASSET_TYPE_DENIED)
          ctx.violation({
            received: `subscribe to ${code} with keys.cryptoOnly answered ${JSON.stringify(notice)}`,
            expected:
              `an error notice, code "${STATUS.ASSET_TYPE_DENIED}": the key reads ` +
              `only ${limited.assetTypes.join(', ')}`,
          });
      }
      // Last, so that whether a failed subscribe keeps the previous set (not stated) does not matter.
      for (const [i, code] of own.entries()) {
        const notice = await ask(
          ctx,
          session,
          subscribe([code], `conform-own-type-${i}`),
          `code "${STATUS.OK}" for ${code}`,
        );
        if (String(notice.code) !== STATUS.OK)
          ctx.violation({
            received: `subscribe to ${code} with keys.cryptoOnly answered ${JSON.stringify(notice)}`,
            expected: `success (code "${STATUS.OK}"): ${code} is of an asset type the key reads`,
          });
      }
    },
  },
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
      const pairs = await needPairs(ctx, 1);
      const session = await openSession(ctx);
      const steps: [string, JsonObject][] = [
        ['subscribe success', subscribe(pairs, 'conform-echo-ok')],
        ['subscribe error (unknown pair)', subscribe([UNKNOWN_PAIR], 'conform-echo-err')],
        ['unsubscribe', unsubscribe(pairs, 'conform-echo-unsub')],
      ];
      for (const [what, message] of steps) {
        const notice = await ask(ctx, session, message, `a notice echoing id ${String(message.id)}`);
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
    catches: [
      'notice-code-number',
      'notice-subscribe-message-lowercase',
      'unsubscribe-message-capitalized',
      'notice-status-number',
    ],
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
      for (const [i, frame] of (await Promise.all(replies)).entries()) {
        const message = requests[i]!;
        // A request left unanswered is the rule of its own check (ws.request.*, ws.subscribe.*), not of this one.
        if (!frame) {
          ctx.note(`no notice answered ${JSON.stringify(message)} within ${ctx.waits.noticeMs} ms`);
          continue;
        }
        answered++;
        const notice = jsonObject(frame)!;
        ctx.expectSchema(
          notice.method === METHOD.error ? 'notice-error' : 'notice-success',
          notice,
          `notice answering ${JSON.stringify(message)}`,
        );
      }
      if (answered === 0) ctx.skip('no request was answered with a notice, so there is no notice to validate');
    },
  },
  {
    id: 'ws.frames.no-status-number',
    enforces: ['rule:handshake:no-status-after-connect'],
    catches: ['notice-status-number'],
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
  {
    id: 'ws.subscribe.observe-failed-keeps-previous',
    enforces: ['transition:attempt/subscribe'],
    clause: { section: 'States and transitions', rule: 'a failed subscribe: "no change stated"' },
    title: 'subscribes to a live pair, then to an unknown pair (fails), and watches the first pair',
    expectation: 'recorded: whether pushes for the first pair go on after the failed subscribe',
    severity: 'observe',
    tags: ['ws', 'session', 'push'],
    needs: ['ws'],
    async run(ctx) {
      const [pair] = (await needLivePairs(ctx, 1)) as [string];
      const session = await openSession(ctx);
      await subscribeOk(ctx, session, [pair]);
      if (!(await awaitPushes(session, pair, 1, 0, ctx.waits.pushMs)))
        ctx.skip(`no push for ${pair} before the failed subscribe, so nothing to compare`);
      const notice = await ask(ctx, session, subscribe([UNKNOWN_PAIR], 'conform-failing'), 'an error notice');
      ctx.observe('failed-subscribe-notice', notice);
      const cutoff = ctx.stream.now() + ctx.waits.inFlightMs;
      const kept = await awaitPushes(session, pair, 2, cutoff, ctx.waits.pushMs);
      ctx.observe(
        'previous-subscription',
        kept ? 'kept' : 'dropped',
        `pushes for ${pair} ${kept ? 'go on' : 'stopped'} after a failed subscribe`,
      );
    },
  },
];
