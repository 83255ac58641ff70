/** Faults of /v1/price: the price record, the market object and the answers of a stale or unknown pair. */
import { Decimal } from '../decimal.ts';
import { ASSET_TYPE, QUERY, STATUS } from '../../src/spec.ts';
import type { ServiceView } from '../model.ts';
import type { PairEntry } from '../prices.ts';
import { f, type Fault } from './record.ts';
import { withBody, fewerPairsThan } from './support.ts';

/** `/v1/price` data with its market object changed by `change`. */
const withMarket = (
  data: Record<string, unknown>,
  change: (market: Record<string, unknown>) => void,
): Record<string, unknown> => {
  const market = { ...(data.market as Record<string, unknown>) };
  change(market);
  return { ...data, market };
};

/**
 * Fault price-late-type-inverted's asset type: the one with the fewest active pairs (the later
 * listed of equals), which the fault lists last.
 */
function scarceType(entries: readonly PairEntry[]): string | undefined {
  const counts = new Map<string, number>();
  for (const e of entries) if (e.state === 'active') counts.set(e.assetType, (counts.get(e.assetType) ?? 0) + 1);
  let scarce: string | undefined;
  for (const [type, n] of counts) if (scarce === undefined || n <= counts.get(scarce)!) scarce = type;
  return scarce;
}
const lateTypes = new WeakMap<ServiceView, string | undefined>();

/**
 * Fault market-crypto-deep-session's pair: the last listed active Crypto pair without pools (a
 * pooled pair is one the profile names), past every sample of the first.
 */
const deepCrypto = (svc: ServiceView): PairEntry | undefined =>
  svc.listing.filter((e) => e.state === 'active' && e.assetType === ASSET_TYPE.crypto && !e.config.pools).at(-1);

/**
 * Fault price-deep-pair-inverted's pair: deep in the catalogue, out of reach of every sample of
 * the first pairs per asset type (the profile's sample, a check's first three of a type). The last
 * listed active pair with three of its type before it in the listing and in the catalogue, and not
 * among the catalogue's first ten; the last listed active pair when none is.
 */
function deepPair(svc: ServiceView): PairEntry | undefined {
  const active = (entries: readonly PairEntry[]): PairEntry[] => entries.filter((e) => e.state === 'active');
  const deepIn = (entries: readonly PairEntry[]): Set<PairEntry> => {
    const seen = new Map<string, number>();
    const out = new Set<PairEntry>();
    for (const e of entries) {
      const n = seen.get(e.assetType) ?? 0;
      if (n >= 3) out.add(e);
      seen.set(e.assetType, n + 1);
    }
    return out;
  };
  const listed = active(svc.listing);
  const catalogue = active([...svc.book.pairs.values()]);
  const [inListing, inCatalogue, first] = [deepIn(listed), deepIn(catalogue), new Set(catalogue.slice(0, 10))];
  return listed.filter((e) => inListing.has(e) && inCatalogue.has(e) && !first.has(e)).at(-1) ?? listed.at(-1);
}

/** The faults of /v1/price: the price record, the market object and the answers of a stale or unknown pair. */
export const PRICE_FAULTS = [
  // Price record and market object
  f(
    'price-ask-number',
    'price-record',
    'every price value is a JSON string',
    ['field:price:ask', 'rule:service:decimal-strings'],
    { record: { price: (d) => ({ ...d, ask: Number(d.ask) }) } },
  ),
  f('price-not-mid', 'price-record', 'price is the mid-price: between bid and ask', ['field:price:price'], {
    // One tick above the ask, whatever its decimals: no mid of any service lies outside the spread.
    record: {
      quote: (q, { entry }) => ({
        ...q,
        price: new Decimal(q.ask).plus(entry.tick).toFixed(q.price.split('.')[1]?.length ?? 0),
      }),
    },
  }),
  f('price-bid-above-ask', 'price-record', 'bid <= price <= ask', ['field:price:price', 'field:push:price'], {
    record: { quote: (q) => ({ ask: q.bid, bid: q.ask, price: q.price }) },
  }),
  f(
    'price-deep-pair-inverted',
    'price-record',
    "bid <= price <= ask for every pair (here only the catalogue's last pair, outside every sample, breaks it)",
    ['field:price:price'],
    {
      record: { price: (d, { entry, svc }) => (entry === deepPair(svc) ? { ...d, ask: d.bid, bid: d.ask } : d) },
    },
    {
      // The checks' samples (a few pairs per asset type, the stream's live pairs) cover much of a
      // small catalogue: no pair lies outside all of them, so the fault's pair is not a deep one.
      maskedBy: (d) =>
        fewerPairsThan(d, 30) === undefined ? undefined : 'a catalogue this small has no pair outside every sample',
    },
  ),
  f(
    'market-crypto-timezone',
    'market',
    'timezone is absent for Crypto',
    ['field:market:timezone', 'rule:market:crypto'],
    {
      record: { price: (d) => withMarket(d, (m) => (m.timezone ??= 'UTC')) },
    },
  ),
  f('market-timezone-missing', 'market', 'timezone is present for non-Crypto assets', ['field:market:timezone'], {
    record: { price: (d) => withMarket(d, (m) => delete m.timezone) },
  }),
  f('market-timezone-invalid', 'market', 'timezone is an IANA zone name', ['field:market:timezone'], {
    record: {
      price: (d) =>
        withMarket(d, (m) => {
          if (m.timezone !== undefined) m.timezone = 'America/New York';
        }),
    },
  }),
  f(
    'market-crypto-regular-session',
    'market',
    'Crypto reason is continuous',
    ['rule:market:crypto', 'field:market:reason'],
    {
      record: {
        price: (d) =>
          withMarket(d, (m) => {
            if (m.reason === 'continuous') m.reason = 'regular_session';
          }),
      },
    },
  ),
  f(
    'market-open-inverted',
    'market',
    'open is true in a session and false with market_closed (non-Crypto open flag inverted, so it shows at any hour)',
    ['field:market:open', 'rule:market:other-assets'],
    {
      record: {
        price: (d) =>
          withMarket(d, (m) => {
            if (m.timezone !== undefined) m.open = !m.open;
          }),
      },
    },
  ),
  // 50102 and 50104 shapes
  f('stale-http-503', 'price-status', '50102 keeps HTTP 200', ['rule:price:stale-keeps-data', 'status:50102'], {
    envelope: { write: (out, { status }) => (status === STATUS.PRICE_STALE ? { ...out, http: 503 } : out) },
  }),
  f('stale-data-null', 'price-status', '50102 still fills data', ['rule:price:stale-keeps-data', 'status:50102'], {
    envelope: {
      write: (out, { status }) => (status === STATUS.PRICE_STALE ? withBody(out, (b) => (b.data = null)) : out),
    },
  }),
  f(
    'unknown-pair-status-50008',
    'price-status',
    'an unknown pair answers 50104',
    ['status:50104', 'rule:price:unknown-pair-data-null'],
    {
      envelope: {
        answer: (a, { by }) =>
          by === 'price' && a.status === STATUS.PAIR_NOT_FOUND ? { ...a, status: STATUS.NOT_FOUND } : a,
      },
    },
  ),
  f(
    'missing-code-200',
    'price-status',
    'a missing code is an invalid request (50004)',
    ['parameter:price:code', 'status:50004'],
    {
      envelope: {
        answer: (a, { by, params }) =>
          by === 'price' && a.status === STATUS.INVALID_REQUEST && !params.get(QUERY.price.code)
            ? { status: STATUS.OK, data: null }
            : a,
      },
    },
  ),
  // Market rules on every pair, not on samples
  f(
    'market-crypto-deep-session',
    'market',
    "Crypto is only ever in REG (here the catalogue's last Crypto pair, outside every sample, is CLOSED)",
    ['rule:market:crypto', 'field:market:session'],
    {
      record: {
        price: (d, { entry, svc }) =>
          entry === deepCrypto(svc)
            ? withMarket(d, (m) => Object.assign(m, { open: false, reason: 'no_price', session: 'CLOSED' }))
            : d,
      },
    },
  ),
  f(
    'market-timezone-alias',
    'market',
    'timezone is an IANA zone name, spelled as the tz database spells it (here in lower case: america/new_york)',
    ['field:market:timezone'],
    {
      record: {
        price: (d) =>
          withMarket(d, (m) => {
            if (typeof m.timezone === 'string') m.timezone = m.timezone.toLowerCase();
          }),
      },
    },
  ),
  f(
    'market-extended-hours-non-us',
    'market',
    'pre_session and post_session belong to equities with extended hours (here a Forex, Commodity or ' +
      'Metal pair is in PRE)',
    ['rule:market:us-extended-hours'],
    {
      record: {
        price: (d, { entry }) =>
          entry.assetType !== ASSET_TYPE.equity && entry.assetType !== ASSET_TYPE.crypto
            ? withMarket(d, (m) => Object.assign(m, { open: true, reason: 'pre_session', session: 'PRE' }))
            : d,
      },
    },
  ),
  // Catalogue reach
  f(
    'price-late-type-inverted',
    'price-record',
    'bid <= price <= ask for every pair of every asset type (here the asset type with the fewest ' +
      'pairs is listed after every other pair, and its prices are inverted)',
    ['field:price:price'],
    {
      query: {
        listing: (entries) => {
          const late = scarceType(entries);
          return [...entries.filter((e) => e.assetType !== late), ...entries.filter((e) => e.assetType === late)];
        },
      },
      record: {
        price: (d, { entry, svc }) => {
          if (!lateTypes.has(svc)) lateTypes.set(svc, scarceType(svc.listing));
          return entry.assetType === lateTypes.get(svc) ? { ...d, ask: d.bid, bid: d.ask } : d;
        },
      },
    },
  ),
] as const satisfies readonly Fault[];
