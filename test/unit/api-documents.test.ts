import { describe, expect, it } from 'vitest';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Parser } from '@asyncapi/parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { asyncApiDocument, openApiDocument } from '../../src/api-documents.ts';
import { SCHEMAS } from '../../src/schema-definitions.ts';
import { DECIMAL_PATTERN, STATUS } from '../../src/spec.ts';
import { conform } from '../helpers/conform-cli.ts';
import { startReferenceServer } from '../../reference/index.ts';
import { get } from '../helpers/reference.ts';

// biome-ignore lint/suspicious/noExplicitAny: a parsed document walked by path; a wrong path fails its assertion
type Json = Record<string, any>;

/**
 * The response schema of an operation for an HTTP status key ('200', '4XX'…), compiled from the
 * dereferenced document.
 */
async function responseValidator(path: string, status: string) {
  const doc = (await SwaggerParser.dereference(structuredClone(openApiDocument('test')) as never)) as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('decimal', new RegExp(DECIMAL_PATTERN));
  return ajv.compile(doc.paths[path].get.responses[status].content['application/json'].schema);
}

const price = {
  code: 'Crypto:ALL:BTC/USD',
  ask: '2',
  bid: '1',
  price: '1.5',
  market: { open: true, reason: 'continuous', session: 'REG' },
};
const errorBody = (status: string) => ({ status_number: status, ts: 1, data: null, message: 'm' });

describe('OpenAPI document', () => {
  it('validates with swagger-parser as OpenAPI 3.1', async () => {
    const api = (await SwaggerParser.validate(structuredClone(openApiDocument('1.2.3')) as never)) as Json;
    expect(api.openapi).toBe('3.1.0');
    expect(Object.keys(api.paths)).toEqual(['/v1/pairs', '/v1/price']);
    expect(api.info.version).toBe('1.2.3');
  });

  it('carries the REST schemas of the validators and no stream message, references pointed inside', () => {
    const schemas = (openApiDocument('x').components as Json).schemas as Json;
    expect(Object.keys(schemas)).toEqual([
      'market',
      'pair-record',
      'pairs-response',
      'price-record',
      'price-response',
      'rest-error',
    ]);
    for (const name of Object.keys(schemas))
      expect(schemas[name]).toEqual(expect.objectContaining({ type: expect.anything() }));
    expect(schemas['price-record'].properties.market).toEqual({ $ref: '#/components/schemas/market' });
    expect(schemas['price-record'].required).toEqual(SCHEMAS['price-record'].required);
    expect(JSON.stringify(schemas)).not.toContain('.schema.json');
  });

  it('accepts what the spec leaves open: an error envelope with HTTP 200, extra fields, any ts', async () => {
    const ok = await responseValidator('/v1/price', '200');
    expect(ok({ status_number: STATUS.OK, ts: 1795374382, data: price, page: { total: 3 } })).toBe(true);
    expect(ok({ status_number: STATUS.PRICE_STALE, ts: 1, data: price, message: 'may be stale' })).toBe(true);
    expect(ok(errorBody(STATUS.PAIR_NOT_FOUND))).toBe(true);
    const pairs = await responseValidator('/v1/pairs', '200');
    expect(
      pairs({
        status_number: STATUS.OK,
        ts: 1,
        data: [{ code: 'Forex:ALL:EUR/USD', name: 'Euro', base: 'EUR', quote: 'USD' }],
        total: 1,
      }),
    ).toBe(true);
  });

  it('states its licence, and the least page and per_page the reference accepts', async () => {
    const doc = openApiDocument('x') as Json;
    expect(doc.info.license).toEqual({ name: 'MIT', url: 'https://spdx.org/licenses/MIT.html' });
    const params = doc.paths['/v1/pairs'].get.parameters as Json[];
    const reference = await startReferenceServer();
    try {
      for (const name of ['page', 'per_page']) {
        const { minimum } = params.find((p) => p.name === name)!.schema;
        expect(minimum, name).toBe(1);
        const at = await get(reference, `/v1/pairs?${name}=${minimum}`);
        const below = await get(reference, `/v1/pairs?${name}=${minimum - 1}`);
        expect([at.body.status_number, below.body.status_number], name).toEqual([STATUS.OK, STATUS.INVALID_REQUEST]);
      }
    } finally {
      await reference.close();
    }
  });

  it('holds the two HTTP statuses the spec fixes: 50005 only with 401, 50102 only with 200', async () => {
    const ok = await responseValidator('/v1/price', '200');
    const client = await responseValidator('/v1/price', '4XX');
    const unauthorized = await responseValidator('/v1/price', '401');
    expect(ok(errorBody(STATUS.UNAUTHORIZED))).toBe(false);
    expect(client(errorBody(STATUS.UNAUTHORIZED))).toBe(false);
    expect(unauthorized(errorBody(STATUS.UNAUTHORIZED))).toBe(true);
    expect(client({ status_number: STATUS.PRICE_STALE, ts: 1, data: price, message: 'stale' })).toBe(false);
    expect(client(errorBody(STATUS.INVALID_REQUEST))).toBe(true);
    expect(client({ ...errorBody(STATUS.INVALID_REQUEST), data: {} })).toBe(false);
  });
});

describe('AsyncAPI document', () => {
  it('carries the stream messages and no REST body among its components', () => {
    const doc = asyncApiDocument('x') as Json;
    expect(Object.keys(doc.components.schemas)).toEqual([
      'notice-error',
      'notice-success',
      'ping-request',
      'push-frame',
      'subscribe-request',
      'unsubscribe-request',
    ]);
    expect(doc.info.license.name).toBe('MIT');
  });

  it('parses with @asyncapi/parser without errors or warnings', async () => {
    const { document, diagnostics } = await new Parser().parse(JSON.stringify(asyncApiDocument('1.2.3')));
    // Severity 0 is an error, 1 a warning; 2 and 3 are information and hints.
    expect(diagnostics.filter((d) => d.severity <= 1).map((d) => `${d.path.join('/')}: ${d.message}`)).toEqual([]);
    expect(document?.version()).toBe('3.0.0');
    const channel = document!.channels().get('prices')!;
    expect(
      channel
        .messages()
        .all()
        .map((m) => m.id())
        .sort(),
    ).toEqual(['noticeError', 'noticeSuccess', 'ping', 'pong', 'pushFrame', 'subscribe', 'unsubscribe']);
    expect(
      document!
        .servers()
        .all()
        .map((s) => s.id())
        .sort(),
    ).toEqual(['socketio', 'websocket']);
    const push = channel.messages().get('pushFrame')!.payload()!;
    expect(push.required()).toEqual(SCHEMAS['push-frame'].required);
  });
});

describe('conform spec', () => {
  it('prints the OpenAPI document as JSON', async () => {
    const r = await conform(['spec', '--openapi']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(
      JSON.parse(JSON.stringify(openApiDocument(JSON.parse(r.stdout).info.version))),
    );
  });

  it('prints the AsyncAPI document as JSON', async () => {
    const r = await conform(['spec', '--asyncapi']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).asyncapi).toBe('3.0.0');
  });

  it('exits 2 with one line when neither or both documents are asked for', async () => {
    for (const args of [['spec'], ['spec', '--openapi', '--asyncapi']]) {
      const r = await conform(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe('conform: spec: give exactly one of --openapi and --asyncapi\n');
    }
  });
});
