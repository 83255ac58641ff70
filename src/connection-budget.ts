/**
 * The run's connection budget. Each key of the profile has a WebSocket allowance the target counts
 * (spec: Limits, "WebSocket connections per API key": the allowance differs by key and is not
 * shown), and a refusal the harness provokes by going over it is not the target's failure. So the
 * engine, not the checks, owns one queue of slots per key, like ws's `Limiter` for concurrent
 * inflate jobs: a check's `ctx.stream.open()` waits for a slot of its key and gives it back when
 * the session closes; nobody else keeps a count.
 *
 * A key's slots are its allowance as the profile states it (`keys.X.connections`), or as found at
 * the start of the run (connections opened one at a time until a 50009 or DISCOVERY_CAP), or,
 * lacking both, one at a time: any key that can stream at all allows one connection.
 */
import type { Allowance } from './check.ts';
import type { Profile } from './profile.ts';
import { RELEASE_MARGIN_MS, type RunTiming } from './timing/index.ts';
import type { StreamClient } from './transports/stream.ts';
import { findAllowance } from './allowance-search.ts';
import { CheckLoans, type CheckLoanOptions, type SlotLender } from './check-loans.ts';
import { KeyPool } from './key-pool.ts';

/** The profile's names for each key value (the first name wins; a key value is never printed). */
function keyNames(profile: Profile): Map<string, string> {
  const names = new Map<string, string>();
  for (const [name, entry] of Object.entries(profile.keys))
    if (entry && typeof entry.key === 'string' && !names.has(entry.key)) names.set(entry.key, name);
  return names;
}

/** The allowance a profile states for a key value (any entry with that key), when it states one. */
export function statedAllowance(profile: Profile, key: string): number | undefined {
  for (const entry of Object.values(profile.keys)) {
    const connections = (entry as { connections?: unknown } | undefined)?.connections;
    if (entry && entry.key === key && typeof connections === 'number') return connections;
  }
  return undefined;
}

/**
 * Keys whose allowance the run looks for when the profile does not state it: the one most checks
 * use, and the one the limit checks judge.
 */
export const DISCOVERED_KEYS = ['primary', 'limited'] as const;

/** One run's budget: a pool per key of the profile. */
export class ConnectionBudget implements SlotLender {
  private readonly pools = new Map<string, KeyPool>();
  private readonly names: Map<string, string>;
  /**
   * @param timing The run's timing: the release wait is read from it, and the release time
   * `discover` measures is reported to it.
   */
  constructor(
    private readonly profile: Profile,
    private readonly timing: RunTiming,
  ) {
    this.names = keyNames(profile);
  }

  /** How long a 50009 within the allowance is waited out, as of now. */
  get releaseWaitMs(): number {
    return this.timing.waits.releaseMs;
  }

  /**
   * How long a released slot is held back before it is lent again: what the profile states, so
   * that a check is not lent a slot the target still counts (otherwise learned from 50009s).
   */
  private get statedCooldownMs(): number {
    const stated = this.profile.timing?.slotReleaseMs;
    return stated ? stated + RELEASE_MARGIN_MS : 0;
  }

  /**
   * The budget of a run, with the allowances the profile leaves out looked for through `search`
   * (a stream client that records nothing) before the first check, while no check holds a
   * connection. Without a client (no check streams) nothing is looked for; a search that fails
   * leaves the key lent one connection at a time.
   */
  static async forRun(
    profile: Profile,
    timing: RunTiming,
    search: StreamClient | undefined,
    signal: AbortSignal,
  ): Promise<ConnectionBudget> {
    const budget = new ConnectionBudget(profile, timing);
    if (search) await budget.discover(search, signal).catch(() => undefined);
    return budget;
  }

  /**
   * The pool of a key value of the profile; undefined for any other key (no key, an invalid one:
   * the target counts none).
   */
  pool(key: string): KeyPool | undefined {
    const name = this.names.get(key);
    if (name === undefined) return undefined;
    let pool = this.pools.get(key);
    if (!pool) {
      const stated = statedAllowance(this.profile, key);
      pool = new KeyPool(
        name,
        stated !== undefined
          ? { lent: stated, connections: stated, source: 'profile', steps: [] }
          : {
              lent: 1,
              source: 'unknown',
              steps: [],
              note: 'not stated in the profile and not looked for: lent one connection at a time',
            },
        this.statedCooldownMs,
        () => this.releaseWaitMs,
      );
      this.pools.set(key, pool);
    }
    return pool;
  }

  /** What the run knows of a key's allowance. */
  allowance(key: string): Allowance {
    return (
      this.pool(key)?.allowance ?? {
        lent: Number.POSITIVE_INFINITY,
        source: 'unknown',
        steps: [],
        note: 'not a key of the profile',
      }
    );
  }

  /**
   * Finds the allowance of the profile's `primary` and `limited` keys that the profile leaves out:
   * connections opened one at a time until a 50009 or DISCOVERY_CAP, then all closed. Runs before
   * any check, so nothing else of the run holds a connection of the key meanwhile.
   */
  async discover(client: StreamClient, signal: AbortSignal): Promise<void> {
    for (const name of DISCOVERED_KEYS) {
      const key = (this.profile.keys[name] as { key?: unknown } | undefined)?.key;
      if (typeof key !== 'string' || statedAllowance(this.profile, key) !== undefined || this.pools.has(key)) continue;
      const found = await findAllowance(client, key, signal, this.releaseWaitMs);
      if (found.releaseMs !== undefined) this.timing.observeSlotRelease(found.releaseMs);
      const pool = new KeyPool(
        this.names.get(key)!,
        found.allowance,
        Math.max(this.statedCooldownMs, found.releaseMs ? found.releaseMs + RELEASE_MARGIN_MS : 0),
        () => this.releaseWaitMs,
      );
      pool.closedOutside(found.opened);
      this.pools.set(key, pool);
    }
  }

  /**
   * The budget as one check sees it; `onWait` hears when the check starts and stops waiting for a
   * slot (its time limit pauses meanwhile).
   */
  forCheck(options: CheckLoanOptions): CheckLoans {
    return new CheckLoans(this, options);
  }
}
