/** What the REST checks share: envelope reading, status expectations, catalogue walks. */
import type { Check, CheckContext, SpecClause, Tag } from '../../src/check.ts';
import type { StatementKey } from '../../src/statements.ts';
import type { RestExchange, RestRequest } from '../../src/transports/rest.ts';
import { KNOWN_ASSET_TYPES, LIMITS, parsePairCode, PATHS, QUERY, STATUS } from '../../src/spec.ts';
import { preview } from '../../src/validator.ts';
import { LISTING_WAIT_STEP_MS, PER_REQUEST_SLACK_MS } from '../../src/timing/index.ts';

export type Json = Record<string, unknown>;
export interface PairRecord {
  code: string;
  name: string;
  base: string;
  quote: string;
}

/** Declares a check with the REST defaults (tag `rest`, severity `must`, no needs). */
export function restCheck(
  c: Omit<Check, 'severity' | 'needs' | 'tags'> & {
    severity?: Check['severity'];
    needs?: readonly string[];
    tags?: readonly Tag[];
  },
): Check {
  return { severity: 'must', needs: [], ...c, tags: ['rest', ...(c.tags ?? [])] };
}

/** A clause of the spec by section heading. */
export const clause = (section: string, rule: string): SpecClause => ({ section, rule });

/** `HTTP 401 {"status_number":"50005",…}`: what came back, one line. */
export const shown = (ex: RestExchange): string => `HTTP ${ex.status} ${preview(ex.json ?? ex.text, 160)}`;

/** The body as a JSON object, or undefined. */
export const body = (ex: RestExchange): Json | undefined =>
  ex.json !== null && typeof ex.json === 'object' && !Array.isArray(ex.json) ? (ex.json as Json) : undefined;

/** `status_number` of a response, whatever its type. */
export const statusOf = (ex: RestExchange): unknown => body(ex)?.status_number;

/**
 * The rule another check owns that an answer broke before this one could judge it: the primary key
 * (accepted by the run's preflight) refused as unauthorized is the key header's rule.
 */
export function answerBrokenBy(ex: RestExchange): StatementKey | undefined {
  return ex.withPrimaryKey && String(statusOf(ex)) === STATUS.UNAUTHORIZED ? 'rule:auth:header' : undefined;
}

/**
 * Records a violation unless the response carries `status_number` `want`; returns whether it did.
 * A status_number of the right value written as a number is the envelope's rule; the primary key
 * refused is the key header's, and the check cannot judge its own then, unless how the key is sent
 * is what it judges (`keyJudged`).
 */
export function expectStatus(
  ctx: CheckContext,
  ex: RestExchange,
  want: string,
  what: string,
  keyJudged = false,
): boolean {
  const status = statusOf(ex);
  if (status === want) return true;
  const broken = want === STATUS.UNAUTHORIZED || keyJudged ? undefined : answerBrokenBy(ex);
  if (broken)
    ctx.fail({
      received: `${what}: ${shown(ex)} with the primary key`,
      expected: 'the primary key accepted in X-API-Key',
      rule: broken,
      channel: 'rest',
    });
  if (typeof status === 'number' && String(status) === want)
    ctx.violation({
      received: `${what}: status_number ${status}, a JSON number`,
      expected: `${what}: status_number the string "${want}"`,
      rule: 'field:envelope:status_number',
      channel: 'rest',
    });
  else ctx.violation({ received: `${what}: ${shown(ex)}`, expected: `${what}: status_number "${want}"` });
  return false;
}

/** `?a=b&c=d` for a query as written (not URL-encoded, for reading), or '' when empty. */
export const queryText = (query: Record<string, string | undefined> | undefined): string => {
  const parts = Object.entries(query ?? {})
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}`);
  return parts.length ? `?${parts.join('&')}` : '';
};

/**
 * Holds a 50102 answer that still carries its price to HTTP 200 (spec, GET /v1/price: a stale price
 * answers 50102, "data is still filled; the HTTP status remains 200"), wherever the run meets one,
 * not only on the profile's stale pair. A 50102 without data (a price unavailable: "data may still
 * be returned") has no HTTP status the spec shows: it is recorded.
 */
export function staleKeeps200(ctx: CheckContext, ex: RestExchange, what: string): void {
  if (String(statusOf(ex)) !== STATUS.PRICE_STALE || ex.status === 200) return;
  const data = body(ex)?.data;
  if (data === null || data === undefined) {
    ctx.observe('http-status 50102 without data', ex.status, `${what}: a price unavailable (HTTP status: not shown)`);
    return;
  }
  ctx.violation({
    received: `${what}: status_number 50102 with data and HTTP ${ex.status}`,
    expected: `${what}: HTTP 200 (a stale price still filling data keeps HTTP 200)`,
    rule: 'rule:price:stale-keeps-data',
    channel: 'rest',
  });
}

/** Records a violation unless the HTTP status is `want`. */
export function expectHttp(ctx: CheckContext, ex: RestExchange, want: number, what: string): boolean {
  if (ex.status === want) return true;
  ctx.violation({ received: `${what}: HTTP ${ex.status}`, expected: `${what}: HTTP ${want}` });
  return false;
}

/** GET /v1/pairs; the `data` array when the answer is a 200 envelope, else the check fails. */
export async function pairsPage(
  ctx: CheckContext,
  query: RestRequest['query'] = {},
  key?: string,
): Promise<{ ex: RestExchange; data: PairRecord[] }> {
  const ex = await ctx.rest.get({ path: PATHS.pairs, query, key });
  return { ex, data: pageData(ctx, ex, query) };
}

/**
 * Pages walked at most when reading a catalogue: a guard against a target that pages without end,
 * far past any real catalogue (a million pairs at the default size).
 */
export const MAX_PAGES = 100_000;
/** Pages of a walk read at once; the run's request budget still spaces them at the key's pace. */
export const PAGE_LANES = 4;

/**
 * A page of GET /v1/pairs that may lie past the end of the list. The spec does not say what a
 * page past the end answers: an empty list and an invalid-request error (50004) both conform, so
 * a 50004 on a page after the first ends the list (`data` null); anything else must be a page.
 */
export async function pageOrEnd(
  ctx: CheckContext,
  query: RestRequest['query'] = {},
  key?: string,
): Promise<{ ex: RestExchange; data: PairRecord[] | null }> {
  const page = Number(query?.[QUERY.pairs.page] ?? LIMITS.defaultPage);
  if (page > LIMITS.defaultPage) {
    const ex = await ctx.rest.get({ path: PATHS.pairs, query, key });
    if (statusOf(ex) === STATUS.INVALID_REQUEST) {
      ctx.note(
        `GET ${PATHS.pairs}${queryText(query)}: 50004, read as the end of the list ` +
          `(what a page past the end answers is not shown)`,
      );
      return { ex, data: null };
    }
    return { ex, data: pageData(ctx, ex, query) };
  }
  return pairsPage(ctx, query, key);
}

/** The pair records of a 200 answer of GET /v1/pairs; anything else fails the check. */
function pageData(ctx: CheckContext, ex: RestExchange, query: RestRequest['query']): PairRecord[] {
  const b = body(ex);
  if (b?.status_number !== STATUS.OK || !Array.isArray(b.data)) {
    // The list is what the check needed, not what it judges: a broken one is the envelope's rule
    // (or, the primary key refused, the key header's).
    ctx.fail({
      received: `GET ${PATHS.pairs}${queryText(query)}: ${shown(ex)}`,
      expected: 'status_number "200" with data an array of pair records',
      rule: answerBrokenBy(ex) ?? 'status:200',
      channel: 'rest',
    });
  }
  return (b.data as unknown[]).filter((p): p is PairRecord => typeof (p as PairRecord)?.code === 'string');
}

/**
 * Every pair a key lists, walking default-size pages until a short or empty page, or a page past
 * the end answered 50004 (at most `maxPages`, default MAX_PAGES). Default-size pages, because the
 * largest per_page is not shown. Pages are read up to PAGE_LANES at a time; pages read past the
 * end are dropped. The check's time limit grows with each page read: a catalogue's size is the target's.
 *
 * Read once per run for each key and query (the run's pair ledger keeps it): a large catalogue behind
 * a rate limit takes minutes to walk, and a dozen checks walk it. A check that finds it read says so
 * in its transcript; one that waits while another reads it has its time limit lengthened meanwhile.
 */
export async function catalogue(
  ctx: CheckContext,
  query: RestRequest['query'] = {},
  key?: string,
  maxPages = MAX_PAGES,
): Promise<PairRecord[]> {
  const name = JSON.stringify([key ?? ctx.profile.keys.primary.key, query, maxPages]);
  // By the time that passed, not by the step: a loaded machine fires the timer late.
  let last = ctx.stream.now();
  const step = setInterval(() => {
    const now = ctx.stream.now();
    ctx.extendTimeLimit?.(now - last);
    last = now;
  }, LISTING_WAIT_STEP_MS);
  try {
    const { value, shared } = await ctx.pairLedger.listing(name, () => walk(ctx, query, key, maxPages));
    if (shared)
      ctx.note(`GET ${PATHS.pairs}${queryText(query)}: ${value.length} pairs, as read once this run (shared)`);
    return [...value];
  } finally {
    clearInterval(step);
  }
}

/** Pairs per page of a walk the target answers in full pages of that size. */
const WIDE_PAGE = 100;

/**
 * The first page of a listing at WIDE_PAGE pairs, when the target answers it with exactly that many:
 * the largest per_page is not shown, so a refusal (50004), a page cut short by a lower maximum, or a
 * listing this short leaves the walk to default-size pages, which any target answers.
 */
async function widePage(
  ctx: CheckContext,
  query: RestRequest['query'],
  key: string | undefined,
): Promise<PairRecord[] | undefined> {
  const ex = await ctx.rest.get({
    path: PATHS.pairs,
    query: { ...query, [QUERY.pairs.page]: '1', [QUERY.pairs.perPage]: String(WIDE_PAGE) },
    key,
  });
  allowFor(ctx, ex, 1);
  const b = body(ex);
  if (b?.status_number !== STATUS.OK || !Array.isArray(b.data) || b.data.length !== WIDE_PAGE) return undefined;
  const records = b.data.filter((p): p is PairRecord => typeof (p as PairRecord)?.code === 'string');
  return records.length === WIDE_PAGE ? records : undefined;
}

/** One walk of the pages of a listing (see catalogue). */
async function walk(
  ctx: CheckContext,
  query: RestRequest['query'],
  key: string | undefined,
  maxPages: number,
): Promise<PairRecord[]> {
  // A whole listing in wide pages when the target answers one in full: a tenth of the requests.
  const wide = maxPages === MAX_PAGES ? await widePage(ctx, query, key) : undefined;
  const size = wide ? WIDE_PAGE : LIMITS.defaultPerPage;
  const sized = wide ? { ...query, [QUERY.pairs.perPage]: String(WIDE_PAGE) } : query;
  const all: PairRecord[] = [];
  const seen = new Set<string>();
  const read = async (page: number): Promise<PairRecord[] | null> => {
    if (page === 1 && wide) return wide;
    const { ex, data } = await pageOrEnd(ctx, { ...sized, [QUERY.pairs.page]: String(page) }, key);
    allowFor(ctx, ex, PAGE_LANES);
    return data;
  };
  for (let first = 1; first <= maxPages; ) {
    // One page at a time, then wider: a small catalogue costs no read past its end, a large one
    // at most PAGE_LANES - 1 (a read the key's rate limit pays for).
    const width = Math.min(first <= 2 ? 1 : Math.min(PAGE_LANES, first - 1), maxPages - first + 1);
    const pages = await Promise.all(Array.from({ length: width }, (_, i) => read(first + i)));
    first += width;
    for (const data of pages) {
      if (data === null) return all;
      const fresh = data.filter((p) => !seen.has(p.code));
      for (const p of fresh) seen.add(p.code);
      all.push(...data);
      // A page bigger than its size means pagination is not honoured (rest.pairs.defaults says so),
      // and a page of codes already listed means the page number is not read (the pages checks say
      // so): walking on would only repeat it.
      if (data.length !== size || fresh.length === 0) return all;
    }
  }
  return all;
}

/**
 * Lengthens the check's time limit by what one of `lanes` concurrent requests took, with the
 * harness's margin: a check that reads the whole catalogue needs time in proportion to it.
 */
export function allowFor(ctx: CheckContext, ex: RestExchange, lanes: number): void {
  ctx.extendTimeLimit?.(Math.ceil((2 * ex.durationMs) / lanes) + PER_REQUEST_SLACK_MS);
}

/** Asset type of a code (`Crypto` of `Crypto:ALL:BTC/USD`), or undefined for a malformed one. */
export const assetTypeOf = (code: string): string | undefined => parsePairCode(code)?.assetType;

/** The first pair of each asset type, in catalogue order, leaving out the profile's special pairs. */
export function onePerAssetType(
  pairs: readonly PairRecord[],
  exclude: readonly (string | undefined)[] = [],
): PairRecord[] {
  const seen = new Map<string, PairRecord>();
  for (const p of pairs) {
    const t = assetTypeOf(p.code);
    if (t && !seen.has(t) && !exclude.includes(p.code)) seen.set(t, p);
  }
  return [...seen.values()];
}

/**
 * One pair of each asset type the primary key lists, leaving out the profile's special pairs: the
 * first of each type in a bounded catalogue walk, then, for each type the spec names that the walk
 * did not reach (a large catalogue may list one type for pages), the first of `?type=`.
 */
export async function pairPerAssetType(ctx: CheckContext): Promise<PairRecord[]> {
  const skip = specialPairs(ctx);
  const found = onePerAssetType(await catalogue(ctx), skip);
  for (const type of KNOWN_ASSET_TYPES) {
    if (found.some((p) => assetTypeOf(p.code) === type)) continue;
    const first = (await pairsPage(ctx, { [QUERY.pairs.type]: type })).data.find(
      (p) => assetTypeOf(p.code) === type && !skip.includes(p.code),
    );
    if (first) found.push(first);
  }
  return found;
}

/**
 * Codes of the profile's named pairs (stale, inactive, …), which answer other statuses by design;
 * `sample` is not one.
 */
export const specialPairs = (ctx: CheckContext): string[] =>
  Object.entries(ctx.profile.pairs ?? {}).flatMap(([name, v]) =>
    name !== 'sample' && typeof v === 'string' ? [v] : [],
  );
