/**
 * `conform init --target URL`: runs discovery with the key from the environment and writes a
 * profile of what it found, with the key as a reference to its environment variable (the key
 * itself only with --write-keys), then lists what would unlock the rules it leaves unchecked. The
 * key is never printed.
 */
import { writeFile } from 'node:fs/promises';
import type { Argv, CommandModule } from 'yargs';
import type { Check } from './check.ts';
import { discoverTarget } from './conform.ts';
import { ConformError, UsageError } from './errors.ts';
import { OPTION_DEFAULTS, validateOptions, type ConformOptions } from './options.ts';
import { minimalProfile, parseProfile, type Profile } from './profile.ts';
import { redactorFor } from './redact.ts';
import { selectChecks } from './runner.ts';
import { unlockLines, unlocks } from './unlock.ts';

export interface InitOptions {
  target: string;
  ws?: string;
  transport?: 'ws' | 'socketio';
  event?: string;
  /** The profile file written; default `conform-profile.json`. */
  out: string;
  /** Environment variable holding the key; default CONFORM_API_KEY. */
  keyEnv: string;
  /** Write the key itself into the file rather than a `keyEnv` reference. */
  writeKeys: boolean;
  timeout: number;
}

export interface InitIO {
  out(text: string): void;
  err(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal;
}

/** Default file `conform init` writes. */
export const INIT_DEFAULT_OUT = 'conform-profile.json';

/**
 * The profile as written: the primary key replaced by a reference to `keyEnv` unless the user asked
 * for the key itself.
 */
export function writtenProfile(profile: Profile, keyEnv: string, writeKeys: boolean): Record<string, unknown> {
  const copy = structuredClone(profile) as unknown as { keys: Record<string, Record<string, unknown>> };
  if (!writeKeys) {
    const { key: _secret, ...rest } = copy.keys.primary!;
    copy.keys.primary = { ...rest, keyEnv };
  }
  return copy as unknown as Record<string, unknown>;
}

/** Runs `conform init`; returns the exit code. Bad input and a wrong set-up are one line and exit 2. */
export async function runInit(options: InitOptions, registry: readonly Check[], io: InitIO): Promise<number> {
  const key = io.env[options.keyEnv];
  let redact = (s: string): string => s;
  try {
    const conformOptions: ConformOptions = {
      ...OPTION_DEFAULTS,
      target: options.target,
      ...(key ? { key } : {}),
      keyEnv: options.keyEnv,
      ...(options.ws ? { ws: options.ws } : {}),
      ...(options.transport ? { transport: options.transport } : {}),
      ...(options.event ? { event: options.event } : {}),
      timeout: options.timeout,
    };
    if (!key) throw new UsageError(`init: set ${options.keyEnv} to the key (it is read from the environment only)`);
    // init writes no report: the default formats are the only ones, so they are the names to accept.
    validateOptions(conformOptions, conformOptions.report);
    const base = minimalProfile({
      target: options.target,
      key,
      ...(options.ws ? { ws: options.ws } : {}),
      ...(options.transport ? { transport: options.transport } : {}),
      ...(options.event ? { event: options.event } : {}),
    });
    redact = redactorFor(base);
    const found = await discoverTarget(base, conformOptions, io);
    const written = writtenProfile(found.profile, options.keyEnv, options.writeKeys);
    // What is written must load as it will be loaded: valid, and its key reference resolvable.
    parseProfile(structuredClone(written), 'the profile init writes', io.env);
    try {
      await writeFile(options.out, `${JSON.stringify(written, null, 2)}\n`, { mode: 0o600 });
    } catch (err) {
      throw new UsageError(
        `--out: cannot write ${options.out} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      );
    }
    io.out(
      `wrote ${options.out}: ` +
        `${options.writeKeys ? 'with the key itself (--write-keys)' : `the key as keyEnv ${options.keyEnv}`}` +
        `; run: conform --profile ${options.out}\n`,
    );
    const list = unlocks(selectChecks(registry), found.profile);
    if (list.length > 0) {
      io.out('what would unlock the rules still not checked:\n');
      for (const line of unlockLines(list)) io.out(`${line}\n`);
    }
    return 0;
  } catch (err) {
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
    io.err(`conform: ${redact(message)}${err instanceof ConformError ? '' : ' (internal error)'}\n`);
    return 2;
  }
}

/**
 * The command, given how to load the check registry: src/ does not load suites/, so the CLI
 * passes the registry in (bin/init-command.ts).
 */
export const initCommandWith = (loadChecks: () => Promise<readonly Check[]>): CommandModule<object, InitOptions> => ({
  command: 'init',
  describe: 'Discover a target from its REST URL and one key, and write a profile of what was found',
  builder: (y: Argv) =>
    y
      .option('target', { type: 'string', demandOption: true, describe: 'REST base URL of the target' })
      .option('ws', { type: 'string', describe: 'the stream URL, when discovery cannot find it' })
      .option('transport', { type: 'string', describe: 'stream transport: ws or socketio' })
      .option('event', { type: 'string', describe: 'Socket.IO event that carries the messages' })
      .option('out', { type: 'string', default: INIT_DEFAULT_OUT, describe: 'profile file to write' })
      .option('key-env', {
        type: 'string',
        default: OPTION_DEFAULTS.keyEnv,
        describe: 'environment variable holding the key (the key is read from the environment only)',
      })
      .option('write-keys', {
        type: 'boolean',
        default: false,
        describe: 'write the key itself into the profile rather than a keyEnv reference',
      })
      .option('timeout', { type: 'number', default: OPTION_DEFAULTS.timeout, describe: 'per-request timeout, ms' })
      .strict() as unknown as Argv<InitOptions>,
  handler: async (argv) => {
    const checks = await loadChecks();
    const stop = new AbortController();
    process.once('SIGINT', () => stop.abort());
    process.exitCode = await runInit(
      {
        target: argv.target,
        ...(argv.ws ? { ws: argv.ws } : {}),
        ...(argv.transport ? { transport: argv.transport } : {}),
        ...(argv.event ? { event: argv.event } : {}),
        out: argv.out,
        keyEnv: (argv as unknown as { keyEnv: string }).keyEnv,
        writeKeys: (argv as unknown as { writeKeys: boolean }).writeKeys,
        timeout: argv.timeout,
      },
      checks,
      {
        out: (t) => process.stdout.write(t),
        err: (t) => process.stderr.write(t),
        // The environment is read here only: the key stays out of argv, shell history and ps.
        env: process.env,
        signal: stop.signal,
      },
    );
  },
});
