/**
 * The service in the ecosystem's languages: an OpenAPI 3.1 document of the REST API and an
 * AsyncAPI 3.0 document of the stream, both built from the validators' schemas
 * (src/schema-definitions.ts) and the spec constants, so there is no second copy to drift.
 *
 * They describe every conforming service, not one implementation: where the spec is silent
 * (the HTTP status of most status numbers, the unit of `ts`, pagination metadata, extra fields,
 * the stream's address and path, the Socket.IO event) the documents stay open and say so.
 */
import { SCHEMAS, type SchemaName } from './schema-definitions.ts';
import {
  API_KEY_HEADER,
  LIMITS,
  PAGING_MINIMUM,
  PAIR_CODE_PATTERN,
  PATHS,
  QUERY,
  REST_STATUS,
  STATUS,
  TEXT,
} from './spec.ts';

type Json = Record<string, unknown>;

/** The messages of the service; the profile schema is conform's own and stays out. */
const MESSAGE_SCHEMAS = (Object.keys(SCHEMAS) as SchemaName[]).filter((n) => n !== 'profile');

/**
 * A validator schema rewritten for a document's components: `$schema` and `$id` dropped (the
 * document sets the dialect) and file references (`market.schema.json`) pointed at `prefix`.
 */
function componentSchema(value: unknown, prefix: string): unknown {
  if (Array.isArray(value)) return value.map((v) => componentSchema(v, prefix));
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '$schema' || k === '$id') continue;
    out[k] =
      k === '$ref' && typeof v === 'string'
        ? `${prefix}${v.replace(/\.schema\.json$/, '')}`
        : componentSchema(v, prefix);
  }
  return out;
}

/** Every `$ref` to a component schema inside `value`, by schema name. */
function schemaRefs(value: unknown, prefix: string, into: Set<string>): Set<string> {
  if (Array.isArray(value)) for (const v of value) schemaRefs(v, prefix, into);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(prefix)) into.add(v.slice(prefix.length));
      else schemaRefs(v, prefix, into);
    }
  return into;
}

/**
 * The component schemas a document uses: those its paths or channels refer to and what they refer
 * to in turn, so the REST document carries no stream message and the stream document no REST body.
 */
function componentSchemas(prefix: string, body: Json): Json {
  const out: Json = {};
  const pending = [...schemaRefs(body, prefix, new Set())];
  for (let name = pending.shift(); name !== undefined; name = pending.shift()) {
    const known = MESSAGE_SCHEMAS.find((n) => n === name);
    if (name in out || known === undefined) continue;
    out[name] = componentSchema(SCHEMAS[known], prefix);
    pending.push(...schemaRefs(out[name], prefix, new Set()));
  }
  return Object.fromEntries(
    Object.keys(out)
      .sort()
      .map((n) => [n, out[n]]),
  );
}

const statusList = Object.entries(REST_STATUS)
  .map(([s, meaning]) => `- \`${s}\`: ${meaning}`)
  .join('\n');

/** The documents are conform's output, under conform's own licence (a URL: AsyncAPI 3.0 has no SPDX field). */
const DOCUMENT_LICENSE = { name: 'MIT', url: 'https://spdx.org/licenses/MIT.html' } as const;

/** Defaults of `conform serve`, the only concrete server we know; every other service has its own. */
const SERVE_HOST = '127.0.0.1:8080';

/** A `$ref` to a component schema of the OpenAPI document. */
const openApiSchema = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

/**
 * The responses of a REST operation whose success body is `success`. A missing or invalid key is
 * the one status number whose HTTP status the spec fixes (401); every other error may come with
 * any 4xx, 5xx or even 200 (the client reads status_number).
 */
function restResponses(success: string): Json {
  const s = openApiSchema;
  const otherError: Json = {
    allOf: [s('rest-error'), { properties: { status_number: { not: { const: STATUS.UNAUTHORIZED } } } }],
  };
  const json = (schema: Json, description: string): Json => ({
    description,
    content: { 'application/json': { schema } },
  });
  return {
    200: json(
      { anyOf: [s(success), otherError] },
      `Success (status_number ${STATUS.OK}` +
        `${success === 'price-response' ? ` or ${STATUS.PRICE_STALE}, stale price with data` : ''}). ` +
        'The spec does not fix the HTTP status of an error status_number, so an ' +
        'error envelope with HTTP 200 conforms too.',
    ),
    401: json(s('rest-error'), `No valid API key: status_number ${STATUS.UNAUTHORIZED} (spec: Authentication 2).`),
    '4XX': json(otherError, 'An error envelope; which 4xx goes with which status_number is not shown by the spec.'),
    '5XX': json(otherError, 'An error envelope; which 5xx goes with which status_number is not shown by the spec.'),
  };
}

/** A query parameter of a REST operation. */
const queryParameter = (name: string, schema: Json, description: string, required = false): Json => ({
  name,
  in: 'query',
  required,
  schema,
  description,
});

/** The two endpoints of the REST API (spec: Endpoints). */
function restPaths(): Json {
  const query = queryParameter;
  return {
    [PATHS.pairs]: {
      get: {
        operationId: 'listPairs',
        summary: 'A paginated list of the pairs the key may read',
        parameters: [
          query(QUERY.pairs.code, { type: 'string' }, 'Search pairs by a code or fragment of it.'),
          query(QUERY.pairs.type, { type: 'string' }, 'Filter by asset type, for example Crypto.'),
          query(
            QUERY.pairs.page,
            { type: 'integer', minimum: PAGING_MINIMUM.page, default: LIMITS.defaultPage },
            'Page number.',
          ),
          query(
            QUERY.pairs.perPage,
            { type: 'integer', minimum: PAGING_MINIMUM.perPage, default: LIMITS.defaultPerPage },
            'Items per page; the maximum is not shown by the spec.',
          ),
        ],
        responses: restResponses('pairs-response'),
      },
    },
    [PATHS.price]: {
      get: {
        operationId: 'getPrice',
        summary: 'The latest ask, bid and mid-price of one pair, with market-session information',
        parameters: [
          query(
            QUERY.price.code,
            { type: 'string', pattern: PAIR_CODE_PATTERN },
            'Pair code `<asset_type>:<market>:<base>/<quote>`.',
            true,
          ),
          query(
            QUERY.price.pool,
            { type: 'string' },
            'Pool address for specific crypto assets; format and effect not shown by the spec.',
          ),
        ],
        responses: restResponses('price-response'),
      },
    },
  };
}

/** The OpenAPI 3.1 document of the REST API (spec: Endpoints, REST envelope, Errors, Authentication). */
export function openApiDocument(version: string): Json {
  const schemas = '#/components/schemas/';
  const doc: Json = {
    openapi: '3.1.0',
    info: {
      title: 'Real-Time Price Service: REST',
      version,
      license: DOCUMENT_LICENSE,
      description:
        'Generated by `conform spec --openapi` from the schemas conform validates ' +
        'with. Every body is the REST envelope; ' +
        'clients must read `status_number`, not only the HTTP status. The unit ' +
        'of `ts`, pagination metadata and the largest ' +
        `\`per_page\` are not shown by the spec; extra fields are allowed ` +
        `everywhere.\n\nstatus_number values:\n${statusList}`,
    },
    servers: [
      {
        url: `http://${SERVE_HOST}`,
        description: '`conform serve` with its defaults; the spec does not show a base URL: use your own.',
      },
    ],
    security: [{ apiKey: [] }],
    paths: restPaths(),
    components: {
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: API_KEY_HEADER,
          description: 'Header names are case-insensitive.',
        },
      },
    },
  };
  (doc.components as Json).schemas = componentSchemas(schemas, doc);
  return doc;
}

/** The one channel of the stream document. */
const CHANNEL = '#/channels/prices';
/** A `$ref` to a message of the channel. */
const channelMessage = (name: string): Json => ({ $ref: `${CHANNEL}/messages/${name}` });
/** A message of the channel whose payload is a component schema. */
const streamMessage = (name: string, title: string, payload: string, summary: string): Json => ({
  name,
  title,
  summary,
  payload: { $ref: `#/components/schemas/${payload}` },
});

/** The two servers of the stream, raw WebSocket and Socket.IO, at `conform serve`'s defaults. */
function streamServers(): Json {
  const security = [{ $ref: '#/components/securitySchemes/apiKey' }];
  return {
    websocket: {
      host: SERVE_HOST,
      pathname: '/v1/ws',
      protocol: 'ws',
      security,
      description:
        'Raw WebSocket, one JSON message per text frame. Host and path are those ' +
        'of `conform serve`; the spec does not show them.',
    },
    socketio: {
      host: SERVE_HOST,
      pathname: '/socket.io/',
      protocol: 'ws',
      security,
      description:
        'Socket.IO (Engine.IO 4 over WebSocket): each JSON message is the argument of one event on one namespace; ' +
        'the spec shows neither (a conform profile names them: `event`, `namespace`; ' +
        '`conform serve --transport socketio` uses `price` on `/`).',
    },
  };
}

/** The price stream's channel: its messages both ways and the handshake's key header. */
function pricesChannel(): Json {
  const message = streamMessage;
  return {
    address: null,
    title: 'Price stream',
    description:
      'One connection per client; one active subscription of at most ' +
      `${LIMITS.maxPairsPerSubscribe} pairs, replaced by each subscribe.`,
    servers: [{ $ref: '#/servers/websocket' }, { $ref: '#/servers/socketio' }],
    messages: {
      subscribe: message(
        'subscribe',
        'Subscribe',
        'subscribe-request',
        'Subscribe to exactly these pairs, replacing any earlier subscription.',
      ),
      unsubscribe: message('unsubscribe', 'Unsubscribe', 'unsubscribe-request', 'Stop pushes for these pairs.'),
      ping: message(
        'ping',
        'Ping',
        'ping-request',
        `Keep-alive; at least once every ${LIMITS.pingTimeoutMs / 1000} seconds.`,
      ),
      pong: {
        name: 'pong',
        title: 'Pong',
        summary: 'The reply to a ping: plain text.',
        contentType: 'text/plain',
        payload: { type: 'string', const: TEXT.pong },
      },
      pushFrame: message('pushFrame', 'Push data frame', 'push-frame', 'A price update for a subscribed pair.'),
      noticeSuccess: message(
        'noticeSuccess',
        'Success notice',
        'notice-success',
        `A subscribe or unsubscribe was accepted (code ${STATUS.OK}).`,
      ),
      noticeError: message(
        'noticeError',
        'Error notice',
        'notice-error',
        'A request failed; `code` is a domain status code, not an HTTP status.',
      ),
    },
    bindings: {
      ws: {
        method: 'GET',
        headers: {
          type: 'object',
          required: [API_KEY_HEADER],
          properties: { [API_KEY_HEADER]: { type: 'string' } },
        },
      },
    },
  };
}

/** What a client sends on the channel and what the service answers or pushes. */
function streamOperations(): Json {
  const channel = CHANNEL;
  const msg = channelMessage;
  return {
    subscribe: {
      action: 'receive',
      channel: { $ref: channel },
      summary: 'A client subscribes',
      messages: [msg('subscribe')],
      reply: { channel: { $ref: channel }, messages: [msg('noticeSuccess'), msg('noticeError')] },
    },
    unsubscribe: {
      action: 'receive',
      channel: { $ref: channel },
      summary: 'A client unsubscribes',
      messages: [msg('unsubscribe')],
      reply: { channel: { $ref: channel }, messages: [msg('noticeSuccess'), msg('noticeError')] },
    },
    ping: {
      action: 'receive',
      channel: { $ref: channel },
      summary: 'A client pings',
      messages: [msg('ping')],
      reply: { channel: { $ref: channel }, messages: [msg('pong')] },
    },
    pushPrices: {
      action: 'send',
      channel: { $ref: channel },
      summary: 'The service pushes prices of the subscribed pairs',
      messages: [msg('pushFrame')],
    },
    reportError: {
      action: 'send',
      channel: { $ref: channel },
      summary: 'The service reports a failed request or an invalid key state',
      messages: [msg('noticeError')],
    },
  };
}

/**
 * The AsyncAPI 3.0 document of the stream, raw WebSocket and Socket.IO (spec: WebSocket connection,
 * Methods, Events).
 */
export function asyncApiDocument(version: string): Json {
  const doc: Json = {
    asyncapi: '3.0.0',
    info: {
      title: 'Real-Time Price Service: stream',
      version,
      license: DOCUMENT_LICENSE,
      description:
        'Generated by `conform spec --asyncapi` from the schemas conform validates ' +
        'with. Messages are JSON objects in text ' +
        `frames, except the ping reply, the plain text \`${TEXT.pong}\`. The key ` +
        `is checked during the HTTP handshake; a refused ` +
        'handshake answers with a JSON body of `status_number` and `message` ' +
        '(the handshake-error schema), never `code`. ' +
        `A connection without a ping for ${LIMITS.pingTimeoutMs / 1000} seconds ` +
        `is closed. The push interval, the units of ` +
        '`last_updated` and `sent_at`, the address and path of the stream and the ' +
        'Socket.IO event name are not shown by the spec.',
    },
    defaultContentType: 'application/json',
    servers: streamServers(),
    channels: { prices: pricesChannel() },
    operations: streamOperations(),
    components: {
      securitySchemes: {
        apiKey: {
          type: 'httpApiKey',
          in: 'header',
          name: API_KEY_HEADER,
          description: 'Sent in the HTTP handshake; header names are case-insensitive.',
        },
      },
    },
  };
  (doc.components as Json).schemas = componentSchemas('#/components/schemas/', doc);
  return doc;
}
