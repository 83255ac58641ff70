/**
 * Plan: what a fan-out run will do, decided before anything connects (no I/O): the options
 * checked and given their defaults, this host's share of the run's clients (its shard), each
 * client's key and place in the ramp, the workers that open them, and the shared schedule of a
 * coordinated start.
 */
import { availableParallelism } from 'node:os';
import { LoadUsageError } from '../../src/errors.ts';
import { FANOUT_DEFAULTS, MAX_CLIENTS_PER_HOST, MAX_SHARDS, positiveInt } from '../options.ts';
import { fanoutSchedule, type FanoutSchedule } from '../schedule.ts';
import type { KeyAllowance } from '../keys.ts';
import { assignKeys } from '../target.ts';
import { parseThresholds, type Threshold } from '../thresholds.ts';
import type { ClientPlan } from './protocol.ts';

export interface FanoutOptions {
  clients?: number;
  /** How many pairs to pick from `/v1/pairs`; ignored when `pair` names them. */
  pairs?: number;
  pair?: string[];
  durationMs?: number;
  /** Connect every client first and subscribe them all after the ramp, so the ramp runs without traffic. */
  subscribeAfterRamp?: boolean;
  /** Settling time after the ramp, excluded from every figure (default 1 s). */
  warmupMs?: number;
  rampRate?: number;
  /** Worker threads; default one per core (at most one per client). */
  workers?: number | 'auto';
  thresholds?: string[];
  pingIntervalMs?: number;
  connectTimeoutMs?: number;
  updateWindowMs?: number;
  settleMs?: number;
  tickMs?: number;
  validatePerSecond?: number;
  localAddress?: string;
  /**
   * This host's share of a run spread over `count` hosts (1-based `index`): `clients` is the whole
   * run's, the keys are assigned over the whole run, and this host opens clients
   * [⌊(index−1)·clients/count⌋, ⌊index·clients/count⌋) at their places in the one ramp.
   */
  shard?: { index: number; count: number };
  /**
   * Wall-clock epoch ms at which the whole run's ramp begins on every host. The measured window is
   * then the shared schedule's (load/schedule.ts, as the k6 script's), and frames sent inside it
   * are counted apart (`window.frames`), so shards merge to the unsharded counts.
   */
  startAtMs?: number;
  onProgress?: (p: FanoutProgress) => void;
  /** Given, once the run starts, the function that reads its figures so far (live metrics). */
  onLiveSource?: (read: () => Record<string, number | null>) => void;
}

export interface FanoutProgress {
  phase: 'ramp' | 'steady' | 'closing';
  elapsedS: number;
  connections: number;
  subscribed: number;
  frames: number;
  clients: number;
}

/** The options with their defaults, checked. */
export type ResolvedFanoutOptions = Required<
  Omit<
    FanoutOptions,
    'pair' | 'localAddress' | 'onProgress' | 'onLiveSource' | 'workers' | 'subscribeAfterRamp' | 'shard' | 'startAtMs'
  >
> & { workers: number; pair?: string[] };

/** Validated options with defaults merged. */
export function resolveFanoutOptions(o: FanoutOptions): ResolvedFanoutOptions {
  // The whole run's clients: one host opens at most MAX_CLIENTS_PER_HOST of them (checked per shard).
  const clients = positiveInt(o.clients ?? FANOUT_DEFAULTS.clients, '--clients', MAX_CLIENTS_PER_HOST * MAX_SHARDS);
  const pairs = positiveInt(o.pairs ?? FANOUT_DEFAULTS.pairs, '--pairs', 100);
  if (o.pair && o.pair.length > 100)
    throw new LoadUsageError(`--pair: ${o.pair.length} pairs; the spec allows at most 100 per connection`);
  const cores = availableParallelism();
  const workers =
    o.workers === undefined || o.workers === 'auto'
      ? Math.max(1, Math.min(cores, clients))
      : positiveInt(o.workers, '--workers', 64);
  const rampRate = o.rampRate ?? FANOUT_DEFAULTS.rampRate;
  if (!(rampRate > 0)) throw new LoadUsageError(`--ramp-rate ${rampRate}: must be a positive rate`);
  const durationMs = o.durationMs ?? FANOUT_DEFAULTS.durationMs;
  if (!(durationMs > 0)) throw new LoadUsageError(`--duration: must be positive`);
  return {
    clients,
    pairs,
    workers,
    rampRate,
    durationMs,
    warmupMs: o.warmupMs ?? FANOUT_DEFAULTS.warmupMs,
    thresholds: o.thresholds ?? [],
    pingIntervalMs: o.pingIntervalMs ?? FANOUT_DEFAULTS.pingIntervalMs,
    connectTimeoutMs: o.connectTimeoutMs ?? FANOUT_DEFAULTS.connectTimeoutMs,
    updateWindowMs: o.updateWindowMs ?? FANOUT_DEFAULTS.updateWindowMs,
    settleMs: o.settleMs ?? FANOUT_DEFAULTS.settleMs,
    tickMs: o.tickMs ?? FANOUT_DEFAULTS.tickMs,
    validatePerSecond: o.validatePerSecond ?? FANOUT_DEFAULTS.validatePerSecond,
    ...(o.pair ? { pair: o.pair } : {}),
  };
}

/** The global client indices [from, to) of a shard; the whole run without one. */
export function shardRange(
  clients: number,
  shard: { index: number; count: number } | undefined,
): { from: number; to: number } {
  if (!shard) return { from: 0, to: clients };
  return {
    from: Math.floor(((shard.index - 1) * clients) / shard.count),
    to: Math.floor((shard.index * clients) / shard.count),
  };
}

/** What a fan-out run will do on this host. */
export interface FanoutPlan {
  o: ResolvedFanoutOptions;
  thresholds: Threshold[];
  /** This host's clients: global indices [from, to) of the run's. */
  shard: { from: number; to: number };
  /** How many clients this host opens. */
  clients: number;
  /** The key of each of the run's clients, by global index. */
  keys: string[];
  /** With a coordinated start (`startAtMs`): the run's shared schedule. */
  schedule: FanoutSchedule | null;
  /**
   * With a shared schedule: its measured window on the local wall clock, judged on each frame's
   * sent_at mapped to our clock with the estimate made before the run.
   */
  frameWindow?: { startWallMs: number; endWallMs: number };
  /** This host's clients dealt over its workers, each at its place in the ramp. */
  perWorker: ClientPlan[][];
}

/**
 * Plans a run against a target of `transport` whose keys allow `allowances`, or throws a
 * LoadUsageError naming the option that cannot be met.
 */
export function planFanout(
  transport: string | undefined,
  allowances: readonly KeyAllowance[],
  options: FanoutOptions,
): FanoutPlan {
  const o = resolveFanoutOptions(options);
  const thresholds = parseThresholds(o.thresholds, 'fanout');
  if (transport === 'socketio') {
    // Refused up front: raw WebSocket clients against a Socket.IO endpoint would all fail to connect.
    throw new LoadUsageError(
      `load fanout drives the raw WebSocket stream; the profile's transport is socketio, ` +
        `which it does not speak (load rest works with this profile)`,
    );
  }
  const shard = shardRange(o.clients, options.shard);
  const mine = shard.to - shard.from;
  if (mine > MAX_CLIENTS_PER_HOST)
    throw new LoadUsageError(
      `--clients ${o.clients}${options.shard ? ` --shard ${options.shard.index}/${options.shard.count}` : ''}: ` +
        `${mine} clients on this host; one host opens at most ${MAX_CLIENTS_PER_HOST}: spread them over more shards`,
    );
  const keys = assignKeys(o.clients, allowances);
  if (options.shard && mine < 1)
    throw new LoadUsageError(
      `--shard ${options.shard.index}/${options.shard.count}: no clients left for this shard (--clients ${o.clients})`,
    );
  if (options.startAtMs !== undefined && options.subscribeAfterRamp)
    throw new LoadUsageError(
      '--start-at and --subscribe-after-ramp: the shared schedule subscribes as clients connect; give one',
    );
  const startAtMs = options.startAtMs;
  const schedule =
    startAtMs === undefined
      ? null
      : fanoutSchedule({
          clients: o.clients,
          rampRate: o.rampRate,
          warmupMs: o.warmupMs,
          durationS: o.durationMs / 1000,
          startAtMs,
        });
  const workerCount = Math.min(o.workers, mine);
  const perWorker: ClientPlan[][] = Array.from({ length: workerCount }, () => []);
  for (let i = shard.from; i < shard.to; i++)
    perWorker[i % workerCount]!.push({ index: i, key: keys[i]!, startAtMs: (i * 1000) / o.rampRate });
  return {
    o,
    thresholds,
    shard,
    clients: mine,
    keys,
    schedule,
    ...(schedule && startAtMs !== undefined
      ? {
          frameWindow: {
            startWallMs: startAtMs + schedule.windowStartMs,
            endWallMs: startAtMs + schedule.windowEndMs,
          },
        }
      : {}),
    perWorker,
  };
}
