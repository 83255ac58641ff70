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
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { Allowance, ConnectionBudgetView, KeyLease } from './check.ts';
import type { Profile } from './profile.ts';
import { AbortedError } from './errors.ts';
import { STATUS } from './spec.ts';
import {
  ALLOWANCE_SEARCH_MAX_MS,
  RELEASE_MARGIN_MS,
  RELEASE_TIMING_STEP_MS,
  RETRY_STEPS_MS,
  WAIT_DEFAULTS,
  type RunTiming,
} from './timing/index.ts';
import type { OpenOptions, OpenResult, Refusal, StreamClient, StreamSession } from './transports/stream.ts';

/**
 * Most connections opened to find an allowance the profile does not state: more than a run holds
 * at once (4 checks and 3 keep-alive lanes, one connection each), few enough to open in well
 * under a second on any service. A key that accepts them all is lent this many.
 */
export const DISCOVERY_CAP = 10;

/** `status_number` of a handshake refusal body, when it has one. */
export function refusalStatus(refusal: Refusal): unknown {
  const body = refusal.json;
  return body !== null && typeof body === 'object' ? (body as Record<string, unknown>).status_number : undefined;
}
/**
 * Whether the engine treats a refusal as the key's limit when it budgets: a 50009 under
 * `status_number`, or under a `code` a target put in its place. Judging the body is the checks'
 * work; a budget that missed a misshapen 50009 would open past the allowance and blame the target
 * for refusals the run caused.
 */
const isLimitRefusal = (r: OpenResult): r is Refusal => {
  if (r.ok) return false;
  const body = r.json;
  if (body === null || typeof body !== 'object') return false;
  const { status_number, code } = body as Record<string, unknown>;
  return [status_number, code].some((v) => String(v) === STATUS.CONNECTION_LIMIT);
};

interface Waiter {
  n: number;
  freeze: boolean;
  grant: () => void;
}

/** One key's slots: a FIFO queue, a freeze for limit checks, and the cool-down a released slot takes. */
export class KeyPool {
  /** Slots held by checks (open sessions, opens in flight, loans). */
  private held = 0;
  /** Slots given back but not yet lent again: the target may still count them for `cooldownMs`. */
  private cooling = 0;
  private frozen = false;
  /** Opens of lent slots in flight (possibly waiting out a 50009): not yet counted by the target. */
  private opening = 0;
  private closes = 0;
  /** When connections of this key closed, oldest first; only those within the release wait are kept. */
  private recentCloses: number[] = [];
  /** Learned from 50009s waited out: how long after a close this target frees the slot. */
  private cooldownMs = 0;
  private readonly queue: Waiter[] = [];
  private readonly coolWaiters = new Set<() => void>();
  private readonly coolTimers = new Set<NodeJS.Timeout>();

  /**
   * @param releaseWaitMs How long a 50009 after a close is waited out (the run's `waits.releaseMs`):
   * no close older than that explains a refusal, and no cool-down is learned longer than it.
   */
  constructor(
    readonly name: string,
    readonly allowance: Allowance,
    cooldownMs = 0,
    private readonly releaseWaitMs: () => number = () => WAIT_DEFAULTS.releaseMs,
  ) {
    this.cooldownMs = cooldownMs;
  }

  /** Connections lent at once. */
  get size(): number {
    return this.allowance.lent;
  }
  private get free(): number {
    return this.size - this.held - this.cooling;
  }
  /** Slots that checks hold right now. */
  get inUse(): number {
    return this.held;
  }
  /** How long a released slot stays out of the queue, ms. */
  get cooldown(): number {
    return this.cooldownMs;
  }

  /** Waits its turn for `n` slots. */
  take(n: number, signal: AbortSignal): Promise<void> {
    return this.enqueue({ n, freeze: false }, signal);
  }

  /**
   * Takes a slot at once, over the allowance if need be (a limit check's deliberate extra
   * connection); returns whether it was within. Slots still cooling down count as free: the open
   * waits out a 50009 they may still cause.
   */
  overdraw(): boolean {
    const within = this.held < this.size;
    this.held++;
    return within;
  }

  /** Gives `n` slots back; after a connection that was open they cool down first. */
  give(n: number, used: boolean): void {
    this.held -= n;
    if (!used) {
      this.pump();
      return;
    }
    this.closes++;
    const now = performance.now();
    for (let i = 0; i < n; i++) this.recentCloses.push(now);
    this.recentCloses = this.recentCloses.filter((at) => now - at <= this.releaseWaitMs());
    if (this.cooldownMs <= 0) {
      this.pump();
      return;
    }
    this.cooling += n;
    const timer = setTimeout(() => {
      this.coolTimers.delete(timer);
      this.cooling -= n;
      this.notifySettled();
      this.pump();
    }, this.cooldownMs);
    this.coolTimers.add(timer);
    this.holdProcess();
  }

  /** A cooling slot keeps the process alive only while someone waits for it (a finished run exits at once). */
  private holdProcess(): void {
    const waited = this.queue.length > 0 || this.coolWaiters.size > 0;
    for (const t of this.coolTimers)
      if (waited) t.ref();
      else t.unref();
  }

  /**
   * `n` connections opened outside the pool (the search for the allowance) closed just now: their
   * slots cool down like any other.
   */
  closedOutside(n: number): void {
    if (n === 0) return;
    this.held += n;
    this.give(n, true);
  }

  /**
   * A 50009 was waited out: the slot that came free may be the oldest one closed within the
   * wait, not the last (several checks close and wait at once), so slots are held back as long as
   * the oldest recent close took. Erring long costs time; erring short lends a slot the target
   * still counts and starves the check it was lent to.
   */
  learn(waitedMs: number): void {
    const now = performance.now();
    const oldest = this.recentCloses.find((at) => now - at <= this.releaseWaitMs());
    if (oldest === undefined) return;
    // No longer than the wait itself, either: a target that refuses now and then for reasons of
    // its own would otherwise teach the whole window after every close.
    const learned = Math.min(now - oldest, waitedMs);
    this.cooldownMs = Math.min(this.releaseWaitMs(), Math.max(this.cooldownMs, Math.ceil(learned) + RELEASE_MARGIN_MS));
  }

  /** Waits its turn, then lends no slot until released; the slots others hold stay theirs. */
  async freeze(signal: AbortSignal): Promise<KeyLease> {
    await this.enqueue({ n: 0, freeze: true }, signal);
    const closes0 = this.closes;
    let released = false;
    // `count`: connections the holder has open; `own`: how many of the closes since were the holder's.
    const mine = { count: 0, own: 0 };
    return Object.assign(mine, {
      heldByOthers: () => this.held - mine.count,
      closedSince: () => this.closes - closes0 - mine.own,
      settled: () => this.settled(signal),
      release: () => {
        if (released) return;
        released = true;
        this.frozen = false;
        this.pump();
      },
    });
  }

  /**
   * An open of a lent slot starts or ends. While one is in flight the target's count and ours
   * disagree (it may be waiting out a slot not yet freed), so a limit check does not measure then.
   */
  opened(starting: boolean): void {
    this.opening += starting ? 1 : -1;
    this.notifySettled();
  }

  private notifySettled(): void {
    if (this.cooling === 0 && this.opening === 0) for (const done of this.coolWaiters) done();
  }

  /** Resolves when no released slot is cooling down and no lent slot is still being opened. */
  private settled(signal: AbortSignal): Promise<void> {
    if (this.cooling === 0 && this.opening === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (): void => {
        this.coolWaiters.delete(done);
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        this.coolWaiters.delete(done);
        this.holdProcess();
        reject(new AbortedError('aborted while waiting for closed connections of the key to be freed'));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.coolWaiters.add(done);
      this.holdProcess();
    });
  }

  private enqueue(entry: Omit<Waiter, 'grant'>, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        ...entry,
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        this.holdProcess();
        reject(new AbortedError(`aborted while waiting for a connection slot of keys.${this.name}`));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
      this.pump();
    });
  }

  private pump(): void {
    // First come, first served: a waiting limit check is not starved by single opens.
    while (!this.frozen && this.queue.length > 0 && (this.queue[0]!.freeze || this.queue[0]!.n <= this.free)) {
      const head = this.queue.shift()!;
      this.held += head.n;
      // Frozen as it is granted: the next waiter in this same loop must already see it.
      if (head.freeze) this.frozen = true;
      head.grant();
    }
    this.holdProcess();
  }
}

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
export class ConnectionBudget {
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

/**
 * Opens connections of `key` one at a time until a 50009, another refusal, an error or the cap;
 * closes them all. When a 50009 ended the search, it also times how long the target takes to free
 * a closed connection's slot (one closed, the next open retried until accepted), so that checks
 * are not lent a slot the target still counts.
 */
async function findAllowance(
  client: StreamClient,
  key: string,
  signal: AbortSignal,
  releaseWaitMs: number,
): Promise<{ allowance: Allowance; opened: number; releaseMs?: number }> {
  const sessions: StreamSession[] = [];
  const steps: string[] = [];
  let started = performance.now();
  let allowance: Allowance | undefined;
  let releaseMs: number | undefined;
  try {
    while (!allowance) {
      const n = sessions.length + 1;
      if (n > DISCOVERY_CAP || performance.now() - started > ALLOWANCE_SEARCH_MAX_MS) {
        const why =
          n > DISCOVERY_CAP ? `the cap of ${DISCOVERY_CAP}` : `the ${ALLOWANCE_SEARCH_MAX_MS} ms the search may take`;
        allowance = {
          lent: sessions.length,
          connections: sessions.length,
          source: 'at-least',
          steps,
          note: `${sessions.length} connection(s) accepted before ${why}, none refused: the allowance is at least that`,
        };
        break;
      }
      let result: OpenResult;
      try {
        // The first connection is waited out like any other within the allowance: a key that can
        // stream allows one, and a slot of an earlier run may not be free yet.
        result =
          n === 1
            ? await openWaitingOut(client, { key }, signal, () => undefined, releaseWaitMs)
            : await client.open({ key });
      } catch (err) {
        steps.push(`connection ${n}: ${err instanceof Error ? err.message : String(err)}`);
        allowance =
          sessions.length > 0
            ? {
                lent: sessions.length,
                connections: sessions.length,
                source: 'at-least',
                steps,
                note:
                  `${sessions.length} connection(s) accepted, then connection ${n} ` +
                  `failed: the allowance is at least ${sessions.length}`,
              }
            : // A stream that completes no handshake cannot be pushed over its allowance, and lending it
              // one connection at a time would only make every check wait out the last one's failure.
              {
                lent: DISCOVERY_CAP,
                source: 'unknown',
                steps,
                note:
                  `the first connection failed (${err instanceof Error ? err.message : String(err)}): ` +
                  `lent as many at a time as the search would have opened`,
              };
        break;
      }
      if (result.ok) {
        sessions.push(result.session);
        steps.push(`connection ${n}: accepted`);
        // Waiting out a slot an earlier run still held is not the search's time.
        if (n === 1) started = performance.now();
        continue;
      }
      steps.push(
        `connection ${n}: refused, HTTP ${result.status}, status_number ${JSON.stringify(refusalStatus(result))}` +
          (isLimitRefusal(result) && refusalStatus(result) !== STATUS.CONNECTION_LIMIT
            ? `, ${STATUS.CONNECTION_LIMIT} under code`
            : ''),
      );
      if (isLimitRefusal(result) && sessions.length > 0) {
        allowance = {
          lent: sessions.length,
          connections: sessions.length,
          source: 'found',
          steps,
          note: `${sessions.length} connection(s) accepted, connection ${n} refused with ${STATUS.CONNECTION_LIMIT}`,
        };
        releaseMs = await timeRelease(client, key, sessions, signal, releaseWaitMs);
        if (releaseMs !== undefined) steps.push(`one closed: its slot was free again after ${releaseMs} ms`);
      } else {
        allowance = {
          lent: Math.max(1, sessions.length),
          source: 'unknown',
          steps,
          note:
            `connection ${n} refused with status_number ${JSON.stringify(refusalStatus(result))} ` +
            `(HTTP ${result.status}), not ${STATUS.CONNECTION_LIMIT}: ` +
            `${sessions.length > 0 ? `lent ${sessions.length} at a time` : 'lent one connection at a time'}`,
        };
      }
    }
  } finally {
    await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  }
  return { allowance, opened: sessions.length, ...(releaseMs === undefined ? {} : { releaseMs }) };
}

/**
 * Closes the last of `sessions` and reopens until accepted (at most `releaseWaitMs`); the ms from
 * close to accepted, or undefined.
 */
async function timeRelease(
  client: StreamClient,
  key: string,
  sessions: StreamSession[],
  signal: AbortSignal,
  releaseWaitMs: number,
): Promise<number | undefined> {
  const closed = await sessions.pop()!.close();
  // A dozen refusals over 3 s at most.
  const again = await openWaitingOut(client, { key }, signal, () => undefined, releaseWaitMs, [
    RELEASE_TIMING_STEP_MS,
  ]).catch(() => undefined);
  if (!again?.ok) return undefined;
  sessions.push(again.session);
  // Accepted at the first attempt: the slot was free by the time we asked.
  return again.waitedOut ? Math.max(0, Math.round(again.session.startedAtMs - closed.atMs)) : 0;
}

/**
 * Opens a connection the harness believes is within the key's allowance. A 50009 then means the
 * target has not freed a slot yet; it is waited out for `releaseWaitMs`, attempt by attempt.
 * Resolves with the last result and how many 50009s were waited out.
 */
async function openWaitingOut(
  client: StreamClient,
  options: OpenOptions,
  signal: AbortSignal,
  note: (text: string) => void,
  releaseWaitMs: number,
  steps: readonly number[] = RETRY_STEPS_MS,
  waiting: <T>(pause: Promise<T>) => Promise<T> = (pause) => pause,
): Promise<OpenResult & { waitedOut?: number; waitedMs?: number }> {
  const first = performance.now();
  for (let attempt = 0; ; attempt++) {
    const result = await client.open(options);
    if (!isLimitRefusal(result))
      return Object.assign(result, attempt > 0 ? { waitedOut: attempt, waitedMs: performance.now() - first } : {});
    const waited = performance.now() - first;
    if (waited >= releaseWaitMs) return Object.assign(result, { waitedOut: attempt });
    const pauseMs = Math.min(steps[Math.min(attempt, steps.length - 1)]!, releaseWaitMs - waited);
    note(
      `refused with ${STATUS.CONNECTION_LIMIT} while within the key's allowance: a slot closed ` +
        `a moment ago may not be free yet; trying again in ${Math.round(pauseMs)} ms`,
    );
    // Only the pauses are the target's time: a handshake that hangs still runs down the check's limit.
    await waiting(sleep(pauseMs, undefined, { signal }));
  }
}

export interface CheckLoanOptions {
  /** The key `open()` sends when given none. */
  primaryKey: string;
  signal: AbortSignal;
  /** A line in the check's transcript. */
  note(text: string): void;
  /** Ends the check as a skip (it needs more connections at once than the key allows). */
  skip(reason: string): never;
  /** The check starts (true) or stops (false) waiting for a slot. */
  onWait?(waiting: boolean): void;
}

interface Holding {
  singles: number;
  loan: number;
  loanUsed: boolean;
  lease?: KeyLease & { count: number; own: number };
}

/** One check's view of the budget: what it holds of each key, and the stream client that borrows for it. */
export class CheckLoans implements ConnectionBudgetView {
  private readonly holdings = new Map<KeyPool, Holding>();
  /** Loans and leases not given back yet: the check's end gives them back. */
  private readonly outstanding = new Set<() => void>();
  private waiting = 0;

  constructor(
    private readonly budget: ConnectionBudget,
    private readonly options: CheckLoanOptions,
  ) {}

  private holding(pool: KeyPool): Holding {
    let h = this.holdings.get(pool);
    if (!h) {
      h = { singles: 0, loan: 0, loanUsed: false };
      this.holdings.set(pool, h);
    }
    return h;
  }

  private async wait<T>(work: Promise<T>): Promise<T> {
    if (this.waiting++ === 0) this.options.onWait?.(true);
    try {
      return await work;
    } finally {
      if (--this.waiting === 0) this.options.onWait?.(false);
    }
  }

  allowance(key = this.options.primaryKey): Allowance {
    return this.budget.allowance(key);
  }

  async borrow(count: number, key = this.options.primaryKey): Promise<{ release(): void }> {
    const pool = this.budget.pool(key);
    if (!pool) return { release: () => undefined };
    const h = this.holding(pool);
    if (h.singles + h.loan + count > pool.size) {
      this.options.skip(
        `needs ${h.singles + h.loan + count} connection(s) of keys.${pool.name} at once; ${describeLent(pool)}`,
      );
    }
    await this.wait(pool.take(count, this.options.signal));
    h.loan += count;
    const release = (): void => {
      if (!this.outstanding.delete(release)) return;
      h.loan -= count;
      pool.give(count, h.loanUsed);
      h.loanUsed = false;
    };
    this.outstanding.add(release);
    return { release };
  }

  async freeze(key = this.options.primaryKey): Promise<KeyLease> {
    const pool = this.budget.pool(key);
    if (!pool)
      return {
        heldByOthers: () => 0,
        closedSince: () => 0,
        settled: () => Promise.resolve(),
        release: () => undefined,
      };
    const h = this.holding(pool);
    const lease = (await this.wait(pool.freeze(this.options.signal))) as KeyLease & { count: number; own: number };
    lease.count = h.singles;
    h.lease = lease;
    const release = (): void => {
      if (!this.outstanding.delete(release)) return;
      if (h.lease === lease) h.lease = undefined;
      lease.release();
    };
    this.outstanding.add(release);
    return {
      heldByOthers: lease.heldByOthers,
      closedSince: lease.closedSince,
      // Closed slots the target has not freed yet are its pace, not the check's time.
      settled: () => this.wait(lease.settled()),
      release,
    };
  }

  /** Gives back every loan and lease the check still holds (its sessions are closed by then). */
  dispose(): void {
    for (const release of [...this.outstanding]) release();
  }

  /**
   * Wraps a check's stream client: every open of a key of the profile borrows a slot, given back
   * when the session closes.
   */
  stream(inner: StreamClient): StreamClient {
    return {
      now: () => inner.now(),
      closeAll: () => inner.closeAll(),
      open: (options) => this.open(inner, options ?? {}),
    };
  }

  private async open(inner: StreamClient, options: OpenOptions): Promise<OpenResult> {
    const key = options.key === undefined ? this.options.primaryKey : options.key;
    const pool = key === null ? undefined : this.budget.pool(key);
    if (!pool) return inner.open(options);
    const h = this.holding(pool);
    let within = true;
    let give: (used: boolean) => void;
    if (h.lease) {
      // A limit check holding the key still: its extra connection beyond the allowance is the point.
      within = pool.overdraw();
      h.lease.count++;
      const lease = h.lease;
      give = (used) => {
        lease.count--;
        if (used) lease.own++;
        pool.give(1, used);
      };
    } else if (h.loan > 0) {
      h.loan--;
      give = (used) => {
        h.loan++;
        if (used) h.loanUsed = true;
      };
    } else {
      if (h.singles + 1 > pool.size)
        this.options.skip(`needs ${h.singles + 1} connections of keys.${pool.name} at once; ${describeLent(pool)}`);
      await this.wait(pool.take(1, this.options.signal));
      h.singles++;
      give = (used) => {
        h.singles--;
        pool.give(1, used);
      };
    }
    let result: OpenResult & { waitedOut?: number; waitedMs?: number };
    try {
      if (within) pool.opened(true);
      result = within
        ? await openWaitingOut(
            inner,
            options,
            this.options.signal,
            this.options.note,
            this.budget.releaseWaitMs,
            RETRY_STEPS_MS,
            (pause) => this.wait(pause),
          )
        : await inner.open(options);
    } catch (err) {
      give(false);
      throw err;
    } finally {
      if (within) pool.opened(false);
    }
    if (result.waitedOut && result.ok) pool.learn(result.waitedMs ?? 0);
    if (!result.ok) {
      give(false);
      return result;
    }
    void result.session.closed.then(() => give(true));
    return result;
  }
}

function describeLent(pool: KeyPool): string {
  const a = pool.allowance;
  if (a.source === 'profile') return `the profile states an allowance of ${a.connections}`;
  if (a.source === 'found') return `its allowance, found at the start of the run, is ${a.connections}`;
  if (a.source === 'at-least') return `it is lent ${a.lent} at a time (${a.note})`;
  return `its allowance is not known, so it is lent one connection at a time (${a.note})`;
}
