/**
 * The executable model of what the spec states about the stream, from its tables:
 *
 * - per connection, the subscription set (States and transitions: subscribe replaces it,
 *   unsubscribe stops the listed pairs, a failed request changes nothing stated; Limits: at most
 *   100 pairs; Authentication 4: a pair must exist and the key must be allowed to read it);
 * - per key, the allowance (Limits: counted per key; beyond it a handshake is refused with 50009;
 *   a closed connection frees its slot);
 * - the keep-alive (Limits: a connection that pings is not closed, one silent for the window is);
 * - the replies (notice frame: method, message, code as a string, the id echoed, data null; ping:
 *   the plain text Pong!).
 *
 * Where the spec says "not shown" the model allows every outcome and records the one the target
 * chose (an unsubscribe of a pair that is not subscribed; what a failed subscribe does to the
 * subscription). Pure: it resolves commands into steps and holds what the target answered to what
 * the spec states; the explorer (suites/ws/explore/) does the I/O.
 */
import { LIMITS, STATUS } from '../spec.ts';
import type { StatementKey } from '../statements.ts';
import type { Command, Step, SubscribePick, UnsubscribePick } from './commands.ts';
import { TRANSITIONS, type TransitionName, TransitionTally } from './transitions.ts';
import { judgeNotice, planRequest } from './requests.ts';
import type { ConnModel, KeyFacts, ModelSetup, ModelViolation, ModelView, RequestPlan } from './model-types.ts';

export type * from './model-types.ts';

/**
 * Fills go to a key allowing at most this many connections where the profile has one: the fill,
 * the refusal beyond it, and the close and the open after it come to at most 8 steps.
 */
export const SHORT_FILL_MAX = 5;
/** Open commands with a key index below this open the key opened last again. */
const SAME_KEY = 3;
/** Share of the pair limit a large subscribe lists: two in a row name more than the limit between them. */
const LARGE_SHARE = 0.6;
const has = (s: ReadonlySet<string> | undefined, p: string): boolean => s?.has(p) ?? false;

/**
 * Keys a fill goes to: those of an allowance up to SHORT_FILL_MAX, and of them those allowing
 * several connections where there are any: their refill takes a slot while another connection of
 * the key stays open, where a key of one connection only repeats the scripted checks' close and open.
 */
function fillKeys(keys: readonly KeyFacts[]): KeyFacts[] {
  const small = keys.filter((k) => k.allowance !== undefined && k.allowance <= SHORT_FILL_MAX);
  const several = small.filter((k) => k.allowance! > 1);
  return several.length ? several : small;
}

/**
 * The connection's set with one pair left out and one pool pair added: the next subscribe both keeps
 * pairs and drops one, and a set of one is kept whole.
 */
function keptPairs(c: ConnModel, pool: readonly string[], pick: readonly number[]): string[] {
  const current = [...(c.subs ?? [])].sort();
  const kept = current.length > 1 ? current.filter((_p, i) => i !== pick[0]! % current.length) : current;
  const added = pickFrom(
    pool.filter((p) => !current.includes(p)),
    pick,
  ).slice(0, 1);
  return kept.length + added.length ? [...kept, ...added] : pickFrom(pool, pick);
}
const pickFrom = <T>(items: readonly T[], pick: readonly number[]): T[] =>
  items.length === 0 ? [] : [...new Set(pick.map((i) => items[i % items.length]!))];

/** The model of one sequence: its connections, each key's count, what was judged and what broke. */
export class ExploreModel implements ModelView {
  readonly conns: ConnModel[] = [];
  private readonly counts = new Map<string, number>();
  /** Whether the sequence has made its one deliberate connection beyond an allowance. */
  refusalUsed = false;
  /** The key the sequence may go beyond the allowance of: the key it filled first. */
  private refusalKey: string | undefined;
  readonly tally = new TransitionTally();
  readonly violations: ModelViolation[] = [];
  /** What the target chose where the spec says "not shown": recorded, never judged. */
  readonly observed: { name: string; value: unknown; note: string }[] = [];
  /** The index of the step running now: what a broken rule is charged to unless told otherwise. */
  step = 0;
  private opened = 0;
  private requests = 0;

  constructor(readonly setup: ModelSetup) {}

  key(name: string): KeyFacts {
    return this.setup.keys.find((k) => k.name === name)!;
  }

  /** Connections of `key` open now (from the model's side: those the target has not closed). */
  openCount(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  /** The open connections, in the order they were opened. */
  openConns(): ConnModel[] {
    return this.conns.filter((c) => c.open);
  }

  conn(name: string): ConnModel {
    return this.conns.find((c) => c.name === name)!;
  }

  /** Records a broken rule of `transition`. */
  violate(transition: TransitionName, received: string, expected: string, rule?: StatementKey, at?: number): void {
    const r = rule ?? TRANSITIONS[transition][0] ?? 'transition:subscribed/unsubscribe';
    this.violations.push({ transition, at: at ?? this.step, seen: this.step, rule: r, received, expected });
  }

  /** Connections of `key` the target counts before the sequence's first step (others' connections). */
  heldBefore(key: string, n: number): void {
    this.counts.set(key, n);
    this.before.set(key, n);
  }
  private readonly before = new Map<string, number>();

  /**
   * The connections the explorer holds (opened, not closed by it), whatever the target closed:
   * commands resolve against these, so that the steps a seed draws do not move with the moment a
   * target's keep-alive closes a connection.
   */
  heldConns(): ConnModel[] {
    return this.conns.filter((c) => !c.clientClosed);
  }

  /** Whether an open of `key` goes beyond its allowance by the connections the explorer holds (see heldConns). */
  beyondHeld(key: string): boolean | undefined {
    const allowance = this.key(key).allowance;
    const held = (this.before.get(key) ?? 0) + this.heldConns().filter((c) => c.key === key).length;
    return allowance === undefined ? undefined : held >= allowance;
  }

  /** Whether an open of `key` now goes beyond its allowance (undefined: unknown, never tried). */
  beyond(key: string): boolean | undefined {
    const allowance = this.key(key).allowance;
    return allowance === undefined ? undefined : this.openCount(key) >= allowance;
  }

  /**
   * The step a command resolves to now, or undefined when it does not apply (nothing open to act
   * on, an allowance full with the one deliberate refusal spent, no pairs for the pick).
   */
  resolve(cmd: Command, budgetLeftMs: number): Step | undefined {
    const open = this.heldConns();
    // Index 0 is the connection opened last: a sequence mostly goes on with what it just opened.
    const on = (i: number): ConnModel | undefined =>
      open.length === 0 ? undefined : open[open.length - 1 - (i % open.length)];
    switch (cmd.op) {
      case 'open': {
        // Low indices open the key opened last again: a key's allowance fills only by opening it again.
        // A fill goes to a key of a small allowance, where there is one.
        const last = this.conns.at(-1)?.key;
        const small = cmd.fill ? fillKeys(this.setup.keys) : [];
        // A sequence that does not start by filling starts on the first key (primary), the key of the
        // watching connection and of the limit's list.
        const key = small.length
          ? small[cmd.key % small.length]!
          : last === undefined || cmd.home
            ? this.setup.keys[0]!
            : cmd.key < SAME_KEY
              ? this.key(last)
              : this.setup.keys[cmd.key % this.setup.keys.length]!;
        const beyond = this.beyondHeld(key.name);
        // The key of the first fill, wherever it comes in the sequence.
        if (cmd.fill) this.refusalKey ??= key.name;
        // Never more connections than a key allows, but for the one deliberate refusal of a known allowance.
        if (beyond === undefined && this.heldConns().some((c) => c.key === key.name)) return undefined;
        if (beyond && (this.refusalUsed || key.name !== this.refusalKey)) return undefined;
        return { op: 'open', conn: `c${this.opened + 1}`, key: key.name, silent: cmd.silent };
      }
      case 'close': {
        const c = on(cmd.conn);
        return c && { op: 'close', conn: c.name };
      }
      case 'ping': {
        const c = on(cmd.conn);
        return c && { op: 'ping', conn: c.name, id: `x${this.requests + 1}` };
      }
      case 'idle': {
        const long = cmd.long && open.some((c) => c.silent) && budgetLeftMs > this.setup.idleMs.long;
        return { op: 'idle', ms: long ? this.setup.idleMs.long : this.setup.idleMs.short };
      }
      case 'subscribe': {
        // The limit's list goes to a connection of the key it was made for, where one is open.
        const limitKey = this.setup.keys[0]!.name;
        const ofKey = open.filter((x) => x.key === limitKey);
        const limit = cmd.pairs.kind === 'at-limit' || cmd.pairs.kind === 'over-limit' || cmd.pairs.kind === 'large';
        const c = limit && ofKey.length ? ofKey[ofKey.length - 1 - (cmd.conn % ofKey.length)] : on(cmd.conn);
        const pairs = c && this.subscribePairs(c, cmd.pairs);
        return c && pairs?.length ? { op: 'subscribe', conn: c.name, pairs, id: `x${this.requests + 1}` } : undefined;
      }
      case 'unsubscribe': {
        // Some, all or more of a subscription go to a connection that has one, where one has: what an
        // unsubscribe does to the pairs it leaves shows only there. The connection the index names
        // comes first, so that requests drawn for one connection stay on it.
        const subscribed = open.filter((x) => (x.subs?.size ?? 0) > 0);
        const named = on(cmd.conn);
        const c =
          cmd.pairs.kind === 'unsubscribed' || !subscribed.length || subscribed.includes(named!)
            ? named
            : subscribed[subscribed.length - 1 - (cmd.conn % subscribed.length)];
        const pairs = c && this.unsubscribePairs(c, cmd.pairs);
        return c && pairs?.length ? { op: 'unsubscribe', conn: c.name, pairs, id: `x${this.requests + 1}` } : undefined;
      }
    }
  }

  /**
   * Right after the sequence went beyond an allowance: one connection of that key closed, then the
   * key opened up to its allowance again. A refusal then is a slot the target did not free (the
   * closed one's, or one the refused attempt kept), charged to this sequence while it is fresh, not
   * to a later one that opens the key.
   */
  refillStep(): Step | undefined {
    const key = this.refusalKey;
    if (!this.refusalUsed || key === undefined || this.refilled) return undefined;
    // Bounded: a refusal the model does not judge (the count moved) must not make it open forever.
    this.refillLeft ??= 2 + this.conns.length;
    const open = this.heldConns().find((c) => c.key === key);
    if (this.refillLeft-- > 0 && open && !this.refilling) {
      this.refilling = true;
      return { op: 'close', conn: open.name };
    }
    this.refilling = true;
    if (this.refillLeft-- <= 0 || this.beyondHeld(key) !== false) {
      this.refilled = true;
      return undefined;
    }
    return { op: 'open', conn: `c${this.opened + 1}`, key, silent: false };
  }
  private refilled = false;
  private refillLeft: number | undefined;
  private refilling = false;

  private subscribePairs(c: ConnModel, pick: SubscribePick): string[] | undefined {
    const key = this.key(c.key);
    switch (pick.kind) {
      case 'pool':
        return pickFrom(key.pairs, pick.pick);
      case 'unknown':
        return [...pickFrom(key.pairs, pick.pick.slice(1)), this.setup.unknownPair];
      case 'refused':
        return key.refused.length
          ? [...pickFrom(key.pairs, pick.pick.slice(1)), ...pickFrom(key.refused, pick.pick)]
          : [];
      case 'kept':
        // A set near the limit is kept as large, its pairs swapped for those it does not have.
        return (c.subs?.size ?? 0) > LIMITS.maxPairsPerSubscribe / 2
          ? this.largePairs(c, key)
          : keptPairs(c, key.pairs, pick.pick);
      case 'again': {
        // What the connection unsubscribed, else what its last subscribe replaced.
        const past = c.unsubscribed.size ? [...c.unsubscribed].sort() : [...c.replaced];
        return past.length ? pickFrom(past, pick.pick) : pickFrom(key.pairs, pick.pick);
      }
      case 'large':
        return key.name === this.setup.keys[0]!.name ? this.largePairs(c, key) : undefined;
      case 'at-limit':
        return key.name === this.setup.keys[0]!.name ? this.setup.atLimit?.slice() : undefined;
      case 'over-limit': {
        const extra = key.pairs.find((p) => !this.setup.atLimit?.includes(p)) ?? this.setup.unknownPair;
        return key.name === this.setup.keys[0]!.name && this.setup.atLimit ? [...this.setup.atLimit, extra] : undefined;
      }
    }
  }

  /**
   * Most of the pair limit, the pairs the connection has not subscribed first: two such subscribes
   * in a row list more pairs between them than the limit, each within it.
   */
  private largePairs(c: ConnModel, key: KeyFacts): string[] | undefined {
    if (!this.setup.atLimit) return undefined;
    const all = [...new Set([...key.pairs, ...this.setup.atLimit])];
    const fresh = all.filter((p) => !has(c.subs, p));
    const size = Math.ceil(LARGE_SHARE * LIMITS.maxPairsPerSubscribe);
    return [...fresh, ...all.filter((p) => has(c.subs, p))].slice(0, size);
  }

  private unsubscribePairs(c: ConnModel, pick: UnsubscribePick): string[] | undefined {
    const subscribed = c.subs ? [...c.subs].sort() : [];
    const others = this.key(c.key).pairs.filter((p) => !has(c.subs, p));
    switch (pick.kind) {
      case 'subset': {
        // Some of them: a subset that named them all is the kind `all`.
        const some = pickFrom(subscribed, pick.pick);
        return some.length === subscribed.length && some.length > 1 ? some.slice(0, -1) : some;
      }
      case 'all':
        return subscribed;
      case 'superset':
        return subscribed.length && others.length
          ? [...pickFrom(subscribed, pick.pick), ...pickFrom(others, pick.pick.slice(0, 1))]
          : undefined;
      case 'unsubscribed':
        return pickFrom(others.length ? others : [this.setup.unknownPair], pick.pick);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Opens and closes

  /** The connection `step` opens was accepted at `at`. */
  opened_(step: Extract<Step, { op: 'open' }>, at: number, startedAt = at): ConnModel {
    const c: ConnModel = {
      name: step.conn,
      key: step.key,
      silent: step.silent,
      open: true,
      openedAt: at,
      startedAt,
      openStep: this.step,
      changeStep: this.step,
      pings: [],
      pingSteps: [],
      subs: new Set(),
      replaced: [],
      unsubscribed: new Set(),
      intervals: new Map(),
      stoppedBy: new Map(),
    };
    this.conns.push(c);
    this.opened++;
    this.counts.set(step.key, this.openCount(step.key) + 1);
    return c;
  }

  /**
   * Holds an open's outcome to the allowance: within it the connection must be accepted (a 50009
   * the target owes to a slot not yet freed was already waited out for the release wait); beyond it
   * the handshake is refused with status_number 50009 and no field `code`.
   */
  judgeOpen(
    step: Extract<Step, { op: 'open' }>,
    outcome:
      | { accepted: true; at: number; startedAt: number }
      | { accepted: false; status: number; body: unknown; text: string },
    countMoved: boolean,
  ): void {
    const beyond = this.beyond(step.key) === true;
    const t: TransitionName = beyond ? 'open beyond the allowance' : 'open within the allowance';
    this.tally.exercised(t);
    if (beyond) this.refusalUsed = true;
    const allowance = this.key(step.key).allowance;
    const count = `${this.openCount(step.key)} of keys.${step.key} open`;
    if (outcome.accepted) {
      this.opened_(step, outcome.at, outcome.startedAt);
      // A connection of the key another check closed meanwhile may have made room: not judged then.
      if (beyond && countMoved) return;
      this.tally.judged(t);
      if (beyond)
        this.violate(
          t,
          `accepted with ${count}`,
          `refused in the handshake with status_number "${STATUS.CONNECTION_LIMIT}"`,
        );
      return;
    }
    this.opened++;
    if (!beyond && countMoved) return;
    this.tally.judged(t);
    const body = outcome.body as Record<string, unknown> | undefined;
    if (!beyond) {
      this.violate(
        t,
        `refused with ${count} (allowance ${allowance ?? 'not known'}): ` +
          `HTTP ${outcome.status} ${outcome.text.slice(0, 200)}`,
        'every connection up to the allowance is accepted, and a closed one frees its slot',
      );
      return;
    }
    if (String(body?.status_number) !== STATUS.CONNECTION_LIMIT)
      this.violate(
        t,
        `refused: HTTP ${outcome.status} ${outcome.text.slice(0, 200)}`,
        `status_number "${STATUS.CONNECTION_LIMIT}"`,
        'status:50009',
      );
    else if (body && 'code' in body)
      this.violate(
        t,
        `refusal body ${outcome.text.slice(0, 200)}`,
        'a handshake error never carries the field code',
        'rule:handshake:never-code',
      );
  }

  /** The client closed `conn` at `at`: its slot is the target's to free. */
  closed(name: string, at: number, by: 'client' | 'server'): void {
    const c = this.conn(name);
    if (!c.open) return;
    c.open = false;
    c.closedAt = at;
    if (by === 'client') c.clientClosed = true;
    this.counts.set(c.key, this.openCount(c.key) - 1);
    for (const list of c.intervals.values()) for (const i of list) if (i.until === undefined) i.until = at;
    if (by === 'client') this.tally.exercised('close frees its slot');
  }

  // -------------------------------------------------------------------------------------------
  // Requests: what a subscribe or unsubscribe expects, and what its notice does (requests.ts)

  /** What a subscribe or unsubscribe step expects of its notice. */
  plan(step: Extract<Step, { op: 'subscribe' | 'unsubscribe' }>): RequestPlan {
    this.requests++;
    return planRequest(this, step);
  }

  /** Holds a notice to the plan and moves the model (requests.ts `judgeNotice`). */
  judgeNotice(
    step: Extract<Step, { op: 'subscribe' | 'unsubscribe' }>,
    plan: RequestPlan,
    notice: Record<string, unknown> | undefined,
    sentAt: number,
    at: number,
  ): 'success' | 'error' | 'none' {
    return judgeNotice(this, step, plan, notice, sentAt, at);
  }

  /** A ping was sent on `conn` at `at`. */
  pinged(name: string, at: number, explicit: boolean): void {
    const c = this.conn(name);
    c.pings.push(at);
    // A keep-alive ping goes out whenever its timer fires: it is charged to the step that last
    // changed the connection, which does not move with timing.
    c.pingSteps.push(explicit ? this.step : c.changeStep);
  }
}
