/**
 * What discovery learns over REST: the listed pairs, what their listing shows (asset types, the
 * unit of `ts`, pagination metadata), the pairs that are priced and a stale one.
 */
import type { RestClient, RestExchange } from '../transports/rest.ts';
import { LIMITS, PATHS, QUERY, STATUS, parsePairCode } from '../spec.ts';
import type { Observe } from './model.ts';
import { paginationFields, statusOf, timestampUnit } from './readings.ts';

/** Most price requests spent looking for a stale pair (one at a time, paced like any request). */
export const STALE_SEARCH_MAX = 20;

interface Listing {
  pairs: string[];
  exchange?: RestExchange;
}

/** What the REST side showed: the first page of pairs, the priced ones, a stale one, a pair to subscribe. */
export interface RestFindings {
  listing: Listing;
  stale?: string;
  priced: string[];
  /** A priced pair, else a listed one: the pair a stream candidate is asked to subscribe to. */
  anyPair?: string;
}

/** The first page of /v1/pairs, as many as the target gives at once (falling back to its default page). */
async function listPairs(rest: RestClient): Promise<Listing> {
  for (const query of [{ [QUERY.pairs.perPage]: String(LIMITS.maxPairsPerSubscribe) }, undefined]) {
    const ex = await rest.get({ path: PATHS.pairs, query }).catch(() => undefined);
    const body = ex?.json as { status_number?: unknown; data?: unknown } | undefined;
    if (ex && String(body?.status_number) === STATUS.OK && Array.isArray(body?.data)) {
      const pairs = body.data
        .map((p) => (p !== null && typeof p === 'object' ? (p as { code?: unknown }).code : undefined))
        .filter((c): c is string => typeof c === 'string' && parsePairCode(c) !== null);
      return { pairs, exchange: ex };
    }
  }
  return { pairs: [] };
}

/** Observations of /v1/pairs: asset types, the `ts` unit and any pagination metadata. */
function observeListing(listing: Listing, observe: Observe): void {
  const types = [...new Set(listing.pairs.map((p) => parsePairCode(p)!.assetType))].sort();
  observe('rest.listed-pairs', listing.pairs.length, 'on the first page, as many per page as it gives');
  observe('rest.asset-types', types, 'on the first page');
  const json = listing.exchange?.json as Record<string, unknown> | undefined;
  observe('rest.ts-unit', timestampUnit(json?.ts) ?? 'unknown', 'of the envelope ts of /v1/pairs');
  const meta = paginationFields(json);
  observe('rest.pagination-metadata', meta.length > 0 ? meta : 'none', 'fields of /v1/pairs beside the envelope');
}

/** The first listed pair whose price is answered with 50102, within STALE_SEARCH_MAX requests. */
async function findStale(
  rest: RestClient,
  pairs: readonly string[],
  over: () => boolean,
): Promise<{ stale?: string; priced: string[] }> {
  const priced: string[] = [];
  for (const code of pairs.slice(0, STALE_SEARCH_MAX)) {
    if (over()) break;
    const ex = await rest.get({ path: PATHS.price, query: { [QUERY.price.code]: code } }).catch(() => undefined);
    // A target that answers nothing now will not answer the next one either.
    if (!ex) break;
    const sn = String(statusOf(ex?.json));
    if (sn === STATUS.PRICE_STALE) return { stale: code, priced };
    if (sn === STATUS.OK) priced.push(code);
  }
  return { priced };
}

/** Lists the pairs, observes the listing, and looks for a stale pair while discovery has time. */
export async function learnFromRest(rest: RestClient, observe: Observe, over: () => boolean): Promise<RestFindings> {
  const listing = await listPairs(rest);
  observeListing(listing, observe);
  const { stale, priced } = await findStale(rest, listing.pairs, over);
  observe('rest.stale-pair', stale ?? 'none', `looked for among the first ${STALE_SEARCH_MAX} listed pairs`);
  const anyPair = priced[0] ?? listing.pairs[0];
  return { listing, ...(stale ? { stale } : {}), priced, ...(anyPair ? { anyPair } : {}) };
}
