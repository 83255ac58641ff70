/**
 * The reference Real-Time Price Service: REST and the WebSocket stream on one Node `http` server
 * (and, when asked, the same stream over Socket.IO).
 * `startReferenceServer()` starts it (port 0 picks a free port) and returns its URLs, the target
 * profile that describes it, and `close()`.
 */
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Profile } from '../src/profile.ts';
import { ConfigError, resolveConfig, type ReferenceConfig } from './config.ts';
import { findFault, type FaultName } from './faults.ts';
import { RestHandler } from './rest.ts';
import { Service } from './service.ts';
import { StreamServer, type StreamStats } from './stream.ts';
import { SocketIoStream } from './socketio.ts';
import { buildProfile } from './target-profile.ts';
import { applyDialect } from './dialect-config.ts';
import { mergeDialect, type Dialect, type PartialDialect } from './dialect.ts';

export type { ReferenceConfig } from './config.ts';
export { ConfigError, resolveConfig, loadConfigFile, DEFAULT_CONFIG } from './config.ts';
export { FAULTS, findFault, type FaultName } from './faults.ts';
export { DEFAULT_DIALECT, DIALECT_SPACE, DialectError, coveringSeeds, drawDialect, mergeDialect, parseDialect, replayCommand, type Dialect, type PartialDialect } from './dialect.ts';

export interface ReferenceOptions {
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** A full or partial config; each given section replaces the default's. */
  config?: Partial<ReferenceConfig> | ReferenceConfig;
  /** The service's answers to what the spec leaves open; a partial one is merged onto DEFAULT_DIALECT. Default: DEFAULT_DIALECT. */
  dialect?: PartialDialect | Dialect;
  /** Name of one fault from FAULTS to switch on. */
  fault?: string;
  /** Overrides config.pingTimeoutMs. */
  pingTimeoutMs?: number;
  /** Overrides config.tickMs. */
  tickMs?: number;
  /** Clock in ms since the epoch; drives market sessions and timestamps. Default Date.now. */
  clock?: () => number;
  /** The stream transport the returned profile describes; default `ws`. Socket.IO is served beside the raw WebSocket. */
  transport?: 'ws' | 'socketio';
  /** The Socket.IO event that carries the messages; serves Socket.IO when given. Default `price` with transport socketio. */
  event?: string;
}

/** The Socket.IO event of the reference service when none is given. */
export const DEFAULT_SOCKETIO_EVENT = 'price';

export interface ReferenceServer {
  restUrl: string;
  /** The raw WebSocket stream. */
  wsUrl: string;
  /** The Socket.IO stream, when served. */
  socketIoUrl?: string;
  /** What an operator of this service would write in a profile (per the dialect, it may leave allowances out). */
  profile: Profile;
  /** The dialect the service runs. */
  dialect: Dialect;
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
  const dialect = mergeDialect(options.dialect);
  const config = applyDialect(resolveConfig(overrides), dialect);
  const fault = options.fault === undefined ? undefined : (findFault(options.fault).name as FaultName);
  const svc = new Service(config, options.clock ?? Date.now, fault, dialect);
  const rest = new RestHandler(svc);
  const stream = new StreamServer(svc);
  const event = options.event ?? (options.transport === 'socketio' ? DEFAULT_SOCKETIO_EVENT : undefined);
  if (event !== undefined && (typeof event !== 'string' || event.length === 0)) throw new ConfigError('event', 'must be a non-empty event name');
  const sio = event === undefined ? undefined : new SocketIoStream(stream, { event, maxPayload: config.maxPayload, pingTimeoutMs: config.pingTimeoutMs });
  const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
    if (sio?.handles(req)) sio.request(req, res);
    else rest.handle(req, res, config.wsPath);
  });
  server.on('upgrade', (req, socket, head) => {
    if (sio?.handles(req)) sio.upgrade(req, socket, head);
    else stream.upgrade(req, socket, head);
  });
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
    sio?.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const restUrl = `http://${urlHost}:${port}`;
  const wsUrl = `ws://${urlHost}:${port}${config.wsPath}`;
  const socketIoUrl = sio ? `ws://${urlHost}:${port}${sio.path}` : undefined;
  const profile = buildProfile(config, restUrl, wsUrl, dialect);
  if (options.transport === 'socketio' && sio && socketIoUrl) Object.assign(profile, { ws: socketIoUrl, transport: 'socketio', event: sio.options.event });
  let closing: Promise<void> | undefined;
  return {
    restUrl,
    wsUrl,
    ...(socketIoUrl ? { socketIoUrl } : {}),
    profile,
    dialect,
    stats: stream.stats,
    close() {
      closing ??= new Promise<void>((resolve) => {
        stream.closeAll();
        sio?.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
