/**
 * A TCP proxy on loopback that resets some of the connections it accepts: the flaky network
 * between the harness and a conforming target. Each connection drawn (a seeded share of them) is
 * reset with a TCP RST, either as it is accepted or as the client's first bytes arrive, before any
 * byte reaches the target, so the client meets ECONNRESET before any answer. The rest are piped
 * both ways untouched.
 */
import net from 'node:net';
import { once } from 'node:events';
import { mulberry32 } from '../../src/random.ts';

export interface ResettingProxy {
  /** The port the proxy listens on (127.0.0.1). */
  readonly port: number;
  /** Connections accepted so far. */
  accepted(): number;
  /** Connections reset so far. */
  reset(): number;
  close(): Promise<void>;
}

/** Starts a proxy to `target` (127.0.0.1:port) that resets `share` of its connections, drawn with `seed`. */
export async function startResettingProxy(targetPort: number, share: number, seed: number): Promise<ResettingProxy> {
  const random = mulberry32(seed);
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  let resets = 0;
  const server = net.createServer((client) => {
    accepted++;
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    if (random() < share) {
      resets++;
      // Half at once, half once the request is on its way: both before the target saw a byte.
      if (random() < 0.5) client.resetAndDestroy();
      else client.once('data', () => client.resetAndDestroy());
      return;
    }
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    accepted: () => accepted,
    reset: () => resets,
    async close() {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
