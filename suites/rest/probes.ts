/**
 * Profile probes: requests the target answers with a given status_number (maintenance, restricted
 * users, pools…), which no generic request can provoke. One check per documented status, so ids
 * stay stable whatever the profile holds.
 */
import type { Check } from '../../src/check.ts';
import type { StatementKey } from '../../src/statements.ts';
import {
  REST_PAIR_DENIALS,
  REST_STATUSES,
  REST_STATUSES_WITH_DATA,
  REST_STATUS,
  STATUS,
  type RestStatus,
} from '../../src/spec.ts';
import { ProfileError } from '../../src/errors.ts';
import { body, clause, expectHttp, expectStatus, queryText, restCheck } from './support.ts';
import type { FaultName } from '../../src/fault-name.ts';

/** Statements besides its status's row that the probe of a status enforces. */
const ALSO_ENFORCES: Readonly<Partial<Record<RestStatus, readonly StatementKey[]>>> = {
  [STATUS.RATE_LIMITED]: ['limit:rest-rate-limit'],
  [STATUS.POOL_UNAVAILABLE]: ['parameter:price:pool'],
  [STATUS.POOL_NOT_FOUND]: ['parameter:price:pool'],
};

/** Reference faults that change the answer of one status (the probe of that status catches them). */
const FAULTS_OF_STATUS: Readonly<Partial<Record<RestStatus, readonly FaultName[]>>> = {
  [STATUS.API_MAINTENANCE]: ['probe-status-swapped'],
  [STATUS.INVALID_REQUEST]: ['missing-code-200'],
  [STATUS.UNAUTHORIZED]: ['auth-http-403'],
  [STATUS.SUSPENDED]: ['auth-suspended-served'],
  [STATUS.NOT_FOUND]: ['unknown-endpoint-50004'],
  [STATUS.ACCESS_DENIED]: ['entitlement-whitelist-price-ignored'],
  [STATUS.RESTRICTED_USER]: ['probe-restricted-as-suspended'],
  [STATUS.PRICE_STALE]: ['stale-http-503', 'stale-data-null'],
  [STATUS.PAIR_NOT_FOUND]: ['unknown-pair-status-50008'],
  [STATUS.NO_PAIRS_ALLOWED]: ['entitlement-pairs-list-unfiltered'],
  [STATUS.ASSET_TYPE_DENIED]: ['entitlement-asset-type-ignored'],
};

/**
 * The reference faults a probe must catch: a broken envelope shows in every answer, a broken error
 * envelope in every answer without data; a refused canonical header turns every answer but 50005's
 * into 50005. The reference's profile holds no probe of 50009 (it refuses connections in the
 * stream handshake only), so that probe skips there and catches nothing.
 */
function probeCatches(status: RestStatus): FaultName[] {
  if (status === STATUS.CONNECTION_LIMIT) return [];
  return [
    // A key of its own, not the primary one, refused as written: this probe's status is not answered.
    ...(KEYED_PROBES.includes(status) ? (['auth-canonical-header-refused'] as const) : []),
    ...(FAULTS_OF_STATUS[status] ?? []),
  ];
}

/** Statuses the reference's probes provoke with a key of their own (a state, an entitlement), not the primary key. */
const KEYED_PROBES: readonly RestStatus[] = [
  STATUS.API_MAINTENANCE,
  STATUS.WS_MAINTENANCE,
  STATUS.GRPC_MAINTENANCE,
  STATUS.RATE_LIMITED,
  STATUS.SUSPENDED,
  STATUS.ACCESS_DENIED,
  STATUS.RESTRICTED_USER,
  STATUS.NO_PAIRS_ALLOWED,
  STATUS.ASSET_TYPE_DENIED,
];

export const probeChecks: readonly Check[] = REST_STATUSES.filter((s) => s !== STATUS.OK).map((status) =>
  restCheck({
    id: `rest.probe.${status}`,
    enforces: [`status:${status}`, ...(ALSO_ENFORCES[status] ?? [])],
    catches: probeCatches(status),
    // A dialect that answers every refused pair with one documented denial probes it with the
    // whitelisted key and the asset-type-limited one.
    ...(REST_PAIR_DENIALS.includes(status)
      ? { catchesUnderDialects: ['entitlement-whitelist-price-ignored', 'entitlement-asset-type-ignored'] }
      : {}),
    tags: ['auth'],
    needs: ['probes'],
    clause: clause('REST `status_number` values', `${status}: ${REST_STATUS[status]}`),
    title: `every profile probe of status ${status}`,
    expectation:
      `status_number "${status}"` +
      `${(REST_STATUSES_WITH_DATA as readonly string[]).includes(status) ? ' with data' : ', data null and a message'}`,
    async run(ctx) {
      const probes = (ctx.profile.probes ?? []).filter((p) => p.status === status);
      if (probes.length === 0) ctx.skip(`no probe of status ${status} given (a profile's probes name one)`);
      for (const p of probes) {
        const keyName = p.key ?? 'primary';
        const entry = ctx.profile.keys[keyName];
        if (!entry) throw new ProfileError(`probe ${p.path} names key "${keyName}", which the profile does not hold`);
        // A probe of 50006 wants the throttled answer; every other probe is paced like any request.
        const ex = await ctx.rest.get({
          path: p.path,
          query: p.query,
          key: entry.key,
          paced: status !== STATUS.RATE_LIMITED,
        });
        const what = `GET ${p.path}${queryText(p.query)} with keys.${keyName}`;
        // The status first: an answer that breaks another check's rule (the primary key refused) is not judged.
        const answered = expectStatus(ctx, ex, status, what);
        if (p.httpStatus !== undefined) expectHttp(ctx, ex, p.httpStatus, what);
        if (!answered) continue;
        ctx.observe(`http-status ${what}`, ex.status);
        const b = body(ex)!;
        if (!(REST_STATUSES_WITH_DATA as readonly string[]).includes(status)) ctx.expectSchema('rest-error', b, what);
        else if (b.data === null || typeof b.data !== 'object')
          ctx.violation({ received: `${what}: data ${JSON.stringify(b.data)}`, expected: 'data still filled' });
      }
    },
  }),
);
