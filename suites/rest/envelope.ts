/** REST envelope and unknown endpoints (spec: REST envelope; Errors). */
import type { Check, CheckContext } from '../../src/check.ts';
import type { RestExchange } from '../../src/transports/rest.ts';
import { PATHS, QUERY, REST_STATUSES_WITH_DATA, STATUS } from '../../src/spec.ts';
import { assetTypeOf, body, clause, expectStatus, MAX_PAGES, pairPerAssetType, restCheck, shown } from './support.ts';
import { INVALID_PARAMS } from './pairs.ts';

/** A path under /v1 that no version of the spec names. */
export const UNKNOWN_ENDPOINT = '/v1/conform-no-such-endpoint';
/** A well-formed pair code that no catalogue holds. */
export const UNKNOWN_PAIR = 'Crypto:ALL:CONFORMNOSUCH/USD';
/** A key no target issues. */
const INVALID_KEY = 'conform-invalid-key-for-envelope-0000';

/** Requests whose answers are errors by the spec, each with what it sends. */
async function errorAnswers(ctx: CheckContext): Promise<[string, RestExchange][]> {
  return [
    ['GET /v1/pairs without a key', await ctx.rest.get({ path: PATHS.pairs, key: null })],
    [
      'GET /v1/price of an unknown pair',
      await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: UNKNOWN_PAIR } }),
    ],
    ['GET /v1/price without code', await ctx.rest.get({ path: PATHS.price })],
    [`GET ${UNKNOWN_ENDPOINT}`, await ctx.rest.get({ path: UNKNOWN_ENDPOINT })],
  ];
}

/**
 * A page past the end of any catalogue the harness walks: a service that ends its list with 50004
 * (the spec leaves it open) writes an error envelope there, maybe its only one on /v1/pairs.
 */
const FAR_PAGE = MAX_PAGES + 1;

/**
 * The other errors the suite provokes: an invalid key, each invalid page/per_page of /v1/pairs, a
 * page past the end (an error only where the service ends its list with one), and with the
 * profile's keys a suspended key, another asset type and a pair outside a whitelist.
 */
async function moreErrorAnswers(ctx: CheckContext): Promise<[string, RestExchange][]> {
  const out: [string, RestExchange][] = [
    ['GET /v1/pairs with an invalid key', await ctx.rest.get({ path: PATHS.pairs, key: INVALID_KEY })],
  ];
  for (const c of INVALID_PARAMS)
    out.push([
      `GET /v1/pairs?${c.param}=${c.value}`,
      await ctx.rest.get({ path: PATHS.pairs, query: { [c.param]: c.value } }),
    ]);
  out.push([
    `GET /v1/pairs?page=${FAR_PAGE}`,
    await ctx.rest.get({ path: PATHS.pairs, query: { [QUERY.pairs.page]: String(FAR_PAGE) } }),
  ]);
  const { suspended, cryptoOnly, whitelisted } = ctx.profile.keys;
  if (suspended)
    out.push(['GET /v1/pairs with keys.suspended', await ctx.rest.get({ path: PATHS.pairs, key: suspended.key })]);
  if (!cryptoOnly && !whitelisted) return out;
  const sample = (await pairPerAssetType(ctx)).map((p) => p.code);
  const price = (code: string, key: string): Promise<RestExchange> =>
    ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: code }, key });
  const otherType = cryptoOnly && sample.find((c) => !cryptoOnly.assetTypes.includes(assetTypeOf(c) ?? ''));
  if (cryptoOnly && otherType)
    out.push([`GET /v1/price?code=${otherType} with keys.cryptoOnly`, await price(otherType, cryptoOnly.key)]);
  const outside = whitelisted && sample.find((c) => !whitelisted.pairs.includes(c));
  if (whitelisted && outside)
    out.push([`GET /v1/price?code=${outside} with keys.whitelisted`, await price(outside, whitelisted.key)]);
  return out;
}

export const envelopeChecks: readonly Check[] = [
  restCheck({
    id: 'rest.envelope.schema',
    enforces: [
      'field:envelope:status_number',
      'field:envelope:ts',
      'field:envelope:data',
      'status:200',
      'rule:service:json-bodies',
    ],
    catches: [
      'envelope-status-number-integer',
      'envelope-ts-string',
      // The primary key refused: every answer of the run an error envelope.
      'auth-canonical-header-refused',
    ],
    clause: clause('REST envelope', 'status_number a documented string, ts an integer, data object/array/null'),
    title: 'GET /v1/pairs, /v1/price (known and unknown pair, no code), no key, an unknown endpoint',
    expectation:
      'every body is the REST envelope: status_number one of the documented strings, ts an integer, data present',
    async run(ctx) {
      const pairs = await ctx.rest.get({ path: PATHS.pairs });
      const data = body(pairs)?.data;
      const first = Array.isArray(data) ? (data[0] as { code?: unknown } | undefined)?.code : undefined;
      const answers: [string, RestExchange][] = [['GET /v1/pairs', pairs]];
      if (typeof first === 'string')
        answers.push([
          `GET /v1/price?code=${first}`,
          await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: first } }),
        ]);
      answers.push(...(await errorAnswers(ctx)));
      for (const [what, ex] of answers) {
        if (ex.json === undefined) {
          ctx.violation({
            received: `${what}: not JSON: ${shown(ex)}`,
            expected: `${what}: a JSON body (All request and response bodies are JSON)`,
          });
          continue;
        }
        ctx.expectSchema('rest-envelope', ex.json, what);
      }
    },
  }),
  restCheck({
    id: 'rest.envelope.error-shape',
    enforces: [
      'field:envelope:status_number',
      'field:envelope:data',
      'field:envelope:message',
      'parameter:pairs:page',
      'parameter:pairs:per_page',
    ],
    catches: [
      'auth-canonical-header-refused',
      'envelope-error-data-filled',
      'envelope-error-message-missing',
      'pairs-error-envelope',
    ],
    clause: clause('REST envelope', 'status_number a string; data null on errors; message present on errors'),
    title:
      'every request the suite answers with an error: no key, an invalid key, unknown pair, no ' +
      'code, unknown endpoint, each invalid page/per_page of /v1/pairs, a page past the end (where ' +
      "the service ends its list with an error), and with the profile's " +
      'keys a suspended key, another asset type, a pair outside a whitelist',
    expectation: 'each error envelope has status_number a string, data null and a message string',
    async run(ctx) {
      let errors = 0;
      for (const [what, ex] of [...(await errorAnswers(ctx)), ...(await moreErrorAnswers(ctx))]) {
        const b = body(ex);
        const status = b?.status_number;
        // A number is read as the status it spells, so that its type is judged here too.
        const spelled = typeof status === 'number' ? String(status) : status;
        if (typeof spelled !== 'string' || (REST_STATUSES_WITH_DATA as readonly string[]).includes(spelled)) {
          ctx.note(`${what}: not an error answer (${shown(ex)}), left to its own check`);
          continue;
        }
        errors++;
        if (typeof status !== 'string')
          ctx.violation({
            received: `${what}: status_number ${JSON.stringify(status)}, a JSON number`,
            expected: `${what}: status_number a string`,
          });
        if (b!.data !== null)
          ctx.violation({
            received: `${what}: status_number ${spelled} with data ${JSON.stringify(b!.data)?.slice(0, 120)}`,
            expected: `${what}: data null on an error`,
          });
        if (typeof b!.message !== 'string')
          ctx.violation({
            received: `${what}: status_number ${spelled} with message ${JSON.stringify(b!.message)}`,
            expected: `${what}: a message string on an error`,
          });
      }
      if (errors === 0) ctx.skip('no request was answered with an error status_number');
    },
  }),
  restCheck({
    id: 'rest.not-found.endpoint',
    enforces: ['status:50008', 'rule:endpoints:unknown-endpoint'],
    catches: ['unknown-endpoint-50004'],
    clause: clause('REST `status_number` values', '50008: endpoint or resource does not exist'),
    title: `GET ${UNKNOWN_ENDPOINT} with the primary key`,
    expectation: 'status_number "50008"',
    async run(ctx) {
      const ex = await ctx.rest.get({ path: UNKNOWN_ENDPOINT });
      expectStatus(ctx, ex, STATUS.NOT_FOUND, `GET ${UNKNOWN_ENDPOINT}`);
    },
  }),
];
