/**
 * `conform init --target URL`: discovers a target with the key from the environment and writes a
 * profile of what it found (src/init.ts). The check registry, which src/ may not load itself, is
 * passed in here: what a run would leave unchecked is worked out from the checks' needs.
 */
import type { Argv } from 'yargs';
import { INIT_DEFAULT_OUT, runInit, type InitOptions } from '../../src/init.ts';
import { OPTION_DEFAULTS } from '../../src/options.ts';
import type { Command } from './command.ts';
import { targetOptions } from './target-options.ts';

/** The options of `conform init`, as yargs gave them. */
function initOptions(argv: Record<string, unknown>): InitOptions {
  const text = (name: string): string | undefined => (argv[name] === undefined ? undefined : String(argv[name]));
  return {
    target: text('target')!,
    ...(text('ws') ? { ws: text('ws') } : {}),
    ...(text('transport') ? { transport: text('transport') as InitOptions['transport'] } : {}),
    ...(text('event') ? { event: text('event') } : {}),
    ...(text('ca') ? { ca: text('ca') } : {}),
    out: text('out')!,
    keyEnv: text('key-env')!,
    writeKeys: argv['write-keys'] === true,
    timeout: argv.timeout as number,
  };
}

export const initCommand: Command = {
  command: 'init',
  describe: 'Discover a target from its REST URL and one key, and write a profile of what was found',
  builder: (y: Argv) =>
    y
      .options(
        targetOptions(['target', 'key-env', 'ws', 'transport', 'event', 'ca'], {
          target: { demandOption: true },
          'key-env': { describe: 'environment variable holding the key (the key is read from the environment only)' },
          ws: { describe: 'the stream URL, when discovery cannot find it' },
          transport: { describe: 'stream transport: ws (default) or socketio' },
        }),
      )
      .option('out', { type: 'string', default: INIT_DEFAULT_OUT, describe: 'profile file to write' })
      .option('write-keys', {
        type: 'boolean',
        default: false,
        describe: 'write the key itself into the profile rather than a keyEnv reference',
      })
      .option('timeout', { type: 'number', default: OPTION_DEFAULTS.timeout, describe: 'per-request timeout, ms' })
      .strict(),
  examples: [
    [
      'CONFORM_API_KEY=… conform init --target https://prices.example.com --out staging.json',
      'discover the target with one key, write staging.json naming the key by its variable',
    ],
    [
      'conform init --target https://prices.example.com --ws wss://stream.example.com/v1/prices',
      'the same with a stream discovery cannot find on the REST origin',
    ],
    [
      'conform init --target https://prices.example.com --key-env STAGING_KEY --out staging.json',
      'the key read from STAGING_KEY; then: conform --profile staging.json',
    ],
  ],
  exitCodes: {
    0: 'the profile was written; what would check more is listed',
    2: 'bad options, no key, a target that does not answer or refuses the key, or a file it cannot write',
  },
  async run(argv) {
    const { CHECKS } = await import('../../suites/index.ts');
    const stop = new AbortController();
    process.once('SIGINT', () => stop.abort());
    return runInit(initOptions(argv), CHECKS, {
      out: (t) => process.stdout.write(t),
      err: (t) => process.stderr.write(t),
      // The environment is read here only: the key stays out of argv, shell history and ps.
      env: process.env,
      signal: stop.signal,
    });
  },
};
