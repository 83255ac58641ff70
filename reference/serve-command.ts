/**
 * `conform serve`: runs the reference service until SIGINT/SIGTERM/SIGHUP (or until npm that
 * launched it is gone), prints its URLs and writes the target profile that describes it. Never
 * prints a key (they are in the profile file).
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { Argv, CommandModule } from 'yargs';
import { ConfigError, DialectError, ServeUsageError } from '../src/errors.ts';
import { loadConfigFile, type ReferenceConfig } from './config.ts';
import { findFault } from './faults/index.ts';
import { startReferenceServer, type ReferenceServer } from './index.ts';
import { launchers, whenLaunchersGone } from './launcher.ts';
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

/** The signals that stop the service; SIGHUP too, so a closed terminal or a killed launcher ends it cleanly. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Runs until a stop signal, or until npm that launched it is gone; then closes every connection. */
async function serve(options: ServeOptions, listFaults: FaultListing): Promise<void> {
  const io: ServeIO = { out: (t) => process.stdout.write(t) };
  // The handlers go on before the URLs are printed: whoever reads them may signal at once, and a
  // signal with no handler yet would kill the process before it closes its connections.
  let resolveStop = (): void => {};
  const stopped = new Promise<void>((resolve) => (resolveStop = resolve));
  let unwatch = (): void => {};
  const stop = (): void => {
    for (const s of STOP_SIGNALS) process.off(s, stop);
    unwatch();
    resolveStop();
  };
  for (const s of STOP_SIGNALS) process.on(s, stop);
  unwatch = whenLaunchersGone(launchers(process.env), stop);
  const server = await startServe(options, io, listFaults).catch((err: unknown) => {
    stop();
    throw err;
  });
  if (!server) return stop();
  await stopped;
  await server.close();
  io.out('conform reference service stopped\n');
}

/**
 * `conform serve [--port N] [--host H] [--config FILE] [--fault NAME] [--dialect FILE|random
 * [--seed N]] [--profile-out FILE] [--list-faults]`, with the CLI's fault listing.
 */
export const serveCommandWith = (listFaults: FaultListing): CommandModule<object, ServeOptions> => ({
  command: 'serve',
  describe: 'Run the reference price service (REST + WebSocket), optionally with one fault',
  builder: (y: Argv) =>
    y
      .option('port', { type: 'number', default: 8080, describe: 'Port to listen on; 0 picks a free one' })
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address to listen on' })
      .option('config', {
        type: 'string',
        describe: 'JSON config (keys, pairs, timing); replaces the default sections it names',
      })
      .option('fault', { type: 'string', describe: 'Switch on one named fault (see --list-faults)' })
      .option('profile-out', { type: 'string', describe: 'Write the target profile that describes this server' })
      .option('list-faults', { type: 'boolean', default: false, describe: 'Print the faults and exit' })
      .option('transport', {
        type: 'string',
        describe: 'Stream transport the profile describes; socketio also serves the stream over Socket.IO',
      })
      .option('event', {
        type: 'string',
        describe: 'Socket.IO event that carries the messages (default price with --transport socketio)',
      })
      .option('dialect', {
        type: 'string',
        describe:
          'A dialect file (schemas/dialect.schema.json), or random: how the service answers what the spec leaves open',
      })
      .option('seed', {
        type: 'number',
        describe: 'Seed of --dialect random (printed with a command that replays it)',
      }) as unknown as Argv<ServeOptions>,
  handler: (argv) => serve(argv, listFaults),
});
