/** What a key may read depends on the key (spec: What the service does; Authentication 5). */
import type { Check } from '../../src/check.ts';
import type { CheckContext } from '../../src/check.ts';
import { PATHS, QUERY, REST_STATUSES_WITH_DATA, STATUS } from '../../src/spec.ts';
import {
  assetTypeOf,
  body,
  catalogue,
  clause,
  pairPerAssetType,
  restCheck,
  shown,
  REST_ANSWER_FAULTS,
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

/**
 * GET /v1/price of `code` with `key`: a violation unless the status_number is `want` (read as the
 * string it spells: its type is rest.envelope's rule), or, for `want` "served", unless it is not a
 * denial (a pair the key may read can still be stale or without a price).
 */
async function expectAccess(
  ctx: CheckContext,
  code: string,
  key: string,
  keyName: string,
  want: string | 'served',
  why: string,
): Promise<void> {
  const what = `GET /v1/price?code=${code} with ${keyName}`;
  const ex = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: code }, key });
  const status = body(ex)?.status_number;
  const spelled = status === undefined || status === null ? undefined : String(status);
  if (want === 'served') {
    if (spelled === undefined || DENIALS.includes(spelled))
      ctx.violation({ received: `${what}: ${shown(ex)}`, expected: `served, not refused: ${why}` });
    else if (!(REST_STATUSES_WITH_DATA as readonly string[]).includes(spelled))
      ctx.note(`${what}: ${shown(ex)} (not a denial; the pair has no price to serve)`);
  } else if (spelled !== want)
    ctx.violation({ received: `${what}: ${shown(ex)}`, expected: `status_number "${want}": ${why}` });
}

export const entitlementChecks: readonly Check[] = [
  restCheck({
    id: 'rest.entitlements.crypto-only-price',
    enforces: ['status:50109', 'rule:auth:entitlements'],
    catches: [...REST_ANSWER_FAULTS, 'envelope-error-data-filled', 'entitlement-asset-type-ignored'],
    tags: ['entitlements', 'auth'],
    needs: ['keys.cryptoOnly'],
    clause: clause(
      'Authentication',
      'a key limited to asset types reads only those (50109: no access to the asset type)',
    ),
    title: 'GET /v1/price of a pair outside keys.cryptoOnly.assetTypes, with that key',
    expectation: 'an error status_number with data null, never the price',
    async run(ctx) {
      const limited = ctx.profile.keys.cryptoOnly!;
      const other = (await pairPerAssetType(ctx)).find((p) => !limited.assetTypes.includes(assetTypeOf(p.code) ?? ''));
      if (!other) return ctx.skip(`the primary key lists no pair outside ${limited.assetTypes.join(', ')}`);
      const what = `GET /v1/price?code=${other.code} with keys.cryptoOnly`;
      const ex = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: other.code }, key: limited.key });
      const b = body(ex);
      const status = b?.status_number;
      if (
        typeof status !== 'string' ||
        (REST_STATUSES_WITH_DATA as readonly string[]).includes(status) ||
        b!.data !== null
      ) {
        ctx.violation({
          received: `${what}: ${shown(ex)}`,
          expected:
            `refused: an error status_number (50109 names this case) and data null, ` +
            `since the key reads only ${limited.assetTypes.join(', ')}`,
        });
      } else
        ctx.observe('status', { status_number: status, http: ex.status }, 'status used to refuse another asset type');
    },
  }),
  restCheck({
    id: 'rest.entitlements.asset-types',
    enforces: ['status:50109', 'rule:auth:entitlements'],
    catches: [...REST_ANSWER_FAULTS, 'entitlement-asset-type-ignored', 'entitlement-asset-type-partial'],
    tags: ['entitlements', 'auth'],
    needs: ['keys.cryptoOnly'],
    clause: clause(
      'Authentication',
      '5. a key limited to asset types reads those and no other (REST 50109: no access to the asset type)',
    ),
    title: "GET /v1/price with keys.cryptoOnly of one pair of every asset type in the primary key's catalogue",
    expectation:
      'status_number "50109" for every asset type outside keys.cryptoOnly.assetTypes; its own types served (no denial)',
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
          STATUS.ASSET_TYPE_DENIED,
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
    catches: [...REST_ANSWER_FAULTS, 'entitlement-whitelist-price-ignored'],
    tags: ['entitlements', 'auth'],
    needs: ['keys.whitelisted'],
    clause: clause(
      'Authentication',
      '4, 5. a key limited to a whitelist of pairs reads those and no other (50010: access denied)',
    ),
    title:
      `GET /v1/price with keys.whitelisted of its pairs (up to ${MAX_WHITELISTED}) ` +
      `and of a pair outside its whitelist`,
    expectation: 'its pairs served (no denial); the pair outside answered with status_number "50010"',
    async run(ctx) {
      const w = ctx.profile.keys.whitelisted!;
      for (const code of w.pairs.slice(0, MAX_WHITELISTED))
        await expectAccess(ctx, code, w.key, 'keys.whitelisted', 'served', `${code} is on the key's whitelist`);
      const outside = (await pairPerAssetType(ctx)).map((p) => p.code).find((c) => !w.pairs.includes(c));
      if (!outside) return ctx.skip('the primary key lists no pair outside keys.whitelisted.pairs');
      await expectAccess(
        ctx,
        outside,
        w.key,
        'keys.whitelisted',
        STATUS.ACCESS_DENIED,
        `${outside} is not on the key's whitelist`,
      );
    },
  }),
  restCheck({
    id: 'rest.entitlements.crypto-only-pairs',
    enforces: ['rule:auth:entitlements'],
    catches: [...REST_ANSWER_FAULTS, 'entitlement-asset-type-ignored', 'entitlement-pairs-list-unfiltered'],
    tags: ['entitlements', 'auth'],
    needs: ['keys.cryptoOnly'],
    clause: clause('Authentication', 'a key limited to asset types: the pairs it reads depend on the key'),
    title: 'GET /v1/pairs (every page) with keys.cryptoOnly',
    expectation: 'only pairs of keys.cryptoOnly.assetTypes',
    async run(ctx) {
      const limited = ctx.profile.keys.cryptoOnly!;
      const stray = (await catalogue(ctx, {}, limited.key)).filter(
        (p) => !limited.assetTypes.includes(assetTypeOf(p.code) ?? ''),
      );
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
    catches: [...REST_ANSWER_FAULTS, 'entitlement-pairs-list-unfiltered'],
    tags: ['entitlements', 'auth'],
    needs: ['keys.whitelisted'],
    clause: clause('Authentication', 'a key limited to a whitelist of pairs reads only those'),
    title: 'GET /v1/pairs (every page) with keys.whitelisted',
    expectation: 'only pairs of keys.whitelisted.pairs',
    async run(ctx) {
      const w = ctx.profile.keys.whitelisted!;
      const stray = (await catalogue(ctx, {}, w.key)).filter((p) => !w.pairs.includes(p.code));
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
