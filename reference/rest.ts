/**
 * The REST side: `GET /v1/pairs` and `GET /v1/price` in the envelope, with auth, entitlements,
 * pagination, filters, the special pair states and the on-demand status numbers.
 */
import { Decimal } from 'decimal.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LIMITS, PATHS, QUERY, STATUS, type RestStatus } from '../src/spec.ts';
import { messageOf, type KeyRecord, type Service } from './service.ts';
import type { PairEntry } from './prices.ts';
import type { MarketInfo } from './market.ts';
import type { Outcome, Responder } from './seams.ts';

/** A price record as sent on REST or (without market) in pushes, written as the dialect writes prices there. */
export function priceFields(
  svc: Service,
  entry: PairEntry,
  surface: 'rest' | 'stream',
): { ask: string; bid: string; price: string } {
  const { ask, bid, price } = svc.seams.record.quote(entry.current, { entry });
  const w = svc.wire;
  return { ask: w.price(ask, surface), bid: w.price(bid, surface), price: w.price(price, surface) };
}

/** How far a delayed feed's prices stand from the live ones. */
const DELAYED_SHIFT = 0.02;

/**
 * The prices moved up by one amount, 2 % of the price in the coarsest decimal place any of them
 * uses (padding zeros aside), so that bid <= price <= ask hold and the price stays the mid, or its
 * rounding, at the pair's own precision.
 */
function delayedFields(f: { ask: string; bid: string; price: string }): { ask: string; bid: string; price: string } {
  const written = (v: string): number => v.split('.')[1]?.length ?? 0;
  const used = (v: string): number => new Decimal(v).decimalPlaces();
  const shift = new Decimal(f.price)
    .times(DELAYED_SHIFT)
    .toDecimalPlaces(Math.min(used(f.ask), used(f.bid), used(f.price)), Decimal.ROUND_UP);
  const up = (v: string): string => new Decimal(v).plus(shift).toFixed(written(v));
  return { ask: up(f.ask), bid: up(f.bid), price: up(f.price) };
}

function marketOut(m: MarketInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { open: m.open, reason: m.reason, session: m.session };
  if (m.timezone !== undefined) out.timezone = m.timezone;
  return out;
}

/** Answers the REST requests of one service (everything but the WebSocket upgrade). */
export class RestHandler {
  /** With a service rate: when the requests taken so far are all answered (performance.now() ms). */
  private servedUntil = 0;

  constructor(private readonly svc: Service) {}

  /** The answer `by` chose, written in the envelope (spec: Response envelope). */
  private answer(by: Responder, params: URLSearchParams, status: RestStatus, data: unknown, message?: string): Outcome {
    const svc = this.svc;
    const chosen = svc.seams.envelope.answer({ status, data, message }, { by, params });
    const body: Record<string, unknown> = { status_number: chosen.status };
    if (svc.wire.hasTs(chosen.status, by)) body.ts = svc.wire.ts(svc.clock());
    body.data = chosen.data;
    if (chosen.status !== STATUS.OK) body.message = chosen.message ?? messageOf(chosen.status);
    const http = svc.wire.restHttp(chosen.status, chosen.data !== null);
    return svc.seams.envelope.write({ http, body }, { status: chosen.status, by });
  }

  /** An error answer: data null and the status's message unless `message` is given. */
  private error(by: Responder, params: URLSearchParams, status: RestStatus, message?: string): Outcome {
    return this.answer(by, params, status, null, message);
  }

  /** Handles one HTTP request that is not a WebSocket upgrade. */
  handle(req: IncomingMessage, res: ServerResponse, wsPath: string): void {
    let out: Outcome;
    try {
      out = this.route(req, wsPath);
    } catch {
      out = this.error('router', new URLSearchParams(), STATUS.INTERNAL);
    }
    const text = this.svc.wire.text(out.body);
    const write = (): void => {
      res.writeHead(out.http, {
        ...out.headers,
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    };
    const holdMs = this.svc.dialect.rest.latencyMs + this.serviceWaitMs();
    if (holdMs > 0) setTimeout(write, holdMs);
    else write();
  }

  /**
   * With a service rate (config `restServiceRate`), how long this request waits for its turn: one
   * request each 1/rate s, in arrival order, so past the rate the queue and the wait grow.
   */
  private serviceWaitMs(): number {
    const rate = this.svc.config.restServiceRate;
    if (!(rate > 0)) return 0;
    const now = performance.now();
    this.servedUntil = Math.max(now, this.servedUntil) + 1000 / rate;
    return this.servedUntil - now;
  }

  /**
   * Counts the request against the key's window: a 50006 with `Retry-After` (the seconds left of
   * the window) when over, else undefined; under the dialect's rate-limit headers, `headers` gets
   * the IETF `RateLimit-Policy` and `RateLimit` fields of either answer.
   */
  private rateLimited(key: KeyRecord, params: URLSearchParams, headers: Record<string, string>): Outcome | undefined {
    const w = this.svc.rateWindow(key, Date.now());
    const resetS = Math.max(1, Math.ceil(w.resetMs / 1000));
    if (this.svc.dialect.rest.rateLimitHeaders && w.requests > 0) {
      headers['ratelimit-policy'] = `"default";q=${w.requests};w=${Math.max(1, Math.round(w.windowMs / 1000))}`;
      headers.ratelimit = `"default";r=${w.remaining};t=${resetS}`;
    }
    if (!w.over) return undefined;
    const out = this.error('auth', params, STATUS.RATE_LIMITED);
    return { ...out, headers: { ...out.headers, 'retry-after': String(resetS) } };
  }

  /**
   * A request without a valid key: 401 and 50005, unless the dialect's gateway limits such requests
   * per client address and this one is over it (50006 with Retry-After, as a gateway answers first).
   */
  private keyless(req: IncomingMessage, params: URLSearchParams): Outcome {
    const w = this.svc.keylessWindow(req.socket.remoteAddress ?? '', Date.now());
    if (!w?.over) return this.error('auth', params, STATUS.UNAUTHORIZED);
    const out = this.error('auth', params, STATUS.RATE_LIMITED);
    return { ...out, headers: { ...out.headers, 'retry-after': String(Math.max(1, Math.ceil(w.resetMs / 1000))) } };
  }

  private route(req: IncomingMessage, wsPath: string): Outcome {
    const svc = this.svc;
    const url = new URL(req.url ?? '/', 'http://reference.local');
    const params = url.searchParams;
    // Every endpoint needs the key (spec: Endpoints), so auth comes before routing.
    const key = svc.caller(req, 'rest');
    if (!key) return this.keyless(req, params);
    const account = svc.restAccountStatus(key);
    if (account) return this.error('auth', params, account);
    const limitHeaders: Record<string, string> = {};
    const limited = this.rateLimited(key, params, limitHeaders);
    if (limited) return { ...limited, headers: { ...limitHeaders, ...limited.headers } };
    const out = this.routeKeyed(req, url, key, wsPath);
    return Object.keys(limitHeaders).length ? { ...out, headers: { ...limitHeaders, ...out.headers } } : out;
  }

  private routeKeyed(req: IncomingMessage, url: URL, key: KeyRecord, wsPath: string): Outcome {
    const params = url.searchParams;
    const known = url.pathname === PATHS.pairs || url.pathname === PATHS.price;
    if (url.pathname === wsPath) return this.wsPathWithoutUpgrade(key, params);
    if (!known || req.method !== 'GET')
      return this.error('router', params, STATUS.NOT_FOUND, `no endpoint ${req.method} ${url.pathname}`);
    for (const name of new Set(params.keys()))
      if (params.getAll(name).length > 1)
        return this.error('router', params, STATUS.INVALID_REQUEST, `${name} given more than once`);
    return url.pathname === PATHS.pairs ? this.pairs(key, params) : this.price(key, params);
  }

  /** A plain GET of the stream path: what the handshake would refuse, else "upgrade required". */
  private wsPathWithoutUpgrade(key: KeyRecord, params: URLSearchParams): Outcome {
    if (key.state === 'stream-maintenance') return this.error('stream-path', params, STATUS.WS_MAINTENANCE);
    if (key.stream === false)
      return this.error('stream-path', params, STATUS.ACCESS_DENIED, 'no access to the V1 source stream');
    const out = this.error('stream-path', params, STATUS.INVALID_REQUEST, 'WebSocket upgrade required');
    return { ...out, http: 426 };
  }

  private pairs(key: KeyRecord, params: URLSearchParams): Outcome {
    const svc = this.svc;
    const invalid = (message: string): Outcome => this.error('pairs', params, STATUS.INVALID_REQUEST, message);
    const none = svc.access(key, undefined, 'list');
    if (none) return this.error('pairs', params, none);
    const query = svc.seams.query.pairs(
      {
        page: intParam(params, QUERY.pairs.page, LIMITS.defaultPage),
        perPage: intParam(params, QUERY.pairs.perPage, LIMITS.defaultPerPage),
        type: params.get(QUERY.pairs.type)?.toLowerCase(),
        code: params.get(QUERY.pairs.code)?.toLowerCase(),
      },
      { params },
    );
    const { type, code } = query;
    let { page, perPage } = query;
    // Whether an invalid page or per_page is refused or read as its default is not stated: the dialect chooses.
    const lenient = svc.dialect.rest.invalidPaging === 'defaults';
    if (typeof page === 'string') {
      if (!lenient) return invalid(page);
      page = LIMITS.defaultPage;
    }
    if (typeof perPage === 'string') {
      if (!lenient) return invalid(perPage);
      perPage = LIMITS.defaultPerPage;
    }
    // The per_page maximum and the answer past it are not shown: the dialect chooses both.
    const { perPageMax, perPageOver, pastEnd } = svc.dialect.rest;
    if (perPage > perPageMax) {
      if (perPageOver === 'error') return invalid(`per_page must be at most ${perPageMax}`);
      perPage = perPageMax;
    }
    const names = svc.dialect.rest.codeSearch === 'code-or-name';
    const matches: PairEntry[] = [];
    for (const entry of svc.listing) {
      if (!svc.listable(key, entry)) continue;
      if (type && entry.assetType.toLowerCase() !== type) continue;
      // A search "by a code or fragment of it" that also reads names is the dialect's choice.
      if (
        code &&
        !entry.code.toLowerCase().includes(code) &&
        !(names && entry.config.name.toLowerCase().includes(code))
      )
        continue;
      matches.push(entry);
    }
    const { start, count } = svc.seams.query.window({ start: (page - 1) * perPage, count: perPage }, { page });
    if (page > 1 && start >= matches.length && pastEnd === 'error')
      return invalid(`page ${page} is past the last page`);
    const data = matches
      .slice(start, start + count)
      .map((e) =>
        svc.seams.record.pair({ code: e.code, name: e.config.name, base: e.base, quote: e.quote }, { entry: e }),
      );
    const out = this.answer('pairs', params, STATUS.OK, data);
    // Pagination metadata is not shown: none, a meta object, or fields beside data, per the dialect.
    const meta = { page, per_page: count, total: matches.length };
    if (svc.dialect.rest.pagination === 'meta') out.body.meta = meta;
    else if (svc.dialect.rest.pagination === 'top-level') Object.assign(out.body, meta);
    return out;
  }

  private price(key: KeyRecord, params: URLSearchParams): Outcome {
    const svc = this.svc;
    const error = (status: RestStatus, message?: string): Outcome => this.error('price', params, status, message);
    const code = params.get(QUERY.price.code);
    if (code === null || code === '') return error(STATUS.INVALID_REQUEST, 'code is required');
    const entry = svc.livePair(code);
    if (!entry) return error(STATUS.PAIR_NOT_FOUND, `pair not found: ${code}`);
    const denied = svc.access(key, entry, 'price');
    if (denied) return error(denied);
    const pool = params.get(QUERY.price.pool);
    if (pool !== null) {
      if (pool === '') return error(STATUS.INVALID_REQUEST, 'pool must not be empty');
      const state = entry.config.pools?.[pool];
      if (state === undefined) return error(STATUS.POOL_NOT_FOUND);
      if (state === 'unavailable') return error(STATUS.POOL_UNAVAILABLE);
    }
    // A listed pair the stream refuses as suspended is not priced as active here either.
    if (svc.suspended.has(entry.code)) return error(STATUS.PAIR_UNAVAILABLE);
    switch (entry.state) {
      case 'no-price':
        return error(STATUS.PRICE_NOT_FOUND);
      case 'unavailable':
        return error(STATUS.PAIR_UNAVAILABLE);
      case 'maintenance':
        return error(STATUS.PAIR_MAINTENANCE);
      case 'broken':
        return error(STATUS.INTERNAL);
      default:
        break;
    }
    // A delayed feed's price is still a price (spec, 50102: data may still be returned).
    const delayed = svc.delayedRead(entry);
    const fields = priceFields(svc, entry, 'rest');
    const market = svc.market(entry);
    // A closed market's price: 200, or 50102 with or without data ("price unavailable or possibly
    // stale, for example market closed; data may still be returned"), per the dialect.
    const closed = market.reason === 'market_closed' ? svc.dialect.rest.closedMarket : '200';
    if (closed === '50102-no-data') return this.answer('price', params, STATUS.PRICE_STALE, null);
    const data = svc.seams.record.price(
      { code: entry.code, ...(delayed ? delayedFields(fields) : fields), market: marketOut(market) },
      { entry, svc },
    );
    // Spec, 50102: a stale price still answers with its data.
    const stale = entry.state === 'stale' || delayed || closed === '50102';
    return this.answer('price', params, stale ? STATUS.PRICE_STALE : STATUS.OK, data);
  }
}

/** A positive integer query parameter: its value, `fallback` when absent, or why it is invalid. */
function intParam(params: URLSearchParams, name: string, fallback: number): number | string {
  const raw = params.get(name);
  if (raw === null) return fallback;
  if (!/^[0-9]{1,9}$/.test(raw) || Number(raw) < 1) return `${name} must be a positive integer`;
  return Number(raw);
}
