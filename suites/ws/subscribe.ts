/**
 * Method subscribe, its notices and its errors (spec: Method subscribe; Subscription on one
 * WebSocket connection; Errors, WebSocket notice `code` values; Authentication 4).
 */
import {
  fullSubscribeTimeoutMs,
  inFlightMs,
  pushesStartTimeoutMs,
  stopCheckTimeoutMs,
  WAIT_DEFAULTS,
  watchMs,
  watchNote,
} from '../../src/timing/index.ts';
import type { Check, CheckContext } from '../../src/check.ts';
import type { StatementKey } from '../../src/statements.ts';
import { KNOWN_ASSET_TYPES, LIMITS, METHOD, STATUS, TEXT, pairNotFoundMessage, parsePairCode } from '../../src/spec.ts';
import {
  isNotice,
  isPush,
  jsonObject,
  type InboundFrame,
  type JsonObject,
  type StreamSession,
} from '../../src/transports/stream.ts';
import { answers, ask, expectNotice, type NoticeExpectation, subscribe, unsubscribe } from './notices.ts';
import {
  needLivePairs,
  needPairs,
  pairsByAccess,
  streamPairs,
  subscribeListed,
  subscribeOk,
  UNKNOWN_PAIR,
} from './pair-choice.ts';
import {
  awaitPushes,
  learnCadence,
  noPushes,
  observeInFlight,
  pushTimes,
  restQuotes,
  unpushedMoves,
} from './pushes.ts';
import { isSilence, openSession, pause, sendOrFail, until } from './sessions.ts';
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
  /** What to send: a JSON message, or raw text (built once the session is open and `before` is done). */
  build(ctx: CheckContext, session: StreamSession): Promise<JsonObject | string>;
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

/**
 * An empty pairs list: the spec names 50004 for missing or invalid pairs but never calls an empty
 * list invalid, so refusing it and acknowledging a subscription to nothing both conform.
 */
const emptyListCheck: Check = {
  id: 'ws.subscribe.invalid.empty-list',
  enforces: ['parameter:subscribe:params.pairs', 'notice:50004'],
  catches: ['subscribe-empty-internal-error'],
  clause: codesClause('50004 for missing or invalid pairs'),
  title: 'subscribes with params.pairs an empty list',
  expectation: 'an error notice with code "50004", or a success notice (a subscription to nothing); never 50000',
  severity: 'must',
  tags: ['ws', 'session'],
  needs: ['ws'],
  async run(ctx) {
    const session = await openSession(ctx);
    const notice = await ask(ctx, session, subscribe([], 'conform-empty'), 'code "50004", or a success');
    if (notice.method !== METHOD.error && String(notice.code) === STATUS.OK) {
      ctx.observe('empty-list', 'acknowledged', 'an empty pairs list: refused or acknowledged (not shown)');
      return;
    }
    if (expectNotice(ctx, notice, { method: METHOD.error, code: STATUS.INVALID_REQUEST, looseCode: true }, 'the reply'))
      ctx.observe('empty-list', 'refused', 'an empty pairs list: refused or acknowledged (not shown)');
  },
};

const ERROR_CASES: ErrorCase[] = [
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
    title:
      `subscribes to two known pairs (which must succeed), then to them and, listed last, ` +
      `the unknown pair ${UNKNOWN_PAIR}`,
    code: STATUS.PAIR_NOT_FOUND,
    needs: ['ws'],
    // Known pairs first on their own: a listed pair may be suspended, and its own 50104 would name it instead.
    build: async (ctx, session) => {
      const known = await subscribeOk(ctx, session, await needPairs(ctx, 2), 'conform-known-first');
      return subscribe([...known, UNKNOWN_PAIR], 'conform-known-and-unknown');
    },
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
      const session = await openSession(ctx, c.key ? { key: c.key(ctx) } : {});
      await c.before?.(ctx, session);
      const sent = await c.build(ctx, session);
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
      const session = await openSession(ctx);
      const { notice } = await subscribeListed(ctx, session, await needPairs(ctx, 1), 'conform-sub-notice');
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
      'pushes may come only when a price changes); when none does, a pair whose REST price moved ' +
      'over the wait fails (given a push wait more), and prices that did not move cannot be judged',
    severity: 'must',
    tags: ['ws', 'session', 'push'],
    needs: ['ws'],
    timeoutMs: (_p, w) => pushesStartTimeoutMs(w),
    async run(ctx) {
      const live = await needLivePairs(ctx, PUSH_START_PAIRS, 1);
      const session = await openSession(ctx);
      const from = ctx.stream.now();
      const pairs = await subscribeOk(ctx, session, live, 'conform-sub', { live: true });
      // Read after the notice: a service that pushes on change owes a push only for a move after the subscribe.
      const before = await restQuotes(ctx, pairs);
      const ours = (f: InboundFrame): boolean =>
        f.atMs >= from && isPush(f) && pairs.includes(jsonObject(f)!.code as string);
      // Several pairs: with pushes on change only, one pair may stay still for seconds, not all of them.
      let first = await session.find(ours, ctx.waits.firstPushMs).catch((err: unknown) => {
        if (isSilence(err)) return undefined;
        throw err;
      });
      if (!first) {
        const { missed, quiet } = await unpushedMoves(ctx, session, pairs, before, from);
        first = session.frames.find(ours);
        if (!first && missed.length > 0)
          return ctx.fail({
            received:
              `no push for ${byPair(pairs)} within ${Math.round(ctx.stream.now() - from)} ms of the success ` +
              `notice, while the REST price of ${byPair(missed)} moved`,
            expected: 'pushes start without further requests',
          });
        if (!first)
          return ctx.skip(
            `no push for ${byPair(quiet)} within ${ctx.waits.firstPushMs} ms, and their REST prices did not ` +
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
    catches: ['subscribe-extends', 'push-unsubscribed-pair', 'push-changed-missing-bid'],
    clause: {
      section: 'States and transitions',
      rule: 'a subscribe while subscribed: subscribed to exactly the newly listed pairs; the earlier set is replaced',
    },
    title: 'subscribes to pair A, waits for two of its pushes, then subscribes to pair B only',
    expectation:
      `after the second notice, and a window for frames in flight (four of A's push gaps, at least ` +
      `${WAIT_DEFAULTS.inFlightMs} ms), no push for A over three of its push gaps; pushes for B`,
    severity: 'must',
    tags: ['ws', 'session', 'push'],
    needs: ['ws'],
    timeoutMs: (_p, w) => stopCheckTimeoutMs(w),
    async run(ctx) {
      const live = await needLivePairs(ctx, 2);
      const session = await openSession(ctx);
      const [a] = (await subscribeOk(ctx, session, [live[0]!], 'conform-first', { live: true })) as [string];
      // Two pushes: their gap says how long a silence of A means it stopped (the cadence is not shown).
      if (!(await awaitPushes(session, a, 2, 0, ctx.waits.cadenceMs))) noPushes(ctx, `two pushes of ${a}`);
      await learnCadence(ctx, session, [a]);
      // Picked again: a refused pair is left out now.
      const other = (await needLivePairs(ctx, 3, 2)).find((p) => p !== a)!;
      const [b] = (await subscribeOk(ctx, session, [other], 'conform-second', { live: true })) as [string];
      const stopped = ctx.stream.now();
      const window = inFlightMs(ctx.waits, pushTimes(session), a);
      const cutoff = stopped + window;
      const watch = watchMs(ctx.waits, pushTimes(session), a);
      const bPushed = awaitPushes(session, b, 1, cutoff, Math.max(watch, ctx.waits.pushMs));
      await until(ctx, cutoff + watch);
      const late = session.pushes({ pair: a, sinceMs: cutoff });
      observeInFlight(ctx, session, a, stopped, window);
      if (late.length > 0)
        ctx.violation({
          received:
            `${late.length} push(es) for ${a} more than ${window} ms after the notice replacing it ` +
            `with ${b} (the window for frames in flight)`,
          expected: `the set is replaced: no pushes for ${a}`,
        });
      ctx.note(watchNote(ctx.waits, watch, a));
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
    // Listed pairs refused with 50104 are replaced one request at a time, REPLACE_GAP_MS apart.
    timeoutMs: (_p, w) => fullSubscribeTimeoutMs(w, LIMITS.maxPairsPerSubscribe),
    async run(ctx) {
      const session = await openSession(ctx);
      const listed = await needPairs(ctx, LIMITS.maxPairsPerSubscribe);
      const { notice, pairs } = await subscribeListed(ctx, session, listed, 'conform-100');
      expectNotice(
        ctx,
        notice,
        { method: METHOD.subscribe, code: STATUS.OK, looseCode: true },
        `subscribe to ${pairs.length} pairs`,
      );
    },
  },
  emptyListCheck,
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
      for (const [i, listed] of other.entries()) {
        const assetType = parsePairCode(listed)?.assetType;
        // A pair of the type that is itself inactive or suspended may answer 50104 first: another is taken.
        const { notice, pairs } = await subscribeListed(ctx, session, [listed], `conform-other-type-${i}`, {
          ...(assetType ? { assetType } : {}),
        });
        const code = pairs[0]!;
        if (String(notice.code) !== STATUS.ASSET_TYPE_DENIED)
          ctx.violation({
            received: `subscribe to ${code} with keys.cryptoOnly answered ${JSON.stringify(notice)}`,
            expected:
              `an error notice, code "${STATUS.ASSET_TYPE_DENIED}": the key reads ` +
              `only ${limited.assetTypes.join(', ')}`,
          });
      }
      // Last, so that whether a failed subscribe keeps the previous set (not stated) does not matter.
      for (const [i, listed] of own.entries()) {
        const assetType = parsePairCode(listed)?.assetType;
        const { notice, pairs } = await subscribeListed(ctx, session, [listed], `conform-own-type-${i}`, {
          ...(assetType ? { assetType } : {}),
        });
        const code = pairs[0]!;
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
      const session = await openSession(ctx);
      const [pair] = (await subscribeOk(ctx, session, await needLivePairs(ctx, 1), 'conform-sub', {
        live: true,
      })) as [string];
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
