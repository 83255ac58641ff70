/**
 * The target profile: where the service is, which keys and pairs exercise which rules, and the
 * probes that make on-demand status numbers observable. Validated against
 * `schemas/profile.schema.json`; only `rest` and `keys.primary` are required.
 */
import { readFile } from 'node:fs/promises';
import { ProfileError } from './errors.ts';
import type { RestStatus } from './spec.ts';
import { validator } from './validator.ts';
import type { RateLimit } from './request-budget.ts';
import type { Transport } from './transports/stream.ts';
import { keepAliveTiming, type StatedTiming } from './timing/index.ts';

export interface KeyEntry {
  /** The key; a profile file may name the environment variable that holds it instead (`keyEnv`). */
  key: string;
  connections?: number;
  /** The key's REST rate limit, when the target states it: the run paces the key's requests within it. */
  rateLimit?: RateLimit;
}

export interface ProfileKeys {
  /** A valid key with stream access to every asset type and no whitelist. */
  primary: KeyEntry;
  /** A valid key with a small WebSocket allowance (stated, or found at the start of the run). */
  limited?: KeyEntry;
  /** A key limited to these asset types. */
  cryptoOnly?: { key: string; assetTypes: string[] };
  /** A key limited to these pairs. */
  whitelisted?: { key: string; pairs: string[] };
  /** A valid key without V1 stream access. */
  noStream?: { key: string };
  /** A suspended key. */
  suspended?: { key: string };
  /** Further named keys, referenced by probes. */
  [name: string]: KeyEntry | { key: string; [field: string]: unknown } | undefined;
}

export interface Probe {
  /** The `status_number` the target answers this request with. */
  status: RestStatus;
  /** Path on the REST base URL, for example `/v1/price`. */
  path: string;
  query?: Record<string, string>;
  /** Name of a key in `keys`; default `primary`. */
  key?: string;
  /** The HTTP status, when the target documents one. */
  httpStatus?: number;
  note?: string;
}

export interface Profile {
  name?: string;
  /** REST base URL; the harness appends `/v1/pairs` and `/v1/price`. */
  rest: string;
  /** WebSocket URL; its path is not shown in the spec. */
  ws?: string;
  transport?: Transport;
  event?: string;
  /** Socket.IO namespace; default `/`. */
  namespace?: string;
  /** A PEM file of the CA certificates that sign the target, trusted beside Node's own (a company CA). */
  tls?: { ca: string };
  keys: ProfileKeys;
  pairs?: { stale?: string; inactive?: string; sample?: string[]; [name: string]: string | string[] | undefined };
  probes?: Probe[];
  /** What the operator states of the target's timing; the run's waits come from it (src/timing/). */
  timing?: StatedTiming;
  /**
   * Percentage of the spec's stated rules that need no operator state which the run has to
   * check (src/coverage.ts); fewer fails the run. `--min-coverage` overrides it.
   */
  minCoverage?: number;
  /** Longest the run waits on the REST rate limit in all, ms; `--max-rate-wait` overrides it. */
  maxRateWaitMs?: number;
  /** Seed of the sample a catalogue too large to read whole is read in; default drawn by the run, and reported. */
  sampleSeed?: number;
}

/** The environment a profile's `keyEnv` references are read from (the CLI passes the process's). */
export type KeyEnvironment = Readonly<Record<string, string | undefined>>;

/**
 * Replaces each key given as `keyEnv` (the name of an environment variable) with the variable's
 * value; throws ProfileError naming the entry whose variable is unset or empty.
 */
export function resolveKeyEnv(profile: Profile, env: KeyEnvironment, source = 'profile'): Profile {
  for (const [name, entry] of Object.entries(profile.keys)) {
    const ref = (entry as { keyEnv?: unknown } | undefined)?.keyEnv;
    if (!entry || typeof ref !== 'string') continue;
    const value = env[ref];
    if (!value) throw new ProfileError(`${source}: /keys/${name}/keyEnv: the environment variable ${ref} is not set`);
    const { keyEnv: _ref, ...rest } = entry as { keyEnv?: string } & Record<string, unknown>;
    profile.keys[name] = { ...rest, key: value } as KeyEntry;
  }
  return profile;
}

/**
 * Validates a parsed profile and resolves its `keyEnv` references from `env`; throws
 * ProfileError naming the first bad field.
 */
export function parseProfile(value: unknown, source = 'profile', env: KeyEnvironment = {}): Profile {
  const result = validator.validate('profile', value);
  if (!result.ok) throw new ProfileError(`${source}: ${result.errors[0]}`);
  const profile = resolveKeyEnv(value as Profile, env, source);
  const { windowMs, graceMs, holdWindows } = keepAliveTiming(profile);
  // A hold that ends before the window and its grace would pass against a server that never resets its timer.
  if (profile.timing?.keepAliveHoldWindows !== undefined && holdWindows * windowMs <= windowMs + graceMs) {
    throw new ProfileError(
      `${source}: /timing/keepAliveHoldWindows: ${holdWindows} windows (${holdWindows * windowMs} ` +
        `ms) must outlast the window and its grace (${windowMs} + ${graceMs} ms)`,
    );
  }
  return profile;
}

/** Reads and validates a profile file; `keyEnv` references are read from `env`. */
export async function loadProfile(file: string, env: KeyEnvironment = {}): Promise<Profile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ProfileError(`cannot read profile ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ProfileError(`profile ${file} is not valid JSON: ${(err as Error).message}`);
  }
  return parseProfile(value, `profile ${file}`, env);
}

/** The minimal profile of `--target URL --key KEY [--ws URL] [--transport socketio --event NAME]`. */
export function minimalProfile(options: {
  target: string;
  key: string;
  ws?: string;
  transport?: Transport;
  event?: string;
}): Profile {
  const profile: Profile = { rest: options.target.replace(/\/+$/, ''), keys: { primary: { key: options.key } } };
  if (options.ws) profile.ws = options.ws;
  if (options.transport) profile.transport = options.transport;
  if (options.event) profile.event = options.event;
  return parseProfile(profile, '--target/--key');
}

/** Every key value a profile carries, for redaction. */
export function profileSecrets(profile: Profile): string[] {
  const keys: string[] = [];
  for (const entry of Object.values(profile.keys)) if (entry && typeof entry.key === 'string') keys.push(entry.key);
  return [...new Set(keys)];
}
