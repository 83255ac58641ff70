/**
 * Every pair of the catalogue read once from GET /v1/price (spec: GET /v1/price; Price record;
 * Market object), not one sample per asset type: a service broken on one pair deep in its
 * catalogue fails here. The reads take the primary key's turns in the run's request budget, so
 * they never trip the rate limit themselves; they run in a lane of their own beside the keep-alive checks.
 */
import type { Check, CheckContext } from '../../src/check.ts';
import type { Profile } from '../../src/profile.ts';
import { NOTHING_TO_JUDGE } from '../../src/coverage.ts';
import { PACING } from '../../src/request-budget.ts';
import { isIanaZone, priceProblems } from '../../src/quote-rules.ts';
import { LIMITS, PATHS, QUERY, REST_STATUSES_WITH_DATA } from '../../src/spec.ts';
import { body, catalogue, clause, restCheck, shown, type Json, REST_ANSWER_FAULTS } from './support.ts';

/** Pairs read at most (a catalogue of thousands is read in part, and says so). */
export const CATALOGUE_BOUND = 500;
/** Price reads in flight at once; the budget still spaces them at the key's pace. */
const LANES = 4;
/** Without a declared rate, the time allowed for the whole walk. */
const UNDECLARED_TIMEOUT_MS = 60_000;

const PRICE = 'GET /v1/price';
const pages = Math.ceil(CATALOGUE_BOUND / LIMITS.defaultPerPage);

/**
 * The check's time: the walk at the primary key's declared pace, with half again for latency; a
 * minute when no rate is declared.
 */
export function catalogueTimeoutMs(profile: Profile): number {
  const rate = profile.keys.primary.rateLimit;
  if (!rate || rate.requests === 0) return UNDECLARED_TIMEOUT_MS;
  const spacingMs = rate.windowMs / (rate.requests * PACING.declaredShare);
  return Math.max(UNDECLARED_TIMEOUT_MS, Math.ceil((CATALOGUE_BOUND + pages) * spacingMs * 1.5));
}

/** Judges one price answer; returns whether it carried a price to judge. */
async function readOne(ctx: CheckContext, code: string): Promise<boolean> {
  const ex = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: code } });
  const what = `${PRICE}?code=${code}`;
  const b = body(ex);
  // Read loosely here: a status of the wrong type is the schema's violation below, not a reason to skip the pair.
  const priced =
    (REST_STATUSES_WITH_DATA as readonly string[]).includes(String(b?.status_number)) &&
    b!.data !== null &&
    typeof b!.data === 'object';
  if (!priced) {
    // A listed pair may have no price now (50101, 50105, 50106…); those answers are the probes' and
    // envelope checks' to judge.
    ctx.note(`${what}: no price (${shown(ex)}); not judged here`);
    return false;
  }
  ctx.expectSchema('price-response', ex.json, what);
  const data = b!.data as Json;
  if (data.code !== code)
    ctx.violation({
      received: `${what}: data.code ${JSON.stringify(data.code)}`,
      expected: 'data.code equal to the requested code',
    });
  for (const why of priceProblems(data))
    ctx.violation({ received: `${what}: ${why}`, expected: 'bid <= price <= ask, price the mid of ask and bid' });
  const tz = (data.market as Json | undefined)?.timezone;
  if (typeof tz === 'string' && !isIanaZone(tz))
    ctx.violation({ received: `${what}: market.timezone "${tz}"`, expected: 'a canonical IANA zone name' });
  return true;
}

export const catalogueChecks: readonly Check[] = [
  restCheck({
    id: 'rest.price.catalogue',
    enforces: ['field:price:code', 'field:price:ask', 'field:price:bid', 'field:price:price', 'field:price:market'],
    catches: [
      ...REST_ANSWER_FAULTS,
      'envelope-ts-string',
      'price-ask-number',
      'price-not-mid',
      'price-bid-above-ask',
      'price-deep-pair-inverted',
      'market-crypto-timezone',
      'market-timezone-missing',
      'market-timezone-invalid',
      'market-crypto-regular-session',
      'market-open-inverted',
      // Market rules on every pair, not on samples
      'market-crypto-deep-session',
      'market-timezone-alias',
      'market-extended-hours-non-us',
    ],
    tags: ['price', 'slow'],
    timeoutMs: catalogueTimeoutMs,
    clause: clause(
      'Price record (`data` in the price response)',
      'every listed pair: code as requested, ask, bid, price decimal strings ' +
        'with bid <= price <= ask, market per asset type',
    ),
    title:
      `${PRICE}?code=<every pair ${PATHS.pairs} lists, up to ${CATALOGUE_BOUND}>, ` +
      `paced within the key's rate limit`,
    expectation:
      'each answer with a price matches price-response (decimal strings, market per asset type), ' +
      'data.code is the requested code, bid <= price <= ask with price the mid, timezone an IANA zone',
    async run(ctx) {
      const listed = (await catalogue(ctx, {}, undefined, pages)).map((p) => p.code);
      const codes = [...new Set(listed)].slice(0, CATALOGUE_BOUND);
      if (codes.length === 0) ctx.skip(`${PATHS.pairs} lists no pair`, NOTHING_TO_JUDGE.pricedPair);
      if (listed.length > CATALOGUE_BOUND)
        ctx.note(`the catalogue lists more than ${CATALOGUE_BOUND} pairs: the first ${CATALOGUE_BOUND} are read`);
      let next = 0;
      let priced = 0;
      const lane = async (): Promise<void> => {
        while (next < codes.length && !ctx.signal.aborted) if (await readOne(ctx, codes[next++]!)) priced++;
      };
      await Promise.all(Array.from({ length: Math.min(LANES, codes.length) }, lane));
      ctx.note(`${priced} of ${codes.length} listed pairs answered with a price and were judged`);
      if (priced === 0)
        ctx.skip(`none of the ${codes.length} listed pairs answered with a price`, NOTHING_TO_JUDGE.pricedPair);
    },
  }),
];
