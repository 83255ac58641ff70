/**
 * `conform serve`: runs the reference service until SIGINT/SIGTERM, prints its URLs and writes
 * the target profile that describes it. Never prints a key (they are in the profile file).
 */
import { writeFile } from 'node:fs/promises';
import type { Argv, CommandModule } from 'yargs';
import { ConfigError, loadConfigFile, type ReferenceConfig } from './config.ts';
import { findFault, formatFaults } from './faults.ts';
import { startReferenceServer, type ReferenceServer } from './index.ts';

export interface ServeOptions {
  /** Default 8080; 0 picks a free port. */
  port: number;
  /** Default 127.0.0.1. */
  host: string;
  config?: string;
  fault?: string;
  profileOut?: string;
  listFaults?: boolean;
  /** The stream transport the written profile describes; Socket.IO is served beside the raw WebSocket. Default ws. */
  transport?: 'ws' | 'socketio';
  /** The Socket.IO event; serves Socket.IO when given. Default price with --transport socketio. */
  event?: string;
}

export interface ServeIO {
  out(text: string): void;
}

/** A bad `conform serve` option; the message names it. */
export class ServeUsageError extends Error {
  readonly code = 'CONFORM_SERVE_USAGE';
  override name = 'ServeUsageError';
}

/** Validates options, starts the service and prints where it is. Throws a one-line error for bad input. */
export async function startServe(options: ServeOptions, io: ServeIO): Promise<ReferenceServer | undefined> {
  if (options.listFaults) {
    io.out(`${formatFaults()}\n`);
    return undefined;
  }
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) throw new ServeUsageError(`--port: must be an integer from 0 to 65535 (got ${String(options.port)})`);
  if (typeof options.host !== 'string' || options.host.length === 0) throw new ServeUsageError('--host: must be a host name or address');
  if (options.fault !== undefined) findFault(options.fault);
  if (options.transport !== undefined && options.transport !== 'ws' && options.transport !== 'socketio') throw new ServeUsageError(`--transport: "${String(options.transport)}" is not ws or socketio`);
  if (options.event !== undefined && (typeof options.event !== 'string' || options.event.length === 0)) throw new ServeUsageError('--event: must name the Socket.IO event');
  let config: ReferenceConfig | undefined;
  if (options.config !== undefined) {
    try {
      config = await loadConfigFile(options.config);
    } catch (err) {
      if (err instanceof ConfigError) throw new ServeUsageError(`--config: ${err.message}`);
      throw err;
    }
  }
  let server: ReferenceServer;
  try {
    server = await startReferenceServer({ port: options.port, host: options.host, config, fault: options.fault, transport: options.transport, event: options.event });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
      throw new ServeUsageError(`--port/--host: cannot listen on ${options.host}:${options.port} (${code})`);
    throw err;
  }
  if (options.profileOut !== undefined) {
    try {
      await writeFile(options.profileOut, `${JSON.stringify(server.profile, null, 2)}\n`, { mode: 0o600 });
    } catch (err) {
      await server.close();
      throw new ServeUsageError(`--profile-out: cannot write ${options.profileOut} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  }
  io.out(
    `conform reference service${options.fault ? ` with fault ${options.fault}` : ''}\n` +
    `REST       ${server.restUrl}\n` +
    `WebSocket  ${server.wsUrl}\n` +
    (server.socketIoUrl ? `Socket.IO  ${server.socketIoUrl} (event ${JSON.stringify(server.profile.event ?? options.event)})\n` : '') +
    (options.profileOut ? `profile    ${options.profileOut} (keys, special pairs, probes)\n` : 'profile    not written; pass --profile-out FILE for the keys\n'),
  );
  return server;
}

/** Runs until SIGINT or SIGTERM, then closes every connection. */
async function serve(options: ServeOptions): Promise<void> {
  const io: ServeIO = { out: (t) => process.stdout.write(t) };
  const server = await startServe(options, io);
  if (!server) return;
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
  io.out('conform reference service stopped\n');
}

/** `conform serve [--port N] [--host H] [--config FILE] [--fault NAME] [--profile-out FILE] [--list-faults]`. */
export const serveCommand: CommandModule<object, ServeOptions> = {
  command: 'serve',
  describe: 'Run the reference price service (REST + WebSocket), optionally with one fault',
  builder: (y: Argv) =>
    y
      .option('port', { type: 'number', default: 8080, describe: 'Port to listen on; 0 picks a free one' })
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address to listen on' })
      .option('config', { type: 'string', describe: 'JSON config (keys, pairs, timing); replaces the default sections it names' })
      .option('fault', { type: 'string', describe: 'Switch on one named fault (see --list-faults)' })
      .option('profile-out', { type: 'string', describe: 'Write the target profile that describes this server' })
      .option('list-faults', { type: 'boolean', default: false, describe: 'Print the faults and exit' })
      .option('transport', { type: 'string', describe: 'Stream transport the profile describes; socketio also serves the stream over Socket.IO' })
      .option('event', { type: 'string', describe: 'Socket.IO event that carries the messages (default price with --transport socketio)' }) as unknown as Argv<ServeOptions>,
  handler: (argv) => serve(argv),
};
