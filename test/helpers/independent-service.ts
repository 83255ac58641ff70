/**
 * A price service written from the spec alone, with none of the reference service's code or
 * habits, so that a run of the harness against it shows whether the harness accepts a conforming
 * service whose open choices nobody planned for. Where the spec says "not shown" this service
 * picks on purpose what a harness written with the reference in mind may not expect: timestamps
 * in seconds, a `meta` block beside `data`, a per_page ceiling of 50 refused rather than clamped,
 * the stream at `/v1/websocket` on the REST port, markets that open and close by the wall clock,
 * and pushes only for the pairs that moved.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import {
  API_KEY_HEADER,
  ASSET_TYPE,
  CRYPTO_SESSION,
  EXTENDED_HOURS_MARKET,
  LIMITS,
  MARKET_COMBINATIONS,
  METHOD,
  PAGING_MINIMUM,
  PATHS,
  QUERY,
  type RestStatus,
  type MarketReason,
  type MarketSession,
  parsePairCode,
  pairNotFoundMessage,
  STATUS,
  TEXT,
} from '../../src/spec.ts';
import { mulberry32 } from '../../src/random.ts';

/** Not a spec path: the spec leaves the stream's address open, and this one is nobody's default. */
export const STREAM_PATH = '/v1/websocket';
/** The spec leaves the allowance per key open (one and three in its examples). */
export const CONNECTIONS_PER_KEY = 2;
/** The spec leaves per_page's maximum open; a larger value is refused, not clamped. */
export const MAX_PER_PAGE = 50;
/** The spec leaves the push interval open. */
export const TICK_MS = 250;
/** The spec names a rate limit without figures; this one is generous enough never to slow a run. */
const RATE_WINDOW_MS = 1_000;
const RATE_PER_WINDOW = 300;
/** A close code of the application range: the spec names no code for the missed-ping close. */
const PING_TIMEOUT_CLOSE = 4408;
const MAX_FRAME_BYTES = 64 * 1024;

export interface IndependentService {
  rest: string;
  key: string;
  stream: string;
  port: number;
  close(): Promise<void>;
}

// --- catalogue --------------------------------------------------------------------------------

type Hours = (weekday: number, minute: number) => { reason: MarketReason; session: MarketSession };

interface PairDef {
  code: string;
  name: string;
  /** Mid in minor units: integer arithmetic keeps bid <= price <= ask exact. */
  mid: number;
  halfSpread: number;
  decimals: number;
  timezone?: string;
  hours?: Hours;
  stale?: boolean;
}

const hm = (h: number, m = 0) => h * 60 + m;
const OPEN = { reason: 'regular_session', session: MARKET_COMBINATIONS.regular_session.session } as const;
const CLOSED = { reason: 'market_closed', session: MARKET_COMBINATIONS.market_closed.session } as const;

/** Weekdays between two local times; weekends closed. Holidays are out of scope for a test double. */
const weekdayHours =
  (from: number, to: number): Hours =>
  (weekday, minute) =>
    weekday >= 1 && weekday <= 5 && minute >= from && minute < to ? OPEN : CLOSED;

/** US equities trade extended hours, which is the one place the spec puts PRE and POST. */
const usEquityHours: Hours = (weekday, minute) => {
  if (weekday === 0 || weekday === 6) return CLOSED;
  if (minute >= hm(4) && minute < hm(9, 30)) {
    return { reason: 'pre_session', session: MARKET_COMBINATIONS.pre_session.session };
  }
  if (minute >= hm(9, 30) && minute < hm(16)) return OPEN;
  if (minute >= hm(16) && minute < hm(20)) {
    return { reason: 'post_session', session: MARKET_COMBINATIONS.post_session.session };
  }
  return CLOSED;
};

/** A market open from Sunday at `reopen` to Friday at `halt`, with a daily pause in between. */
const roundTheWeek =
  (halt: number, reopen: number): Hours =>
  (weekday, minute) => {
    if (weekday === 6) return CLOSED;
    if (weekday === 0) return minute >= reopen ? OPEN : CLOSED;
    if (weekday === 5) return minute < halt ? OPEN : CLOSED;
    return minute >= halt && minute < reopen ? CLOSED : OPEN;
  };

const crypto = (base: string, quote: string, name: string, mid: number, decimals: number, stale = false) => ({
  code: `${ASSET_TYPE.crypto}:ALL:${base}/${quote}`,
  name,
  mid: Math.round(mid * 10 ** decimals),
  halfSpread: 3,
  decimals,
  stale,
});

const priced = (
  code: string,
  name: string,
  mid: number,
  decimals: number,
  timezone: string,
  hours: Hours,
): PairDef => ({ code, name, mid: Math.round(mid * 10 ** decimals), halfSpread: 2, decimals, timezone, hours });

const NEW_YORK = 'America/New_York';
const forexHours = roundTheWeek(hm(17), hm(17, 5));
const metalHours = roundTheWeek(hm(22), hm(23));
const commodityHours = roundTheWeek(hm(16), hm(17));

const CATALOGUE: PairDef[] = [
  crypto('BTC', 'USD', 'Bitcoin', 64_210.55, 2),
  crypto('ETH', 'USD', 'Ether', 3_120.4, 2),
  crypto('SOL', 'USD', 'Solana', 142.315, 3),
  crypto('XRP', 'USDT', 'XRP', 0.52341, 5),
  crypto('ADA', 'USD', 'Cardano', 0.4412, 4),
  crypto('DOGE', 'USD', 'Dogecoin', 0.123456, 6),
  crypto('LTC', 'EUR', 'Litecoin', 71.02, 2),
  crypto('DUSTY', 'USDT', 'Dusty Token', 0.0004217, 7, true),
  priced(`${ASSET_TYPE.equity}:${EXTENDED_HOURS_MARKET}:AAPL/USD`, 'Apple Inc.', 227.52, 2, NEW_YORK, usEquityHours),
  priced(`${ASSET_TYPE.equity}:${EXTENDED_HOURS_MARKET}:MSFT/USD`, 'Microsoft', 415.1, 2, NEW_YORK, usEquityHours),
  priced(`${ASSET_TYPE.equity}:${EXTENDED_HOURS_MARKET}:NVDA/USD`, 'NVIDIA', 118.07, 2, NEW_YORK, usEquityHours),
  priced(`${ASSET_TYPE.equity}:${EXTENDED_HOURS_MARKET}:TSLA/USD`, 'Tesla', 251.6, 2, NEW_YORK, usEquityHours),
  priced(`${ASSET_TYPE.equity}:${EXTENDED_HOURS_MARKET}:SPY/USD`, 'SPDR S&P 500', 563.2, 2, NEW_YORK, usEquityHours),
  priced(`${ASSET_TYPE.equity}:JP:7203/JPY`, 'Toyota Motor', 2_811, 0, 'Asia/Tokyo', weekdayHours(hm(9), hm(15))),
  priced(`${ASSET_TYPE.equity}:GB:VOD/GBP`, 'Vodafone', 0.7214, 4, 'Europe/London', weekdayHours(hm(8), hm(16, 30))),
  priced(`${ASSET_TYPE.equity}:DE:SAP/EUR`, 'SAP', 201.35, 2, 'Europe/Berlin', weekdayHours(hm(9), hm(17, 30))),
  priced(`${ASSET_TYPE.forex}:ALL:EUR/USD`, 'Euro / US Dollar', 1.08412, 5, NEW_YORK, forexHours),
  priced(`${ASSET_TYPE.forex}:ALL:GBP/USD`, 'Pound / US Dollar', 1.27105, 5, NEW_YORK, forexHours),
  priced(`${ASSET_TYPE.forex}:ALL:USD/JPY`, 'US Dollar / Yen', 149.213, 3, NEW_YORK, forexHours),
  priced(`${ASSET_TYPE.forex}:ALL:AUD/USD`, 'Aussie / US Dollar', 0.66172, 5, NEW_YORK, forexHours),
  priced(`${ASSET_TYPE.forex}:ALL:USD/CHF`, 'US Dollar / Franc', 0.88731, 5, NEW_YORK, forexHours),
  priced(`${ASSET_TYPE.forex}:ALL:EUR/GBP`, 'Euro / Pound', 0.85294, 5, NEW_YORK, forexHours),
  priced(`${ASSET_TYPE.commodity}:ALL:WTI/USD`, 'WTI Crude', 71.44, 2, 'America/Chicago', commodityHours),
  priced(`${ASSET_TYPE.commodity}:ALL:BRENT/USD`, 'Brent Crude', 75.12, 2, 'America/Chicago', commodityHours),
  priced(`${ASSET_TYPE.commodity}:ALL:NATGAS/USD`, 'Natural Gas', 2.913, 3, 'America/Chicago', commodityHours),
  priced(`${ASSET_TYPE.commodity}:ALL:CORN/USD`, 'Corn', 4.1225, 4, 'America/Chicago', commodityHours),
  priced(`${ASSET_TYPE.metal}:ALL:XAU/USD`, 'Gold', 2_512.3, 2, 'Europe/London', metalHours),
  priced(`${ASSET_TYPE.metal}:ALL:XAG/USD`, 'Silver', 29.415, 3, 'Europe/London', metalHours),
  priced(`${ASSET_TYPE.metal}:ALL:XPT/USD`, 'Platinum', 951.2, 2, 'Europe/London', metalHours),
  priced(`${ASSET_TYPE.metal}:ALL:XPD/USD`, 'Palladium', 1_012.8, 2, 'Europe/London', metalHours),
];

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const clocks = new Map<string, Intl.DateTimeFormat>();

function localTime(timezone: string, at: Date): { weekday: number; minute: number } {
  let clock = clocks.get(timezone);
  if (!clock) {
    clock = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    clocks.set(timezone, clock);
  }
  const parts = Object.fromEntries(clock.formatToParts(at).map((p) => [p.type, p.value]));
  return { weekday: WEEKDAYS.indexOf(parts.weekday ?? ''), minute: Number(parts.hour) * 60 + Number(parts.minute) };
}

interface Market {
  open: boolean;
  reason: MarketReason;
  session: MarketSession;
  timezone?: string;
}

function marketOf(pair: PairDef, at: Date): Market {
  if (pair.stale) {
    const stale: Market = { open: true, reason: 'no_price', session: CRYPTO_SESSION };
    if (pair.timezone) stale.timezone = pair.timezone;
    return stale;
  }
  if (!pair.hours || !pair.timezone) {
    return { open: MARKET_COMBINATIONS.continuous.open, reason: 'continuous', session: CRYPTO_SESSION };
  }
  const { weekday, minute } = localTime(pair.timezone, at);
  const { reason, session } = pair.hours(weekday, minute);
  // Timezone last: key order is the service's own, and a client must not depend on it.
  return { session, reason, open: session !== MARKET_COMBINATIONS.market_closed.session, timezone: pair.timezone };
}

function decimal(units: number, decimals: number): string {
  const sign = units < 0 ? '-' : '';
  const digits = String(Math.abs(units)).padStart(decimals + 1, '0');
  if (decimals === 0) return sign + digits;
  return `${sign}${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}

const seconds = (ms = Date.now()) => Math.floor(ms / 1000);

// --- helpers for HTTP -------------------------------------------------------------------------

const HTTP_OF: Record<string, number> = {
  [STATUS.OK]: 200,
  [STATUS.PRICE_STALE]: 200,
  [STATUS.INVALID_REQUEST]: 400,
  [STATUS.UNAUTHORIZED]: 401,
  [STATUS.NOT_FOUND]: 404,
  [STATUS.PAIR_NOT_FOUND]: 404,
  [STATUS.RATE_LIMITED]: 429,
  [STATUS.CONNECTION_LIMIT]: 429,
  [STATUS.INTERNAL]: 500,
};

const REASON_PHRASE: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
};

type Status = RestStatus;

function send(res: ServerResponse, status: Status, body: Record<string, unknown>, extra: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(HTTP_OF[status] ?? 400, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...extra,
  });
  res.end(text);
}

/** The error envelope; `data` comes first and `ts` last, an order of this service's own. */
function refuse(res: ServerResponse, status: Status, message: string, extra: Record<string, string> = {}) {
  send(res, status, { data: null, status_number: status, message, ts: seconds() }, extra);
}

/** A handshake refusal: raw HTTP on the upgrade socket, `status_number` and `message`, never `code`. */
function refuseHandshake(socket: Socket, status: Status, message: string) {
  const http = HTTP_OF[status] ?? 400;
  const body = JSON.stringify({ message, status_number: status });
  socket.end(
    `HTTP/1.1 ${http} ${REASON_PHRASE[http] ?? 'Error'}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/** One value of a query parameter: a repeated parameter is ambiguous, so it is refused like a bad one. */
function single(params: URLSearchParams, name: string): string | undefined | null {
  const all = params.getAll(name);
  if (all.length === 0) return undefined;
  if (all.length > 1) return null;
  return all[0];
}

function positiveInt(raw: string | undefined | null, fallback: number, least: number, most = Infinity) {
  if (raw === undefined) return fallback;
  if (raw === null || !/^[0-9]{1,9}$/.test(raw)) return null;
  const n = Number(raw);
  return n >= least && n <= most ? n : null;
}

// --- the service ------------------------------------------------------------------------------

interface Live {
  def: PairDef;
  mid: number;
  lastUpdated: number;
}

interface Client {
  ws: WebSocket;
  pairs: Set<string>;
  pingTimer?: NodeJS.Timeout;
}

export interface IndependentOptions {
  /** The wall clock the markets open and close by; timestamps keep the real one. Lets a run see a weekend. */
  marketClock?: () => Date;
}

export async function startIndependentService(options: IndependentOptions = {}): Promise<IndependentService> {
  const marketClock = options.marketClock ?? (() => new Date());
  const key = `ind_${randomBytes(12).toString('hex')}`;
  // Seeded, so the walk of prices is the same on every run and a failure replays.
  const random = mulberry32(20_241_125);
  const startedAt = Date.now();
  const live = new Map<string, Live>(CATALOGUE.map((def) => [def.code, { def, mid: def.mid, lastUpdated: startedAt }]));
  const openConnections = new Map<string, number>();
  const clients = new Set<Client>();
  const hits: number[] = [];
  let tick = 0;

  const quote = (l: Live) => ({
    ask: decimal(l.mid + l.def.halfSpread, l.def.decimals),
    bid: decimal(l.mid - l.def.halfSpread, l.def.decimals),
    price: decimal(l.mid, l.def.decimals),
  });

  // Push frame keys in an order of this service's own; sent_at and last_updated in seconds.
  const frame = (l: Live) => {
    const { ask, bid, price } = quote(l);
    return JSON.stringify({
      price,
      bid,
      ask,
      code: l.def.code,
      sent_at: seconds(),
      last_updated: seconds(l.lastUpdated),
    });
  };

  const authorised = (req: IncomingMessage) => req.headers[API_KEY_HEADER.toLowerCase()] === key;

  function rateLimited(): boolean {
    const now = Date.now();
    while (hits.length > 0 && hits[0]! <= now - RATE_WINDOW_MS) hits.shift();
    if (hits.length >= RATE_PER_WINDOW) return true;
    hits.push(now);
    return false;
  }

  function pairsList(res: ServerResponse, params: URLSearchParams) {
    const code = single(params, QUERY.pairs.code);
    const type = single(params, QUERY.pairs.type);
    const page = positiveInt(single(params, QUERY.pairs.page), LIMITS.defaultPage, PAGING_MINIMUM.page);
    const perPage = positiveInt(
      single(params, QUERY.pairs.perPage),
      LIMITS.defaultPerPage,
      PAGING_MINIMUM.perPage,
      MAX_PER_PAGE,
    );
    if (code === null || code === '') return refuse(res, STATUS.INVALID_REQUEST, 'code: one non-empty fragment');
    if (type === null || type === '') return refuse(res, STATUS.INVALID_REQUEST, 'type: one non-empty asset type');
    if (page === null) return refuse(res, STATUS.INVALID_REQUEST, 'page: a whole number from 1');
    if (perPage === null) {
      return refuse(res, STATUS.INVALID_REQUEST, `per_page: a whole number from 1 to ${MAX_PER_PAGE}`);
    }
    const fragment = code?.toLowerCase();
    const wanted = type?.toLowerCase();
    const matching = CATALOGUE.filter(
      (p) =>
        (fragment === undefined || p.code.toLowerCase().includes(fragment)) &&
        (wanted === undefined || parsePairCode(p.code)!.assetType.toLowerCase() === wanted),
    );
    const data = matching.slice((page - 1) * perPage, page * perPage).map((p) => {
      const parts = parsePairCode(p.code)!;
      return { name: p.name, code: p.code, quote: parts.quote, base: parts.base };
    });
    const meta = { page, per_page: perPage, total: matching.length, pages: Math.ceil(matching.length / perPage) };
    send(res, STATUS.OK, { data, meta, status_number: STATUS.OK, ts: seconds() });
  }

  function price(res: ServerResponse, params: URLSearchParams) {
    const code = single(params, QUERY.price.code);
    const pool = single(params, QUERY.price.pool);
    if (code === undefined || code === null || code === '') {
      return refuse(res, STATUS.INVALID_REQUEST, 'code: exactly one pair code is required');
    }
    if (pool === null || pool === '') return refuse(res, STATUS.INVALID_REQUEST, 'pool: one non-empty pool address');
    if (!parsePairCode(code)) return refuse(res, STATUS.INVALID_REQUEST, `code: not a pair code: ${code}`);
    const l = live.get(code);
    if (!l) return refuse(res, STATUS.PAIR_NOT_FOUND, pairNotFoundMessage(code));
    const data = { code, ...quote(l), market: marketOf(l.def, marketClock()) };
    if (l.def.stale) {
      return send(res, STATUS.PRICE_STALE, {
        data,
        status_number: STATUS.PRICE_STALE,
        message: 'the price may not reflect real-time market conditions',
        ts: seconds(),
      });
    }
    send(res, STATUS.OK, { data, status_number: STATUS.OK, ts: seconds() });
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://service.invalid');
    if (!authorised(req)) return refuse(res, STATUS.UNAUTHORIZED, 'missing or invalid API key');
    if (rateLimited()) return refuse(res, STATUS.RATE_LIMITED, 'too many requests', { 'retry-after': '1' });
    if (req.method !== 'GET') {
      return refuse(res, STATUS.NOT_FOUND, `no ${req.method} endpoint at ${url.pathname}`);
    }
    if (url.pathname === PATHS.pairs) return pairsList(res, url.searchParams);
    if (url.pathname === PATHS.price) return price(res, url.searchParams);
    if (url.pathname === STREAM_PATH) {
      return refuse(res, STATUS.INVALID_REQUEST, 'this address takes a WebSocket upgrade');
    }
    refuse(res, STATUS.NOT_FOUND, `no endpoint at ${url.pathname}`);
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });

  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const { pathname } = new URL(req.url ?? '/', 'http://service.invalid');
    if (pathname !== STREAM_PATH) return refuseHandshake(socket, STATUS.NOT_FOUND, `no stream at ${pathname}`);
    if (!authorised(req)) return refuseHandshake(socket, STATUS.UNAUTHORIZED, 'missing or invalid API key');
    const used = openConnections.get(key) ?? 0;
    if (used >= CONNECTIONS_PER_KEY) {
      return refuseHandshake(
        socket,
        STATUS.CONNECTION_LIMIT,
        `maximum number of connections reached (${CONNECTIONS_PER_KEY} for this key)`,
      );
    }
    // The slot is taken before the upgrade completes, so two racing handshakes cannot both get the last one.
    openConnections.set(key, used + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      openConnections.set(key, (openConnections.get(key) ?? 1) - 1);
    };
    socket.once('close', release);
    wss.handleUpgrade(req, socket, head, (ws) => attach(ws, release));
  });

  function notice(client: Client, body: Record<string, unknown>) {
    if (client.ws.readyState === WebSocket.OPEN) client.ws.send(JSON.stringify(body));
  }

  // Error notices: code first, then message, method and data; the id only when the client sent one.
  function fail(client: Client, code: Status, message: string, id?: string) {
    notice(client, { code, message, method: METHOD.error, data: null, ...(id === undefined ? {} : { id }) });
  }

  function armPing(client: Client) {
    clearTimeout(client.pingTimer);
    client.pingTimer = setTimeout(
      () => client.ws.close(PING_TIMEOUT_CLOSE, `no ping within ${LIMITS.pingTimeoutMs / 1000} s`),
      LIMITS.pingTimeoutMs,
    );
  }

  function attach(ws: WebSocket, release: () => void) {
    const client: Client = { ws, pairs: new Set() };
    clients.add(client);
    armPing(client);
    ws.on('message', (raw: RawData, isBinary: boolean) => handle(client, raw, isBinary));
    ws.on('error', () => {});
    ws.on('close', () => {
      clearTimeout(client.pingTimer);
      clients.delete(client);
      release();
    });
  }

  function handle(client: Client, raw: RawData, isBinary: boolean) {
    if (isBinary) return fail(client, STATUS.INVALID_REQUEST, 'binary frames are not accepted: send JSON text');
    let msg: unknown;
    try {
      msg = JSON.parse(raw.toString());
    } catch {
      return fail(client, STATUS.INVALID_REQUEST, 'malformed JSON');
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
      return fail(client, STATUS.INVALID_REQUEST, 'a request is a JSON object');
    }
    const request = msg as { id?: unknown; method?: unknown; params?: unknown };
    if (request.id !== undefined && typeof request.id !== 'string') {
      return fail(client, STATUS.INVALID_REQUEST, 'id: must be a string');
    }
    const id = request.id as string | undefined;
    if (typeof request.method !== 'string') return fail(client, STATUS.INVALID_REQUEST, 'method: required', id);
    switch (request.method) {
      case METHOD.ping:
        armPing(client);
        if (client.ws.readyState === WebSocket.OPEN) client.ws.send(TEXT.pong);
        return;
      case METHOD.subscribe:
      case METHOD.unsubscribe:
        return changeSubscription(client, request.method, request.params, id);
      default:
        return fail(client, STATUS.INVALID_REQUEST, `unknown method: ${request.method}`, id);
    }
  }

  function changeSubscription(client: Client, method: string, params: unknown, id: string | undefined) {
    const pairs = (params as { pairs?: unknown } | null | undefined)?.pairs;
    if (typeof params !== 'object' || params === null || !Array.isArray(pairs) || pairs.length === 0) {
      return fail(client, STATUS.INVALID_REQUEST, 'params.pairs: a non-empty array of pair codes', id);
    }
    if (pairs.length > LIMITS.maxPairsPerSubscribe) {
      return fail(client, STATUS.INVALID_REQUEST, `params.pairs: at most ${LIMITS.maxPairsPerSubscribe} pairs`, id);
    }
    const bad = pairs.find((p) => typeof p !== 'string' || !parsePairCode(p));
    if (bad !== undefined) {
      return fail(client, STATUS.INVALID_REQUEST, `params.pairs: not a pair code: ${JSON.stringify(bad)}`, id);
    }
    const codes = pairs as string[];
    const unknown = codes.find((c) => !live.has(c));
    if (unknown !== undefined) return fail(client, STATUS.PAIR_NOT_FOUND, pairNotFoundMessage(unknown), id);
    const reply = (message: string) => ({
      data: null,
      ...(id === undefined ? {} : { id }),
      method,
      code: STATUS.OK,
      message,
    });
    if (method === METHOD.unsubscribe) {
      for (const c of codes) client.pairs.delete(c);
      return notice(client, reply(TEXT.unsubscribeSuccess));
    }
    client.pairs = new Set(codes);
    notice(client, reply(TEXT.subscribeSuccess));
    // A snapshot of each pair right away: a quiet or closed market would otherwise send nothing at all.
    for (const c of client.pairs) {
      if (client.ws.readyState === WebSocket.OPEN) client.ws.send(frame(live.get(c)!));
    }
  }

  // The market moves for everyone at once, so REST and every stream read the same mid. On each
  // tick two pairs in three move (which ones rotates); a stale or closed pair holds still.
  const ticker = setInterval(() => {
    tick += 1;
    const now = marketClock();
    const moved: Live[] = [];
    let i = 0;
    for (const l of live.values()) {
      i += 1;
      if (l.def.stale || (i + tick) % 3 === 0 || !marketOf(l.def, now).open) continue;
      const step = Math.max(1, Math.round(l.def.halfSpread * 2 * random()));
      const next = l.mid + (random() < 0.5 ? -step : step);
      l.mid = next > l.def.halfSpread * 10 ? next : l.mid + step;
      l.lastUpdated = Date.now();
      moved.push(l);
    }
    for (const client of clients) {
      for (const l of moved) {
        if (client.pairs.has(l.def.code) && client.ws.readyState === WebSocket.OPEN) client.ws.send(frame(l));
      }
    }
  }, TICK_MS);

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    rest: `http://127.0.0.1:${port}`,
    stream: `ws://127.0.0.1:${port}${STREAM_PATH}`,
    key,
    port,
    async close() {
      clearInterval(ticker);
      for (const client of clients) {
        clearTimeout(client.pingTimer);
        client.ws.terminate();
      }
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
