/** Authentication of REST requests (spec: Authentication 1, 2; Errors). */
import { randomBytes } from 'node:crypto';
import type { Check } from '../../src/check.ts';
import { PATHS, QUERY, STATUS } from '../../src/spec.ts';
import { body, clause, expectHttp, expectStatus, restCheck, shown } from './support.ts';
import { HEADER_CASES } from '../key-headers.ts';

const HTTP_UNAUTHORIZED = 401;

const rejected = (which: 'missing' | 'invalid'): Check =>
  restCheck({
    id: `rest.auth.${which}-key`,
    enforces: ['status:50005', 'rule:auth:rest-without-a-valid-key'],
    catches: [...(which === 'missing' ? (['auth-missing-key-accepted'] as const) : []), 'auth-http-403'],
    tags: ['auth'],
    clause: clause('Authentication', 'a request without a valid key is rejected with HTTP 401 and status_number 50005'),
    title:
      which === 'missing'
        ? 'GET /v1/pairs and /v1/price with no key header'
        : 'GET /v1/pairs and /v1/price with a key nobody issued',
    expectation: 'HTTP 401 and status_number "50005" on both',
    async run(ctx) {
      // A fresh random value: it cannot be a valid key of any target.
      const key = which === 'missing' ? null : `conform-invalid-${randomBytes(8).toString('hex')}`;
      const first =
        (body(await ctx.rest.get({ path: PATHS.pairs }))?.data as { code?: string }[] | undefined)?.[0]?.code ??
        'Crypto:ALL:BTC/USD';
      for (const [what, req] of [
        ['GET /v1/pairs', { path: PATHS.pairs, key }],
        [`GET /v1/price?code=${first}`, { path: PATHS.price, query: { [QUERY.price.code]: first }, key }],
      ] as const) {
        const ex = await ctx.rest.get(req);
        expectHttp(ctx, ex, HTTP_UNAUTHORIZED, what);
        expectStatus(ctx, ex, STATUS.UNAUTHORIZED, what);
      }
    },
  });

export const authChecks: readonly Check[] = [
  rejected('missing'),
  rejected('invalid'),
  ...HEADER_CASES.map((c) =>
    restCheck({
      id: `rest.auth.header-case.${c.id}`,
      enforces: ['rule:auth:header'],
      catches: c.catches,
      tags: ['auth'],
      clause: clause(
        'Authentication',
        'the key header is X-API-Key (also X-API-KEY); header names are case-insensitive',
      ),
      title: `GET /v1/pairs with the primary key in header "${c.header}"`,
      expectation: 'accepted: status_number "200"',
      async run(ctx) {
        const ex = await ctx.rest.get({ path: PATHS.pairs, keyHeader: c.header });
        expectStatus(ctx, ex, STATUS.OK, `GET /v1/pairs with ${c.header}`, true);
      },
    }),
  ),
  restCheck({
    id: 'rest.auth.suspended',
    enforces: ['status:50007'],
    catches: ['auth-canonical-header-refused', 'auth-suspended-served'],
    tags: ['auth'],
    needs: ['keys.suspended'],
    clause: clause('REST `status_number` values', '50007: key suspended'),
    title: 'GET /v1/pairs with keys.suspended',
    expectation: 'status_number "50007"',
    async run(ctx) {
      const ex = await ctx.rest.get({ path: PATHS.pairs, key: ctx.profile.keys.suspended!.key });
      if (expectStatus(ctx, ex, STATUS.SUSPENDED, 'GET /v1/pairs with the suspended key'))
        ctx.observe('http-status', ex.status, 'HTTP status of 50007 (per status: not shown)');
      else ctx.note(shown(ex));
    },
  }),
];
