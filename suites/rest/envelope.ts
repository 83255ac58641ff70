/** REST envelope and unknown endpoints (spec: REST envelope; Errors). */
import type { Check, CheckContext } from '../../src/check.ts';
import type { RestExchange } from '../../src/transports/rest.ts';
import { PATHS, QUERY, REST_STATUSES_WITH_DATA, STATUS } from '../../src/spec.ts';
import { body, clause, expectStatus, restCheck, shown } from './support.ts';

/** A path under /v1 that no version of the spec names. */
export const UNKNOWN_ENDPOINT = '/v1/conform-no-such-endpoint';
/** A well-formed pair code that no catalogue holds. */
export const UNKNOWN_PAIR = 'Crypto:ALL:CONFORMNOSUCH/USD';

/** Requests whose answers are errors by the spec, each with what it sends. */
async function errorAnswers(ctx: CheckContext): Promise<[string, RestExchange][]> {
  return [
    ['GET /v1/pairs without a key', await ctx.rest.get({ path: PATHS.pairs, key: null })],
    ['GET /v1/price of an unknown pair', await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: UNKNOWN_PAIR } })],
    ['GET /v1/price without code', await ctx.rest.get({ path: PATHS.price })],
    [`GET ${UNKNOWN_ENDPOINT}`, await ctx.rest.get({ path: UNKNOWN_ENDPOINT })],
  ];
}

export const envelopeChecks: readonly Check[] = [
  restCheck({
    id: 'rest.envelope.schema',
    clause: clause('REST envelope', 'status_number a documented string, ts an integer, data object/array/null'),
    title: 'GET /v1/pairs, /v1/price (known and unknown pair, no code), no key, an unknown endpoint',
    expectation: 'every body is the REST envelope: status_number one of the documented strings, ts an integer, data present',
    async run(ctx) {
      const pairs = await ctx.rest.get({ path: PATHS.pairs });
      const data = body(pairs)?.data;
      const first = Array.isArray(data) ? (data[0] as { code?: unknown } | undefined)?.code : undefined;
      const answers: [string, RestExchange][] = [['GET /v1/pairs', pairs]];
      if (typeof first === 'string') answers.push([`GET /v1/price?code=${first}`, await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: first } })]);
      answers.push(...await errorAnswers(ctx));
      for (const [what, ex] of answers) {
        if (ex.json === undefined) { ctx.violation({ received: `${what}: not JSON: ${shown(ex)}`, expected: `${what}: a JSON body (All request and response bodies are JSON)` }); continue; }
        ctx.expectSchema('rest-envelope', ex.json, what);
      }
    },
  }),
  restCheck({
    id: 'rest.envelope.error-shape',
    clause: clause('REST envelope', 'data null on errors; message present on errors'),
    title: 'requests the spec answers with an error: no key, unknown pair, no code, unknown endpoint',
    expectation: 'each error envelope has data null and a message string',
    async run(ctx) {
      let errors = 0;
      for (const [what, ex] of await errorAnswers(ctx)) {
        const b = body(ex);
        const status = b?.status_number;
        if (typeof status !== 'string' || (REST_STATUSES_WITH_DATA as readonly string[]).includes(status)) { ctx.note(`${what}: not an error answer (${shown(ex)}), left to its own check`); continue; }
        errors++;
        if (b!.data !== null) ctx.violation({ received: `${what}: status_number ${status} with data ${JSON.stringify(b!.data)?.slice(0, 120)}`, expected: `${what}: data null on an error` });
        if (typeof b!.message !== 'string') ctx.violation({ received: `${what}: status_number ${status} with message ${JSON.stringify(b!.message)}`, expected: `${what}: a message string on an error` });
      }
      if (errors === 0) ctx.skip('no request was answered with an error status_number');
    },
  }),
  restCheck({
    id: 'rest.not-found.endpoint',
    clause: clause('REST `status_number` values', '50008: endpoint or resource does not exist'),
    title: `GET ${UNKNOWN_ENDPOINT} with the primary key`,
    expectation: 'status_number "50008"',
    async run(ctx) {
      const ex = await ctx.rest.get({ path: UNKNOWN_ENDPOINT });
      expectStatus(ctx, ex, STATUS.NOT_FOUND, `GET ${UNKNOWN_ENDPOINT}`);
    },
  }),
];
