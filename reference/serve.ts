/**
 * What `conform serve` starts: the reference service with the options' fault, dialect and config,
 * its URLs printed and the target profile that describes it written. Never prints a key (they are
 * in the profile file). How long it runs is the command's (bin/commands/serve.ts).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { ConfigError, DialectError, ServeUsageError } from '../src/errors.ts';
import { loadConfigFile, type ReferenceConfig } from './config.ts';
import { findFault } from './faults/index.ts';
import { startReferenceServer, type ReferenceServer } from './index.ts';
import { drawDialect, parseDialect, replayCommand, type Dialect } from './dialect.ts';

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
  /** A dialect file, or `random` to draw one from `seed`. Default: the default dialect. */
  dialect?: string;
  /** Seed of `--dialect random`; default a random one (printed, so the run can be replayed). */
  seed?: number;
}

export interface ServeIO {
  out(text: string): void;
}

/**
 * The text of `--list-faults`, given by the CLI: the checks name the faults they catch, and the
 * reference never loads a check.
 */
export type FaultListing = () => Promise<string>;

/**
 * Validates options, starts the service and prints where it is (or prints `listFaults`'s text for
 * `--list-faults`). Throws a one-line error for bad input.
 */
export async function startServe(
  options: ServeOptions,
  io: ServeIO,
  listFaults?: FaultListing,
): Promise<ReferenceServer | undefined> {
  if (options.listFaults) {
    if (!listFaults) throw new ServeUsageError('--list-faults: the fault listing comes with the conform command');
    io.out(`${await listFaults()}\n`);
    return undefined;
  }
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535)
    throw new ServeUsageError(`--port: must be an integer from 0 to 65535 (got ${String(options.port)})`);
  if (typeof options.host !== 'string' || options.host.length === 0)
    throw new ServeUsageError('--host: must be a host name or address');
  if (options.fault !== undefined) findFault(options.fault);
  if (options.transport !== undefined && options.transport !== 'ws' && options.transport !== 'socketio')
    throw new ServeUsageError(`--transport: "${String(options.transport)}" is not ws or socketio`);
  if (options.event !== undefined && (typeof options.event !== 'string' || options.event.length === 0))
    throw new ServeUsageError('--event: must name the Socket.IO event');
  const drawn = await resolveDialectOption(options);
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
    server = await startReferenceServer({
      port: options.port,
      host: options.host,
      config,
      fault: options.fault,
      transport: options.transport,
      event: options.event,
      dialect: drawn?.dialect,
    });
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
      throw new ServeUsageError(
        `--profile-out: cannot write ${options.profileOut} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      );
    }
  }
  io.out(
    `conform reference service${options.fault ? ` with fault ${options.fault}` : ''}\n` +
      `REST       ${server.restUrl}\n` +
      `WebSocket  ${server.wsUrl}\n` +
      (server.socketIoUrl
        ? `Socket.IO  ${server.socketIoUrl} (event ${JSON.stringify(server.profile.event ?? options.event)}` +
          `, namespace ${server.dialect.socketio.namespace})\n`
        : '') +
      (options.profileOut
        ? `profile    ${options.profileOut} (keys, special pairs, probes)\n`
        : 'profile    not written; pass --profile-out FILE for the keys\n') +
      (drawn ? `dialect    ${JSON.stringify(drawn.dialect)}\n` : '') +
      (drawn?.seed !== undefined ? `replay     ${replayCommand(drawn.seed)}\n` : ''),
  );
  return server;
}

/** The dialect `--dialect FILE | random [--seed N]` asks for, with the seed it was drawn from. */
async function resolveDialectOption(options: ServeOptions): Promise<{ dialect: Dialect; seed?: number } | undefined> {
  const { dialect: source, seed } = options;
  if (seed !== undefined && (!Number.isSafeInteger(seed) || seed < 0))
    throw new ServeUsageError(`--seed: must be an integer >= 0 (got ${String(seed)})`);
  if (source === undefined) {
    if (seed !== undefined) throw new ServeUsageError('--seed: only with --dialect random');
    return undefined;
  }
  if (typeof source !== 'string' || source.length === 0)
    throw new ServeUsageError('--dialect: must be a dialect file or random');
  if (source === 'random') {
    const s = seed ?? Math.floor(Math.random() * 2 ** 31);
    return { dialect: drawDialect(s), seed: s };
  }
  if (seed !== undefined) throw new ServeUsageError('--seed: only with --dialect random');
  let text: string;
  try {
    text = await readFile(source, 'utf8');
  } catch (err) {
    throw new ServeUsageError(
      `--dialect: cannot read ${source} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ServeUsageError(`--dialect: ${source} is not valid JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  try {
    return { dialect: parseDialect(json, source) };
  } catch (err) {
    if (err instanceof DialectError) throw new ServeUsageError(`--dialect: ${err.message}`);
    throw err;
  }
}
