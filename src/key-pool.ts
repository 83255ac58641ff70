/**
 * One key's slots in the run's connection budget (src/connection-budget.ts): a first-come queue, a
 * freeze for the limit checks, and the cool-down a released slot takes before it is lent again.
 */
import { performance } from 'node:perf_hooks';
import type { Allowance, KeyLease } from './check.ts';
import { AbortedError } from './errors.ts';
import { RELEASE_MARGIN_MS, WAIT_DEFAULTS } from './timing/index.ts';

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
  /**
   * Set once a connection within the allowance was refused with 50009 for the whole release wait:
   * the target keeps the slots of closed connections. Said once, in these words; every later open
   * of the key ends at once.
   */
  kept?: string;
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
