/**
 * The space of conforming services: every choice the spec leaves open ("not shown") or does not
 * mention, with the values a dialect may take. One table feeds the dialect schema, the random draw
 * and a covering set of seeds, so an option added here is drawn, validated and covered at once.
 */

type Schema = Record<string, unknown>;

/**
 * One option: the values a draw picks from, the JSON Schema a dialect file is checked against, and
 * what it means. `T` is the type of every value the option may hold (dialect.ts derives `Dialect`
 * from it), wider than the drawn values where the schema allows more.
 */
export interface OptionSpace<T> {
  /** Values a random dialect takes, each equally likely. */
  readonly values: readonly T[];
  /** What a dialect file may hold (wider than `values` where any value in a range conforms). */
  readonly schema: Schema;
  /** What the option chooses, for the schema's description. */
  readonly doc: string;
}

/** An option whose values are typed apart from its draw values (a range, a pattern, null beside numbers). */
const option = <T>(space: OptionSpace<T>): OptionSpace<T> => space;

const oneOf = <T extends string | number | boolean>(values: readonly T[], doc: string): OptionSpace<T> => ({
  values,
  schema: { enum: [...values] },
  doc,
});
const range = (values: readonly number[], minimum: number, maximum: number, doc: string): OptionSpace<number> => ({
  values,
  schema: { type: 'integer', minimum, maximum },
  doc,
});

/** A key's stream connection allowance; null keeps the configured one. */
const allowance = (values: readonly number[], whose: string): OptionSpace<number | null> => ({
  values,
  schema: { type: ['integer', 'null'], minimum: 1, maximum: 1000 },
  doc: `WebSocket connection allowance of ${whose}; null: as configured.`,
});

/** Named mappings of non-200 status numbers to HTTP statuses (dialect.ts HTTP_MAPPINGS). */
export const HTTP_MAPPING_NAMES = ['conventional', 'status-in-body', 'client-errors-400', 'gateway'] as const;

/** Every option of a dialect by group; a dialect holds one value of each. */
export const DIALECT_SPACE = {
  keys: {
    primary: allowance([1, 2, 3, 8], 'the primary key'),
    limited: allowance([1, 2, 3], 'the limited key'),
    others: allowance([1, 2, 3, 10], 'every other key that has one'),
    stated: oneOf(
      [true, false],
      "Whether the written profile states each key's allowance and the service's timing " +
        '(push interval, reply time, slot release): an operator may not know them.',
    ),
    slotReleaseMs: range(
      [0, 500, 1500, 3000],
      0,
      60_000,
      "How long after a stream connection closes its slot of the key's allowance is free again.",
    ),
  },
  rest: {
    tsUnit: oneOf(['ms', 's'] as const, "Unit of the envelope's ts."),
    httpStatus: oneOf(
      HTTP_MAPPING_NAMES,
      'How each non-200 status_number maps to an HTTP status (50005 stays 401, 50102 stays 200).',
    ),
    perPageMax: range([50, 100, 200, 500], 10, 100_000, 'Largest per_page answered.'),
    perPageOver: oneOf(
      ['error', 'clamp'] as const,
      'A per_page above the maximum: 50004, or answered with the maximum.',
    ),
    pastEnd: oneOf(['empty', 'error'] as const, 'A page past the last: an empty list, or 50004.'),
    pagination: oneOf(
      ['none', 'meta', 'top-level'] as const,
      'Pagination metadata of /v1/pairs: none, a meta object, or page, per_page and total beside data.',
    ),
    order: oneOf(['catalogue', 'code', 'reversed', 'shuffled'] as const, 'Order of the pairs in /v1/pairs.'),
    catalogueSize: option<number | null>({
      values: [null, 12, 30, 250, 500],
      schema: { type: ['integer', 'null'], minimum: 12, maximum: 50_000 },
      doc: 'Active pairs in the catalogue (the special-state pairs come on top); null: the default catalogue.',
    }),
    // Pairs a check may not take for granted.
    delayedPrices: oneOf(
      [false, true],
      'Some pairs answer every second price read from a delayed feed: 50102, prices 2 % above the live ones.',
    ),
    // Parameters, denials and gateway answers
    invalidPaging: oneOf(
      ['error', 'defaults'] as const,
      'An invalid page or per_page (0, -1, text): 50004, or answered with the default.',
    ),
    denial: oneOf(
      ['by-cause', '50010', '50107', '50109', '50104'] as const,
      "REST refusal of a pair outside a key's whitelist or asset types: 50010 and 50109 by cause, " +
        'or one documented refusal for both.',
    ),
    gatewayTs: oneOf(
      ['present', 'absent'] as const,
      'ts of the 401 to a keyless request and of the answer to an unknown endpoint, as a gateway may leave it out.',
    ),
    // Rate limit and network distance. A per-minute limit makes a run take minutes, so draws keep
    // the configured rate; a dialect file sets one.
    rateLimit: option<{ requests: number; windowMs: number } | null>({
      values: [null],
      schema: {
        type: ['object', 'null'],
        additionalProperties: false,
        required: ['requests', 'windowMs'],
        properties: {
          requests: { type: 'integer', minimum: 1, maximum: 100_000 },
          windowMs: { type: 'integer', minimum: 1000, maximum: 3_600_000 },
        },
      },
      doc:
        'REST requests each key may send per window (10 per 60000 ms: ten a minute), not stated in ' +
        'the profile: the service answers 50006 with Retry-After until the window is over. ' +
        'null: as configured (1000 a second, stated).',
    }),
    rateLimitHeaders: oneOf(
      [false, true],
      'Whether REST answers carry the IETF RateLimit-Policy and RateLimit headers (quota, remaining, reset).',
    ),
    latencyMs: range([0, 20], 0, 5000, 'Milliseconds every REST answer is held back, as across a network.'),
    // Readings of the spec's words that a strict reading would reject
    zoneNames: oneOf(
      ['canonical', 'links'] as const,
      "market.timezone: canonical tz names, or the tz database's links (US/Eastern, US/Central, GB).",
    ),
    equityMarkets: oneOf(
      ['US', 'exchanges'] as const,
      'Scope label of the US equities: US, or their exchange (NASDAQ, NYSE), extended hours kept.',
    ),
    codeSpelling: oneOf(
      ['plain', 'spaced'] as const,
      'Whether the catalogue holds codes with a space or a / in the base (Commodity:ALL:Crude Oil/USD, ' +
        'Equity:US:BF/B/USD).',
    ),
    codeSearch: oneOf(
      ['code', 'code-or-name'] as const,
      "What /v1/pairs?code= matches: codes only, or names as well (with a pair whose name names another's " +
        'symbol).',
    ),
    closedMarket: oneOf(
      ['200', '50102', '50102-no-data'] as const,
      'A price of a closed market: 200, 50102 with data (HTTP 200), or 50102 with data null and HTTP 503 ' +
        '(price unavailable).',
    ),
    keylessLimit: option<{ requests: number; windowMs: number } | null>({
      values: [null, { requests: 3, windowMs: 2000 }],
      schema: {
        type: ['object', 'null'],
        additionalProperties: false,
        required: ['requests', 'windowMs'],
        properties: {
          requests: { type: 'integer', minimum: 1, maximum: 100_000 },
          windowMs: { type: 'integer', minimum: 100, maximum: 3_600_000 },
        },
      },
      doc:
        "A gateway's limit on REST requests without a valid key, per client address: past it, 50006 and " +
        'HTTP 429 with Retry-After before any 401. null: none.',
    }),
  },
  json: {
    extraFields: oneOf(
      [false, true],
      'Undocumented extra fields in every object sent (envelopes, records, market, notices, pushes, handshake bodies).',
    ),
    keyOrder: oneOf(['spec', 'reversed', 'sorted'] as const, 'Order of the keys in every object sent.'),
    whitespace: oneOf(['compact', 'indented', 'tabs'] as const, 'Whitespace of the JSON text sent.'),
  },
  stream: {
    path: option<string>({
      values: ['/v1/ws', '/ws', '/stream', '/v1/stream/prices'],
      schema: { type: 'string', pattern: '^/[A-Za-z0-9/_.-]*$' },
      doc: 'Path of the WebSocket endpoint.',
    }),
    port: oneOf(['shared', 'separate'] as const, 'Whether the stream listens on the REST port or a port of its own.'),
    tickMs: range([10, 50, 100, 500, 1000, 3000], 10, 10_000, 'Push cadence: milliseconds between pushes of a pair.'),
    pushes: oneOf(
      ['every-tick', 'on-change', 'on-change-snapshot'] as const,
      'Which pairs a tick pushes: every subscribed pair, only those whose price ' +
        'changed, or only those plus a snapshot of each on subscribe.',
    ),
    quietPairs: oneOf([false, true], 'Whether some pairs change only seconds apart.'),
    timestamps: oneOf(['ms', 's', 'absent'] as const, 'last_updated and sent_at of pushes: in ms, in s, or absent.'),
    unsubscribeNotSubscribed: oneOf(
      ['success', 'error'] as const,
      'Unsubscribing a pair that is not subscribed: a success notice, or 50004.',
    ),
    failedSubscribe: oneOf(
      ['keep', 'drop'] as const,
      'A refused subscribe keeps the earlier subscription, or drops it.',
    ),
    idleClose: oneOf(
      ['normal', 'going-away', 'policy', 'app-4000', 'no-status'] as const,
      'Close code and reason of the keep-alive close.',
    ),
    maxMessagesPerSecond: range(
      [20, 50, 200, 1000],
      5,
      100_000,
      'Inbound messages per second per connection before a flood is closed (1008).',
    ),
    unauthorized: oneOf(
      ['handshake', 'after-connect'] as const,
      'A missing or unknown key: refused in the handshake, or a 50005 notice after connecting and a close.',
    ),
    // Pairs and pushes a check may not take for granted.
    suspendedListed: oneOf(
      [false, true],
      '/v1/pairs lists suspended pairs that a subscribe refuses with 50104 (REST still prices them).',
    ),
    stillPairs: oneOf([false, true], 'Some pairs never move, like a stablecoin: pushed on change, never pushed.'),
    stopLagTicks: range(
      [0, 2],
      0,
      3,
      'Ticks after an unsubscribe or a replacing subscribe during which the dropped pairs are still pushed.',
    ),
    stopLagMs: range(
      [0, 1000],
      0,
      1500,
      'Milliseconds after an unsubscribe or a replacing subscribe during which the dropped pairs are still ' +
        'pushed (a fan-out updated late).',
    ),
    subscribeErrors: oneOf(
      ['limit-first', 'pairs-first'] as const,
      'A subscribe both over the pair limit and naming a pair that cannot be subscribed: 50004 for the ' +
        'count, or 50104 for the pair (which comes first is not stated).',
    ),
    idleCloseWindows: oneOf(
      [1, 1.4] as const,
      'When a connection without a ping is closed, in keep-alive windows since the last ping: at the window, ' +
        'or as late as an idle sweep every 0.4 windows closes it.',
    ),
    // Parameters and optional fields
    emptySubscribe: oneOf(
      ['error', 'acknowledge'] as const,
      'A subscribe with an empty pairs list: 50004, or a success notice for a subscription to nothing.',
    ),
    noticeData: oneOf(['null', 'absent'] as const, 'The optional data field of every notice: null, or left out.'),
  },
  socketio: {
    event: option<string>({
      values: ['price', 'message', 'prices', 'data'],
      schema: { type: 'string', minLength: 1, pattern: '^[^\\s]+$' },
      doc: 'The Socket.IO event that carries the messages.',
    }),
    namespace: option<string>({
      values: ['/', '/v1', '/prices'],
      schema: { type: 'string', pattern: '^/[A-Za-z0-9/_-]*$' },
      doc: 'The Socket.IO namespace.',
    }),
    payload: oneOf(['object', 'json-text'] as const, 'Messages the server emits: JSON objects, or JSON text strings.'),
    refusals: oneOf(
      ['http', 'connect-error'] as const,
      'Handshake refusals: in the HTTP phase, or a CONNECT_ERROR with {status_number, ' +
        'message} from a namespace middleware.',
    ),
  },
  numbers: {
    decimals: oneOf(
      ['catalogue', 'drawn'] as const,
      "Decimals of each pair: the catalogue's, or drawn per pair from 0 to 8.",
    ),
    restZeros: oneOf(
      ['precision', 'trim', 'pad8'] as const,
      "REST prices: every decimal of the pair's precision, trailing zeros trimmed, or padded to 8 decimals.",
    ),
    streamZeros: oneOf(
      ['precision', 'trim', 'pad8'] as const,
      'Push prices, chosen apart from REST: the same price may read differently on each.',
    ),
    mid: oneOf(
      ['even-spread', 'exact', 'rounded', 'tick', 'weighted'] as const,
      'The mid-price: exact at the precision (an even spread), exact with one more ' +
        'decimal (an odd spread), that rounded to the precision, ask and bid on a tick of 5 units ' +
        'with the mid rounded to it (half even), or 40 % of the spread above the bid with one more decimal.',
    ),
    // Notation and precision
    notation: oneOf(
      ['plain', 'exponent'] as const,
      'How prices are written: plain digits, or exponent notation (6.425012E+4, 2.450E-5).',
    ),
    significantDigits: option<number | null>({
      values: [null, 24],
      schema: { type: ['integer', 'null'], minimum: 8, maximum: 40 },
      doc: "Significant digits of every pair's prices (long prices); null: the pair's own precision.",
    }),
  },
} as const satisfies Record<string, Record<string, OptionSpace<unknown>>>;

export type DialectSpace = typeof DIALECT_SPACE;
export type DialectGroup = keyof DialectSpace;
