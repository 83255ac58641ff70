/**
 * GET /v1/price: schema, mid-price, market rules, stale and error answers (spec: GET /v1/price;
 * Price record; Market object).
 */
import type { Check, CheckContext } from '../../src/check.ts';
import type { RestExchange } from '../../src/transports/rest.ts';
import {
  ASSET_TYPE,
  CRYPTO_REASONS,
  CRYPTO_SESSION,
  EXTENDED_HOURS_REASONS,
  MARKET_COMBINATIONS,
  PATHS,
  QUERY,
  REST_STATUSES_WITH_DATA,
  STATUS,
  parsePairCode,
  type MarketReason,
} from '../../src/spec.ts';
import { NOTHING_TO_JUDGE } from '../../src/coverage.ts';
import { isCanonicalZone, isIanaZone, midReading, notation, places, priceProblems } from '../../src/quote-rules.ts';
import { UNKNOWN_PAIR } from './envelope.ts';
import {
  assetTypeOf,
  body,
  catalogue,
  clause,
  expectHttp,
  expectStatus,
  pairPerAssetType,
  restCheck,
  shown,
  specialPairs,
  staleKeeps200,
  type Json,
  type PairRecord,
} from './support.ts';

const PRICE = 'GET /v1/price';
/** Pairs of one asset type priced by the market checks; bounded for real targets. */
const PER_TYPE = 3;

interface Priced {
  code: string;
  status: string;
  ex: RestExchange;
  data: Json;
}

/** The first pair of each asset type and market (`Equity:US` apart from `Equity:LSE`), in catalogue order. */
function onePerMarket(pairs: readonly PairRecord[], exclude: readonly string[]): PairRecord[] {
  const seen = new Map<string, PairRecord>();
  for (const p of pairs) {
    const parts = parsePairCode(p.code);
    const key = parts ? `${parts.assetType}:${parts.market}` : undefined;
    if (key && !seen.has(key) && !exclude.includes(p.code)) seen.set(key, p);
  }
  return [...seen.values()];
}

/**
 * Prices of sample pairs (one per asset type, or per asset type and market with `perMarket`; or up
 * to `limit` pairs that `filter` keeps), keeping the answers that carry data (200 or 50102).
 * Skips the check when no sampled pair has a price.
 */
async function sample(
  ctx: CheckContext,
  filter?: (code: string) => boolean,
  limit = PER_TYPE,
  perMarket = false,
): Promise<Priced[]> {
  const skip = specialPairs(ctx);
  const chosen = filter
    ? (await catalogue(ctx)).filter((p) => filter(p.code) && !skip.includes(p.code)).slice(0, limit)
    : perMarket
      ? onePerMarket(await catalogue(ctx), skip)
      : await pairPerAssetType(ctx);
  const priced: Priced[] = [];
  for (const p of chosen) {
    const ex = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: p.code } });
    staleKeeps200(ctx, ex, `${PRICE}?code=${p.code}`);
    const b = body(ex);
    const status = b?.status_number;
    if (
      typeof status === 'string' &&
      (REST_STATUSES_WITH_DATA as readonly string[]).includes(status) &&
      b!.data &&
      typeof b!.data === 'object'
    )
      priced.push({ code: p.code, status, ex, data: b!.data as Json });
    else ctx.note(`${PRICE}?code=${p.code}: no price (${shown(ex)}); not sampled`);
  }
  if (priced.length === 0) {
    if (filter) ctx.skip('no pair of this kind in the catalogue answered with a price');
    ctx.skip('no sampled pair answered with a price', NOTHING_TO_JUDGE.pricedPair);
  }
  return priced;
}

const market = (p: Priced): Json | undefined =>
  p.data.market && typeof p.data.market === 'object' ? (p.data.market as Json) : undefined;
const isCrypto = (code: string): boolean => assetTypeOf(code) === ASSET_TYPE.crypto;

/** Violations of the open/reason/session combinations the spec fixes, for one market object. */
function combination(ctx: CheckContext, code: string, m: Json): void {
  const fixed = MARKET_COMBINATIONS[m.reason as keyof typeof MARKET_COMBINATIONS] as
    | { open: boolean; session: string }
    | undefined;
  if (fixed && (m.open !== fixed.open || m.session !== fixed.session)) {
    ctx.violation({
      received: `${code}: open ${String(m.open)}, reason ${String(m.reason)}, session ${String(m.session)}`,
      expected: `reason ${String(m.reason)} comes with open ${fixed.open} and session ${fixed.session}`,
    });
  }
}

export const priceChecks: readonly Check[] = [
  restCheck({
    id: 'rest.price.schema',
    enforces: [
      'field:price:code',
      'field:price:ask',
      'field:price:bid',
      'field:price:price',
      'field:price:market',
      'field:market:reason',
      'field:market:session',
      'parameter:price:code',
      'status:200',
      'rule:service:decimal-strings',
      'rule:versioning:v1-prefix',
    ],
    catches: ['price-ask-number'],
    tags: ['price'],
    clause: clause('Price record (`data` in the price response)', 'code, ask, bid, price (decimal strings) and market'),
    title: `${PRICE}?code=<one pair per asset type and market>`,
    expectation: 'each body matches price-response: price values are decimal strings, market per the Market object',
    async run(ctx) {
      // Per market, not per asset type: the schema ties the extended-hours reasons to equities,
      // and which equity comes first in a listing is the service's choice of order.
      for (const p of await sample(ctx, undefined, PER_TYPE, true))
        ctx.expectSchema('price-response', p.ex.json, `${PRICE}?code=${p.code}`);
    },
  }),
  restCheck({
    id: 'rest.price.mid',
    enforces: ['field:price:price'],
    catches: [
      'price-not-mid',
      'price-bid-above-ask',
      'price-late-type-inverted',
      // Deep in the catalogue, where rest.price.catalogue reads it.
      'price-deep-pair-inverted',
    ],
    tags: ['price'],
    clause: clause(
      'Price record (`data` in the price response)',
      "price is the service's mid-price: bid <= price <= ask",
    ),
    title: `${PRICE}?code=<one pair per asset type>`,
    expectation:
      "bid <= price <= ask (the mid is the service's: exact, rounded at any precision or to a tick, or " +
      'weighted; which one is recorded)',
    async run(ctx) {
      for (const p of await sample(ctx)) {
        const { ask, bid, price } = p.data;
        if ([ask, bid, price].some((v) => places(v) === undefined)) {
          ctx.note(`${p.code}: price values are not decimal strings; rest.price.schema reports it`);
          continue;
        }
        // Plain or exponent notation both read exactly as decimals; which one the target writes is recorded.
        ctx.observe(
          `notation ${p.code}`,
          { ask: notation(ask), bid: notation(bid), price: notation(price) },
          'decimal notation: not shown',
        );
        // The same quote rules as every push (src/quote-rules.ts): any rounding of the mid, padding zeros aside.
        for (const why of priceProblems(p.data))
          ctx.violation({
            received: `${p.code}: bid ${bid}, price ${price}, ask ${ask}: ${why}`,
            expected: 'bid <= price <= ask: the mid-price lies within the spread',
          });
        const reading = midReading(p.data);
        if (reading) ctx.observe(`mid ${p.code}`, reading, 'price against the exact mid of ask and bid');
      }
    },
  }),
  restCheck({
    id: 'rest.price.market.crypto',
    enforces: ['rule:market:crypto', 'field:market:open', 'field:market:timezone', 'rule:market-session:transitions'],
    catches: ['market-crypto-timezone', 'market-crypto-regular-session', 'market-open-inverted'],
    tags: ['price'],
    clause: clause(
      'Market object',
      'Crypto: open true, reason continuous, session REG (only ever in REG), no timezone',
    ),
    title: `${PRICE}?code=<up to ${PER_TYPE} Crypto pairs>`,
    expectation: 'open true, reason continuous (no_price on a 50102), session REG, timezone absent',
    async run(ctx) {
      // Every Crypto pair is held to REG by rest.price.catalogue, which reads every pair (the
      // price-response schema fixes a Crypto market); this check says so of a few, with its reasons.
      for (const p of await sample(ctx, isCrypto)) {
        const m = market(p);
        if (!m) {
          ctx.violation({ received: `${p.code}: no market object`, expected: 'a market object' });
          continue;
        }
        const reasons: readonly MarketReason[] = p.status === STATUS.OK ? ['continuous'] : CRYPTO_REASONS;
        const state =
          `${p.code} (status ${p.status}): open ${String(m.open)}, ` +
          `reason ${String(m.reason)}, session ${String(m.session)}`;
        if (m.open !== true || m.session !== CRYPTO_SESSION || !reasons.includes(m.reason as MarketReason))
          ctx.violation({
            received: state,
            expected: `open true, reason ${reasons.join(' or ')}, session ${CRYPTO_SESSION}`,
          });
        if ('timezone' in m)
          ctx.violation({
            received: `${p.code}: timezone ${JSON.stringify(m.timezone)}`,
            expected: 'no timezone for Crypto',
          });
      }
    },
  }),
  restCheck({
    id: 'rest.price.market.equity-session',
    enforces: ['rule:market:us-extended-hours', 'field:market:open'],
    catches: ['market-open-inverted'],
    tags: ['price'],
    clause: clause(
      'Market object',
      'US equities: regular_session/REG, pre_session/PRE, post_session/POST open; market_closed/CLOSED closed',
    ),
    title: `${PRICE}?code=<up to ${PER_TYPE} Equity pairs>`,
    expectation:
      'reason one of regular_session, pre_session, post_session, market_closed, no_price, with its open and ' +
      'session (any equity may be a US one: the market of a code is a scope label)',
    async run(ctx) {
      // "US equities with extended hours": the code's market is "a scope label such as ALL or US", so
      // an equity under any label may be a US one and may use the extended-hours sessions.
      const equity = (code: string): boolean => parsePairCode(code)?.assetType === ASSET_TYPE.equity;
      const allowed: readonly string[] = ['regular_session', 'market_closed', ...EXTENDED_HOURS_REASONS, 'no_price'];
      for (const p of await sample(ctx, equity)) {
        const m = market(p);
        if (!m) {
          ctx.violation({ received: `${p.code}: no market object`, expected: 'a market object' });
          continue;
        }
        ctx.observe(
          `session ${p.code}`,
          { open: m.open, reason: m.reason, session: m.session },
          'session schedule: not shown',
        );
        if (!allowed.includes(m.reason as string))
          ctx.violation({
            received: `${p.code}: reason ${String(m.reason)}`,
            expected: `an equity reason: ${allowed.join(', ')}`,
          });
        combination(ctx, p.code, m);
      }
    },
  }),
  restCheck({
    id: 'rest.price.market.timezone',
    enforces: ['field:market:timezone'],
    catches: [
      'market-timezone-missing',
      'market-timezone-invalid',
      // A timezone on a Crypto pair: the field's rule, whichever check reads it.
      'market-crypto-timezone',
      // Zone names that are links or other spellings
      'market-timezone-alias',
    ],
    tags: ['price'],
    clause: clause('Market object', 'timezone: an IANA zone name, present for non-Crypto assets'),
    title: `${PRICE}?code=<one non-Crypto pair per asset type and market>`,
    expectation:
      'market.timezone present and an IANA zone name, canonical or a link of the tz database (US/Eastern, GB), ' +
      'spelled as the database spells it',
    async run(ctx) {
      const priced = (await sample(ctx, undefined, PER_TYPE, true)).filter((p) => !isCrypto(p.code));
      if (priced.length === 0) ctx.skip('no non-Crypto pair answered with a price');
      for (const p of priced) {
        const tz = market(p)?.timezone;
        if (typeof tz !== 'string')
          ctx.violation({
            received: `${p.code}: timezone ${JSON.stringify(tz)}`,
            expected: 'a timezone for a non-Crypto asset',
          });
        else if (!isIanaZone(tz))
          ctx.violation({
            received: `${p.code}: timezone "${tz}"`,
            expected: 'an IANA zone name, spelled as the tz database spells it',
          });
        else if (!isCanonicalZone(tz))
          ctx.observe(`timezone ${p.code}`, tz, "a link of the tz database, not the zone's canonical name");
      }
    },
  }),
  restCheck({
    id: 'rest.price.market.combination',
    enforces: [
      'field:price:market',
      'field:market:open',
      'field:market:reason',
      'field:market:session',
      'rule:market:other-assets',
      'rule:market:no_price',
      'rule:market:us-extended-hours',
    ],
    catches: [
      'market-crypto-regular-session',
      'market-open-inverted',
      // Extended hours outside the equities
      'market-extended-hours-non-us',
      // A Crypto session deep in the catalogue, where rest.price.catalogue reads it.
      'market-crypto-deep-session',
    ],
    tags: ['price'],
    clause: clause('Market object', 'open/reason/session combinations per asset type'),
    title: `${PRICE}?code=<one pair per asset type and market>`,
    expectation: 'each reason with its open and session; Crypto only REG; pre/post sessions only for equities',
    async run(ctx) {
      // Per market too: extended hours are a rule of the US market, so an equity of another market is read.
      for (const p of await sample(ctx, undefined, PER_TYPE, true)) {
        const m = market(p);
        if (!m) {
          ctx.violation({ received: `${p.code}: no market object`, expected: 'a market object' });
          continue;
        }
        combination(ctx, p.code, m);
        if (isCrypto(p.code) && m.session !== CRYPTO_SESSION)
          ctx.violation({
            received: `${p.code}: session ${String(m.session)}`,
            expected: 'Crypto is only ever in REG',
          });
        if (isCrypto(p.code) && !CRYPTO_REASONS.includes(m.reason as MarketReason))
          ctx.violation({
            received: `${p.code}: reason ${String(m.reason)}`,
            expected: 'Crypto reason continuous (no_price when stale)',
          });
        if (!isCrypto(p.code) && m.reason === 'continuous')
          ctx.violation({ received: `${p.code}: reason continuous`, expected: 'continuous only for Crypto' });
        // Whether an equity is a US one its code does not say (the market is a scope label): extended
        // hours are held to equities, and the label is recorded.
        const parts = parsePairCode(p.code);
        const extended = EXTENDED_HOURS_REASONS.includes(m.reason as MarketReason);
        if (extended && parts?.assetType !== ASSET_TYPE.equity)
          ctx.violation({
            received: `${p.code}: reason ${String(m.reason)}`,
            expected: 'pre_session and post_session only for equities (US equities with extended hours)',
          });
        else if (extended)
          ctx.observe(`extended-hours ${p.code}`, parts?.market, 'scope label of an equity in PRE or POST');
      }
    },
  }),
  restCheck({
    id: 'rest.price.stale',
    enforces: ['rule:price:stale-keeps-data', 'status:50102', 'rule:market:no_price', 'field:envelope:message'],
    catches: ['stale-http-503', 'stale-data-null'],
    tags: ['price'],
    needs: ['pairs.stale'],
    clause: clause(
      'GET /v1/price',
      '50102: HTTP status remains 200, data still filled, message says the price may not be real-time',
    ),
    title: `${PRICE}?code=<pairs.stale>`,
    expectation: 'HTTP 200, status_number "50102", data a price record, message a string',
    async run(ctx) {
      const code = ctx.profile.pairs!.stale!;
      const ex = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: code } });
      const what = `${PRICE}?code=${code}`;
      const stale = expectStatus(ctx, ex, STATUS.PRICE_STALE, what);
      expectHttp(ctx, ex, 200, what);
      if (!stale) return;
      const b = body(ex)!;
      if (b.data === null || typeof b.data !== 'object')
        ctx.violation({ received: `${what}: data ${JSON.stringify(b.data)}`, expected: 'data still filled on 50102' });
      else ctx.expectSchema('price-record', b.data, `${what} data`);
      if (typeof b.message !== 'string')
        ctx.violation({
          received: `${what}: message ${JSON.stringify(b.message)}`,
          expected: 'a message saying the price may not reflect real-time conditions',
        });
    },
  }),
  restCheck({
    id: 'rest.price.unknown-pair',
    enforces: ['status:50104', 'rule:price:unknown-pair-data-null'],
    catches: ['envelope-error-data-filled', 'envelope-error-message-missing', 'unknown-pair-status-50008'],
    tags: ['price'],
    clause: clause('GET /v1/price', 'a pair that does not exist: status_number 50104, data null, message'),
    title: `${PRICE}?code=${UNKNOWN_PAIR}`,
    expectation: 'status_number "50104", data null',
    async run(ctx) {
      const ex = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: UNKNOWN_PAIR } });
      const what = `${PRICE}?code=${UNKNOWN_PAIR}`;
      if (!expectStatus(ctx, ex, STATUS.PAIR_NOT_FOUND, what)) return;
      const b = body(ex)!;
      if (b.data !== null)
        ctx.violation({ received: `${what}: data ${JSON.stringify(b.data)?.slice(0, 120)}`, expected: 'data null' });
      if (typeof b.message !== 'string')
        ctx.violation({ received: `${what}: message ${JSON.stringify(b.message)}`, expected: 'a message' });
    },
  }),
  restCheck({
    id: 'rest.price.missing-code',
    enforces: ['parameter:price:code', 'status:50004'],
    catches: ['missing-code-200'],
    tags: ['price'],
    clause: clause('GET /v1/price', 'code is required (50004: malformed or invalid parameters)'),
    title: `${PRICE} with no code`,
    expectation: 'status_number "50004"',
    async run(ctx) {
      expectStatus(ctx, await ctx.rest.get({ path: PATHS.price }), STATUS.INVALID_REQUEST, `${PRICE} without code`);
    },
  }),
];
