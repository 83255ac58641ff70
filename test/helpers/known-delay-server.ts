/**
 * Test doubles for the REST load generator: HTTP servers on loopback whose answer time is known,
 * so the generator's figures can be checked against the truth. Each records, on its own side,
 * when every request arrived and how long it actually held it.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface KnownDelayServer {
  url: string;
  /** performance.now() at each request's arrival, in order. */
  arrivals: number[];
  /** Actual time from arrival to the response's end, ms, by arrival index. */
  held: number[];
  close(): Promise<void>;
}

export interface KnownDelayOptions {
  /** Every response is written this long after its request arrived. */
  delayMs: number;
  /**
   * Stalls once: from the arrival of request number `atRequest` (1-based) the server answers
   * nothing for `ms`; every response due in that time is written when the stall ends, like a
   * pause of the whole process.
   */
  stall?: { atRequest: number; ms: number };
}

/** "Answers every request after exactly `delayMs`" (and, with `stall`, freezes once). */
export async function startKnownDelayServer(options: KnownDelayOptions): Promise<KnownDelayServer> {
  const arrivals: number[] = [];
  const held: number[] = [];
  let stallUntil = 0;
  const server: Server = createServer((req, res) => {
    const at = performance.now();
    const index = arrivals.push(at) - 1;
    if (options.stall && arrivals.length === options.stall.atRequest) stallUntil = at + options.stall.ms;
    const body = JSON.stringify({
      status_number: '200',
      ts: Date.now(),
      data: { code: 'Crypto:ALL:BTC/USD', ask: '1.1', bid: '1.0', price: '1.05' },
    });
    const answerAt = Math.max(at + options.delayMs, stallUntil);
    setTimeout(() => {
      // Held until the answer is written: the end callback comes after the flush, and on a loaded
      // machine after the client may have read the answer, which would read as a hold it never saw.
      held[index] = performance.now() - at;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    }, answerAt - at);
    req.resume();
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    held,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
