/**
 * Discovery against real servers on loopback: the reference under drawn dialects (raw WebSocket
 * and Socket.IO, at paths it does not use by default), a stream on another port, a target that
 * redirects to another host, and a proxy that counts the stream connections discovery holds.
 */
import { afterEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { drawDialect, mergeDialect, type PartialDialect } from '../../reference/dialect.ts';
import { discover, deriveProfile, streamCandidates, type Discovery } from '../../src/discovery/index.ts';
import { minimalProfile, parseProfile } from '../../src/profile.ts';
import { redactorFor } from '../../src/redact.ts';
import { assertSetup } from '../../src/preflight.ts';
import { SetupError } from '../../src/errors.ts';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function reference(options: Parameters<typeof startReferenceServer>[0]): Promise<ReferenceServer> {
  const ref = await startReferenceServer(options);
  closers.push(() => ref.close());
  return ref;
}

function run(rest: string, key: string, extra: { ws?: string } = {}): Promise<Discovery> {
  const base = minimalProfile({ target: rest, key, ...extra });
  return discover({ rest: base.rest, key, redact: redactorFor(base), timeoutMs: 5000, ...extra }, base);
}

/** Seeds whose drawn dialect serves the stream on the REST port. */
const SHARED_SEEDS = [2, 3, 8, 11, 14];

describe('discovery of the stream', () => {
  it('plans raw WebSocket paths under the REST prefix, then at the root, then Socket.IO, on one origin', () => {
    const plan = streamCandidates('https://api.example.com:8443/prices/');
    expect(plan[0]).toEqual({ url: 'wss://api.example.com:8443/prices/v1/ws', transport: 'ws' });
    expect(plan.map((c) => c.url)).toContain('wss://api.example.com:8443/v1/ws');
    expect(plan.at(-1)).toEqual({ url: 'wss://api.example.com:8443/socket.io/', transport: 'socketio' });
    expect(plan.every((c) => new URL(c.url).host === 'api.example.com:8443')).toBe(true);
    const wsFirst = plan.findIndex((c) => c.transport === 'socketio');
    expect(plan.slice(0, wsFirst).every((c) => c.transport === 'ws')).toBe(true);
  });

  for (const seed of SHARED_SEEDS) {
    it(`finds the raw WebSocket stream of the reference under the dialect of seed ${seed}`, async () => {
      const dialect = drawDialect(seed);
      expect(dialect.stream.port).toBe('shared');
      const ref = await reference({ dialect });
      const d = await run(ref.restUrl, ref.profile.keys.primary.key);
      expect(d.stream?.url).toBe(ref.wsUrl);
      expect(d.stream?.transport).toBe('ws');
      expect(d.profile.ws).toBe(ref.wsUrl);
      expect(d.provoked).toEqual(expect.arrayContaining(['50004', '50005', '50008', '50104']));
      // Every candidate before the stream is reported with why it was not the stream.
      for (const c of d.candidates.slice(0, -1)) expect(c.why).not.toBe('');
      expect(parseProfile(structuredClone(d.profile))).toBeTruthy();
    });
  }

  it('finds a stream at a path the reference does not use by default', async () => {
    const ref = await reference({ dialect: { stream: { path: '/v1/stream/prices' } } });
    const d = await run(ref.restUrl, ref.profile.keys.primary.key);
    expect(new URL(d.stream!.url).pathname).toBe('/v1/stream/prices');
    expect(d.candidates.filter((c) => !c.stream).length).toBeGreaterThan(0);
  });

  it("finds the stream under the REST URL's own path prefix", async () => {
    const ref = await reference({});
    const rest = await prefixed(ref, '/api');
    const d = await run(`${rest}/api`, ref.profile.keys.primary.key);
    expect(d.stream?.url).toBe(`${rest.replace('http:', 'ws:')}/api/v1/ws`);
    expect(d.candidates).toHaveLength(1);
  });

  for (const seed of [2, 14]) {
    it(`finds the Socket.IO stream, its namespace and event, under the dialect of seed ${seed}`, async () => {
      const dialect = drawDialect(seed);
      // The raw WebSocket at a path no service would be guessed at: only Socket.IO can be found.
      const ref = await reference({ dialect, transport: 'socketio', config: { wsPath: '/internal/raw-7f3' } });
      const d = await run(ref.restUrl, ref.profile.keys.primary.key);
      expect(d.stream?.transport).toBe('socketio');
      expect(new URL(d.stream!.url).pathname).toBe('/socket.io/');
      expect(d.stream?.event).toBe(dialect.socketio.event);
      expect(d.stream?.namespace ?? '/').toBe(dialect.socketio.namespace);
      expect(d.candidates.filter((c) => c.transport === 'ws').every((c) => !c.stream)).toBe(true);
    });
  }

  it('says in one line that no stream is on the REST origin when it listens on another port', async () => {
    const ref = await reference({ dialect: { stream: { port: 'separate' } } });
    const d = await run(ref.restUrl, ref.profile.keys.primary.key);
    expect(d.stream).toBeUndefined();
    expect(d.profile.ws).toBeUndefined();
    expect(d.streamGap).toMatch(/^stream: none on http:\/\/127\.0\.0\.1:\d+ .*give --ws URL/);
    expect(d.streamGap).not.toContain('\n');
  });

  it('checks a stream URL given with --ws rather than looking for one', async () => {
    const ref = await reference({ dialect: { stream: { port: 'separate' } } });
    const d = await run(ref.restUrl, ref.profile.keys.primary.key, { ws: ref.wsUrl });
    expect(d.stream).toMatchObject({ url: ref.wsUrl, given: true });
    expect(d.candidates).toHaveLength(1);
  });
});

/** A server on 127.0.0.2 that counts every connection reaching it. */
async function elsewhere(): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = net.createServer((s) => {
    hits++;
    s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  closers.push(() => new Promise((r) => server.close(r)));
  return { url: `127.0.0.2:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

/** REST forwarded to `ref`; every upgrade (or, with `all`, every request) redirected to `to`. */
async function redirecting(ref: ReferenceServer, to: string, all: boolean): Promise<string> {
  const target = new URL(ref.restUrl);
  const server = http.createServer((req, res) => {
    if (all) {
      res.writeHead(302, { location: `http://${to}${req.url}` });
      res.end();
      return;
    }
    const fwd = http.request(
      { host: target.hostname, port: target.port, path: req.url, headers: req.headers, method: req.method },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    req.pipe(fwd);
  });
  server.on('upgrade', (req, socket) => {
    socket.end(`HTTP/1.1 302 Found\r\nLocation: ws://${to}${req.url}\r\nConnection: close\r\n\r\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The reference behind a path prefix: `/api/...` forwarded without it, REST and upgrades alike; else 404. */
async function prefixed(ref: ReferenceServer, prefix: string): Promise<string> {
  const target = new URL(ref.restUrl);
  const strip = (url = '/'): string | undefined =>
    url.startsWith(`${prefix}/`) ? url.slice(prefix.length) : undefined;
  const server = http.createServer((req, res) => {
    const path = strip(req.url);
    if (!path) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('no such path');
      return;
    }
    const fwd = http.request({ host: target.hostname, port: target.port, path, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    req.pipe(fwd);
  });
  server.on('upgrade', (req, socket, head) => {
    const path = strip(req.url);
    if (!path) return socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
    const up = net.connect(Number(target.port), target.hostname, () => {
      const headers = Object.entries(req.headers).map(([k, v]) => `${k}: ${String(v)}\r\n`);
      up.write(`GET ${path} HTTP/1.1\r\n${headers.join('')}\r\n`);
      up.write(head);
      socket.pipe(up).pipe(socket);
    });
    const done = (): void => {
      up.destroy();
      socket.destroy();
    };
    up.on('error', done).on('close', done);
    socket.on('error', done).on('close', done);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('discovery stays on the origin', () => {
  it('reports a stream handshake redirected to another host and never follows it', async () => {
    const ref = await reference({});
    const other = await elsewhere();
    const rest = await redirecting(ref, other.url, false);
    const d = await run(rest, ref.profile.keys.primary.key);
    expect(d.stream).toBeUndefined();
    expect(d.candidates.length).toBeGreaterThan(0);
    for (const c of d.candidates.filter((x) => x.transport === 'ws'))
      expect(c.why).toMatch(
        new RegExp(`redirect \\(HTTP 302\\) to ws://${other.url.replace('.', '\\.')}.*not followed`),
      );
    expect(other.hits()).toBe(0);
  });

  it('follows no redirect of any request to another host', async () => {
    const ref = await reference({});
    const other = await elsewhere();
    const rest = await redirecting(ref, other.url, true);
    const d = await run(rest, ref.profile.keys.primary.key);
    expect(d.stream).toBeUndefined();
    expect(d.candidates.filter((c) => c.transport === 'ws').every((c) => /redirect \(HTTP 302\)/.test(c.why))).toBe(
      true,
    );
    expect(other.hits()).toBe(0);
  });
});

/** A TCP proxy to `port` that counts the WebSocket upgrades open through it at once. */
async function countingProxy(port: number): Promise<{ url: string; most: () => number; total: () => number }> {
  let open = 0;
  let most = 0;
  let total = 0;
  const server = net.createServer((client) => {
    const up = net.connect(port, '127.0.0.1');
    let upgrade = false;
    client.once('data', (chunk: Buffer) => {
      if (/^upgrade:\s*websocket/im.test(chunk.toString('latin1'))) {
        upgrade = true;
        total++;
        most = Math.max(most, ++open);
      }
    });
    const done = (): void => {
      if (upgrade) open--;
      upgrade = false;
      client.destroy();
      up.destroy();
    };
    client.on('close', done).on('error', done);
    up.on('close', done).on('error', done);
    client.pipe(up);
    up.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, most: () => most, total: () => total };
}

describe('discovery and the connection allowance', () => {
  for (const allowance of [1, 2, 3]) {
    it(`never holds more stream connections than the allowance it found (${allowance}) and one more`, async () => {
      const dialect: PartialDialect = { keys: { primary: allowance, stated: false, slotReleaseMs: 300 } };
      const ref = await reference({ dialect: mergeDialect(dialect) });
      const proxy = await countingProxy(Number(new URL(ref.restUrl).port));
      const d = await run(proxy.url, ref.profile.keys.primary.key);
      expect(d.allowance).toMatchObject({ source: 'found', connections: allowance });
      expect(d.provoked).toContain('50009');
      expect(proxy.total()).toBeGreaterThan(allowance);
      expect(proxy.most()).toBeLessThanOrEqual(allowance + 1);
    });
  }
});

describe('the derived profile', () => {
  it('keeps what a profile already names and adds the probes one key provokes', () => {
    const base = minimalProfile({ target: 'http://h', key: 'k-123456789' });
    base.probes = [{ status: '50004', path: '/v1/price', query: { code: 'x' } }];
    const p = deriveProfile(base, { sample: ['Crypto:ALL:BTC/USD'], stale: 'Crypto:ALL:SHIB/USD' });
    expect(p.probes!.filter((x) => x.status === '50004')).toEqual([base.probes[0]]);
    expect(p.probes!.map((x) => x.status)).toEqual(['50004', '50005', '50008', '50104', '50102']);
    expect(p.pairs).toMatchObject({ stale: 'Crypto:ALL:SHIB/USD', sample: ['Crypto:ALL:BTC/USD'] });
    expect(p.keys.unknown?.key).toBeTruthy();
    expect(base.keys.unknown).toBeUndefined();
  });
});

describe('a wrong set-up', () => {
  it('is diagnosed when the primary key is refused', async () => {
    const ref = await reference({});
    const base = minimalProfile({ target: ref.restUrl, key: 'not-a-key-of-this-service' });
    const err = await assertSetup(base, redactorFor(base), 5000, 'CONFORM_API_KEY').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SetupError);
    expect((err as Error).message).toMatch(
      /refuses the primary key \(HTTP 401, status_number "50005".*check CONFORM_API_KEY/,
    );
    expect((err as Error).message).not.toContain('not-a-key-of-this-service');
  });

  it('is diagnosed when --target ends in /v1', async () => {
    const ref = await reference({});
    const base = minimalProfile({ target: `${ref.restUrl}/v1`, key: ref.profile.keys.primary.key });
    await expect(assertSetup(base, redactorFor(base), 5000)).rejects.toThrow(/not look like .*drop the trailing \/v1/);
  });

  it('is diagnosed when /v1/pairs answers a page that is not JSON', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html>Not Found</html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((r) => server.close(r)));
    const base = minimalProfile({
      target: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      key: 'k-1234567',
    });
    await expect(assertSetup(base, redactorFor(base), 5000)).rejects.toThrow(
      /answered HTTP 404 without JSON.*path prefix such as \/api missing/,
    );
  });

  it('is not a set-up problem when /v1/pairs answers an error page other than 404: the checks judge it', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>Bad Gateway</html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((r) => server.close(r)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const base = minimalProfile({ target: url, key: 'k-1234567' });
    await expect(assertSetup(base, redactorFor(base), 5000)).resolves.toEqual({ answered: true });
  });

  it('is not a set-up problem when only the canonical header case is refused: the checks judge it', async () => {
    const ref = await reference({ fault: 'auth-canonical-header-refused' });
    const base = minimalProfile({ target: ref.restUrl, key: ref.profile.keys.primary.key });
    await expect(assertSetup(base, redactorFor(base), 5000)).resolves.toEqual({ answered: true });
  });
});
