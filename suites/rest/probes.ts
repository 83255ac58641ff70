/**
 * Profile probes: requests the target answers with a given status_number (maintenance, restricted
 * users, pools…), which no generic request can provoke. One check per documented status, so ids
 * stay stable whatever the profile holds.
 */
import type { Check } from '../../src/check.ts';
import { REST_STATUSES, REST_STATUSES_WITH_DATA, REST_STATUS, STATUS } from '../../src/spec.ts';
import { ConformError } from '../../src/errors.ts';
import { body, clause, expectHttp, expectStatus, queryText, restCheck } from './support.ts';

export const probeChecks: readonly Check[] = REST_STATUSES.filter((s) => s !== STATUS.OK).map((status) =>
  restCheck({
    id: `rest.probe.${status}`,
    tags: ['auth'],
    needs: ['probes'],
    clause: clause('REST `status_number` values', `${status}: ${REST_STATUS[status]}`),
    title: `every profile probe of status ${status}`,
    expectation:
      `status_number "${status}"` +
      `${(REST_STATUSES_WITH_DATA as readonly string[]).includes(status) ? ' with data' : ', data null and a message'}`,
    async run(ctx) {
      const probes = (ctx.profile.probes ?? []).filter((p) => p.status === status);
      if (probes.length === 0) ctx.skip(`profile has no probe of status ${status}`);
      for (const p of probes) {
        const keyName = p.key ?? 'primary';
        const entry = ctx.profile.keys[keyName];
        if (!entry)
          throw new ConformError(
            'CONFORM_PROFILE',
            `probe ${p.path} names key "${keyName}", which the profile does not hold`,
          );
        // A probe of 50006 wants the throttled answer; every other probe is paced like any request.
        const ex = await ctx.rest.get({
          path: p.path,
          query: p.query,
          key: entry.key,
          paced: status !== STATUS.RATE_LIMITED,
        });
        const what = `GET ${p.path}${queryText(p.query)} with keys.${keyName}`;
        if (p.httpStatus !== undefined) expectHttp(ctx, ex, p.httpStatus, what);
        if (!expectStatus(ctx, ex, status, what)) continue;
        ctx.observe(`http-status ${what}`, ex.status);
        const b = body(ex)!;
        if (!(REST_STATUSES_WITH_DATA as readonly string[]).includes(status)) ctx.expectSchema('rest-error', b, what);
        else if (b.data === null || typeof b.data !== 'object')
          ctx.violation({ received: `${what}: data ${JSON.stringify(b.data)}`, expected: 'data still filled' });
      }
    },
  }),
);
