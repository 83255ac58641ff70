import type { Check, CheckContext } from '../../src/check.ts';
import type { StatementKey } from '../../src/statements.ts';
import { KNOWN_ASSET_TYPES, LIMITS, METHOD, STATUS, pairNotFoundMessage, parsePairCode } from '../../src/spec.ts';
import type { JsonObject, StreamSession } from '../../src/transports/stream.ts';
import { ask, expectNotice, type NoticeExpectation, subscribe } from './notices.ts';
import { needPairs, type PairNeeds, streamPairs, subscribeListed, subscribeOk, UNKNOWN_PAIR } from './pair-choice.ts';
import { openSession } from './sessions.ts';

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
  build?(ctx: CheckContext, session: StreamSession): Promise<JsonObject | string>;
  /**
   * Or a subscribe to listed pairs: a listed pair the target refuses with 50104 (inactive or
   * suspended, which the spec allows) is replaced by another, as every check that subscribes does,
   * so the answer judged is the one to the rule under test.
   */
  listed?(ctx: CheckContext): Promise<{ pairs: string[]; id: string; needs?: PairNeeds }>;
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
  'transition:attempt/subscribe',
  'status:50104',
  'notice:50104',
  'rule:subscribe:unknown-pair-message',
  'field:notice:message',
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
    listed: async (ctx) => ({ pairs: await needPairs(ctx, LIMITS.maxPairsPerSubscribe + 1), id: 'conform-101' }),
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
    async listed(ctx) {
      const allowed = ctx.profile.keys.whitelisted!.pairs;
      const outside = (await streamPairs(ctx, 200)).find((c) => !allowed.includes(c));
      if (!outside) return ctx.skip('the primary key lists no pair outside keys.whitelisted.pairs');
      return { pairs: [outside], id: 'conform-outside-whitelist', needs: { exclude: allowed } };
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
    async listed(ctx) {
      const pair = await pairOutsideAssetTypes(ctx, ctx.profile.keys.cryptoOnly!.assetTypes);
      const assetType = parsePairCode(pair)?.assetType;
      return { pairs: [pair], id: 'conform-other-asset-type', needs: assetType ? { assetType } : {} };
    },
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
      let sent: JsonObject | string;
      let notice: JsonObject;
      if (c.listed) {
        const { pairs, id, needs } = await c.listed(ctx);
        ({ notice } = await subscribeListed(ctx, session, pairs, id, needs));
        sent = subscribe(pairs, id);
      } else {
        sent = await c.build!(ctx, session);
        notice = await ask(ctx, session, sent, `method "error", code "${c.code}"`);
      }
      expectNotice(
        ctx,
        notice,
        { method: METHOD.error, code: c.code, looseCode: true, ...(c.message ? { message: c.message(sent) } : {}) },
        'the reply',
      );
    },
  }),
);

/** The error checks, in registry order: the empty list first, then one per error case. */
export const subscribeErrorChecks: readonly Check[] = [emptyListCheck, ...errorChecks];
