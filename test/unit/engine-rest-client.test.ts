import { afterEach, describe, expect, it } from 'vitest';
import type { Evidence } from '../../src/check.ts';
import { createRedactor } from '../../src/redact.ts';
import { createRestClient } from '../../src/transports/rest-client.ts';
import { SECRET, startServer, type TestServer } from '../helpers/engine.ts';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const serve = async (h: Parameters<typeof startServer>[0]): Promise<TestServer> => {
  const s = await startServer(h);
  servers.push(s);
  return s;
};

function client(url: string, extra: { timeoutMs?: number; maxBodyBytes?: number } = {}) {
  const evidence: Evidence[] = [];
  const rest = createRestClient({
    baseUrl: url,
    primaryKey: SECRET,
    record: (e) => evidence.push(e),
    redact: createRedactor({ primary: SECRET }),
    ...extra,
  });
  return { rest, evidence };
}

describe('REST client', () => {
  it('sends the key in X-API-Key, hands the check a redacted body and records a redacted curl line', async () => {
    const s = await serve((req, res) => res.end(JSON.stringify({ echo: req.headers['x-api-key'] })));
    const { rest, evidence } = client(s.url);
    const ex = await rest.get({ path: '/v1/price', query: { code: 'Crypto:ALL:BTC/USD', skip: undefined } });
    expect(ex.json).toEqual({ echo: '<key:primary>' });
    expect(s.requests[0]!.headers['x-api-key']).toBe(SECRET);
    expect(s.requests[0]!.url).toBe('/v1/price?code=Crypto%3AALL%3ABTC%2FUSD');
    const e = evidence[0] as Extract<Evidence, { kind: 'http' }>;
    expect(e.curl).toBe(
      `curl -sS -i '${s.url}/v1/price?code=Crypto%3AALL%3ABTC%2FUSD' -H 'accept: ` +
        `application/json' -H 'X-API-Key: <key:primary>'`,
    );
    expect(JSON.stringify(evidence)).not.toContain(SECRET);
    expect(e.response!.body).toBe('{"echo":"<key:primary>"}');
  });

  it('refuses a request whose check was already stopped, sending nothing and recording why', async () => {
    const s = await serve((_q, res) => res.end('{}'));
    const stop = new AbortController();
    stop.abort();
    const evidence: Evidence[] = [];
    const rest = createRestClient({
      baseUrl: s.url,
      primaryKey: SECRET,
      record: (e) => evidence.push(e),
      redact: createRedactor({ primary: SECRET }),
      signal: stop.signal,
    });
    await expect(rest.get({ path: '/v1/pairs' })).rejects.toMatchObject({ code: 'CONFORM_ABORTED' });
    expect(s.requests).toHaveLength(0);
    expect((evidence[0] as Extract<Evidence, { kind: 'http' }>).error).toMatch(/stopped before the request/);
  });

  it('sends no key header for key null and the given header spelling otherwise', async () => {
    const s = await serve((req, res) => res.end(JSON.stringify(req.rawHeaders)));
    const { rest } = client(s.url);
    expect(JSON.stringify((await rest.get({ path: '/', key: null })).json)).not.toMatch(/api-key/i);
    expect((await rest.get({ path: '/', keyHeader: 'x-api-key' })).json).toContain('x-api-key');
  });

  it('never follows a redirect, so the key does not travel to the other origin', async () => {
    const elsewhere = await serve((_q, res) => res.end('{}'));
    const s = await serve((_q, res) => {
      res.writeHead(302, { location: `${elsewhere.url}/steal` });
      res.end();
    });
    const { rest, evidence } = client(s.url);
    const ex = await rest.get({ path: '/v1/pairs' });
    expect(ex.status).toBe(302);
    expect(elsewhere.requests).toHaveLength(0);
    expect((evidence[0] as Extract<Evidence, { kind: 'http' }>).error).toMatch(/redirect to .*\/steal not followed/);
  });

  it('hands the check the whole body but keeps a 16 KiB excerpt in the evidence', async () => {
    const s = await serve((_q, res) => res.end(`"${'x'.repeat(100_000)}"`));
    const { rest, evidence } = client(s.url);
    const ex = await rest.get({ path: '/' });
    expect(ex.text).toHaveLength(100_002);
    expect((evidence[0] as Extract<Evidence, { kind: 'http' }>).response!.body).toMatch(
      /^"x{16383}… \(100002 characters in all\)$/,
    );
  });

  it('gives up on a body beyond the bound with CONFORM_BODY_TOO_LARGE', async () => {
    const s = await serve((_q, res) => res.end('x'.repeat(64 * 1024)));
    const { rest } = client(s.url, { maxBodyBytes: 1024 });
    await expect(rest.get({ path: '/' })).rejects.toMatchObject({ code: 'CONFORM_BODY_TOO_LARGE' });
  });

  it('gives up on a server that never answers with CONFORM_TIMEOUT', async () => {
    const s = await serve(() => {
      /* never answers */
    });
    const { rest, evidence } = client(s.url, { timeoutMs: 100 });
    await expect(rest.get({ path: '/' })).rejects.toMatchObject({ code: 'CONFORM_TIMEOUT' });
    expect((evidence[0] as Extract<Evidence, { kind: 'http' }>).error).toMatch(/CONFORM_TIMEOUT/);
  });

  it('reports a refused connection as CONFORM_NETWORK with its errno', async () => {
    const s = await serve((_q, r) => r.end());
    await s.close();
    servers.pop();
    await expect(client(s.url).rest.get({ path: '/' })).rejects.toMatchObject({
      code: 'CONFORM_NETWORK',
      errno: 'ECONNREFUSED',
    });
  });
});

describe('redaction', () => {
  it('replaces either half of a long key, so a cut-short quote leaves no usable piece', () => {
    const redact = createRedactor({ primary: 'hk-0123456789abcdef' });
    expect(redact('sent hk-0123456… and …6789abcdef')).toBe('sent <key:primary>6… and …<key:primary>');
    expect(redact('short pieces like hk-01 stay')).toBe('short pieces like hk-01 stay');
  });

  it('replaces every key, longest first, in plain, URL-encoded and JSON-escaped forms', () => {
    const redact = createRedactor({ primary: 'abc/def"1', inner: 'abc' });
    expect(redact('k=abc/def"1 and abc')).toBe('k=<key:primary> and <key:inner>');
    expect(redact(`q=${encodeURIComponent('abc/def"1')}`)).toBe('q=<key:primary>');
    expect(redact(JSON.stringify({ k: 'abc/def"1' }))).toBe('{"k":"<key:primary>"}');
  });
});
