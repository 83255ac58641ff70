/**
 * A second price service written from the spec alone, by someone who had read neither the reference
 * service nor the checks, nor copied the first independent service (independent-service.ts). Where
 * the spec allows a choice, it takes on purpose one that a strict reading rejects, so a run of the
 * harness against it shows whether the harness judges only what the spec states.
 *
 * Choices a strict reading rejects (each is allowed by the spec's words):
 * - the connection of a client that stops pinging is closed by a sweep every 12 s, so between 30 and
 *   42 s after its last ping ("closed if no ping arrives within 30 seconds", no deadline after that);
 * - zones are tz database links and old names (`US/Eastern`, `GB`, `CET`, `EST5EDT`, `GMT`, `Japan`):
 *   the spec asks for an "IANA zone name";
 * - the mid is the service's own: Corn is quoted on a 0.25 tick with the mid rounded to that tick;
 *   Forex is quoted in pips with the mid in pipettes, weighted towards the bid ("the service's
 *   mid-price"), always between bid and ask;
 * - keyed requests are rate limited (a fixed window, `RateLimit-*` headers, 429 with 50006);
 * - an unsubscribe is acknowledged at once, and its pairs leave the fan-out about a second later;
 * - some listed pairs are suspended: the stream refuses them with 50104 and REST refuses them with
 *   50105 (pair temporarily unavailable), so no side prices them as active;
 * - a pair whose price is unavailable (a halted market) answers 50102 with `data` null and HTTP 503;
 * - extended hours belong to equities of the `NASDAQ` label too (`pre_session` for the service's
 *   first hour: its session clock starts before the open);
 * - pair codes hold spaces and `/` inside the base (`Commodity:ALL:Crude Oil/USD`,
 *   `Equity:US:BF/B/USD`): the code ends with `/<quote>`;
 * - a code search matches names as well as codes;
 * - a gateway limits requests without a valid key per client address (429 with 50006 and
 *   Retry-After) before it answers 401.
 *
 * Choices of its own where the spec says "not shown":
 * - REST under a prefix (`/api`), the stream at `/api/stream` on the REST port;
 * - timestamps (`ts`, `last_updated`, `sent_at`) in microseconds since the epoch;
 * - HTTP statuses per code: 400 for 50004, 401 for 50005, 404 for 50104 and 50008, 405 for a method
 *   other than GET, 429 for 50006 and 50009, 503 for 50105 and a 50102 without data;
 * - envelope keys in the order `data`, `status_number`, `ts`, `message`, with a `request_id` beside
 *   them; pair records carry `asset_type` and `exchange`, price records a `spread`;
 * - `per_page` above 100 is clamped to 100, the total count in an `X-Total-Count` header, an unknown
 *   `type` an empty list, `type` matched without regard to case;
 * - an asset type the spec does not name (`Index`);
 * - three connections per key; the missed-ping close is a normal close (1000) with a reason;
 * - notices with `code` first; an unsubscribe of pairs not subscribed succeeds;
 * - each subscribed pair gets one snapshot push at once, then a push every 100 ms while its price
 *   moves (closed and stale markets do not move);
 * - very small crypto prices in exponent notation (`1.234E-5`).
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import { mulberry32 } from '../../src/random.ts';
import {
  API_KEY_HEADER,
  LIMITS,
  METHOD,
  PATHS,
  QUERY,
  type MarketReason,
  type MarketSession,
  pairNotFoundMessage,
  STATUS,
  TEXT,
} from '../../src/spec.ts';

/** REST sits under this prefix: the base URL a client is given ends with it. */
export const PREFIX = '/api';
/** The stream's path on the REST port. */
export const STREAM_PATH = `${PREFIX}/stream`;
/** Connections a key may hold at once. */
export const ALLOWANCE = 3;
/** How often prices move and pushes go out. */
export const TICK_MS = 100;
/** How long pairs stay in the fan-out after an unsubscribe or a replacing subscribe acknowledged them. */
export const FANOUT_LAG_MS = 1_000;
/** How often idle connections are swept: one missing its ping is closed between 30 and 42 s. */
export const IDLE_SWEEP_MS = 12_000;
/** Keyed requests: this many per window per key. */
export const KEYED_LIMIT = { requests: 600, windowMs: 60_000 };
/** Requests without a valid key, per client address: the gateway's limit. */
export const KEYLESS_LIMIT = { requests: 3, windowMs: 2_000 };
const MAX_PER_PAGE = 100;
const NASDAQ_PRE_MARKET_MS = 3_600_000;

export interface SecondService {
  /** The REST base URL, with its prefix. */
  rest: string;
  stream: string;
  key: string;
  port: number;
  /** Listed pairs the service suspended: refused on both sides. */
  suspended: readonly string[];
  close(): Promise<void>;
}

// --- catalogue ------------------------------------------------------------------------------------

type Schedule = (weekday: number, minute: number, sinceStartMs: number) => MarketReason;

/** How the mid is made from ask and bid. */
type MidRule = 'exact' | 'tick' | 'weighted';

interface Instrument {
  code: string;
  name: string;
  assetType: string;
  exchange: string;
  /** Places of ask and bid. */
  places: number;
  /** Ask and bid move and sit on multiples of this many units of the last place. */
  tick: number;
  /** Bid in units of the last place, at the start. */
  bid: number;
  /** Spread in ticks. */
  spreadTicks: number;
  mid: MidRule;
  exponent?: boolean;
  timezone?: string;
  schedule?: Schedule;
  stale?: boolean;
  halted?: boolean;
  suspended?: boolean;
}

const at = (h: number, m = 0): number => h * 60 + m;
const weekday = (d: number): boolean => d >= 1 && d <= 5;

const usEquity: Schedule = (d, m) => {
  if (!weekday(d)) return 'market_closed';
  if (m >= at(4) && m < at(9, 30)) return 'pre_session';
  if (m >= at(9, 30) && m < at(16)) return 'regular_session';
  if (m >= at(16) && m < at(20)) return 'post_session';
  return 'market_closed';
};
/** NASDAQ listings: the session clock starts at pre-market when the service starts. */
const nasdaq: Schedule = (d, m, since) => (since < NASDAQ_PRE_MARKET_MS ? 'pre_session' : usEquity(d, m, since));
const between =
  (from: number, to: number): Schedule =>
  (d, m) =>
    weekday(d) && m >= from && m < to ? 'regular_session' : 'market_closed';
/** Open from Sunday `reopen` to Friday `halt`, paused daily from `halt` to `reopen`. */
const aroundTheWeek =
  (halt: number, reopen: number): Schedule =>
  (d, m) => {
    if (d === 6) return 'market_closed';
    if (d === 0) return m >= reopen ? 'regular_session' : 'market_closed';
    if (d === 5) return m < halt ? 'regular_session' : 'market_closed';
    return m >= halt && m < reopen ? 'market_closed' : 'regular_session';
  };

function instrument(
  code: string,
  name: string,
  price: number,
  places: number,
  more: Partial<Instrument> & { timezone?: string; schedule?: Schedule },
): Instrument {
  const [assetType = '', exchange = ''] = code.split(':');
  const tick = more.tick ?? 1;
  return {
    code,
    name,
    assetType,
    exchange,
    places,
    tick,
    bid: Math.round((price * 10 ** places) / tick) * tick,
    spreadTicks: 2,
    mid: 'exact',
    ...more,
  };
}

function cryptoPair(exchange: string, base: string, quote: string, name: string, price: number, places: number) {
  return instrument(`Crypto:${exchange}:${base}/${quote}`, name, price, places, {});
}

const FOREX = { timezone: 'EST5EDT', schedule: aroundTheWeek(at(17), at(17, 5)), mid: 'weighted' } as const;

function catalogue(): Instrument[] {
  const named: Instrument[] = [
    cryptoPair('ALL', 'BTC', 'USD', 'Bitcoin', 91_234.5, 2),
    cryptoPair('ALL', 'ETH', 'USD', 'Ether', 3_012.75, 2),
    cryptoPair('ALL', 'SOL', 'USDT', 'Solana', 141.205, 3),
    cryptoPair('ALL', 'DOGE', 'USD', 'Dogecoin', 0.16234, 5),
    cryptoPair('ALL', 'ADA', 'EUR', 'Cardano', 0.4412, 4),
    { ...cryptoPair('ALL', 'PEPE', 'USD', 'Pepe', 0.00001234, 8), exponent: true },
    { ...cryptoPair('ALL', 'GHOST', 'USDT', 'Ghost Chain', 0.0391, 4), stale: true },
    instrument('Equity:US:AAPL/USD', 'Apple Inc.', 227.52, 2, { timezone: 'US/Eastern', schedule: usEquity }),
    instrument('Equity:US:MSFT/USD', 'Microsoft Corp.', 415.1, 2, { timezone: 'US/Eastern', schedule: usEquity }),
    instrument('Equity:US:BF/B/USD', 'Brown-Forman Class B', 31.42, 2, { timezone: 'US/Eastern', schedule: usEquity }),
    instrument('Equity:NASDAQ:NVDA/USD', 'NVIDIA Corp.', 181.07, 2, { timezone: 'EST5EDT', schedule: nasdaq }),
    instrument('Equity:NASDAQ:AMD/USD', 'Advanced Micro Devices', 162.3, 2, { timezone: 'EST5EDT', schedule: nasdaq }),
    instrument('Equity:US:SIVB/USD', 'SVB Financial', 39.4, 2, {
      timezone: 'US/Eastern',
      schedule: usEquity,
      suspended: true,
    }),
    instrument('Equity:US:FRC/USD', 'First Republic', 3.51, 2, {
      timezone: 'US/Eastern',
      schedule: usEquity,
      suspended: true,
    }),
    instrument('Equity:HK:0005/HKD', 'HSBC Holdings', 98.65, 2, { timezone: 'Hongkong', halted: true }),
    instrument('Equity:JP:7203/JPY', 'Toyota Motor', 2_811, 0, { timezone: 'Japan', schedule: between(at(9), at(15)) }),
    instrument('Equity:GB:VOD/GBP', 'Vodafone Group', 0.7214, 4, {
      timezone: 'GB',
      schedule: between(at(8), at(16, 30)),
    }),
    instrument('Equity:EU:SAP/EUR', 'SAP SE', 201.35, 2, { timezone: 'CET', schedule: between(at(9), at(17, 30)) }),
    instrument('Forex:ALL:EUR/USD', 'Euro / US Dollar', 1.0841, 4, { ...FOREX }),
    instrument('Forex:ALL:GBP/USD', 'Pound Sterling / US Dollar', 1.271, 4, { ...FOREX }),
    instrument('Forex:ALL:AUD/USD', 'Australian Dollar / US Dollar', 0.6617, 4, { ...FOREX }),
    instrument('Forex:ALL:USD/JPY', 'US Dollar / Yen', 149.21, 2, { ...FOREX }),
    instrument('Commodity:ALL:Crude Oil/USD', 'Crude Oil WTI', 71.44, 2, {
      timezone: 'US/Central',
      schedule: aroundTheWeek(at(16), at(17)),
    }),
    instrument('Commodity:ALL:Natural Gas/USD', 'Natural Gas (Henry Hub)', 2.913, 3, {
      timezone: 'US/Central',
      schedule: aroundTheWeek(at(16), at(17)),
    }),
    instrument('Commodity:ALL:Corn/USD', 'Corn', 4.25, 2, {
      timezone: 'US/Central',
      schedule: aroundTheWeek(at(16), at(17)),
      tick: 25,
      spreadTicks: 1,
      mid: 'tick',
    }),
    instrument('Metal:ALL:XAU/USD', 'Gold', 2_512.3, 2, { timezone: 'GMT', schedule: aroundTheWeek(at(22), at(23)) }),
    instrument('Metal:ALL:XAG/USD', 'Silver', 29.415, 3, { timezone: 'GMT', schedule: aroundTheWeek(at(22), at(23)) }),
    instrument('Index:EU:DAX/EUR', 'DAX 40', 19_322.5, 1, { timezone: 'CET', schedule: between(at(9), at(17, 30)) }),
  ];
  // Enough tokens that a catalogue walk takes several pages at every page size a client picks.
  const tokens: Instrument[] = [];
  for (let i = 1; i <= 220; i++) {
    const n = String(i).padStart(3, '0');
    const exchange = i % 3 === 0 ? 'DEX' : 'ALL';
    tokens.push(cryptoPair(exchange, `TK${n}`, i % 2 ? 'USDT' : 'USD', `Token Number ${n}`, 1 + i / 7, 4));
  }
  return [...named, ...tokens];
}

// --- numbers --------------------------------------------------------------------------------------

/** `units` of 10^-places as a plain decimal string. */
function plain(units: number, places: number): string {
  const negative = units < 0;
  const digits = String(Math.abs(units)).padStart(places + 1, '0');
  const whole = places === 0 ? digits : `${digits.slice(0, -places)}.${digits.slice(-places)}`;
  return negative ? `-${whole}` : whole;
}

/** `units` of 10^-places in exponent notation: one digit before the point (`1.234E-5`). */
function scientific(units: number, places: number): string {
  const digits = String(units);
  const exponent = digits.length - 1 - places;
  const tail = digits.slice(1).replace(/0+$/, '');
  return `${digits[0]}${tail ? `.${tail}` : ''}E${exponent}`;
}

interface Quote {
  ask: string;
  bid: string;
  price: string;
  spread: string;
}

function quoteOf(pair: Instrument, bid: number): Quote {
  const spread = pair.spreadTicks * pair.tick;
  const ask = bid + spread;
  const write = (units: number, places: number) => (pair.exponent ? scientific(units, places) : plain(units, places));
  let price: string;
  if (pair.mid === 'tick') {
    // The mid rounded to the tick, half up: with a one-tick spread it is the ask.
    price = write(Math.round((bid + ask) / 2 / pair.tick) * pair.tick, pair.places);
  } else if (pair.mid === 'weighted') {
    // In pipettes (one place finer), 40 % of the way from the bid: leaning towards where trades print.
    price = write(bid * 10 + Math.round(spread * 10 * 0.4), pair.places + 1);
  } else {
    price = write((bid + ask) * 5, pair.places + 1)
      .replace(/(\.\d*?)0$/, '$1')
      .replace(/\.$/, '');
  }
  return { ask: write(ask, pair.places), bid: write(bid, pair.places), price, spread: write(spread, pair.places) };
}

// --- time -----------------------------------------------------------------------------------------

/** Microseconds since the epoch. */
const micros = (): number => Date.now() * 1000;

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const clocks = new Map<string, Intl.DateTimeFormat>();
function localClock(timezone: string, when: Date): { weekday: number; minute: number } {
  let clock = clocks.get(timezone);
  if (!clock) {
    clock = new Intl.DateTimeFormat('en-GB', {
      timeZone: timezone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    clocks.set(timezone, clock);
  }
  const parts = Object.fromEntries(clock.formatToParts(when).map((p) => [p.type, p.value]));
  return { weekday: DAYS.indexOf(parts.weekday ?? ''), minute: Number(parts.hour) * 60 + Number(parts.minute) };
}

const SESSION_OF: Record<MarketReason, MarketSession> = {
  continuous: 'REG',
  regular_session: 'REG',
  pre_session: 'PRE',
  post_session: 'POST',
  market_closed: 'CLOSED',
  no_price: 'REG',
};

interface MarketState {
  open: boolean;
  reason: MarketReason;
  session: MarketSession;
  timezone?: string;
}

function marketOf(pair: Instrument, sinceStartMs: number): MarketState {
  let reason: MarketReason;
  if (pair.stale) reason = 'no_price';
  else if (pair.halted) reason = 'market_closed';
  else if (!pair.schedule || !pair.timezone) reason = 'continuous';
  else {
    const local = localClock(pair.timezone, new Date());
    reason = pair.schedule(local.weekday, local.minute, sinceStartMs);
  }
  const state: MarketState = { open: reason !== 'market_closed', reason, session: SESSION_OF[reason] };
  if (pair.timezone) state.timezone = pair.timezone;
  return state;
}

// --- HTTP -----------------------------------------------------------------------------------------

const HTTP_STATUS: Record<string, number> = {
  [STATUS.OK]: 200,
  [STATUS.INVALID_REQUEST]: 400,
  [STATUS.UNAUTHORIZED]: 401,
  [STATUS.NOT_FOUND]: 404,
  [STATUS.PAIR_NOT_FOUND]: 404,
  [STATUS.RATE_LIMITED]: 429,
  [STATUS.CONNECTION_LIMIT]: 429,
  [STATUS.PAIR_UNAVAILABLE]: 503,
  [STATUS.INTERNAL]: 500,
};

let requestSeq = 0;

function reply(
  res: ServerResponse,
  http: number,
  body: { data: unknown; status_number: string; message?: string },
  headers: Record<string, string> = {},
): void {
  const envelope: Record<string, unknown> = { data: body.data, status_number: body.status_number, ts: micros() };
  if (body.message !== undefined) envelope.message = body.message;
  envelope.request_id = `r-${(++requestSeq).toString(36)}`;
  const text = JSON.stringify(envelope);
  res.writeHead(http, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function refuse(res: ServerResponse, status: string, message: string, headers: Record<string, string> = {}): void {
  reply(res, HTTP_STATUS[status] ?? 400, { data: null, status_number: status, message }, headers);
}

/** A fixed window per name: how many requests it still admits, and when it resets. */
class Windows {
  private readonly counts = new Map<string, { start: number; used: number }>();
  constructor(private readonly limit: { requests: number; windowMs: number }) {}
  take(name: string): { ok: boolean; remaining: number; resetMs: number } {
    const now = Date.now();
    let w = this.counts.get(name);
    if (!w || now - w.start >= this.limit.windowMs) {
      w = { start: now, used: 0 };
      this.counts.set(name, w);
    }
    const resetMs = w.start + this.limit.windowMs - now;
    if (w.used >= this.limit.requests) return { ok: false, remaining: 0, resetMs };
    w.used++;
    return { ok: true, remaining: this.limit.requests - w.used, resetMs };
  }
}

const seconds = (ms: number): string => String(Math.max(1, Math.ceil(ms / 1000)));

/** A positive integer parameter: its value, the fallback when absent, or null when it is not one. */
function positive(raw: string | null, fallback: number): number | null {
  if (raw === null) return fallback;
  if (!/^[0-9]+$/.test(raw)) return null;
  const n = Number(raw);
  return n >= 1 && Number.isSafeInteger(n) ? n : null;
}

// --- the service ----------------------------------------------------------------------------------

interface Client {
  ws: WebSocket;
  lastPing: number;
  /** Subscribed pairs, each with the time it leaves the fan-out once dropped. */
  pairs: Map<string, { leaveAt?: number; lastSent?: number }>;
}

/** Starts the service on 127.0.0.1, on a free port. */
export async function startSecondIndependentService(): Promise<SecondService> {
  const key = `k2-${randomBytes(12).toString('hex')}`;
  const started = Date.now();
  const pairs = catalogue();
  const byCode = new Map(pairs.map((p) => [p.code, p]));
  const bids = new Map(pairs.map((p) => [p.code, p.bid]));
  const updated = new Map(pairs.map((p) => [p.code, micros()]));
  const random = mulberry32(0x5eed2);
  const keyed = new Windows(KEYED_LIMIT);
  const keyless = new Windows(KEYLESS_LIMIT);
  const clients = new Set<Client>();
  let held = 0;

  const moving = (p: Instrument): boolean =>
    !p.stale && !p.halted && !p.suspended && marketOf(p, Date.now() - started).open;
  const priceOf = (p: Instrument) => quoteOf(p, bids.get(p.code)!);

  function listPairs(res: ServerResponse, q: URLSearchParams, headers: Record<string, string>): void {
    const page = positive(q.get(QUERY.pairs.page), LIMITS.defaultPage);
    const perPage = positive(q.get(QUERY.pairs.perPage), LIMITS.defaultPerPage);
    if (page === null) return refuse(res, STATUS.INVALID_REQUEST, 'page must be a whole number of at least 1', headers);
    if (perPage === null)
      return refuse(res, STATUS.INVALID_REQUEST, 'per_page must be a whole number of at least 1', headers);
    const size = Math.min(perPage, MAX_PER_PAGE);
    const search = q.get(QUERY.pairs.code)?.toLowerCase();
    const type = q.get(QUERY.pairs.type)?.toLowerCase();
    const found = pairs.filter(
      (p) =>
        (!type || p.assetType.toLowerCase() === type) &&
        (!search || p.code.toLowerCase().includes(search) || p.name.toLowerCase().includes(search)),
    );
    const slice = found.slice((page - 1) * size, page * size);
    const data = slice.map((p) => ({
      code: p.code,
      name: p.name,
      base: p.code.slice(p.code.indexOf(':', p.code.indexOf(':') + 1) + 1, p.code.lastIndexOf('/')),
      quote: p.code.slice(p.code.lastIndexOf('/') + 1),
      asset_type: p.assetType,
      exchange: p.exchange,
    }));
    reply(res, 200, { data, status_number: STATUS.OK }, { ...headers, 'x-total-count': String(found.length) });
  }

  function price(res: ServerResponse, q: URLSearchParams, headers: Record<string, string>): void {
    const code = q.get(QUERY.price.code);
    if (!code) return refuse(res, STATUS.INVALID_REQUEST, 'code is required', headers);
    const pair = byCode.get(code);
    if (!pair) return refuse(res, STATUS.PAIR_NOT_FOUND, `pair not found: ${code}`, headers);
    if (pair.suspended) return refuse(res, STATUS.PAIR_UNAVAILABLE, `pair suspended: ${code}`, headers);
    if (pair.halted)
      return reply(
        res,
        503,
        { data: null, status_number: STATUS.PRICE_STALE, message: 'price unavailable: the market is halted' },
        headers,
      );
    const market = marketOf(pair, Date.now() - started);
    const quote = priceOf(pair);
    const data = { code: pair.code, ...quote, market };
    if (market.reason === 'no_price' || !market.open) {
      const message = 'the price may not reflect real-time conditions';
      return reply(res, 200, { data, status_number: STATUS.PRICE_STALE, message }, headers);
    }
    reply(res, 200, { data, status_number: STATUS.OK }, headers);
  }

  function validKey(req: IncomingMessage): boolean {
    return req.headers[API_KEY_HEADER.toLowerCase()] === key;
  }

  function handleRest(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://service.invalid');
    const route = url.pathname.startsWith(`${PREFIX}/`) ? url.pathname.slice(PREFIX.length) : null;
    if (!validKey(req)) {
      const gate = keyless.take(req.socket.remoteAddress ?? '');
      if (!gate.ok)
        return refuse(res, STATUS.RATE_LIMITED, 'too many requests without a valid key', {
          'retry-after': seconds(gate.resetMs),
        });
      return refuse(res, STATUS.UNAUTHORIZED, 'a valid API key is required');
    }
    const window = keyed.take(key);
    const headers = {
      'ratelimit-limit': String(KEYED_LIMIT.requests),
      'ratelimit-remaining': String(window.remaining),
      'ratelimit-reset': seconds(window.resetMs),
    };
    if (!window.ok)
      return refuse(res, STATUS.RATE_LIMITED, 'rate limit reached', {
        ...headers,
        'retry-after': seconds(window.resetMs),
      });
    if (route !== PATHS.pairs && route !== PATHS.price)
      return refuse(res, STATUS.NOT_FOUND, `no such endpoint: ${url.pathname}`, headers);
    if (req.method !== 'GET')
      return reply(res, 405, { data: null, status_number: STATUS.INVALID_REQUEST, message: 'use GET' }, headers);
    if (route === PATHS.pairs) return listPairs(res, url.searchParams, headers);
    price(res, url.searchParams, headers);
  }

  // --- stream ---

  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });

  function refuseUpgrade(socket: Socket, http: number, status: string, message: string): void {
    const body = JSON.stringify({ status_number: status, message });
    const reason = http === 401 ? 'Unauthorized' : http === 404 ? 'Not Found' : 'Too Many Requests';
    socket.end(
      `HTTP/1.1 ${http} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  }

  function notice(client: Client, body: Record<string, unknown>): void {
    if (client.ws.readyState === WebSocket.OPEN) client.ws.send(JSON.stringify(body));
  }

  function failure(client: Client, code: string, message: string, id: unknown): void {
    const body: Record<string, unknown> = { code, method: METHOD.error, message };
    if (typeof id === 'string') body.id = id;
    body.data = null;
    notice(client, body);
  }

  function push(client: Client, pair: Instrument): void {
    if (client.ws.readyState !== WebSocket.OPEN) return;
    const q = priceOf(pair);
    const frame = {
      price: q.price,
      code: pair.code,
      bid: q.bid,
      ask: q.ask,
      last_updated: updated.get(pair.code),
      sent_at: micros(),
    };
    client.ws.send(JSON.stringify(frame));
  }

  /** The pairs of a request, or the reason they are not valid (50004) or not servable (50104). */
  function pairsOf(params: unknown): { codes: string[] } | { code: string; message: string } {
    const listed = (params as { pairs?: unknown } | null)?.pairs;
    if (!Array.isArray(listed) || listed.length === 0 || listed.some((p) => typeof p !== 'string' || p === ''))
      return { code: STATUS.INVALID_REQUEST, message: 'params.pairs must be a non-empty list of pair codes' };
    const codes = [...new Set(listed as string[])];
    if (codes.length > LIMITS.maxPairsPerSubscribe)
      return { code: STATUS.INVALID_REQUEST, message: `at most ${LIMITS.maxPairsPerSubscribe} pairs per connection` };
    for (const c of codes) {
      const pair = byCode.get(c);
      if (!pair) return { code: STATUS.PAIR_NOT_FOUND, message: pairNotFoundMessage(c) };
      if (pair.suspended) return { code: STATUS.PAIR_NOT_FOUND, message: `pair suspended: ${c}` };
    }
    return { codes };
  }

  function subscribe(client: Client, codes: string[], id: unknown): void {
    const now = Date.now();
    for (const [c, entry] of client.pairs) if (!codes.includes(c)) entry.leaveAt ??= now + FANOUT_LAG_MS;
    for (const c of codes) client.pairs.set(c, {});
    const body: Record<string, unknown> = { code: STATUS.OK, method: METHOD.subscribe, message: TEXT.subscribeSuccess };
    if (typeof id === 'string') body.id = id;
    body.data = null;
    notice(client, body);
    // A snapshot of each pair that has a price, then pushes as prices move.
    for (const c of codes) {
      const pair = byCode.get(c)!;
      if (!pair.halted) {
        push(client, pair);
        client.pairs.get(c)!.lastSent = now;
      }
    }
  }

  function unsubscribe(client: Client, codes: string[], id: unknown): void {
    const leaveAt = Date.now() + FANOUT_LAG_MS;
    for (const c of codes) {
      const entry = client.pairs.get(c);
      if (entry) entry.leaveAt ??= leaveAt;
    }
    const body: Record<string, unknown> = {
      code: STATUS.OK,
      method: METHOD.unsubscribe,
      message: TEXT.unsubscribeSuccess,
    };
    if (typeof id === 'string') body.id = id;
    body.data = null;
    notice(client, body);
  }

  function onMessage(client: Client, raw: RawData, binary: boolean): void {
    let message: unknown;
    try {
      message = binary ? undefined : JSON.parse(raw.toString());
    } catch {
      message = undefined;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message))
      return failure(client, STATUS.INVALID_REQUEST, 'a request is a JSON object', undefined);
    const { method, params, id } = message as { method?: unknown; params?: unknown; id?: unknown };
    if (id !== undefined && typeof id !== 'string')
      return failure(client, STATUS.INVALID_REQUEST, 'id must be a string', id);
    if (method === METHOD.ping) {
      client.lastPing = Date.now();
      if (client.ws.readyState === WebSocket.OPEN) client.ws.send(TEXT.pong);
      return;
    }
    if (method !== METHOD.subscribe && method !== METHOD.unsubscribe)
      return failure(client, STATUS.INVALID_REQUEST, `unknown method: ${String(method)}`, id);
    const chosen = pairsOf(params);
    if ('message' in chosen) return failure(client, chosen.code, chosen.message, id);
    if (method === METHOD.subscribe) subscribe(client, chosen.codes, id);
    else unsubscribe(client, chosen.codes, id);
  }

  const server = createServer((req, res) => {
    try {
      handleRest(req, res);
    } catch {
      refuse(res, STATUS.INTERNAL, 'internal error');
    }
  });

  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const path = new URL(req.url ?? '/', 'http://service.invalid').pathname;
    if (path !== STREAM_PATH) return refuseUpgrade(socket, 404, STATUS.NOT_FOUND, 'no stream here');
    if (!validKey(req)) return refuseUpgrade(socket, 401, STATUS.UNAUTHORIZED, 'a valid API key is required');
    if (held >= ALLOWANCE)
      return refuseUpgrade(socket, 429, STATUS.CONNECTION_LIMIT, 'maximum number of connections reached');
    held++;
    let released = false;
    const release = () => {
      if (!released) {
        released = true;
        held--;
      }
    };
    socket.once('close', release);
    wss.handleUpgrade(req, socket, head, (ws) => {
      const client: Client = { ws, lastPing: Date.now(), pairs: new Map() };
      clients.add(client);
      ws.on('message', (raw, binary) => onMessage(client, raw, binary));
      ws.on('close', () => {
        clients.delete(client);
        release();
      });
      ws.on('error', () => ws.terminate());
    });
  });

  const ticker = setInterval(() => {
    const now = Date.now();
    const moved = new Set<string>();
    for (const p of pairs) {
      if (!moving(p)) continue;
      const step = Math.floor(random() * 3) - 1;
      if (step === 0) continue;
      const next = bids.get(p.code)! + step * p.tick;
      if (next <= p.tick) continue;
      bids.set(p.code, next);
      updated.set(p.code, now * 1000);
      moved.add(p.code);
    }
    for (const client of clients) {
      for (const [c, entry] of client.pairs) {
        if (entry.leaveAt !== undefined && now >= entry.leaveAt) {
          client.pairs.delete(c);
          continue;
        }
        if (moved.has(c)) push(client, byCode.get(c)!);
      }
    }
  }, TICK_MS);

  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const client of clients)
      if (now - client.lastPing > LIMITS.pingTimeoutMs) client.ws.close(1000, 'no ping within 30 seconds');
  }, IDLE_SWEEP_MS);

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    rest: `http://127.0.0.1:${port}${PREFIX}`,
    stream: `ws://127.0.0.1:${port}${STREAM_PATH}`,
    key,
    port,
    suspended: pairs.filter((p) => p.suspended).map((p) => p.code),
    async close() {
      clearInterval(ticker);
      clearInterval(sweeper);
      for (const client of clients) client.ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
