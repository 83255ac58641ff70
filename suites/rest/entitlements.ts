/** What a key may read depends on the key (spec: What the service does; Authentication 5). */
import type { Check } from '../../src/check.ts';
import { PATHS, QUERY, REST_STATUSES_WITH_DATA } from '../../src/spec.ts';
import { assetTypeOf, body, catalogue, clause, restCheck, shown, specialPairs } from './support.ts';

export const entitlementChecks: readonly Check[] = [
  restCheck({
    id: 'rest.entitlements.crypto-only-price',
    tags: ['entitlements', 'auth'],
    needs: ['keys.cryptoOnly'],
    clause: clause('Authentication', 'a key limited to asset types reads only those (50109: no access to the asset type)'),
    title: 'GET /v1/price of a pair outside keys.cryptoOnly.assetTypes, with that key',
    expectation: 'an error status_number with data null, never the price',
    async run(ctx) {
      const limited = ctx.profile.keys.cryptoOnly!;
      const other = (await catalogue(ctx)).find((p) => !limited.assetTypes.includes(assetTypeOf(p.code) ?? '') && !specialPairs(ctx).includes(p.code));
      if (!other) return ctx.skip(`the primary key lists no pair outside ${limited.assetTypes.join(', ')}`);
      const what = `GET /v1/price?code=${other.code} with keys.cryptoOnly`;
      const ex = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: other.code }, key: limited.key });
      const b = body(ex);
      const status = b?.status_number;
      if (typeof status !== 'string' || (REST_STATUSES_WITH_DATA as readonly string[]).includes(status) || b!.data !== null) {
        ctx.violation({ received: `${what}: ${shown(ex)}`, expected: `refused: an error status_number (50109 names this case) and data null, since the key reads only ${limited.assetTypes.join(', ')}` });
      } else ctx.observe('status', { status_number: status, http: ex.status }, 'status used to refuse another asset type');
    },
  }),
  restCheck({
    id: 'rest.entitlements.crypto-only-pairs',
    tags: ['entitlements', 'auth'],
    needs: ['keys.cryptoOnly'],
    clause: clause('Authentication', 'a key limited to asset types: the pairs it reads depend on the key'),
    title: 'GET /v1/pairs (every page) with keys.cryptoOnly',
    expectation: 'only pairs of keys.cryptoOnly.assetTypes',
    async run(ctx) {
      const limited = ctx.profile.keys.cryptoOnly!;
      const stray = (await catalogue(ctx, {}, limited.key)).filter((p) => !limited.assetTypes.includes(assetTypeOf(p.code) ?? ''));
      if (stray.length) ctx.violation({ received: `listed: ${stray.slice(0, 5).map((p) => p.code).join(', ')}${stray.length > 5 ? ` and ${stray.length - 5} more` : ''}`, expected: `only ${limited.assetTypes.join(', ')} pairs` });
    },
  }),
  restCheck({
    id: 'rest.entitlements.whitelist-pairs',
    tags: ['entitlements', 'auth'],
    needs: ['keys.whitelisted'],
    clause: clause('Authentication', 'a key limited to a whitelist of pairs reads only those'),
    title: 'GET /v1/pairs (every page) with keys.whitelisted',
    expectation: 'only pairs of keys.whitelisted.pairs',
    async run(ctx) {
      const w = ctx.profile.keys.whitelisted!;
      const stray = (await catalogue(ctx, {}, w.key)).filter((p) => !w.pairs.includes(p.code));
      if (stray.length) ctx.violation({ received: `listed: ${stray.slice(0, 5).map((p) => p.code).join(', ')}${stray.length > 5 ? ` and ${stray.length - 5} more` : ''}`, expected: `only ${w.pairs.join(', ')}` });
    },
  }),
];
