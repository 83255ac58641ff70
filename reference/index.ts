/**
 * The reference Real-Time Price Service: REST and the WebSocket stream on one Node `http` server
 * (and, when asked, the same stream over Socket.IO).
 * `startReferenceServer()` starts it (port 0 picks a free port) and returns its URLs, the target
 * profile that describes it, and `close()`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { STATUS } from '../src/spec.ts';
import type { AddressInfo, Socket } from 'node:net';
import type { Profile } from '../src/profile.ts';
import { ConfigError } from '../src/errors.ts';
import { resolveConfig, type ReferenceConfig } from './config.ts';
import { findFault, type FaultName } from './faults/index.ts';
import { faultSeams } from './fault-effects.ts';
import { RestHandler } from './rest.ts';
import { Service } from './service.ts';
import { StreamServer, type StreamStats } from './stream.ts';
import { SocketIoStream } from './socketio.ts';
import { buildProfile } from './target-profile.ts';
import { applyDialect, dialectDefaults } from './dialect-config.ts';
import { mergeDialect, parseDialect, type Dialect, type PartialDialect } from './dialect.ts';

export type { ReferenceConfig } from './config.ts';
export { ConfigError, DialectError, UnknownFaultError } from '../src/errors.ts';
export { resolveConfig, loadConfigFile, DEFAULT_CONFIG } from './config.ts';
export { FAULTS, findFault, type FaultName } from './faults/index.ts';
export {
  DEFAULT_DIALECT,
  DIALECT_SPACE,
  coveringSeeds,
  drawDialect,
  mergeDialect,
  parseDialect,
  replayCommand,
  type Dialect,
  type PartialDialect,
} from './dialect.ts';

export interface ReferenceOptions {
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** A full or partial config; each given section replaces the default's. */
  config?: Partial<ReferenceConfig> | ReferenceConfig;
  /**
   * The service's answers to what the spec leaves open; a partial one is merged onto
   * DEFAULT_DIALECT. Default: DEFAULT_DIALECT.
   */
  dialect?: PartialDialect | Dialect;
  /** Name of one fault from FAULTS to switch on. */
  fault?: string;
  /** Overrides config.pingTimeoutMs. */
  pingTimeoutMs?: number;
  /** Overrides config.tickMs. */
  tickMs?: number;
  /** Clock in ms since the epoch; drives market sessions and timestamps. Default Date.now. */
  clock?: () => number;
  /**
   * The stream transport the returned profile describes; default `ws`. Socket.IO is served beside
   * the raw WebSocket.
   */
  transport?: 'ws' | 'socketio';
  /**
   * The Socket.IO event that carries the messages; serves Socket.IO when given. Default `price`
   * with transport socketio.
   */
  event?: string;
  /** Serve HTTPS and WSS with this certificate and key (PEM) instead of plain HTTP: a service behind TLS. */
  tls?: { cert: string | Buffer; key: string | Buffer };
}

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

/** The Socket.IO side of the stream when the options ask for it (an event, or the Socket.IO transport). */
function socketIoStream(
  stream: StreamServer,
  config: ReferenceConfig,
  dialect: Dialect,
  options: ReferenceOptions,
): SocketIoStream | undefined {
  const event = options.event ?? (options.transport === 'socketio' ? dialect.socketio.event : undefined);
  if (event !== undefined && (typeof event !== 'string' || event.length === 0))
    throw new ConfigError('event', 'must be a non-empty event name');
  return event === undefined
    ? undefined
    : new SocketIoStream(stream, {
        event,
        maxPayload: config.maxPayload,
        pingTimeoutMs: config.pingTimeoutMs,
        namespace: dialect.socketio.namespace,
        jsonText: dialect.socketio.payload === 'json-text',
        refusals: dialect.socketio.refusals,
      });
}

/**
 * The HTTP servers, not yet listening: `server` answers REST, and the stream's upgrades unless the
 * dialect gives the stream a port of its own (`streamServer`, where `server` refuses upgrades).
 * `servers` lists each once; every one answers a malformed request with 400.
 */
function httpServers(
  rest: RestHandler,
  stream: StreamServer,
  sio: SocketIoStream | undefined,
  config: ReferenceConfig,
  dialect: Dialect,
  tls?: ReferenceOptions['tls'],
): { server: Server; streamServer: Server; servers: Server[] } {
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    if (sio?.handles(req)) sio.request(req, res);
    else rest.handle(req, res, config.wsPath);
  };
  // An https.Server is an http.Server over TLS sockets: every handler below takes either.
  const make = (): Server =>
    tls
      ? (createHttpsServer({ keepAliveTimeout: 5000, ...tls }, onRequest) as unknown as Server)
      : createServer({ keepAliveTimeout: 5000 }, onRequest);
  const server = make();
  // The stream's port is not shown: the REST port, or (per the dialect) one of its own, where REST refuses upgrades.
  const streamServer = dialect.stream.port === 'separate' ? make() : server;
  streamServer.on('upgrade', (req, socket, head) => {
    if (sio?.handles(req)) sio.upgrade(req, socket, head);
    else stream.upgrade(req, socket, head);
  });
  if (streamServer !== server)
    server.on('upgrade', (_req, socket) =>
      stream.refuse(socket, { status: STATUS.NOT_FOUND, message: 'no stream on this port' }),
    );
  const servers = streamServer === server ? [server] : [server, streamServer];
  for (const s of servers) {
    s.on('clientError', (_err, socket: Socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      else socket.destroy();
    });
  }
  return { server, streamServer, servers };
}

/**
 * Starts the reference service. Throws ConfigError for a bad config, DialectError for a bad dialect
 * and UnknownFaultError for a bad fault name.
 */
export async function startReferenceServer(options: ReferenceOptions = {}): Promise<ReferenceServer> {
  const dialect = options.dialect === undefined ? mergeDialect() : parseDialect(options.dialect, 'dialect');
  const overrides: Record<string, unknown> = { ...dialectDefaults(dialect), ...(options.config ?? {}) };
  if (options.pingTimeoutMs !== undefined) overrides.pingTimeoutMs = options.pingTimeoutMs;
  if (options.tickMs !== undefined) overrides.tickMs = options.tickMs;
  const config = applyDialect(resolveConfig(overrides), dialect);
  const fault = options.fault === undefined ? undefined : (findFault(options.fault).name as FaultName);
  const svc = new Service(config, options.clock ?? Date.now, faultSeams(fault), dialect);
  const stream = new StreamServer(svc);
  const sio = socketIoStream(stream, config, dialect, options);
  const { server, streamServer, servers } = httpServers(
    new RestHandler(svc),
    stream,
    sio,
    config,
    dialect,
    options.tls,
  );
  const host = options.host ?? '127.0.0.1';
  const listen = (s: Server, port: number): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, host, () => {
        s.off('error', reject);
        resolve();
      });
    });
  try {
    await listen(server, options.port ?? 0);
    if (streamServer !== server) await listen(streamServer, 0);
  } catch (err) {
    stream.closeAll();
    sio?.close();
    if (server.listening) server.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const streamPort = (streamServer.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const [http, ws] = options.tls ? ['https', 'wss'] : ['http', 'ws'];
  const restUrl = `${http}://${urlHost}:${port}`;
  const wsUrl = `${ws}://${urlHost}:${streamPort}${config.wsPath}`;
  const socketIoUrl = sio ? `${ws}://${urlHost}:${streamPort}${sio.path}` : undefined;
  const profile = buildProfile(config, restUrl, wsUrl, dialect);
  if (options.transport === 'socketio' && sio && socketIoUrl) {
    Object.assign(profile, { ws: socketIoUrl, transport: 'socketio', event: sio.options.event });
    if (dialect.socketio.namespace !== '/') profile.namespace = dialect.socketio.namespace;
  }
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
        let open = servers.length;
        for (const s of servers) {
          s.close(() => {
            if (--open === 0) resolve();
          });
          s.closeAllConnections();
        }
      });
      return closing;
    },
  };
}
