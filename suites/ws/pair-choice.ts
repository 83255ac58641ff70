/**
 * Which pairs a stream check subscribes to: listed pairs of the primary key's catalogue, of one
 * asset type, or with an open market, and, when a subscribe is refused with 50104 for a listed
 * pair, another listed pair in its place.
 *
 * /v1/pairs may list pairs that are inactive or suspended, and a subscribe naming one is rightly
 * refused with 50104 (spec: Errors, 50104): for a check about another rule that is an observation,
 * recorded in the run's pair ledger (ctx.pairLedger) so that no later check picks the pair again,
 * and the pair is replaced by another listed one. Only where REST agrees, though: a pair that
 * `GET /v1/price` prices as active (status 200) is not inactive or suspended, and the stream's
 * 50104 for it breaks the rule.
 */
import type { CheckContext } from '../../src/check.ts';
import { NOTHING_TO_JUDGE } from '../../src/coverage.ts';
import { METHOD, PATHS, QUERY, STATUS, parsePairCode } from '../../src/spec.ts';
import { REPLACE_GAP_MS } from '../../src/timing/index.ts';
import type { JsonObject, StreamSession } from '../../src/transports/stream.ts';
import { pairPerAssetType } from '../rest/support.ts';
import { ask, subscribe } from './notices.ts';
import { pause } from './sessions.ts';

/**
 * Listed pairs a check replaces at most before it gives up on finding subscribable ones: this many,
 * or as many as it subscribes to at once.
 */
const MAX_REPLACED = 5;

/** What a replacement pair must be: of one asset type, or with an open market (REST 200), and none of `exclude`. */
export interface PairNeeds {
  assetType?: string;
  live?: boolean;
  exclude?: readonly string[];
}

const isSuccess = (notice: JsonObject): boolean => String(notice.code) === STATUS.OK && notice.method !== METHOD.error;

/**
 * The listed pair of `pairs` that `notice` refuses with 50104, when it names one (or `pairs` has
 * one only). The profile's `pairs.inactive` is no listed pair that happens to be refused: its
 * 50104 is a rule of its own (ws.subscribe.inactive-pair); nor is a pair the run saw accepted.
 */
function refusedListed(ctx: CheckContext, notice: JsonObject, pairs: readonly string[]): string | undefined {
  if (String(notice.code) !== STATUS.PAIR_NOT_FOUND) return undefined;
  const message = typeof notice.message === 'string' ? notice.message : '';
  const named = pairs.length === 1 ? pairs[0] : pairs.find((p) => message.includes(p));
  // A pair the run saw accepted is subscribable: its 50104 is the caller's to judge.
  return named === ctx.profile.pairs?.inactive || (named && ctx.pairLedger.isAccepted(named)) ? undefined : named;
}

/** Subscribes to each pair not yet seen accepted on its own, to find which one a 50104 that names none refused. */
async function probeRefused(
  ctx: CheckContext,
  session: StreamSession,
  pairs: readonly string[],
  id: string | undefined,
): Promise<string | undefined> {
  for (const [i, pair] of pairs.entries()) {
    if (ctx.pairLedger.isAccepted(pair)) continue;
    if (i > 0) await pause(REPLACE_GAP_MS, ctx);
    const notice = await ask(ctx, session, subscribe([pair], `${id ?? 'conform'}-probe-${i}`), `a notice for ${pair}`);
    if (isSuccess(notice)) ctx.pairLedger.accepted([pair]);
    else if (refusedListed(ctx, notice, [pair]) === pair) return pair;
  }
  return undefined;
}

/** Another listed pair for `refused`, not among `taken`, preferring what the run saw work. */
async function replacement(ctx: CheckContext, taken: readonly string[], needs: PairNeeds): Promise<string | undefined> {
  const want = taken.length + 1;
  const skip = [...taken, ...(needs.exclude ?? [])];
  const more = needs.live
    ? await livePairs(ctx, want + skip.length)
    : await streamPairs(ctx, want + skip.length, needs.assetType ? { assetType: needs.assetType } : {});
  return more.find((p) => !skip.includes(p));
}

/**
 * How REST prices `code`: the answer's line when it prices it as active (status 200 with data), else
 * undefined (refused, no price, or 50102: the pair may be inactive or suspended). Read loosely: the
 * envelope's exact shape is the REST suite's rule.
 */
export async function pricedAsActive(ctx: CheckContext, code: string): Promise<string | undefined> {
  const ex = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: code } });
  const body = ex.json as { status_number?: unknown; data?: unknown } | undefined;
  if (String(body?.status_number) !== STATUS.OK || !body?.data || typeof body.data !== 'object') return undefined;
  return `${PATHS.price}?code=${code} prices it as active (HTTP ${ex.status}, status_number "${STATUS.OK}")`;
}

/**
 * A listed pair the stream refused with 50104 is replaced only where REST agrees that it does not
 * exist, is inactive or is suspended. Where REST prices it as active the stream broke the rule of
 * 50104, which ws.subscribe.listed-pairs judges: this check cannot subscribe to what it picked.
 */
async function restAgrees(ctx: CheckContext, refused: string, notice: JsonObject): Promise<void> {
  const active = await pricedAsActive(ctx, refused);
  if (!active) return;
  ctx.skip(
    `a subscribe to ${refused}, listed in ${PATHS.pairs}, answered ${JSON.stringify(notice).slice(0, 160)}, ` +
      `while ${active}: ws.subscribe.listed-pairs judges that refusal, and this check cannot subscribe ` +
      'to the pairs it needs',
  );
}

/**
 * Sends a subscribe for `pairs` and resolves with its answer and the pairs it was for. A 50104 for
 * a listed pair (not the profile's `pairs.inactive`) is recorded and observed, and the pair replaced
 * by another listed one (of the same asset type, or live, per `needs`); the subscribe is sent again.
 * Any other answer is the caller's to judge.
 */
export async function subscribeListed(
  ctx: CheckContext,
  session: StreamSession,
  pairs: readonly string[],
  id?: string,
  needs: PairNeeds = {},
): Promise<{ notice: JsonObject; pairs: string[] }> {
  let current = [...pairs];
  for (let replaced = 0; ; replaced++) {
    const notice = await ask(ctx, session, subscribe(current, id), `subscribe ${current.length} pair(s) answered`);
    if (isSuccess(notice)) {
      ctx.pairLedger.accepted(current);
      return { notice, pairs: current };
    }
    if (String(notice.code) !== STATUS.PAIR_NOT_FOUND) return { notice, pairs: current };
    const refused = refusedListed(ctx, notice, current) ?? (await probeRefused(ctx, session, current, id));
    if (refused === undefined) return { notice, pairs: current };
    await restAgrees(ctx, refused, notice);
    ctx.pairLedger.refused(refused, JSON.stringify(notice));
    ctx.observe(
      'listed-pair-refused',
      refused,
      `listed in the catalogue, but a subscribe is refused with ${STATUS.PAIR_NOT_FOUND} (inactive or suspended, ` +
        'which the spec allows); another listed pair is taken instead',
    );
    const next = replaced < Math.max(MAX_REPLACED, pairs.length) ? await replacement(ctx, current, needs) : undefined;
    if (next === undefined)
      return ctx.skip(
        `${refused} and ${replaced} other listed pair(s) are refused with ${STATUS.PAIR_NOT_FOUND} ` +
          '(inactive or suspended), and no other listed pair is left to subscribe to',
      );
    current = current.map((p) => (p === refused ? next : p));
    await pause(REPLACE_GAP_MS, ctx);
  }
}

/**
 * Subscribes as the setup of a later step and requires success; resolves with the pairs
 * subscribed (a listed pair refused with 50104 replaced, see subscribeListed). Success is read
 * loosely (code 200 as a string or a number, any method but error): the exact notice is
 * ws.subscribe.notice's rule, so a wrong notice fails that check and not every check that subscribes.
 */
export async function subscribeOk(
  ctx: CheckContext,
  session: StreamSession,
  pairs: readonly string[],
  id = 'conform-sub',
  needs: PairNeeds = {},
): Promise<string[]> {
  const { notice, pairs: subscribed } = await subscribeListed(ctx, session, pairs, id, needs);
  if (!isSuccess(notice))
    ctx.fail({
      received: `subscribe to ${subscribed.join(', ')} answered ${JSON.stringify(notice)}`,
      expected: 'the subscribe succeeds (notice code "200"), so the rule under test can be observed',
    });
  return subscribed;
}

/** Pairs asked per page, and pages read at most; without per_page (a maximum below 100 may refuse it) pages hold 10. */
const PAGE_SIZE = 100;
const MAX_PAGES = 20;
const MAX_DEFAULT_PAGES = 60;

/**
 * Up to `count` distinct pairs the primary key lists in /v1/pairs (optionally of one asset type),
 * without the profile's stale and inactive pairs; Crypto first, since it is always open and
 * therefore pushes. The profile's `pairs.sample` comes first when it has any.
 */
export async function streamPairs(
  ctx: CheckContext,
  count: number,
  options: { assetType?: string; key?: string } = {},
): Promise<string[]> {
  const skip = new Set(
    [ctx.profile.pairs?.stale, ctx.profile.pairs?.inactive].filter((x): x is string => typeof x === 'string'),
  );
  const out: string[] = [];
  const add = (code: unknown): void => {
    if (typeof code !== 'string' || skip.has(code) || out.includes(code) || ctx.pairLedger.isRefused(code)) return;
    const parts = parsePairCode(code);
    if (!parts || (options.assetType && parts.assetType !== options.assetType)) return;
    out.push(code);
  };
  if (!options.key) for (const code of ctx.profile.pairs?.sample ?? []) add(code);
  const types = options.assetType ? [options.assetType] : ['Crypto', undefined];
  // The per_page maximum is not shown, nor whether a larger value is clamped or refused: a refused
  // first page falls back to the default page size.
  let perPage: number | undefined = PAGE_SIZE;
  for (const type of types) {
    let previous = '';
    let size = 0;
    for (let page = 1; page <= (perPage ? MAX_PAGES : MAX_DEFAULT_PAGES) && out.length < count; page++) {
      const res = await ctx.rest.get({
        path: PATHS.pairs,
        query: {
          [QUERY.pairs.page]: String(page),
          ...(perPage ? { [QUERY.pairs.perPage]: String(perPage) } : {}),
          ...(type ? { [QUERY.pairs.type]: type } : {}),
        },
        ...(options.key ? { key: options.key } : {}),
      });
      const data = (res.json as { data?: unknown } | undefined)?.data;
      if (!Array.isArray(data) && page === 1 && perPage) {
        ctx.note(`${PATHS.pairs}?per_page=${perPage} refused; reading default-size pages`);
        perPage = undefined;
        page = 0;
        continue;
      }
      if (!Array.isArray(data) || data.length === 0) break;
      for (const item of data) add((item as { code?: unknown } | null)?.code);
      // A page that repeats the last one means the target ignores page: walking on reads it again.
      // (A page of pairs already taken is no end: the typed walk came first, in catalogue order.)
      // A per_page above the maximum may be clamped: the first page tells the size pages have.
      if (page === 1) size = data.length;
      const seen = JSON.stringify(data);
      if (seen === previous || data.length < size) break;
      previous = seen;
    }
    if (out.length >= count) break;
  }
  // Pairs the run saw move, then those it saw accepted, first: each is known to work.
  return ctx.pairLedger.prefer(out).slice(0, count);
}

/** Like streamPairs, but skips the check with the reason when fewer than `count` pairs exist. */
export async function needPairs(
  ctx: CheckContext,
  count: number,
  options: { assetType?: string } = {},
): Promise<string[]> {
  const pairs = await streamPairs(ctx, count, options);
  if (pairs.length < count)
    ctx.skip(
      `needs ${count} distinct pair(s)${options.assetType ? ` of ${options.assetType}` : ''} ` +
        `the primary key lists in ${PATHS.pairs}; found ${pairs.length}`,
    );
  return pairs;
}

/** A well-formed pair code that no catalogue carries. */
export const UNKNOWN_PAIR = 'Crypto:ALL:CONFORMNOSUCHPAIR/USD';

/**
 * One pair of each asset type in the primary key's catalogue, as codes of the key's own types and
 * of the others; the profile's special pairs (stale, inactive…) are left out.
 */
export async function pairsByAccess(
  ctx: CheckContext,
  allowed: readonly string[],
): Promise<{ own: string[]; other: string[] }> {
  const sample = (await pairPerAssetType(ctx)).map((p) => p.code);
  const isOwn = (code: string): boolean => allowed.includes(parsePairCode(code)?.assetType ?? '');
  return { own: sample.filter(isOwn), other: sample.filter((c) => !isOwn(c)) };
}

/**
 * Up to `count` pairs whose REST price says the market is open (status 200, market.open true):
 * the pairs that should push. A closed market may push nothing, which the spec leaves open.
 */
export async function livePairs(ctx: CheckContext, count: number): Promise<string[]> {
  const candidates = await streamPairs(ctx, Math.max(count * 3, 6));
  const live: string[] = [];
  for (const code of candidates) {
    if (live.length >= count) break;
    const res = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: code } });
    const body = res.json as { status_number?: unknown; data?: { market?: { open?: unknown } } } | undefined;
    // Read loosely: the envelope's exact shape is the REST suite's rule.
    if (String(body?.status_number) === STATUS.OK && body?.data?.market?.open === true) live.push(code);
  }
  return live;
}

/** Like livePairs, but skips the check with the reason when fewer than `atLeast` (default `count`) are live. */
export async function needLivePairs(ctx: CheckContext, count: number, atLeast = count): Promise<string[]> {
  const pairs = await livePairs(ctx, count);
  if (pairs.length < atLeast)
    ctx.skip(
      `needs ${count} pair(s) with an open market (REST ${PATHS.price}: status_number ` +
        `"200", market.open true); found ${pairs.length}`,
      pairs.length === 0 ? NOTHING_TO_JUDGE.livePair : undefined,
    );
  return pairs;
}
