/**
 * What `conform init --target URL` does: runs discovery with the key from the environment and writes a
 * profile of what it found, with the key as a reference to its environment variable (the key
 * itself only with --write-keys), then lists what would unlock the rules it leaves unchecked. The
 * key is never printed.
 */
import { writeFile } from 'node:fs/promises';
import type { Check } from './check.ts';
import { discoverTarget } from './conform.ts';
import { ConformError, UsageError } from './errors.ts';
import { OPTION_DEFAULTS, validateOptions, type ConformOptions } from './options.ts';
import { parseProfile, type Profile } from './profile.ts';
import { redactorFor } from './redact.ts';
import { selectChecks } from './runner.ts';
import { resolveTarget, targetKey, type Transport } from './target.ts';
import { unlockLines, unlocks } from './unlock.ts';

export interface InitOptions {
  target: string;
  ws?: string;
  transport?: Transport;
  event?: string;
  /** A PEM file of the CA that signs the target, trusted beside Node's own; written into the profile's `tls.ca`. */
  ca?: string;
  /** The profile file written; default `conform-profile.json`. */
  out: string;
  /** Environment variable holding the key; default `OPTION_DEFAULTS.keyEnv`. */
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
  const key = targetKey({ target: options.target, keyEnv: options.keyEnv }, io.env);
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
      ...(options.ca ? { ca: options.ca } : {}),
      timeout: options.timeout,
    };
    if (!key) throw new UsageError(`init: set ${options.keyEnv} to the key (it is read from the environment only)`);
    // init writes no report: the default formats are the only ones, so they are the names to accept.
    validateOptions(conformOptions, conformOptions.report);
    const { profile: base } = await resolveTarget(conformOptions, { env: io.env });
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
