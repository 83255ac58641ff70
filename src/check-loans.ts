/**
 * One check's loans from the run's connection budget: what it holds of each key, and the stream
 * client that borrows a slot for every open and gives it back when the session closes.
 */
import type { Allowance, ConnectionBudgetView, KeyLease, Violation } from './check.ts';
import type { KeyPool } from './key-pool.ts';
import { describeRefusalBody, isLimitRefusal, openWaitingOut } from './limit-refusal.ts';
import { NOTHING_TO_JUDGE } from './coverage.ts';
import { STATUS } from './spec.ts';
import { RETRY_STEPS_MS } from './timing/index.ts';
import type { OpenOptions, OpenResult, Refusal, StreamClient } from './transports/stream.ts';

/** What a check's loans need of the run's budget. */
export interface SlotLender {
  /** The pool of a key value of the profile; undefined for any other key. */
  pool(key: string): KeyPool | undefined;
  /** What the run knows of a key's allowance. */
  allowance(key: string): Allowance;
  /** How long a 50009 within the allowance is waited out, as of now. */
  readonly releaseWaitMs: number;
}

export interface CheckLoanOptions {
  /** The key `open()` sends when given none. */
  primaryKey: string;
  signal: AbortSignal;
  /** A line in the check's transcript. */
  note(text: string): void;
  /** Ends the check as a skip (it needs more connections at once than the key allows). */
  skip(reason: string, nothingToJudge?: string): never;
  /**
   * Told, once per key in the run, that the target kept the slot of a closed connection: a
   * violation of the allowance rule, which its owner fails on (ws.limits.connections.slot-freed).
   */
  slotKept?(v: Violation): void;
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
    private readonly budget: SlotLender,
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

  /** Whether the check holds connections of keys other than `pool`'s under a freeze (it compares keys). */
  private holdsOtherKeys(pool: KeyPool): boolean {
    return [...this.holdings].some(([p, h]) => p !== pool && (h.lease?.count ?? 0) > 0);
  }

  /** Ends the check at once, not judged, when the target keeps the slots of the key's closed connections. */
  private noConnection(pool: KeyPool): void {
    if (pool.kept !== undefined) this.notJudged(pool, pool.kept);
  }

  private notJudged(pool: KeyPool, kept: string): never {
    return this.options.skip(
      `not judged: no connection of keys.${pool.name}: the target keeps the slots of closed connections ` +
        `(${kept}); ws.limits.connections.slot-freed judges that`,
      NOTHING_TO_JUDGE.connection,
    );
  }

  async borrow(count: number, key = this.options.primaryKey): Promise<{ release(): void }> {
    const pool = this.budget.pool(key);
    if (!pool) return { release: () => undefined };
    this.noConnection(pool);
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
    this.noConnection(pool);
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
   * The target kept a slot of `pool`'s key: one finding for the run, then this check and every
   * later one that needs a connection of the key end at once, not judged.
   */
  private kept(pool: KeyPool, refusal: Refusal): never {
    if (pool.kept === undefined) {
      const finding = keptFinding(pool, pool.inUse, describeRefusalBody(refusal), this.budget.releaseWaitMs);
      pool.kept = `${STATUS.CONNECTION_LIMIT} within the allowance for ${this.budget.releaseWaitMs} ms`;
      this.options.slotKept?.(finding);
    }
    return this.notJudged(pool, pool.kept);
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
    this.noConnection(pool);
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
      // Refused for the whole release wait while within the allowance: the slot was never freed,
      // unless the check holds other keys full at once (their count may include this one's).
      if (within && isLimitRefusal(result) && !this.holdsOtherKeys(pool)) this.kept(pool, result);
      return result;
    }
    void result.session.closed.then(() => give(true));
    return result;
  }
}

/** What a refusal within the allowance after the whole release wait says of the target. */
function keptFinding(pool: KeyPool, held: number, body: string, releaseWaitMs: number): Violation {
  return {
    received:
      `keys.${pool.name}: a connection within its allowance (${held} held by the run; ${describeLent(pool)}) ` +
      `refused with ${body} for the whole release wait of ${releaseWaitMs} ms`,
    expected:
      'closing a connection frees its slot: a connection within the allowance is accepted once the ' +
      `target's release time has passed (timing.slotReleaseMs, or timing.slotReleaseWaitMs / --slot-release-wait)`,
    rule: 'limit:connections-per-key',
  };
}

function describeLent(pool: KeyPool): string {
  const a = pool.allowance;
  if (a.source === 'profile') return `the profile states an allowance of ${a.connections}`;
  if (a.source === 'found') return `its allowance, found at the start of the run, is ${a.connections}`;
  if (a.source === 'at-least') return `it is lent ${a.lent} at a time (${a.note})`;
  return `its allowance is not known, so it is lent one connection at a time (${a.note})`;
}
