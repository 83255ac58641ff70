/**
 * Method subscribe (spec: Method subscribe; Subscription on one WebSocket connection; Limits, pairs
 * per connection; Authentication 4, 5): its success notice, the most pairs one request may name,
 * asset types a key may not read, and what a failed subscribe leaves. The area's other checks are
 * in subscribe-pushes.ts (what a subscribe starts), subscribe-errors.ts (requests answered with an
 * error notice) and notice-form.ts (the form of the frames received); `subscribeChecks` joins them
 * in registry order.
 */
import { fullSubscribeTimeoutMs } from '../../src/timing/index.ts';
import type { Check } from '../../src/check.ts';
import { LIMITS, METHOD, STATUS, TEXT, parsePairCode } from '../../src/spec.ts';
import { ask, expectNotice, subscribe } from './notices.ts';
import {
  needLivePairs,
  needPairs,
  pairsByAccess,
  pricedAsActive,
  subscribeListed,
  subscribeOk,
  UNKNOWN_PAIR,
} from './pair-choice.ts';
import { pairPerAssetType } from '../rest/support.ts';
import { NOTHING_TO_JUDGE } from '../../src/coverage.ts';
import { awaitPushes } from './pushes.ts';
import { openSession } from './sessions.ts';
import { noticeFormChecks } from './notice-form.ts';
import { subscribeErrorChecks } from './subscribe-errors.ts';
import { subscribePushChecks } from './subscribe-pushes.ts';

const subscribeClause = (rule: string) => ({ section: 'Method subscribe', rule });

const noticeCheck: Check = {
  id: 'ws.subscribe.notice',
  enforces: [
    'event:notice-subscribe',
    'notice:200',
    'parameter:subscribe:method',
    'transition:none/subscribe',
    'field:notice:method',
    'field:notice:message',
    'field:notice:code',
    'field:notice:data',
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
};

const maxPairsCheck: Check = {
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
};

const listedPairsCheck: Check = {
  id: 'ws.subscribe.listed-pairs',
  enforces: ['notice:50104', 'transition:none/subscribe'],
  catches: ['stream-refuses-equity'],
  clause: {
    section: 'Errors',
    rule:
      'WebSocket notice code values: 50104 when the pair does not exist, is inactive or is suspended ' +
      '(so not for a pair REST prices as active)',
  },
  title: 'subscribes to one listed pair of each asset type, one request each',
  expectation:
    'each subscribe succeeds, or is refused with 50104 only for a pair that GET /v1/price does not ' +
    'price as active (status 200 with data): a suspended pair is refused on both sides',
  severity: 'must',
  tags: ['ws', 'session'],
  needs: ['ws'],
  async run(ctx) {
    const pairs = (await pairPerAssetType(ctx)).map((p) => p.code);
    if (pairs.length === 0) ctx.skip('the primary key lists no pair', NOTHING_TO_JUDGE.pricedPair);
    const session = await openSession(ctx);
    for (const [i, code] of pairs.entries()) {
      const notice = await ask(ctx, session, subscribe([code], `conform-listed-${i}`), `a notice for ${code}`);
      if (String(notice.code) !== STATUS.PAIR_NOT_FOUND) continue;
      const active = await pricedAsActive(ctx, code);
      if (active)
        ctx.violation({
          received: `a subscribe to ${code}, listed in /v1/pairs, answered ${JSON.stringify(notice)}, while ${active}`,
          expected: `${STATUS.PAIR_NOT_FOUND} only for a pair that does not exist, is inactive or is suspended`,
        });
      else ctx.note(`${code}: refused with ${STATUS.PAIR_NOT_FOUND} and not priced as active on REST either`);
    }
  },
};

const assetTypesCheck: Check = {
  id: 'ws.subscribe.asset-types',
  enforces: ['status:50109', 'notice:50109', 'rule:auth:after-connection', 'rule:auth:entitlements'],
  catches: ['entitlement-asset-type-ignored', 'entitlement-asset-type-partial'],
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
};

const observeFailedCheck: Check = {
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
};

/** The subscribe checks, in registry order. */
export const subscribeChecks: readonly Check[] = [
  noticeCheck,
  ...subscribePushChecks,
  maxPairsCheck,
  listedPairsCheck,
  ...subscribeErrorChecks,
  assetTypesCheck,
  ...noticeFormChecks,
  observeFailedCheck,
];
