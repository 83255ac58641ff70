/**
 * The REST side: `GET /v1/pairs` and `GET /v1/price` in the envelope, with auth, entitlements,
 * pagination, filters, the special pair states and the on-demand status numbers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Decimal } from 'decimal.js';
import { API_KEY_HEADER, LIMITS, PATHS, QUERY, STATUS, type RestStatus } from '../src/spec.ts';
import { messageOf, type KeyRecord, type Service } from './service.ts';
import type { PairEntry } from './prices.ts';
import type { MarketInfo } from './market.ts';

const HEADER_LC = API_KEY_HEADER.toLowerCase();

/** The key header value, matched case-insensitively (spec: Authentication 1). */
export function keyHeader(req: IncomingMessage, caseSensitive: boolean, canonicalRefused = false): string | undefined {
  if (caseSensitive || canonicalRefused) {
    // Faults: only the exact spelling `X-API-Key` counts, or every spelling but that one.
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) {
      if (raw[i]!.toLowerCase() !== HEADER_LC) continue;
      if ((raw[i] === API_KEY_HEADER) === caseSensitive) return raw[i + 1];
    }
    return undefined;
  }
  const v = req.headers[HEADER_LC];
  return Array.isArray(v) ? v[0] : v;
}

interface Outcome {
  http: number;
  body: Record<string, unknown>;
}

/**
 * Fault price-deep-pair-inverted's pair: deep in the catalogue, out of reach of every sample of
 * the first pairs per asset type (the profile's sample, a check's first three of a type). The last
 * listed active pair with three of its type before it in the listing and in the catalogue, and not
 * among the catalogue's first ten; the last listed active pair when none is.
 */
function deepPair(svc: Service): PairEntry | undefined {
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

/**
 * A price record as sent on REST or (without market) in pushes, faults applied, written as the
 * dialect writes prices there.
 */
export function priceFields(
  svc: Service,
  entry: PairEntry,
  surface: 'rest' | 'stream',
): { ask: string; bid: string; price: string } {
  let { ask, bid, price } = entry.current;
  // One tick off the quote's own mid, whatever its decimals: never the mid at any rounding.
  if (svc.is('price-not-mid')) price = new Decimal(price).plus(entry.tick).toFixed(price.split('.')[1]?.length ?? 0);
  if (svc.is('price-bid-above-ask')) [ask, bid] = [bid, ask];
  const w = svc.wire;
  return { ask: w.price(ask, surface), bid: w.price(bid, surface), price: w.price(price, surface) };
}

function marketOut(svc: Service, m: MarketInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { open: m.open, reason: m.reason, session: m.session };
  if (m.timezone !== undefined) out.timezone = m.timezone;
  if (svc.is('market-crypto-timezone') && m.timezone === undefined) out.timezone = 'UTC';
  if (svc.is('market-timezone-missing')) delete out.timezone;
  if (svc.is('market-timezone-invalid') && m.timezone !== undefined) out.timezone = 'America/New York';
  if (svc.is('market-crypto-regular-session') && m.reason === 'continuous') out.reason = 'regular_session';
  if (svc.is('market-open-inverted') && m.timezone !== undefined) out.open = !m.open;
  return out;
}

/** Answers the REST requests of one service (everything but the WebSocket upgrade). */
export class RestHandler {
  constructor(private readonly svc: Service) {}

  private envelope(status: RestStatus, data: unknown, message?: string): Outcome {
    const svc = this.svc;
    const ok = status === STATUS.OK || status === STATUS.PRICE_STALE;
    let http = svc.wire.restHttp(status);
    if (status === STATUS.UNAUTHORIZED && svc.is('auth-http-403')) http = 403;
    const body: Record<string, unknown> = {
      status_number: svc.is('envelope-status-number-integer') ? Number(status) : status,
      ts: svc.is('envelope-ts-string') ? String(svc.wire.ts(svc.clock())) : svc.wire.ts(svc.clock()),
      data: !ok && svc.is('envelope-error-data-filled') ? {} : data,
    };
    if (status !== STATUS.OK && !(svc.is('envelope-error-message-missing') && !ok))
      body.message = message ?? messageOf(status);
    return { http, body };
  }

  private error(status: RestStatus, message?: string): Outcome {
    return this.envelope(status, null, message);
  }

  /** Handles one HTTP request that is not a WebSocket upgrade. */
  handle(req: IncomingMessage, res: ServerResponse, wsPath: string): void {
    let out: Outcome;
    try {
      out = this.route(req, wsPath);
    } catch {
      out = this.error(STATUS.INTERNAL);
    }
    const text = this.svc.wire.text(out.body);
    res.writeHead(out.http, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  }

  private route(req: IncomingMessage, wsPath: string): Outcome {
    const svc = this.svc;
    const url = new URL(req.url ?? '/', 'http://reference.local');
    // Every endpoint needs the key (spec: Endpoints), so auth comes before routing.
    let key: KeyRecord | undefined = svc.keyFor(
      keyHeader(req, svc.is('auth-header-case-sensitive'), svc.is('auth-canonical-header-refused')),
    );
    if (!key && svc.is('auth-missing-key-accepted') && keyHeader(req, false) === undefined) key = svc.primary;
    if (!key) return this.error(STATUS.UNAUTHORIZED);
    const account = svc.restAccountStatus(key);
    if (account) return this.error(account);
    if (svc.throttled(key, Date.now())) return this.error(STATUS.RATE_LIMITED);

    const known = url.pathname === PATHS.pairs || url.pathname === PATHS.price;
    if (url.pathname === wsPath) return this.wsPathWithoutUpgrade(key);
    if (!known || req.method !== 'GET') {
      return svc.is('unknown-endpoint-50004')
        ? this.error(STATUS.INVALID_REQUEST)
        : this.error(STATUS.NOT_FOUND, `no endpoint ${req.method} ${url.pathname}`);
    }
    const params = url.searchParams;
    for (const name of new Set(params.keys()))
      if (params.getAll(name).length > 1) return this.error(STATUS.INVALID_REQUEST, `${name} given more than once`);
    return url.pathname === PATHS.pairs ? this.pairs(key, params) : this.price(key, params);
  }

  /** A plain GET of the stream path: what the handshake would refuse, else "upgrade required". */
  private wsPathWithoutUpgrade(key: KeyRecord): Outcome {
    if (key.state === 'stream-maintenance') return this.error(STATUS.WS_MAINTENANCE);
    if (key.stream === false) return this.error(STATUS.ACCESS_DENIED, 'no access to the V1 source stream');
    const out = this.error(STATUS.INVALID_REQUEST, 'WebSocket upgrade required');
    return { ...out, http: 426 };
  }

  private intParam(params: URLSearchParams, name: string, fallback: number): number | string {
    const raw = params.get(name);
    if (raw === null) return fallback;
    if (!/^[0-9]{1,9}$/.test(raw) || Number(raw) < 1) {
      if (name === QUERY.pairs.page && this.svc.is('pairs-invalid-page-accepted')) return fallback;
      if (name === QUERY.pairs.perPage && this.svc.is('pairs-invalid-per-page-accepted')) return fallback;
      return `${name} must be a positive integer`;
    }
    return Number(raw);
  }

  private pairs(key: KeyRecord, params: URLSearchParams): Outcome {
    const svc = this.svc;
    if (key.pairs && key.pairs.length === 0 && !svc.is('entitlement-pairs-list-unfiltered'))
      return this.error(STATUS.NO_PAIRS_ALLOWED);
    const page = this.intParam(params, QUERY.pairs.page, LIMITS.defaultPage);
    const defaultPerPage =
      svc.is('pairs-default-per-page-20') || (svc.is('pairs-page-alone-per-page-20') && params.has(QUERY.pairs.page))
        ? 20
        : LIMITS.defaultPerPage;
    let perPage = this.intParam(params, QUERY.pairs.perPage, defaultPerPage);
    const invalid = (message: string): Outcome => {
      const out = this.error(STATUS.INVALID_REQUEST, message);
      // Fault: the pairs endpoint's errors carry an empty list and no message.
      if (svc.is('pairs-error-envelope')) {
        out.body.data = [];
        delete out.body.message;
      }
      return out;
    };
    if (typeof page === 'string') return invalid(page);
    if (typeof perPage === 'string') return invalid(perPage);
    // The per_page maximum and the answer past it are not shown: the dialect chooses both.
    const { perPageMax, perPageOver, pastEnd } = svc.dialect.rest;
    if (perPage > perPageMax) {
      if (perPageOver === 'error') return invalid(`per_page must be at most ${perPageMax}`);
      perPage = perPageMax;
    }
    if (svc.is('pairs-per-page-ignored')) perPage = LIMITS.defaultPerPage;
    const type = params.get(QUERY.pairs.type)?.toLowerCase();
    const code = params.get(QUERY.pairs.code)?.toLowerCase();
    const matches: PairEntry[] = [];
    for (const entry of svc.listing) {
      if (!svc.listable(key, entry)) continue;
      if (type && !svc.is('pairs-type-filter-ignored') && entry.assetType.toLowerCase() !== type) continue;
      if (code && !svc.is('pairs-code-search-ignored') && !entry.code.toLowerCase().includes(code)) continue;
      matches.push(entry);
    }
    let start = (page - 1) * perPage;
    if (svc.is('pairs-pages-overlap') && page > 1) start -= 1;
    if (page > 1 && start >= matches.length && pastEnd === 'error')
      return invalid(`page ${page} is past the last page`);
    const data = matches.slice(start, start + perPage).map((e) => {
      const record: Record<string, string> = {
        code: e.code,
        name: e.config.name,
        base: svc.is('pairs-base-mismatch') ? e.quote : e.base,
        quote: e.quote,
      };
      if (svc.is('pairs-record-name-missing')) delete record.name;
      return record;
    });
    const out = this.envelope(STATUS.OK, data);
    // Pagination metadata is not shown: none, a meta object, or fields beside data, per the dialect.
    const meta = { page, per_page: perPage, total: matches.length };
    if (svc.dialect.rest.pagination === 'meta') out.body.meta = meta;
    else if (svc.dialect.rest.pagination === 'top-level') Object.assign(out.body, meta);
    return out;
  }

  private price(key: KeyRecord, params: URLSearchParams): Outcome {
    const svc = this.svc;
    const code = params.get(QUERY.price.code);
    if (code === null || code === '') {
      return svc.is('missing-code-200')
        ? this.envelope(STATUS.OK, null)
        : this.error(STATUS.INVALID_REQUEST, 'code is required');
    }
    const entry = svc.livePair(code);
    if (!entry)
      return this.error(
        svc.is('unknown-pair-status-50008') ? STATUS.NOT_FOUND : STATUS.PAIR_NOT_FOUND,
        `pair not found: ${code}`,
      );
    let denied = svc.readAccess(key, entry);
    if (denied === STATUS.ACCESS_DENIED && svc.is('entitlement-whitelist-price-ignored')) denied = undefined;
    if (denied) return this.error(denied);
    const pool = params.get(QUERY.price.pool);
    if (pool !== null) {
      if (pool === '') return this.error(STATUS.INVALID_REQUEST, 'pool must not be empty');
      const state = entry.config.pools?.[pool];
      if (state === undefined) return this.error(STATUS.POOL_NOT_FOUND);
      if (state === 'unavailable') return this.error(STATUS.POOL_UNAVAILABLE);
    }
    switch (entry.state) {
      case 'no-price':
        return this.error(STATUS.PRICE_NOT_FOUND);
      case 'unavailable':
        return this.error(STATUS.PAIR_UNAVAILABLE);
      case 'maintenance':
        return this.error(STATUS.PAIR_MAINTENANCE);
      case 'broken':
        return this.error(STATUS.INTERNAL);
      default:
        break;
    }
    const fields: Record<string, unknown> = priceFields(svc, entry, 'rest');
    if (svc.is('price-ask-number')) fields.ask = Number(fields.ask);
    if (svc.is('price-deep-pair-inverted') && entry === deepPair(svc))
      [fields.ask, fields.bid] = [fields.bid, fields.ask];
    const data = { code: entry.code, ...fields, market: marketOut(svc, svc.market(entry)) };
    if (entry.state === 'stale') {
      const out = this.envelope(STATUS.PRICE_STALE, svc.is('stale-data-null') ? null : data);
      return svc.is('stale-http-503') ? { ...out, http: 503 } : out;
    }
    return this.envelope(STATUS.OK, data);
  }
}
