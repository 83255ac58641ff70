/**
 * The target of a load run: the embedded reference service in a separate process (so it does
 * not share an event loop with the generator), or a profile / --target URL. Also the keys a run
 * may spread its clients over, the pairs it subscribes to, and the clock offset to the target.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { KeyEnvironment, Profile } from '../src/profile.ts';
import { API_KEY_HEADER, PATHS, QUERY, ASSET_TYPE } from '../src/spec.ts';
import { guessTimeUnit, MS_PER_UNIT, resolutionMs, type OffsetSample, type TimeUnit } from './clock.ts';
import { moduleUrl, RUNS_COMPILED } from '../src/module-url.ts';
import { assignKeyList, parseKeyLines, totalAllowance, type KeyAllowance } from './keys.ts';
import { Agent, fetch, type Response } from 'undici';
import { CertificateError, LoadUsageError, ProfileError, ReferenceStartError, UsageError } from '../src/errors.ts';
import { assertTrusted } from '../src/preflight.ts';
import { resolveTarget, type ResolvedTarget } from '../src/target.ts';
import { caOf, caOption } from '../src/transports/tls-trust.ts';

export type { KeyAllowance } from './keys.ts';

export interface LoadTarget {
  rest: string;
  /** The stream URL; '' when none was given (REST load needs none). */
  ws: string;
  keys: KeyAllowance[];
  profile: Profile;
  /** True when this run started the reference service itself. */
  embedded: boolean;
  /** Stops the embedded service; a no-op for remote targets. */
  close(): Promise<void>;
  /**
   * The embedded service's own stream counters, when it runs in a process of its own: how many
   * ticks it made, how long they took in all and the longest since the last call (the benchmarks
   * read how long it spends writing every client's frames).
   */
  serverStats?(): Promise<ServerStreamStats>;
}

/** What the embedded service counts of its push fan-out (reference/model.ts `StreamStats`). */
export interface ServerStreamStats {
  ticks: number;
  framesWritten: number;
  /** Time spent in ticks (stepping prices and writing every client's frames), ms. */
  tickMsTotal: number;
  /** Longest tick since the last call, ms. */
  tickMsMax: number;
}

/** Keys of a profile that have no full stream access, so a load run must not use them. */
const RESTRICTED_ROLES = new Set(['limited', 'cryptoOnly', 'whitelisted', 'noStream', 'suspended']);

/** Keys of a profile usable for load: primary first, then any other key that states an allowance. */
export function profileLoadKeys(profile: Profile): KeyAllowance[] {
  const out: KeyAllowance[] = [];
  for (const [name, entry] of Object.entries(profile.keys)) {
    if (!entry || typeof entry.key !== 'string' || RESTRICTED_ROLES.has(name)) continue;
    const connections = typeof entry.connections === 'number' ? entry.connections : undefined;
    if (name !== 'primary' && connections === undefined) continue;
    out.push(connections === undefined ? { key: entry.key } : { key: entry.key, connections });
  }
  // Largest allowance first, so a run spreads over several keys only when one is not enough.
  return out.sort((a, b) => (b.connections ?? Number.POSITIVE_INFINITY) - (a.connections ?? Number.POSITIVE_INFINITY));
}

/**
 * Reads `--keys-from FILE`: a JSON array of keys or `{ key, connections }` objects, or text with
 * one `KEY` or `KEY,CONNECTIONS` a line (`#` starts a comment).
 */
export async function readKeysFile(file: string): Promise<KeyAllowance[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new LoadUsageError(
      `--keys-from ${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  const keys: KeyAllowance[] = [];
  if (text.trimStart().startsWith('[')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new LoadUsageError(`--keys-from ${file}: not valid JSON (${(err as Error).message})`);
    }
    for (const [i, item] of (value as unknown[]).entries()) {
      if (typeof item === 'string' && item) keys.push({ key: item });
      else if (item && typeof item === 'object' && typeof (item as KeyAllowance).key === 'string') {
        const c = (item as KeyAllowance).connections;
        if (c !== undefined && !(Number.isInteger(c) && c > 0))
          throw new LoadUsageError(`--keys-from ${file}: item ${i}: connections must be a positive whole number`);
        keys.push(
          c === undefined ? { key: (item as KeyAllowance).key } : { key: (item as KeyAllowance).key, connections: c },
        );
      } else throw new LoadUsageError(`--keys-from ${file}: item ${i} must be a key string or { key, connections }`);
    }
  } else {
    const parsed = parseKeyLines(text);
    if ('badLine' in parsed)
      throw new LoadUsageError(`--keys-from ${file}: line ${parsed.badLine} must be KEY or KEY,CONNECTIONS`);
    keys.push(...parsed.keys);
  }
  if (!keys.length) throw new LoadUsageError(`--keys-from ${file}: no keys in the file`);
  return keys;
}

/**
 * Gives each of `clients` a key, filling each key up to its allowance in order; a key with no
 * stated allowance takes the rest. Throws a usage error when the keys cannot hold every client.
 */
export function assignKeys(clients: number, keys: readonly KeyAllowance[]): string[] {
  const total = totalAllowance(keys);
  if (total < clients) {
    throw new LoadUsageError(
      `--clients ${clients}: the keys allow only ${total} connections (${keys.length} ` +
        `key${keys.length === 1 ? '' : 's'}); give more keys with --keys-from FILE or fewer clients`,
    );
  }
  return assignKeyList(clients, keys);
}

/** Options passed to the reference process (reference/index.ts `startReferenceServer`). */
export interface ReferenceProcessOptions {
  /** Push interval of the reference, ms (its default: 100, i.e. 10 Hz per pair). */
  tickMs?: number;
  /** Chance per tick that a pair's price moves, i.e. that a push carries a new update. */
  moveProbability?: number;
  /** Allowance of the run's own load key; default 20,000. */
  connections?: number;
  /** REST requests answered per second, one at a time (config `restServiceRate`); default unlimited. */
  restServiceRate?: number;
}

/** The reference process's answers to `stats` lines, one after another on its stdout. */
function statsAnswers(child: ChildProcess): { ask(): Promise<ServerStreamStats> } {
  const waiting: ((s: ServerStreamStats) => void)[] = [];
  let buf = '';
  child.stdout!.on('data', (c: Buffer) => {
    buf += c.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.startsWith('{"stats"')) waiting.shift()?.((JSON.parse(line) as { stats: ServerStreamStats }).stats);
    }
  });
  return {
    ask: () =>
      new Promise<ServerStreamStats>((resolve, reject) => {
        if (child.exitCode !== null) return reject(new Error('the reference service has exited'));
        const guard = setTimeout(() => reject(new Error('the reference service did not answer')), 5000);
        waiting.push((stats) => {
          clearTimeout(guard);
          resolve(stats);
        });
        child.stdin!.write('stats\n');
      }),
  };
}

/**
 * Starts the reference service in its own Node process (load/reference-process.ts) and reads
 * the one JSON line it prints: `{ restUrl, wsUrl, profile }`.
 */
export async function startReferenceProcess(
  options: ReferenceProcessOptions = {},
  timeoutMs = 30_000,
): Promise<LoadTarget> {
  const entry = moduleUrl('./reference-process.ts', import.meta.url);
  // The sources need tsx's loader; the compiled package runs as plain JavaScript.
  const loader = RUNS_COMPILED ? [] : ['--import', import.meta.resolve('tsx')];
  const child: ChildProcess = spawn(process.execPath, [...loader, fileURLToPath(entry), JSON.stringify(options)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-2000);
  });
  const line = await new Promise<string>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(
        new ReferenceStartError(
          `reference service did not start within ${timeoutMs} ms: ${stderr.trim().split('\n').pop() ?? ''}`,
        ),
      );
    }, timeoutMs);
    child.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      const nl = buf.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(buf.slice(0, nl));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(
        new ReferenceStartError(
          `reference service exited (${code}) before it was ready: ${stderr.trim().split('\n').pop() ?? ''}`,
        ),
      );
    });
  });
  const started = JSON.parse(line) as { restUrl: string; wsUrl: string; profile: Profile };
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const answers = statsAnswers(child);
  return {
    rest: started.restUrl,
    ws: started.wsUrl,
    profile: started.profile,
    keys: profileLoadKeys(started.profile),
    embedded: true,
    serverStats: () => answers.ask(),
    async close() {
      if (child.exitCode !== null) return;
      // Closing stdin asks the process to close its server; SIGTERM if it does not.
      child.stdin!.end();
      const guard = setTimeout(() => child.kill('SIGTERM'), 3000);
      await exited;
      clearTimeout(guard);
    },
  };
}

/** A target this run did not start: the profile's URLs and keys, nothing to stop. */
function remoteTarget(profile: Profile, needsStream: boolean): LoadTarget {
  if (!profile.ws && needsStream)
    throw new LoadUsageError('the target has no WebSocket URL: give --ws URL or "ws" in the profile');
  return {
    rest: profile.rest,
    ws: profile.ws ?? '',
    profile,
    keys: profileLoadKeys(profile),
    embedded: false,
    close: async () => {},
  };
}

/**
 * The target of a load run: `--profile FILE`, `--target URL --key K [--ws URL]`, or (neither) the
 * reference service started in its own process, resolved as every command resolves its target
 * (src/target.ts). `--keys-from FILE` replaces the keys the clients spread over, and gives the key
 * of `--target` when `--key` does not. A stream URL is required unless `needsStream` is false.
 * `env` is where a profile's `keyEnv` references are read.
 */
export async function startLoadTarget(
  opts: {
    profile?: string;
    target?: string;
    key?: string;
    ws?: string;
    keysFrom?: string;
    ca?: string;
    reference?: ReferenceProcessOptions;
    needsStream?: boolean;
  },
  env: KeyEnvironment = {},
): Promise<LoadTarget> {
  const fileKeys = opts.keysFrom ? await readKeysFile(opts.keysFrom) : null;
  let resolved: ResolvedTarget<LoadTarget>;
  try {
    resolved = await resolveTarget(
      { profile: opts.profile, target: opts.target, key: opts.key ?? fileKeys?.[0]?.key, ws: opts.ws, ca: opts.ca },
      { env, startEmbedded: () => startReferenceProcess(opts.reference ?? {}) },
    );
  } catch (err) {
    if (err instanceof ProfileError || err instanceof UsageError) throw new LoadUsageError(err.message);
    throw err;
  }
  // A certificate that fails verification stops the run here, in one line naming the host and why:
  // no load is put on a target the run cannot trust.
  if (resolved.from !== 'embedded') await trusted(resolved.profile);
  const target =
    resolved.from === 'embedded' ? resolved.embedded : remoteTarget(resolved.profile, opts.needsStream !== false);
  if (fileKeys) target.keys = fileKeys;
  return target;
}

/** Throws LoadUsageError when the target's REST or stream certificate fails verification. */
async function trusted(profile: Profile): Promise<void> {
  try {
    await assertTrusted(profile);
  } catch (err) {
    if (err instanceof CertificateError) throw new LoadUsageError(err.message);
    throw err;
  }
}

/** GET a REST path with the key; returns parsed JSON (or throws a usage error naming the URL). */
async function getJson(target: LoadTarget, path: string, query: Record<string, string>, key: string): Promise<unknown> {
  const url = new URL(target.rest + path);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  let res: Response;
  try {
    const ca = caOf(target.profile);
    res = await fetch(url, {
      headers: { [API_KEY_HEADER]: key },
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
      ...(ca ? { dispatcher: new Agent({ connect: caOption(ca) }) } : {}),
    });
  } catch (err) {
    throw new LoadUsageError(
      `target unreachable: ${url.origin}${path} ` +
        `(${(err as Error).cause ? String((err as { cause: unknown }).cause) : (err as Error).message})`,
    );
  }
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Picks `count` pair codes from `/v1/pairs`, Crypto first (always open, so always pushing). */
export async function pickPairs(target: LoadTarget, count: number): Promise<string[]> {
  const key = target.keys[0]?.key ?? target.profile.keys.primary.key;
  const codes: string[] = [];
  const sample = target.profile.pairs?.sample ?? [];
  const crypto = `${ASSET_TYPE.crypto}:`;
  for (const c of sample) if (codes.length < count && c.startsWith(crypto) && !codes.includes(c)) codes.push(c);
  for (const query of [{ [QUERY.pairs.type]: ASSET_TYPE.crypto }, {}] as Record<string, string>[]) {
    for (let page = 1; codes.length < count && page <= 20; page++) {
      const body = (await getJson(
        target,
        PATHS.pairs,
        { ...query, [QUERY.pairs.page]: String(page), [QUERY.pairs.perPage]: '100' },
        key,
      )) as { data?: { code?: unknown }[] } | undefined;
      const data = Array.isArray(body?.data) ? body.data : [];
      for (const p of data)
        if (typeof p.code === 'string' && !codes.includes(p.code) && codes.length < count) codes.push(p.code);
      if (data.length < 100) break;
    }
  }
  if (!codes.length)
    throw new LoadUsageError(`no pairs: ${target.rest}${PATHS.pairs} listed none for the key; give --pair CODE`);
  return codes;
}

/** REST round trips to the target's clock, for load/clock.ts's estimate. */
export interface ClockSamples {
  samples: OffsetSample[];
  /** Unit of `ts` guessed from its magnitude (the spec does not show it); null when none was numeric. */
  tsUnit: TimeUnit | null;
  /** Resolution of `ts` in ms (a whole-second stamp covers a second). */
  resolutionMs: number;
}

/**
 * Reads the target's clock: `rounds` GETs of `/v1/pairs`, each bracketed by `now` (our wall clock
 * in ms; give the one frames are timed with, so both bounds share a time scale). Done on loopback
 * too: a service's clock is its own wherever it runs.
 */
export async function sampleTargetClock(target: LoadTarget, now: () => number, rounds = 8): Promise<ClockSamples> {
  const key = target.keys[0]?.key ?? target.profile.keys.primary.key;
  const samples: OffsetSample[] = [];
  let unit: TimeUnit | null = null;
  for (let i = 0; i < rounds; i++) {
    const sentMs = now();
    const body = (await getJson(target, PATHS.pairs, { [QUERY.pairs.perPage]: '1' }, key).catch(() => undefined)) as
      | { ts?: unknown }
      | undefined;
    const receivedMs = now();
    if (typeof body?.ts !== 'number') continue;
    const u = guessTimeUnit(body.ts);
    if (!u) continue;
    unit = u;
    samples.push({ sentMs, receivedMs, serverMs: body.ts * MS_PER_UNIT[u] });
  }
  return { samples, tsUnit: unit, resolutionMs: unit ? resolutionMs(unit) : 1 };
}
