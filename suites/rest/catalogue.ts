/**
 * Every pair of the catalogue read once from GET /v1/price (spec: GET /v1/price; Price record;
 * Market object), not one sample per asset type: a service broken on one pair deep in its
 * catalogue fails here. The walk pages through the whole catalogue; past CATALOGUE_BOUND pairs
 * the reads are a sample that holds a pair of every asset type listed, drawn with a seed the
 * profile states (`sampleSeed`) or the run draws, and reports. The reads take the primary key's
 * turns in the run's request budget, so they never trip the rate limit themselves; they run in a
 * lane of their own beside the keep-alive checks, and the check's time grows with the catalogue.
 */
import type { Check, CheckContext } from '../../src/check.ts';
import { NOTHING_TO_JUDGE } from '../../src/coverage.ts';
import { isIanaZone, priceProblems } from '../../src/quote-rules.ts';
import { mulberry32 } from '../../src/random.ts';
import { PATHS, QUERY, REST_STATUSES_WITH_DATA } from '../../src/spec.ts';
import { CATALOGUE_BASE_TIMEOUT_MS } from '../../src/timing/index.ts';
import {
  allowFor,
  assetTypeOf,
  body,
  catalogue,
  clause,
  restCheck,
  shown,
  staleKeeps200,
  type Json,
} from './support.ts';

/** Pairs read at most; a larger catalogue is read in a seeded sample of this many, and says so. */
export const CATALOGUE_BOUND = 500;
/** Price reads in flight at once; the budget still spaces them at the key's pace. */
const LANES = 4;

const PRICE = 'GET /v1/price';

/**
 * `bound` of `codes`, drawn with `seed`: first one pair of every asset type (a random one of
 * each), then the rest at random; in catalogue order.
 */
export function sampleCodes(codes: readonly string[], bound: number, seed: number): string[] {
  if (codes.length <= bound) return [...codes];
  const random = mulberry32(seed);
  const byType = new Map<string, string[]>();
  for (const c of codes) {
    const t = assetTypeOf(c) ?? '';
    byType.set(t, [...(byType.get(t) ?? []), c]);
  }
  const chosen = new Set<string>();
  for (const group of byType.values()) chosen.add(group[Math.floor(random() * group.length)]!);
  const rest = codes.filter((c) => !chosen.has(c));
  for (let i = rest.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [rest[i], rest[j]] = [rest[j]!, rest[i]!];
  }
  for (const c of rest) {
    if (chosen.size >= bound) break;
    chosen.add(c);
  }
  return codes.filter((c) => chosen.has(c));
}

/** Judges one price answer; returns whether it carried a price to judge. */
async function readOne(ctx: CheckContext, code: string): Promise<boolean> {
  const ex = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: code } });
  allowFor(ctx, ex, LANES);
  const what = `${PRICE}?code=${code}`;
  staleKeeps200(ctx, ex, what);
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
  // Each pair is held to the rules the price checks own; a pair deep in the catalogue that breaks
  // one fails its owner (src/ownership.ts), with this check's read as the evidence.
  if (data.code !== code)
    ctx.violation({
      received: `${what}: data.code ${JSON.stringify(data.code)}`,
      expected: 'data.code equal to the requested code',
      rule: 'field:price:code',
    });
  for (const why of priceProblems(data))
    ctx.violation({
      received: `${what}: ${why}`,
      expected: 'bid <= price <= ask: the mid-price lies within the spread',
      rule: 'field:price:price',
    });
  const tz = (data.market as Json | undefined)?.timezone;
  if (typeof tz === 'string' && !isIanaZone(tz))
    ctx.violation({
      received: `${what}: market.timezone "${tz}"`,
      expected: 'an IANA zone name, spelled as the tz database spells it',
      rule: 'field:market:timezone',
    });
  return true;
}

/**
 * `codes`, or past `CATALOGUE_BOUND` of them a seeded sample of that many holding every asset type;
 * the seed (the profile's `sampleSeed`, or one drawn) is observed so that a run can be repeated.
 */
export function boundedSample(ctx: CheckContext, codes: readonly string[], what: string): string[] {
  if (codes.length <= CATALOGUE_BOUND) return [...codes];
  const seed = ctx.profile.sampleSeed ?? Math.floor(Math.random() * 2 ** 31);
  ctx.observe(
    'sample-seed',
    seed,
    `${what} lists more than ${CATALOGUE_BOUND} pairs: ${CATALOGUE_BOUND} are read, a pair of ` +
      'every asset type and the rest drawn with this seed (profile sampleSeed repeats it)',
  );
  return sampleCodes(codes, CATALOGUE_BOUND, seed);
}

export const catalogueChecks: readonly Check[] = [
  restCheck({
    id: 'rest.price.catalogue',
    enforces: [
      'field:price:code',
      'field:price:market',
      // The price-response schema fixes a Crypto market (open, continuous, REG) on every pair read.
      'rule:market:crypto',
      'field:market:session',
    ],
    // Nothing of its own: each pair it reads is held to the rules the price checks own, and a pair
    // deep in the catalogue that breaks one fails that check (src/ownership.ts), this read its evidence.
    catches: [],
    tags: ['price', 'slow'],
    timeoutMs: CATALOGUE_BASE_TIMEOUT_MS,
    clause: clause(
      'Price record (`data` in the price response)',
      'every listed pair: code as requested, ask, bid, price decimal strings ' +
        'with bid <= price <= ask, market per asset type; a 50102 keeps HTTP 200',
    ),
    title:
      `${PRICE}?code=<every pair ${PATHS.pairs} lists; past ${CATALOGUE_BOUND}, a seeded sample ` +
      `holding every asset type>, paced within the key's rate limit`,
    expectation:
      'each answer with a price matches price-response (decimal strings, market per asset type), ' +
      'data.code is the requested code, bid <= price <= ask, timezone an IANA zone; ' +
      'a 50102 answer has HTTP 200',
    async run(ctx) {
      const codes = [...new Set((await catalogue(ctx)).map((p) => p.code))];
      if (codes.length === 0) ctx.skip(`${PATHS.pairs} lists no pair`, NOTHING_TO_JUDGE.pricedPair);
      codes.splice(0, codes.length, ...boundedSample(ctx, codes, 'the catalogue'));
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
