/**
 * The REST load generator's client (load/rest/http-client.ts) against real servers on loopback:
 * keep-alive and its bound on connections, a server that closes after every answer, one that sends
 * chunked bodies, pipelining, a server that never answers (the time limit), and one that is not
 * there; and a REST run spread over worker threads adding up to the same schedule.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpLoadClient } from '../../load/rest/http-client.ts';
import { runRest } from '../../load/rest/run.ts';
import type { LoadTarget } from '../../load/target.ts';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** An HTTP server on loopback that answers with `answer`; counts the connections it accepted. */
async function serve(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ origin: string; connections: () => number; server: Server }> {
  let connections = 0;
  const server = createServer(answer);
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    server,
  };
}

const ENVELOPE = JSON.stringify({ status_number: '200', ts: 1, data: null });

interface Outcome {
  responses: [number, string | undefined][];
  failures: string[];
  sent: number;
}

/** Sends `count` requests at once through a client; resolves when each has ended one way or the other. */
function sendAll(
  origin: string,
  count: number,
  options: { connections?: number; pipelining?: number; timeoutMs?: number } = {},
): Promise<Outcome> {
  const out: Outcome = { responses: [], failures: [], sent: 0 };
  return new Promise((resolve) => {
    const settle = (): void => {
      if (out.responses.length + out.failures.length === count) {
        client.close();
        resolve(out);
      }
    };
    const client = new HttpLoadClient(
      {
        origin,
        paths: ['/v1/price?code=A', '/v1/price?code=B'],
        headers: { 'x-api-key': 'k' },
        connections: options.connections ?? 2,
        pipelining: options.pipelining ?? 1,
        timeoutMs: options.timeoutMs ?? 5000,
      },
      {
        sent: () => out.sent++,
        response: (_tag, status, statusNumber) => {
          out.responses.push([status, statusNumber]);
          settle();
        },
        failed: (_tag, code) => {
          out.failures.push(code);
          settle();
        },
      },
    );
    for (let i = 0; i < count; i++) client.send(i % 2, i);
  });
}

describe('the load generator client', () => {
  it('sends each path with its headers over at most the connections allowed, and reads every answer', async () => {
    const seen: string[] = [];
    const s = await serve((req, res) => {
      seen.push(`${req.url} ${req.headers['x-api-key']} ${req.headers.host}`);
      res.setHeader('content-type', 'application/json');
      res.end(ENVELOPE);
    });
    const out = await sendAll(s.origin, 50, { connections: 3 });
    expect(out.failures).toEqual([]);
    expect(out.responses).toHaveLength(50);
    expect(out.responses.every(([status, sn]) => status === 200 && sn === '200')).toBe(true);
    expect(out.sent).toBe(50);
    expect(s.connections()).toBeLessThanOrEqual(3);
    const host = new URL(s.origin).host;
    expect(seen.filter((l) => l === `/v1/price?code=A k ${host}`)).toHaveLength(25);
    expect(seen.filter((l) => l === `/v1/price?code=B k ${host}`)).toHaveLength(25);
  });

  it('opens a new connection when the server closes one after its answer, losing nothing', async () => {
    const s = await serve((_req, res) => {
      res.setHeader('connection', 'close');
      res.end(ENVELOPE);
    });
    const out = await sendAll(s.origin, 20, { connections: 2 });
    expect(out.failures).toEqual([]);
    expect(out.responses).toHaveLength(20);
    expect(s.connections()).toBe(20);
  });

  it('reads chunked answers (no Content-Length) and their status_number', async () => {
    const s = await serve((_req, res) => {
      res.write(ENVELOPE.slice(0, 7));
      res.end(ENVELOPE.slice(7));
    });
    const out = await sendAll(s.origin, 10);
    expect(out.responses).toEqual(Array.from({ length: 10 }, () => [200, '200']));
  });

  it('pipelines up to the depth asked on one connection, answers matched in order', async () => {
    let inFlight = 0;
    let most = 0;
    const s = await serve((req, res) => {
      most = Math.max(most, ++inFlight);
      // Answer after a moment, so the pipelined requests pile up on the server.
      setTimeout(() => {
        inFlight--;
        res.end(JSON.stringify({ status_number: req.url!.endsWith('A') ? '200' : '50104' }));
      }, 5);
    });
    const out = await sendAll(s.origin, 40, { connections: 1, pipelining: 4 });
    expect(out.responses).toHaveLength(40);
    expect(s.connections()).toBe(1);
    // Node's server answers a pipelined connection one request at a time, in order.
    expect(out.responses.map(([, sn]) => sn)).toEqual(Array.from({ length: 40 }, (_, i) => (i % 2 ? '50104' : '200')));
  });

  it('fails a request with no answer within the time limit as timeout, and drops its connection', async () => {
    const sockets: Socket[] = [];
    const mute = createTcpServer((socket) => {
      sockets.push(socket);
      socket.resume();
    });
    mute.listen(0, '127.0.0.1');
    await once(mute, 'listening');
    closers.push(() => {
      for (const s of sockets) s.destroy();
      mute.close();
    });
    const started = performance.now();
    const out = await sendAll(`http://127.0.0.1:${(mute.address() as AddressInfo).port}`, 2, { timeoutMs: 300 });
    expect(out.failures).toEqual(['timeout', 'timeout']);
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    await new Promise((r) => setTimeout(r, 50));
    expect(sockets.every((s) => s.destroyed || s.readableEnded)).toBe(true);
  });

  it("fails every request against a port nobody listens on with the socket's error code", async () => {
    const s = await serve(() => undefined);
    const { origin } = s;
    s.server.close();
    await once(s.server, 'close');
    const out = await sendAll(origin, 6);
    expect(out.failures).toEqual(Array.from({ length: 6 }, () => 'ECONNREFUSED'));
  });
});

describe('a REST run on worker threads', () => {
  let server: ReferenceServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  const target = async (): Promise<LoadTarget> => {
    server = await startReferenceServer();
    return {
      rest: server.restUrl,
      ws: server.wsUrl,
      profile: server.profile,
      keys: [{ key: server.profile.keys.primary.key }],
      embedded: false,
      close: async () => {},
    };
  };

  it('sends the one schedule between its workers: every arrival once, counted and read', async () => {
    const t = await target();
    const report = await runRest(t, {
      pair: ['Crypto:ALL:BTC/USD', 'Crypto:ALL:ETH/USD'],
      rate: 200,
      workers: 2,
      connections: 4,
      durationMs: 2000,
      warmupMs: 500,
    });
    expect(report.options.workers).toBe(2);
    expect(report.scheduled).toBe(400);
    expect(report.requests).toBe(400);
    expect(report.statusNumbers).toEqual({ 200: 400 });
    expect(report.latencyMs.count).toBe(400);
    // Every second of the measured phase, the last partial one too: the timeline adds up to every answer.
    expect(report.timeline.reduce((n, p) => n + p.requests, 0)).toBe(400);
    expect(report.generator.cpuMicrosPerRequest).toBeGreaterThan(0);
  });

  it('shares the connections of the closed model out between its workers', async () => {
    const t = await target();
    const report = await runRest(t, { rate: 'max', workers: 2, connections: 4, durationMs: 1000, warmupMs: 0 });
    expect(report.model).toBe('closed');
    expect(report.requests).toBeGreaterThan(100);
    // The primary key's REST rate limit throttles a closed loop (50006): every answer is read all the same.
    expect(report.statusNumbers['200']).toBeGreaterThan(0);
    expect(Object.values(report.statusNumbers).reduce((a, b) => a + b, 0)).toBe(report.requests);
    expect(report.latencyMs.count).toBe(report.requests);
  });
});
