/**
 * What a command is pointed at: a profile file, a REST URL with a key (and maybe a stream URL and
 * transport), or neither, which means the embedded reference service. The target options' rules,
 * the key read from the environment and the one resolution of the options into a profile live
 * here, shared by `conform`, `conform init` and the load tools, so each rule and message is
 * written once and a programmatic caller gets the same checks as the command line.
 */
import path from 'node:path';
import { UsageError } from './errors.ts';
import { readCaFile } from './transports/tls-trust.ts';
import { loadProfile, minimalProfile, parseProfile, type KeyEnvironment, type Profile } from './profile.ts';
import { TRANSPORTS, type Transport } from './transports/stream.ts';

/** The environment variable that holds the key of `--target` unless `--key-env` names another. */
export const DEFAULT_KEY_ENV = 'CONFORM_API_KEY';

export { TRANSPORTS, type Transport };

/** The target options, as every command that takes a target names them. */
export interface TargetOptions {
  /** REST base URL of the target (builds a minimal profile with `key`). */
  target?: string;
  /** Key for `target`; prefer `keyEnv`. */
  key?: string;
  /** Environment variable holding the key; default `DEFAULT_KEY_ENV`. */
  keyEnv: string;
  /** WebSocket URL for a minimal profile. */
  ws?: string;
  /** Profile file, or (a programmatic caller) the profile itself, validated as a file's would be. */
  profile?: string | Profile;
  /** Stream transport for `target` or the embedded service; a profile names its own. */
  transport?: Transport;
  /** Socket.IO event that carries the JSON messages (with transport socketio). */
  event?: string;
  /**
   * A PEM file of CA certificates the target's TLS is verified against beside Node's own (a company
   * CA); overrides the profile's `tls.ca`.
   */
  ca?: string;
}

/**
 * The key of `--target`: `--key` when given, else the variable `keyEnv` names in `env`. The
 * environment is the way to pass a key: it stays out of argv, shell history and ps.
 */
export function targetKey(
  o: Pick<TargetOptions, 'target' | 'key' | 'keyEnv'>,
  env: KeyEnvironment,
): string | undefined {
  if (o.key !== undefined || o.target === undefined) return o.key;
  return env[o.keyEnv] || undefined;
}

function checkUrl(option: string, value: string, schemes: readonly string[]): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${option}: "${value}" is not a URL`);
  }
  if (!schemes.includes(url.protocol))
    throw new UsageError(`${option}: "${value}" must start with ${schemes.map((s) => `${s}//`).join(' or ')}`);
  if (!url.hostname) throw new UsageError(`${option}: "${value}" has no host`);
}

/**
 * Throws UsageError naming the first bad target option. `key` must already be read from the
 * environment (`targetKey`). `keysFile` is the option of a command that also takes its keys from
 * a file (the load tools' `--keys-from FILE`) when one was given or could be: a given file stands
 * in for the key, and the message names it as a way to give one.
 */
export function validateTargetOptions(o: TargetOptions, keysFile?: { option: string; given: boolean }): void {
  if (o.target !== undefined && o.profile !== undefined)
    throw new UsageError('--target and --profile exclude each other: give one');
  if (o.target !== undefined) checkUrl('--target', o.target, ['http:', 'https:']);
  if (o.ws !== undefined) {
    checkUrl('--ws', o.ws, ['ws:', 'wss:']);
    if (o.target === undefined) throw new UsageError('--ws needs --target (a profile names its own ws URL)');
  }
  if (o.key !== undefined && o.target === undefined)
    throw new UsageError('--key needs --target (a profile names its own keys)');
  if (o.ca !== undefined && o.target === undefined && o.profile === undefined)
    throw new UsageError('--ca needs --target or --profile (the embedded reference service is plain HTTP)');
  if (o.target !== undefined && !o.key && !keysFile?.given) {
    const ways = ['pass --key KEY', `set ${o.keyEnv}`, ...(keysFile ? [`give ${keysFile.option}`] : [])];
    throw new UsageError(`--target needs a key: ${ways.slice(0, -1).join(', ')} or ${ways.at(-1)}`);
  }
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(o.keyEnv))
    throw new UsageError(`--key-env: "${o.keyEnv}" is not an environment variable name`);
  validateStreamOptions(o);
}

function validateStreamOptions(o: TargetOptions): void {
  if (o.transport !== undefined && !(TRANSPORTS as readonly string[]).includes(o.transport))
    throw new UsageError(`--transport: must be ${TRANSPORTS.join(' or ')} (got "${o.transport}")`);
  if ((o.transport !== undefined || o.event !== undefined) && o.profile !== undefined)
    throw new UsageError('--transport/--event: a profile names its own (fields transport and event)');
  if (o.transport === 'socketio' && !o.event)
    throw new UsageError('--transport socketio needs --event NAME (the event that carries the JSON messages)');
  if (o.event !== undefined && o.transport !== 'socketio') throw new UsageError('--event needs --transport socketio');
}

/**
 * The profile with the CA file it trusts as an absolute path (`--ca` over its own `tls.ca`, which is
 * relative to the profile's folder), read now: a file that cannot be read or holds no certificate
 * stops the command before anything is sent.
 */
function trusting(profile: Profile, ca: string | undefined, folder: string, source: string): Profile {
  const file = ca !== undefined ? path.resolve(ca) : profile.tls ? path.resolve(folder, profile.tls.ca) : undefined;
  if (file === undefined) return profile;
  readCaFile(file, ca !== undefined ? '--ca' : `${source}: tls.ca`);
  return { ...profile, tls: { ca: file } };
}

/** The target as reports describe it (never a key). */
export interface TargetInfo {
  name?: string;
  rest: string;
  ws?: string;
  embedded?: boolean;
  /** Where the run's profile came from: a file, a `--target` URL and discovery, or the embedded service. */
  source?: ResolvedTarget<EmbeddedTarget>['from'];
}

/** A target the command started itself: the embedded reference service, stopped by `close`. */
export interface EmbeddedTarget {
  profile: Profile;
  close(): Promise<void>;
}

/** The profile the target options describe, and where it came from. */
export type ResolvedTarget<E extends EmbeddedTarget> =
  | { from: 'profile'; profile: Profile }
  | { from: 'target'; profile: Profile }
  | { from: 'embedded'; profile: Profile; embedded: E };

/** What resolving a target needs of its caller. */
export interface TargetIO<E extends EmbeddedTarget> {
  /** Where a profile's `keyEnv` references are read. */
  env: KeyEnvironment;
  /** Starts the embedded reference service when neither a profile nor a target is given. */
  startEmbedded?: (options: { transport?: Transport; event?: string }) => Promise<E>;
}

/**
 * Turns validated target options into a profile: the profile file, the minimal profile of
 * `--target URL` and its key, or (neither) the embedded reference service the caller starts,
 * which must serve the transport asked for. Nothing is probed here: what a command checks of the
 * target before it runs is its own.
 */
export async function resolveTarget<E extends EmbeddedTarget>(
  o: Omit<TargetOptions, 'keyEnv'>,
  io: TargetIO<E>,
): Promise<ResolvedTarget<E>> {
  if (typeof o.profile === 'string' && o.profile) {
    const profile = await loadProfile(o.profile, io.env);
    return { from: 'profile', profile: trusting(profile, o.ca, path.dirname(o.profile), `profile ${o.profile}`) };
  }
  if (typeof o.profile === 'object') {
    const profile = parseProfile(structuredClone(o.profile), 'the profile given', io.env);
    return { from: 'profile', profile: trusting(profile, o.ca, '.', 'the profile given') };
  }
  if (o.target) {
    const profile = minimalProfile({
      target: o.target,
      key: o.key ?? '',
      ws: o.ws,
      transport: o.transport,
      event: o.event,
    });
    return { from: 'target', profile: trusting(profile, o.ca, '.', '') };
  }
  if (!io.startEmbedded) throw new UsageError('give --target URL or --profile FILE');
  const embedded = await io.startEmbedded({ transport: o.transport, event: o.event });
  if ((o.transport ?? 'ws') !== (embedded.profile.transport ?? 'ws')) {
    await embedded.close();
    throw new UsageError(`--transport ${o.transport}: the embedded reference service does not serve it`);
  }
  return { from: 'embedded', profile: embedded.profile, embedded };
}
