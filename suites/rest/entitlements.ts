/** What a key may read depends on the key (spec: What the service does; Authentication 5). */
import type { Check } from '../../src/check.ts';
import type { CheckContext } from '../../src/check.ts';
import { PATHS, QUERY, REST_PAIR_DENIALS, REST_STATUSES_WITH_DATA, STATUS } from '../../src/spec.ts';
import {
  assetTypeOf,
  body,
  catalogue,
  clause,
  pairPerAssetType,
  restCheck,
  shown,
  type PairRecord,
} from './support.ts';

/** Pairs of its whitelist a key is asked for at most. */
const MAX_WHITELISTED = 10;
/** Status numbers that refuse a key access; a pair the key may read must not get one. */
const DENIALS: readonly string[] = [
  STATUS.UNAUTHORIZED,
  STATUS.ACCESS_DENIED,
  STATUS.NO_PAIRS_ALLOWED,
  STATUS.ASSET_TYPE_DENIED,
];

const DOCUMENTED_DENIALS = REST_PAIR_DENIALS.join(', ');

/**
 * GET /v1/price of `code` with `key`. `denied`: a violation unless the answer is a documented
 * refusal of the pair (REST_PAIR_DENIALS, read as the string it spells: its type is rest.envelope's
 * rule) with data null and a message; which refusal came is recorded, since the spec maps the codes
 * for the stream only. `served`: a violation when it is a denial (a pair the key may read can still
 * be stale or without a price).
 */
async function expectAccess(
  ctx: CheckContext,
  code: string,
  key: string,
  keyName: string,
  want: 'denied' | 'served',
  why: string,
): Promise<void> {
  const what = `GET /v1/price?code=${code} with ${keyName}`;
  const ex = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: code }, key });
  const b = body(ex);
  const status = b?.status_number;
  const spelled = status === undefined || status === null ? undefined : String(status);
  if (want === 'served') {
    if (spelled === undefined || DENIALS.includes(spelled))
      ctx.violation({ received: `${what}: ${shown(ex)}`, expected: `served, not refused: ${why}` });
    else if (!(REST_STATUSES_WITH_DATA as readonly string[]).includes(spelled))
      ctx.note(`${what}: ${shown(ex)} (not a denial; the pair has no price to serve)`);
    return;
  }
  if (
    spelled === undefined ||
    !(REST_PAIR_DENIALS as readonly string[]).includes(spelled) ||
    b!.data !== null ||
    typeof b!.message !== 'string'
  ) {
    ctx.violation({
      received: `${what}: ${shown(ex)}`,
      expected: `a documented refusal (status_number ${DOCUMENTED_DENIALS}) with data null and a message: ${why}`,
    });
    return;
  }
  ctx.observe(`denial ${keyName}`, { status_number: spelled, http: ex.status }, 'REST refusal code: not shown');
}

/** Pairs of one asset type a limited key's listing is compared on at most. */
const MAX_OWN_PER_TYPE = 3;

/**
 * The pairs of `candidates` that `key`'s own listing (`listed`) leaves out although `/v1/price`
 * serves them to that key (200, or 50102 with data): "The list of pairs available to a key comes
 * from GET /v1/pairs", so a pair the key reads belongs in its list. A candidate the key is refused,
 * or that has no price, proves nothing. Each is a violation.
 */
async function unlistedButServed(
  ctx: CheckContext,
  key: string,
  keyName: string,
  listed: readonly PairRecord[],
  candidates: readonly string[],
): Promise<void> {
  const own = new Set(listed.map((p) => p.code));
  for (const code of candidates.filter((c) => !own.has(c))) {
    const ex = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: code }, key });
    const b = body(ex);
    // Served: answered with a price record, not an empty or listing-shaped `data`.
    const record = typeof b?.data === 'object' && b.data !== null && !Array.isArray(b.data);
    const served = (REST_STATUSES_WITH_DATA as readonly string[]).includes(String(b?.status_number)) && record;
    if (served)
      ctx.violation({
        received: `${code}: served to ${keyName} by /v1/price (${shown(ex)}), but missing from its ${PATHS.pairs}`,
        expected: `the pairs ${keyName} may read are listed in its ${PATHS.pairs} (${listed.length} listed)`,
      });
  }
}

export const entitlementChecks: readonly Check[] = [
  restCheck({
    id: 'rest.entitlements.crypto-only-price',
    enforces: ['status:50109', 'rule:auth:entitlements'],
    catches: ['envelope-error-data-filled', 'envelope-error-message-missing', 'entitlement-asset-type-ignored'],
    tags: ['entitlements', 'auth'],
    needs: ['keys.cryptoOnly'],
    clause: clause(
      'Authentication',
      'a key limited to asset types reads only those (50109: no access to the asset type)',
    ),
    title: 'GET /v1/price of a pair outside keys.cryptoOnly.assetTypes, with that key',
    expectation: `a documented refusal (${DOCUMENTED_DENIALS}) with data null and a message, never the price`,
    async run(ctx) {
      const limited = ctx.profile.keys.cryptoOnly!;
      const other = (await pairPerAssetType(ctx)).find((p) => !limited.assetTypes.includes(assetTypeOf(p.code) ?? ''));
      if (!other) return ctx.skip(`the primary key lists no pair outside ${limited.assetTypes.join(', ')}`);
      await expectAccess(
        ctx,
        other.code,
        limited.key,
        'keys.cryptoOnly',
        'denied',
        `the key reads only ${limited.assetTypes.join(', ')}`,
      );
    },
  }),
  restCheck({
    id: 'rest.entitlements.asset-types',
    enforces: ['status:50109', 'rule:auth:entitlements'],
    catches: [
      'entitlement-asset-type-ignored',
      'entitlement-asset-type-partial',
      // A refusal is judged whole: data null and a message.
      'envelope-error-data-filled',
      'envelope-error-message-missing',
    ],
    tags: ['entitlements', 'auth'],
    needs: ['keys.cryptoOnly'],
    clause: clause(
      'Authentication',
      '5. a key limited to asset types reads those and no other (on REST the refusal code is not stated)',
    ),
    title: "GET /v1/price with keys.cryptoOnly of one pair of every asset type in the primary key's catalogue",
    expectation:
      `a documented refusal (${DOCUMENTED_DENIALS}) with data null and a message for every asset type ` +
      'outside keys.cryptoOnly.assetTypes; its own types served (no denial)',
    async run(ctx) {
      const limited = ctx.profile.keys.cryptoOnly!;
      const sample = (await pairPerAssetType(ctx)).map((p) => p.code);
      const other = sample.filter((c) => !limited.assetTypes.includes(assetTypeOf(c) ?? ''));
      if (other.length === 0) ctx.skip(`the primary key lists no pair outside ${limited.assetTypes.join(', ')}`);
      for (const code of other)
        await expectAccess(
          ctx,
          code,
          limited.key,
          'keys.cryptoOnly',
          'denied',
          `the key reads only ${limited.assetTypes.join(', ')}`,
        );
      for (const code of sample.filter((c) => !other.includes(c)))
        await expectAccess(
          ctx,
          code,
          limited.key,
          'keys.cryptoOnly',
          'served',
          `${assetTypeOf(code)} is one of the key's asset types`,
        );
    },
  }),
  restCheck({
    id: 'rest.entitlements.whitelist-price',
    enforces: ['status:50010', 'rule:auth:entitlements'],
    catches: [
      'auth-canonical-header-refused',
      'entitlement-whitelist-price-ignored',
      // A refusal is judged whole: data null and a message.
      'envelope-error-data-filled',
      'envelope-error-message-missing',
    ],
    tags: ['entitlements', 'auth'],
    needs: ['keys.whitelisted'],
    clause: clause(
      'Authentication',
      '4, 5. a key limited to a whitelist of pairs reads those and no other (on REST the refusal code is not stated)',
    ),
    title:
      `GET /v1/price with keys.whitelisted of its pairs (up to ${MAX_WHITELISTED}) ` +
      `and of a pair outside its whitelist`,
    expectation:
      'its pairs served (no denial); the pair outside refused with a documented refusal ' +
      `(${DOCUMENTED_DENIALS}), data null and a message`,
    async run(ctx) {
      const w = ctx.profile.keys.whitelisted!;
      for (const code of w.pairs.slice(0, MAX_WHITELISTED))
        await expectAccess(ctx, code, w.key, 'keys.whitelisted', 'served', `${code} is on the key's whitelist`);
      const outside = (await pairPerAssetType(ctx)).map((p) => p.code).find((c) => !w.pairs.includes(c));
      if (!outside) return ctx.skip('the primary key lists no pair outside keys.whitelisted.pairs');
      await expectAccess(ctx, outside, w.key, 'keys.whitelisted', 'denied', `${outside} is not on the key's whitelist`);
    },
  }),
  restCheck({
    id: 'rest.entitlements.crypto-only-pairs',
    enforces: ['rule:auth:entitlements'],
    catches: ['entitlement-asset-type-ignored', 'entitlement-pairs-list-unfiltered'],
    tags: ['entitlements', 'auth'],
    needs: ['keys.cryptoOnly'],
    clause: clause('Authentication', 'a key limited to asset types: the pairs it reads depend on the key'),
    title: 'GET /v1/pairs (every page) with keys.cryptoOnly',
    expectation:
      `only pairs of keys.cryptoOnly.assetTypes; and the pairs of those types the primary key lists ` +
      `(the first ${MAX_OWN_PER_TYPE} of each) that /v1/price serves to keys.cryptoOnly are in its list`,
    async run(ctx) {
      const limited = ctx.profile.keys.cryptoOnly!;
      const listed = await catalogue(ctx, {}, limited.key);
      const stray = listed.filter((p) => !limited.assetTypes.includes(assetTypeOf(p.code) ?? ''));
      const ofTypes = (await catalogue(ctx)).map((p) => p.code);
      const candidates = limited.assetTypes.flatMap((t) =>
        ofTypes.filter((c) => assetTypeOf(c) === t).slice(0, MAX_OWN_PER_TYPE),
      );
      if (candidates.length === 0 && listed.length === 0)
        ctx.skip(`neither key lists a pair of ${limited.assetTypes.join(', ')}: nothing to compare`);
      await unlistedButServed(ctx, limited.key, 'keys.cryptoOnly', listed, candidates);
      // An empty list holds no stray: it shows nothing of what the key is limited to.
      if (listed.length === 0) ctx.skip('keys.cryptoOnly lists no pair, so there is no listing to judge');
      if (stray.length)
        ctx.violation({
          received: `listed: ${stray
            .slice(0, 5)
            .map((p) => p.code)
            .join(', ')}${stray.length > 5 ? ` and ${stray.length - 5} more` : ''}`,
          expected: `only ${limited.assetTypes.join(', ')} pairs`,
        });
    },
  }),
  restCheck({
    id: 'rest.entitlements.whitelist-pairs',
    enforces: ['rule:auth:entitlements'],
    catches: ['entitlement-pairs-list-unfiltered', 'entitlement-whitelist-unlisted'],
    tags: ['entitlements', 'auth'],
    needs: ['keys.whitelisted'],
    clause: clause(
      'Authentication',
      'a key limited to a whitelist of pairs reads only those; the list of pairs available to a key comes from ' +
        'GET /v1/pairs',
    ),
    title: 'GET /v1/pairs (every page) with keys.whitelisted',
    expectation:
      'only pairs of keys.whitelisted.pairs; and the pairs of its whitelist that /v1/price serves to it are ' +
      'in its list',
    async run(ctx) {
      const w = ctx.profile.keys.whitelisted!;
      const listed = await catalogue(ctx, {}, w.key);
      const stray = listed.filter((p) => !w.pairs.includes(p.code));
      await unlistedButServed(ctx, w.key, 'keys.whitelisted', listed, w.pairs.slice(0, MAX_WHITELISTED));
      // An empty list holds no stray: it shows nothing of what the key is limited to.
      if (listed.length === 0) ctx.skip('keys.whitelisted lists no pair, so there is no listing to judge');
      if (stray.length)
        ctx.violation({
          received: `listed: ${stray
            .slice(0, 5)
            .map((p) => p.code)
            .join(', ')}${stray.length > 5 ? ` and ${stray.length - 5} more` : ''}`,
          expected: `only ${w.pairs.join(', ')}`,
        });
    },
  }),
];
