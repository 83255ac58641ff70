// biome-ignore-all lint/suspicious/noThenProperty: `then` here is the JSON Schema keyword of if/then, never awaited
/**
 * The JSON Schemas (draft 2020-12) of every message of the spec, built from the spec constants so
 * that no literal is written twice. `npm run gen:schemas` writes them to `schemas/*.schema.json`
 * for other tools; a test fails when those files are stale or when one is not compiled here.
 *
 * Where the spec says "not shown" the schemas stay open: extra fields are allowed and the unit
 * of timestamps is not fixed.
 */
import {
  CRYPTO_REASONS,
  CRYPTO_SESSION,
  EXTENDED_HOURS_REASONS,
  LIMITS,
  MARKET_COMBINATIONS,
  MARKET_REASONS,
  MARKET_SESSIONS,
  METHOD,
  NOTICE_ERROR_CODES,
  PAIR_CODE_PATTERN,
  REST_STATUSES,
  REST_STATUSES_WITH_DATA,
  STATUS,
  TEXT,
  ASSET_TYPE,
} from './spec.ts';
import { TRANSPORTS } from './transports/stream.ts';
import { REPLAY_SCHEMA_BODY } from './explore/replay-file.ts';

export const SCHEMA_BASE = 'https://conform.local/schemas/';
type Schema = Record<string, unknown>;

const id = (name: string): string => `${SCHEMA_BASE}${name}.schema.json`;
const ref = (name: string): Schema => ({ $ref: `${name}.schema.json` });
const decimal: Schema = { type: 'string', format: 'decimal' };
const pairCode: Schema = { type: 'string', pattern: PAIR_CODE_PATTERN };
const assetPrefix = (assetType: string): string => `^${assetType}:`;
/** `false` as a property's schema forbids the property outright. */
const forbidden = false;
/** `required` that also names the fields, as ajv's strict mode wants. */
const requires = (...fields: string[]): Schema => ({
  required: fields,
  properties: Object.fromEntries(fields.map((f) => [f, true])),
});
const errorStatuses = REST_STATUSES.filter((s) => !REST_STATUSES_WITH_DATA.includes(s));

function schema(name: string, title: string, body: Schema): Schema & { $id: string } {
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: id(name), title, ...body };
}

const pairRecord = schema('pair-record', 'Pair record (element of data in the pairs response)', {
  type: 'object',
  required: ['code', 'name', 'base', 'quote'],
  properties: {
    code: pairCode,
    name: { type: 'string' },
    base: { type: 'string', minLength: 1 },
    quote: { type: 'string', minLength: 1 },
  },
});

const market = schema('market', 'Market object', {
  type: 'object',
  required: ['open', 'reason', 'session'],
  properties: {
    open: { type: 'boolean' },
    reason: { enum: [...MARKET_REASONS] },
    session: { enum: [...MARKET_SESSIONS] },
    timezone: { type: 'string', minLength: 1 },
  },
  // The combinations the spec fixes, one `if reason … then open/session` per reason.
  allOf: Object.entries(MARKET_COMBINATIONS).map(([reason, c]) => ({
    if: { properties: { reason: { const: reason } }, required: ['reason'] },
    then: { properties: { open: { const: c.open }, session: { const: c.session } } },
  })),
});

const priceRecord = schema('price-record', 'Price record (data in the price response)', {
  type: 'object',
  required: ['code', 'ask', 'bid', 'price', 'market'],
  properties: { code: pairCode, ask: decimal, bid: decimal, price: decimal, market: ref('market') },
  allOf: [
    {
      // Crypto: continuously open (or stale), only ever in REG, never a timezone; every other asset has one.
      if: { properties: { code: { type: 'string', pattern: assetPrefix(ASSET_TYPE.crypto) } }, required: ['code'] },
      then: {
        properties: {
          market: {
            type: 'object',
            properties: {
              timezone: forbidden,
              reason: { enum: [...CRYPTO_REASONS] },
              session: { const: CRYPTO_SESSION },
            },
          },
        },
      },
      else: {
        properties: {
          market: {
            type: 'object',
            required: ['timezone'],
            properties: { timezone: { type: 'string' }, reason: { not: { const: 'continuous' } } },
          },
        },
      },
    },
    {
      // Extended hours belong to equities ("US equities with extended hours additionally use …"). The
      // market of a code is "a scope label such as ALL or US": an equity of any label may be a US one.
      if: {
        properties: { code: { type: 'string', pattern: assetPrefix(ASSET_TYPE.equity) } },
        required: ['code'],
      },
      else: {
        properties: {
          market: { type: 'object', properties: { reason: { not: { enum: [...EXTENDED_HOURS_REASONS] } } } },
        },
      },
    },
  ],
});

const envelopeProperties: Schema = {
  status_number: { enum: [...REST_STATUSES] },
  ts: { type: 'integer' },
  data: { type: ['object', 'array', 'null'] },
  message: { type: 'string' },
};

// `ts` is stated for the answers that carry data ("status_number 200, ts, and data"); on errors the
// spec states status_number, data null and a message, and a gateway in front of a service (a
// missing key, an unknown endpoint) may answer without ts. Where present it is an integer.
const restEnvelope = schema('rest-envelope', 'REST envelope (any response)', {
  type: 'object',
  required: ['status_number', 'data'],
  properties: envelopeProperties,
  allOf: [
    {
      if: { properties: { status_number: { enum: errorStatuses } }, required: ['status_number'] },
      then: { required: ['message'], properties: { message: true, data: { type: 'null' } } },
      else: requires('ts'),
    },
    {
      if: { properties: { status_number: { const: STATUS.PRICE_STALE } }, required: ['status_number'] },
      then: requires('message'),
    },
  ],
});

const restError = schema('rest-error', 'REST error envelope', {
  type: 'object',
  required: ['status_number', 'data', 'message'],
  properties: { ...envelopeProperties, status_number: { enum: errorStatuses }, data: { type: 'null' } },
});

const pairsResponse = schema('pairs-response', 'GET /v1/pairs response', {
  type: 'object',
  required: ['status_number', 'ts', 'data'],
  properties: {
    ...envelopeProperties,
    status_number: { const: STATUS.OK },
    data: { type: 'array', items: ref('pair-record') },
  },
});

const priceResponse = schema('price-response', 'GET /v1/price response with a price (200, or 50102 stale)', {
  type: 'object',
  required: ['status_number', 'ts', 'data'],
  properties: {
    ...envelopeProperties,
    status_number: { enum: [...REST_STATUSES_WITH_DATA] },
    data: ref('price-record'),
  },
  allOf: [
    {
      if: { properties: { status_number: { const: STATUS.PRICE_STALE } }, required: ['status_number'] },
      then: requires('message'),
    },
  ],
});

const pushFrame = schema('push-frame', 'WebSocket push data frame', {
  type: 'object',
  required: ['code', 'ask', 'bid', 'price'],
  properties: {
    code: pairCode,
    ask: decimal,
    bid: decimal,
    price: decimal,
    last_updated: { type: 'integer' },
    sent_at: { type: 'integer' },
    status_number: forbidden,
  },
});

const noticeProperties: Schema = {
  method: { type: 'string' },
  message: { type: 'string' },
  code: { type: 'string' },
  id: { type: 'string' },
  data: { type: ['object', 'null'] },
  // Post-connect frames never carry `status_number` (spec: Handshake errors).
  status_number: forbidden,
};

const noticeSuccess = schema('notice-success', 'WebSocket success notice (subscribe, unsubscribe)', {
  type: 'object',
  required: ['method', 'message', 'code'],
  properties: {
    ...noticeProperties,
    method: { enum: [METHOD.subscribe, METHOD.unsubscribe] },
    code: { const: STATUS.OK },
  },
  allOf: [
    {
      if: { properties: { method: { const: METHOD.subscribe } }, required: ['method'] },
      then: { properties: { message: { const: TEXT.subscribeSuccess }, data: { type: 'null' } } },
    },
    {
      if: { properties: { method: { const: METHOD.unsubscribe } }, required: ['method'] },
      then: { properties: { message: { const: TEXT.unsubscribeSuccess } } },
    },
  ],
});

const noticeError = schema('notice-error', 'WebSocket error notice', {
  type: 'object',
  required: ['method', 'message', 'code'],
  properties: {
    ...noticeProperties,
    method: { const: METHOD.error },
    code: { enum: [...NOTICE_ERROR_CODES] },
    data: { type: 'null' },
  },
});

const handshakeError = schema('handshake-error', 'Handshake error body (HTTP phase before the upgrade)', {
  type: 'object',
  required: ['status_number', 'message'],
  properties: { status_number: { enum: [...REST_STATUSES] }, message: { type: 'string' }, code: forbidden },
});

const pairsParams: Schema = {
  type: 'object',
  required: ['pairs'],
  properties: {
    pairs: {
      type: 'array',
      minItems: 1,
      maxItems: LIMITS.maxPairsPerSubscribe,
      items: { type: 'string', minLength: 1 },
    },
  },
};

const subscribeRequest = schema('subscribe-request', 'Client request: subscribe', {
  type: 'object',
  required: ['method', 'params'],
  properties: { id: { type: 'string' }, method: { const: METHOD.subscribe }, params: pairsParams },
});

const unsubscribeRequest = schema('unsubscribe-request', 'Client request: unsubscribe', {
  type: 'object',
  required: ['method', 'params'],
  properties: { id: { type: 'string' }, method: { const: METHOD.unsubscribe }, params: pairsParams },
});

const pingRequest = schema('ping-request', 'Client request: ping', {
  type: 'object',
  required: ['method'],
  properties: { id: { type: 'string' }, method: { const: METHOD.ping }, params: { type: 'object' } },
});

const rateLimit: Schema = {
  type: 'object',
  required: ['requests', 'windowMs'],
  additionalProperties: false,
  properties: { requests: { type: 'integer', minimum: 0 }, windowMs: { type: 'integer', minimum: 1 } },
  description:
    'REST requests the target allows the key per window (the spec does not show it); the run paces the key within it.',
};

const keyValue: Schema = { type: 'string', minLength: 1 };
const keyEnv: Schema = {
  type: 'string',
  pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
  description: 'Name of the environment variable that holds the key, instead of `key`.',
};
const keyEntry = (extra: Schema = {}, required: string[] = []): Schema => ({
  type: 'object',
  ...(required.length > 0 ? { required } : {}),
  // The key itself, or the name of the environment variable that holds it (kept out of the file).
  oneOf: [
    { required: ['key'], properties: { key: keyValue } },
    { required: ['keyEnv'], properties: { keyEnv } },
  ],
  properties: { key: keyValue, keyEnv, rateLimit, ...extra },
});
const connections: Schema = {
  type: 'integer',
  minimum: 1,
  description:
    'WebSocket connection allowance of the key. When absent, the run finds the allowance ' +
    'of keys.primary and keys.limited (connections opened one at a time until a 50009, ' +
    'at most 10) and lends any other key one connection at a time.',
};

const profile = schema('profile', 'conform target profile', {
  type: 'object',
  required: ['rest', 'keys'],
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    name: { type: 'string', description: 'A label for reports.' },
    rest: {
      type: 'string',
      pattern: '^https?://',
      description: 'REST base URL; the harness appends /v1/pairs and /v1/price.',
    },
    ws: { type: 'string', pattern: '^wss?://', description: 'WebSocket URL (the spec does not show its path).' },
    transport: { enum: [...TRANSPORTS], description: 'Stream transport; default ws.' },
    event: { type: 'string', minLength: 1, description: 'Socket.IO event name that carries the JSON messages.' },
    namespace: { type: 'string', pattern: '^/', description: 'Socket.IO namespace (the spec shows none); default /.' },
    tls: {
      type: 'object',
      additionalProperties: false,
      required: ['ca'],
      properties: {
        ca: {
          type: 'string',
          minLength: 1,
          description:
            'A PEM file of the CA certificates that sign the target (REST and stream), trusted beside ' +
            "Node's own; relative to the profile's folder. Verification is never turned off.",
        },
      },
      description: "How the target's TLS certificates are verified (a company CA).",
    },
    keys: {
      type: 'object',
      required: ['primary'],
      properties: {
        primary: keyEntry({ connections }),
        limited: keyEntry({ connections }),
        cryptoOnly: keyEntry({ assetTypes: { type: 'array', minItems: 1, items: { type: 'string' } } }, ['assetTypes']),
        whitelisted: keyEntry({ pairs: { type: 'array', minItems: 1, items: pairCode } }, ['pairs']),
        noStream: keyEntry(),
        suspended: keyEntry(),
      },
      additionalProperties: keyEntry({ connections }),
    },
    pairs: {
      type: 'object',
      properties: {
        stale: { ...pairCode, description: 'A pair whose price answer is 50102.' },
        inactive: { ...pairCode, description: 'A pair in the catalogue that is inactive or suspended.' },
        sample: { type: 'array', items: pairCode, description: 'Pairs known to stream, for subscriptions.' },
      },
      additionalProperties: pairCode,
    },
    probes: {
      type: 'array',
      items: {
        type: 'object',
        required: ['status', 'path'],
        additionalProperties: false,
        properties: {
          status: { enum: [...REST_STATUSES] },
          path: { type: 'string', pattern: '^/' },
          query: { type: 'object', additionalProperties: { type: 'string' } },
          key: { type: 'string', description: 'Name of a key in `keys`; default primary.' },
          httpStatus: { type: 'integer', description: 'Expected HTTP status, when the target documents one.' },
          note: { type: 'string' },
        },
      },
    },
    maxRateWaitMs: {
      type: 'integer',
      minimum: 1,
      description:
        "Longest the run waits on the target's REST rate limit in all (its pace, Retry-After), ms; " +
        'a wait past it ends the request as throttled. Default 10 minutes. --max-rate-wait overrides it.',
    },
    sampleSeed: {
      type: 'integer',
      minimum: 0,
      description:
        'Seed of the sample that a catalogue too large to read whole (rest.price.catalogue) is read in: ' +
        'a pair of every asset type, the rest drawn. Default: drawn by the run and reported, so a run repeats with it.',
    },
    minCoverage: {
      type: 'number',
      minimum: 0,
      maximum: 100,
      description:
        "Percentage of the spec's stated rules that need no operator state which the run has " +
        'to check (an error, a skip or a pass with nothing judged checks nothing); a run below ' +
        'it exits 1 (a CI gate). --min-coverage overrides it.',
    },
    timing: {
      type: 'object',
      additionalProperties: false,
      properties: {
        pingTimeoutMs: {
          type: 'integer',
          minimum: 1,
          description: `Keep-alive window; ${LIMITS.pingTimeoutMs} per the spec.`,
        },
        pingGraceMs: {
          type: 'integer',
          minimum: 0,
          description: 'Slack allowed after the window before the close; default half the window.',
        },
        keepAliveHoldWindows: {
          type: 'number',
          exclusiveMinimum: 1,
          description:
            'How many windows ws.keepalive.ping-keeps-alive keeps a pinged connection ' +
            'open (default: the window and its grace plus 1 s); it must outlast the ' +
            'window and its grace.',
        },
        pushIntervalMs: {
          type: 'integer',
          minimum: 0,
          description:
            'Longest gap between two pushes of a subscribed pair whose price moves. The push waits ' +
            'become twice it plus 1 s; unstated, they are 5 s for a push and 10 s for two.',
        },
        firstPushMs: {
          type: 'integer',
          minimum: 0,
          description:
            "Longest from a subscribe's success notice to the first push (default: pushIntervalMs). " +
            'The wait becomes twice it plus 1 s; unstated, 15 s.',
        },
        noticeMs: {
          type: 'integer',
          minimum: 0,
          description:
            'Longest the target takes to answer a request with a notice or a ping with its pong. ' +
            'The wait becomes twice it plus 1 s; unstated, 5 s.',
        },
        slotReleaseMs: {
          type: 'integer',
          minimum: 0,
          description:
            "Longest from a stream connection's close until its slot of the key's allowance is free " +
            'again. A 50009 within the allowance is waited out for twice it plus 1 s; unstated, for ' +
            'slotReleaseWaitMs.',
        },
        slotReleaseWaitMs: {
          type: 'integer',
          minimum: 0,
          description:
            "Longest a 50009 for a connection within the key's allowance is waited out when " +
            'slotReleaseMs is unstated (the spec states no release time); default 30000. ' +
            '--slot-release-wait overrides it.',
        },
        stopMs: {
          type: 'integer',
          minimum: 0,
          description:
            'Longest from the notice of an unsubscribe or a replacing subscribe until the dropped pairs ' +
            'stop being pushed. The stop window becomes twice it plus 1 s, or four push gaps when longer; ' +
            'unstated, 1.5 s or four push gaps.',
        },
      },
    },
  },
  // Socket.IO carries the messages on a named event that the spec does not show: the profile names it.
  if: { type: 'object', required: ['transport'], properties: { transport: { const: 'socketio' } } },
  then: { type: 'object', required: ['event'], properties: { event: { type: 'string' } } },
});

/** The explorer's replay file (src/explore/replay-file.ts). */
const exploreReplay = schema('explore-replay', "The explorer's replay file", REPLAY_SCHEMA_BODY);

/** Every schema, by file name (without `.schema.json`). */
export const SCHEMAS = {
  'pair-record': pairRecord,
  'pairs-response': pairsResponse,
  market,
  'price-record': priceRecord,
  'price-response': priceResponse,
  'rest-envelope': restEnvelope,
  'rest-error': restError,
  'push-frame': pushFrame,
  'notice-success': noticeSuccess,
  'notice-error': noticeError,
  'handshake-error': handshakeError,
  'subscribe-request': subscribeRequest,
  'unsubscribe-request': unsubscribeRequest,
  'ping-request': pingRequest,
  profile,
  'explore-replay': exploreReplay,
} as const satisfies Record<string, Schema & { $id: string }>;
export type SchemaName = keyof typeof SCHEMAS;
export const SCHEMA_NAMES = Object.keys(SCHEMAS) as SchemaName[];
export const schemaFileName = (name: SchemaName): string => `${name}.schema.json`;
