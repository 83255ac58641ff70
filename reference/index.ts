/**
 * The reference Real-Time Price Service: REST and the WebSocket stream on one Node `http` server.
 * `startReferenceServer()` starts it (port 0 picks a free port) and returns its URLs, the target
 * profile that describes it, and `close()`.
 */
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Profile } from '../src/profile.ts';
import { resolveConfig, type ReferenceConfig } from './config.ts';
import { findFault, type FaultName } from './faults.ts';
import { RestHandler } from './rest.ts';
import { Service } from './service.ts';
import { StreamServer, type StreamStats } from './stream.ts';
import { buildProfile } from './target-profile.ts';

export type { ReferenceConfig } from './config.ts';
export { ConfigError, resolveConfig, loadConfigFile, DEFAULT_CONFIG } from './config.ts';
export { FAULTS, findFault, type FaultName } from './faults.ts';

export interface ReferenceOptions {
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** A full or partial config; each given section replaces the default's. */
  config?: Partial<ReferenceConfig> | ReferenceConfig;
  /** Name of one fault from FAULTS to switch on. */
  fault?: string;
  /** Overrides config.pingTimeoutMs. */
  pingTimeoutMs?: number;
  /** Overrides config.tickMs. */
  tickMs?: number;
  /** Clock in ms since the epoch; drives market sessions and timestamps. Default Date.now. */
  clock?: () => number;
}

export interface ReferenceServer {
  restUrl: string;
  wsUrl: string;
  profile: Profile;
  /** Fan-out counters (live object). */
  stats: StreamStats;
  /** Ends every connection; resolves when the port is free. */
  close(): Promise<void>;
}

/** Starts the reference service. Throws ConfigError for a bad config and UnknownFaultError for a bad fault name. */
export async function startReferenceServer(options: ReferenceOptions = {}): Promise<ReferenceServer> {
  const overrides: Record<string, unknown> = { ...(options.config ?? {}) };
  if (options.pingTimeoutMs !== undefined) overrides.pingTimeoutMs = options.pingTimeoutMs;
  if (options.tickMs !== undefined) overrides.tickMs = options.tickMs;
  const config = resolveConfig(overrides);
  const fault = options.fault === undefined ? undefined : (findFault(options.fault).name as FaultName);
  const svc = new Service(config, options.clock ?? Date.now, fault);
  const rest = new RestHandler(svc);
  const stream = new StreamServer(svc);
  const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => rest.handle(req, res, config.wsPath));
  server.on('upgrade', (req, socket, head) => stream.upgrade(req, socket, head));
  server.on('clientError', (_err, socket: Socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  const host = options.host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    stream.closeAll();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const restUrl = `http://${urlHost}:${port}`;
  const wsUrl = `ws://${urlHost}:${port}${config.wsPath}`;
  let closing: Promise<void> | undefined;
  return {
    restUrl,
    wsUrl,
    profile: buildProfile(config, restUrl, wsUrl),
    stats: stream.stats,
    close() {
      closing ??= new Promise<void>((resolve) => {
        stream.closeAll();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
