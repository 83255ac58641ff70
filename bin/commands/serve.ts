/**
 * `conform serve [--port N] [--host H] [--config FILE] [--fault NAME] [--dialect FILE|random
 * [--seed N]] [--profile-out FILE] [--list-faults]`: runs the reference service (reference/serve.ts)
 * until SIGINT, SIGTERM or SIGHUP, or until the npm that launched it is gone. The fault listing of
 * `--list-faults` needs the checks (each names the faults it catches), so it is joined here, not in
 * the reference; the checks load only when the listing is asked for.
 */
import type { Argv } from 'yargs';
import { EXIT } from '../../src/conform.ts';
import { launchers, whenLaunchersGone } from '../../reference/launcher.ts';
import { startServe, type FaultListing, type ServeIO, type ServeOptions } from '../../reference/serve.ts';
import type { Command } from './command.ts';

/** The faults, each with its rule and the checks that catch it. */
const listFaults: FaultListing = async () => {
  const [{ CHECKS }, { faultCatches }, { formatFaults }] = await Promise.all([
    import('../../suites/index.ts'),
    import('../../src/matrix.ts'),
    import('../../reference/faults/index.ts'),
  ]);
  return formatFaults((fault) => faultCatches(CHECKS, fault));
};

/** The signals that stop the service; SIGHUP too, so a closed terminal or a killed launcher ends it cleanly. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Runs until a stop signal, or until npm that launched it is gone; then closes every connection. */
async function serve(options: ServeOptions): Promise<void> {
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

export const serveCommand: Command = {
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
      }),
  examples: [
    [
      'conform serve --port 8080 --profile-out ref-profile.json',
      'the service on :8080, and a profile to check it with',
    ],
    ['conform serve --fault price-not-mid', 'one deviation from the spec switched on (see --list-faults)'],
    ['conform serve --dialect random --seed 7', 'one of the ways the spec lets a service behave, drawn from a seed'],
    ['conform serve --list-faults', 'every fault, the rule it breaks and the checks that catch it'],
  ],
  exitCodes: {
    [EXIT.ok]: 'stopped by SIGINT, SIGTERM or SIGHUP, every connection closed (or the faults listed)',
    [EXIT.usage]: 'a bad option, config, fault or dialect, or an address it cannot listen on: one line on stderr',
  },
  async run(argv) {
    await serve(argv as unknown as ServeOptions);
    return EXIT.ok;
  },
};
