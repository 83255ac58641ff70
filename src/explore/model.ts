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
import { LIMITS, METHOD, STATUS, TEXT, pairNotFoundMessage } from '../spec.ts';
import type { StatementKey } from '../statements.ts';
import type { Command, Step, SubscribePick, UnsubscribePick } from './commands.ts';
import { TRANSITIONS, type TransitionName, TransitionTally } from './transitions.ts';

/** A key of the profile as the model knows it. */
export interface KeyFacts {
  /** Its name in the profile (`primary`, `limited`…). */
  name: string;
  /** Its allowance, when the profile states it or the run found it; unknown: never exceeded. */
  allowance?: number;
  /** Pool pairs the key may subscribe to. */
  pairs: readonly string[];
  /** Pairs the key may not read (outside its whitelist or asset types): refused on subscribe. */
  refused: readonly string[];
}

/** What the model knows of the target before the first step. */
export interface ModelSetup {
  keys: readonly KeyFacts[];
  /** A well-formed pair code no catalogue carries. */
  unknownPair: string;
  /** Exactly the pair limit of pairs the primary key may subscribe to, when the catalogue has them. */
  atLimit?: readonly string[];
  /** Pairs seen accepted: a 50104 for one of them is no "inactive or suspended" pair. */
  accepted: ReadonlySet<string>;
  /** Ms of a long idle (past the keep-alive window) and of a short one. */
  idleMs: { short: number; long: number };
}

/** A step the target's answer broke the model at. */
export interface ModelViolation {
  transition: TransitionName;
  /** The step whose expectation the answer broke (its index in the sequence). */
  at: number;
  /** The statement the answer breaks. */
  rule: StatementKey;
  received: string;
  expected: string;
}

/** Why a push of a pair is allowed on a connection from `from` until `until` (open: still allowed). */
export interface PushInterval {
  from: number;
  until?: number;
  /** The transition that started it: its rule is the one a missing push breaks. */
  by: TransitionName;
  /** Pushes must show: the subscription is exactly known (false after a failed request). */
  due: boolean;
  /** When the request that started it was answered (pushes are expected from then on). */
  answeredAt?: number;
  /** The step that started it (or kept it, last); the step that stopped it. */
  step: number;
  stopStep?: number;
}

/** One connection of a sequence. */
export interface ConnModel {
  name: string;
  key: string;
  silent: boolean;
  open: boolean;
  openedAt: number;
  /** When its handshake began: the earliest the target can have started its keep-alive window. */
  startedAt: number;
  /** The step that opened it; the last step that opened or subscribed it, or unsubscribed it. */
  openStep: number;
  changeStep: number;
  /** Pings sent, when (stream clock, ms), and during which step. */
  pings: number[];
  pingSteps: number[];
  /** The subscription, exactly; undefined once a failed request left it not stated. */
  subs: Set<string> | undefined;
  /** Per pair, the intervals during which its pushes are allowed. */
  intervals: Map<string, PushInterval[]>;
  /** Why the stream clock time a pair was last stopped: its rule when a push comes after. */
  stoppedBy: Map<string, TransitionName>;
  closedAt?: number;
}

/** The requests' answers as the model expects them. */
export type NoticeExpectation =
  | { kind: 'success'; method: string; message: string }
  | { kind: 'error'; codes: readonly string[]; message?: string }
  | { kind: 'either'; method: string; message: string; codes?: readonly string[] };

/** What a request step expects and which transition it takes. */
export interface RequestPlan {
  transition: TransitionName;
  expect: NoticeExpectation;
}

/** Open commands with a key index below this open the key opened last again. */
const SAME_KEY = 3;
const has = (s: ReadonlySet<string> | undefined, p: string): boolean => s?.has(p) ?? false;
const pickFrom = <T>(items: readonly T[], pick: readonly number[]): T[] =>
  items.length === 0 ? [] : [...new Set(pick.map((i) => items[i % items.length]!))];

/** The model of one sequence: its connections, each key's count, what was judged and what broke. */
export class ExploreModel {
  readonly conns: ConnModel[] = [];
  private readonly counts = new Map<string, number>();
  /** Whether the sequence has made its one deliberate connection beyond an allowance. */
  refusalUsed = false;
  /** The key the sequence may go beyond the allowance of: the key it opened first. */
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
    this.violations.push({ transition, at: at ?? this.step, rule: r, received, expected });
  }

  /** Connections of `key` the target counts before the sequence's first step (others' connections). */
  heldBefore(key: string, n: number): void {
    this.counts.set(key, n);
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
    const open = this.openConns();
    // Index 0 is the connection opened last: a sequence mostly goes on with what it just opened.
    const on = (i: number): ConnModel | undefined =>
      open.length === 0 ? undefined : open[open.length - 1 - (i % open.length)];
    switch (cmd.op) {
      case 'open': {
        // Low indices open the key opened last again: a key's allowance fills only by opening it again.
        const last = this.conns.at(-1)?.key;
        const key =
          last !== undefined && cmd.key < SAME_KEY
            ? this.key(last)
            : this.setup.keys[cmd.key % this.setup.keys.length]!;
        const beyond = this.beyond(key.name);
        this.refusalKey ??= key.name;
        // Never more connections than a key allows, but for the one deliberate refusal of a known allowance.
        if (beyond === undefined && this.openCount(key.name) >= 1) return undefined;
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
        const c = on(cmd.conn);
        const pairs = c && this.subscribePairs(c, cmd.pairs);
        return c && pairs?.length ? { op: 'subscribe', conn: c.name, pairs, id: `x${this.requests + 1}` } : undefined;
      }
      case 'unsubscribe': {
        const c = on(cmd.conn);
        const pairs = c && this.unsubscribePairs(c, cmd.pairs);
        return c && pairs?.length ? { op: 'unsubscribe', conn: c.name, pairs, id: `x${this.requests + 1}` } : undefined;
      }
    }
  }

  /**
   * After the commands of a sequence that went beyond an allowance: its connections of that key
   * closed, then the key opened up to its allowance again. A refusal then is a slot the target did
   * not free, charged to this sequence, not to the next one that opens the key.
   */
  refillStep(): Step | undefined {
    const key = this.refusalKey;
    if (!this.refusalUsed || key === undefined) return undefined;
    // Bounded: a refusal the model does not judge (the count moved) must not make it open forever.
    this.refillLeft ??= 2 * (this.key(key).allowance ?? 0) + this.conns.length;
    if (this.refillLeft-- <= 0) return undefined;
    const open = this.openConns().find((c) => c.key === key);
    if (open && !this.refilling) return { op: 'close', conn: open.name };
    this.refilling = true;
    if (this.refilled.has(key) || this.beyond(key) !== false) {
      this.refilled.add(key);
      return undefined;
    }
    return { op: 'open', conn: `c${this.opened + 1}`, key, silent: false };
  }
  private readonly refilled = new Set<string>();
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
      case 'at-limit':
        return key.name === this.setup.keys[0]!.name ? this.setup.atLimit?.slice() : undefined;
      case 'over-limit': {
        const extra = key.pairs.find((p) => !this.setup.atLimit?.includes(p)) ?? this.setup.unknownPair;
        return key.name === this.setup.keys[0]!.name && this.setup.atLimit ? [...this.setup.atLimit, extra] : undefined;
      }
    }
  }

  private unsubscribePairs(c: ConnModel, pick: UnsubscribePick): string[] | undefined {
    const subscribed = c.subs ? [...c.subs].sort() : [];
    const others = this.key(c.key).pairs.filter((p) => !has(c.subs, p));
    switch (pick.kind) {
      case 'subset':
        return pickFrom(subscribed, pick.pick);
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
    this.counts.set(c.key, this.openCount(c.key) - 1);
    for (const list of c.intervals.values()) for (const i of list) if (i.until === undefined) i.until = at;
    if (by === 'client') this.tally.exercised('close frees its slot');
  }

  // -------------------------------------------------------------------------------------------
  // Requests

  /** What a subscribe or unsubscribe step expects of its notice. */
  plan(step: Extract<Step, { op: 'subscribe' | 'unsubscribe' }>): RequestPlan {
    this.requests++;
    const c = this.conn(step.conn);
    c.changeStep = this.step;
    return step.op === 'subscribe' ? this.subscribePlan(c, step.pairs) : this.unsubscribePlan(c, step.pairs);
  }

  private subscribePlan(c: ConnModel, pairs: readonly string[]): RequestPlan {
    const key = this.key(c.key);
    const unknown = pairs.filter((p) => p === this.setup.unknownPair);
    const refused = pairs.filter((p) => key.refused.includes(p));
    const unvetted = pairs.filter((p) => !this.setup.accepted.has(p) && p !== this.setup.unknownPair);
    const over = pairs.length > LIMITS.maxPairsPerSubscribe;
    const codes: string[] = [];
    if (over) codes.push(STATUS.INVALID_REQUEST);
    if (unknown.length || unvetted.length) codes.push(STATUS.PAIR_NOT_FOUND);
    if (refused.length) codes.push(STATUS.ACCESS_DENIED, STATUS.ASSET_TYPE_DENIED);
    if (over) return { transition: 'subscribe to more than 100 pairs', expect: { kind: 'error', codes } };
    if (unknown.length && !refused.length)
      return {
        transition: 'subscribe with an unknown pair',
        expect: { kind: 'error', codes, message: pairNotFoundMessage(unknown[0]!) },
      };
    if (codes.length)
      return {
        transition: refused.length ? 'subscribe to a pair the key may not read' : 'subscribe with an unknown pair',
        expect: { kind: 'error', codes },
      };
    const transition: TransitionName =
      pairs.length === LIMITS.maxPairsPerSubscribe
        ? 'subscribe to 100 pairs'
        : c.subs === undefined || c.subs.size > 0
          ? 'subscribe replaces the subscription'
          : 'subscribe from no subscription';
    return { transition, expect: { kind: 'success', method: METHOD.subscribe, message: TEXT.subscribeSuccess } };
  }

  private unsubscribePlan(c: ConnModel, pairs: readonly string[]): RequestPlan {
    const all = c.subs !== undefined && pairs.every((p) => c.subs!.has(p));
    const success = { method: METHOD.unsubscribe, message: TEXT.unsubscribeSuccess };
    if (all) return { transition: 'unsubscribe subscribed pairs', expect: { kind: 'success', ...success } };
    return { transition: 'unsubscribe pairs not subscribed', expect: { kind: 'either', ...success } };
  }

  /**
   * Holds a notice to the plan and moves the model: what a success does to the subscription, and
   * what a failed request leaves (not stated). `sentAt`: when the request went out; `at`: when
   * its notice came. Returns the outcome as the model reads it: 'success', 'error' or 'none'.
   */
  judgeNotice(
    step: Extract<Step, { op: 'subscribe' | 'unsubscribe' }>,
    plan: RequestPlan,
    notice: Record<string, unknown> | undefined,
    sentAt: number,
    at: number,
  ): 'success' | 'error' | 'none' {
    const t = plan.transition;
    this.tally.exercised(t);
    this.tally.judged(t);
    const what = `${step.op} ${step.pairs.length > 4 ? `of ${step.pairs.length} pairs` : JSON.stringify(step.pairs)}`;
    if (!notice) {
      this.violate(
        t,
        `no notice answered the ${what}`,
        'a notice answers every subscribe and unsubscribe',
        'event:notice-error',
      );
      return 'none';
    }
    this.judgeIdEcho(step.id, notice, what);
    const ok = String(notice.code) === STATUS.OK && notice.method !== METHOD.error;
    const exp = plan.expect;
    const shown = JSON.stringify(notice).slice(0, 300);
    if (exp.kind === 'success' || (exp.kind === 'either' && ok)) {
      if (!ok) {
        this.violate(t, `${what} answered ${shown}`, `the ${step.op} succeeds: notice code "${STATUS.OK}"`);
        return 'error';
      }
      this.judgeSuccessShape(t, notice, exp.method, exp.message, what);
      this.applySuccess(step, t, sentAt, at);
      if (exp.kind === 'either')
        this.observed.push({
          name: 'unsubscribe-not-subscribed',
          value: 'success',
          note: 'an unsubscribe naming a pair that is not subscribed (spec: not shown)',
        });
      return 'success';
    }
    if (exp.kind === 'either') {
      this.applyFailure(step, sentAt);
      this.observed.push({
        name: 'unsubscribe-not-subscribed',
        value: `error ${String(notice.code)}`,
        note: 'an unsubscribe naming a pair that is not subscribed (spec: not shown)',
      });
      return 'error';
    }
    if (ok) {
      this.violate(
        t,
        `${what} answered ${shown}`,
        `an error notice with code ${exp.codes.map((c) => `"${c}"`).join(' or ')}`,
      );
      this.applySuccess(step, t, sentAt, at);
      return 'success';
    }
    if (notice.method !== METHOD.error || !exp.codes.includes(String(notice.code)))
      this.violate(
        t,
        `${what} answered ${shown}`,
        `method "error" and code ${exp.codes.map((c) => `"${c}"`).join(' or ')}`,
      );
    else if (
      exp.message !== undefined &&
      notice.message !== exp.message &&
      String(notice.code) === STATUS.PAIR_NOT_FOUND
    )
      this.violate(
        t,
        `${what} answered ${shown}`,
        `message ${JSON.stringify(exp.message)}`,
        'rule:subscribe:unknown-pair-message',
      );
    this.applyFailure(step, sentAt);
    return 'error';
  }

  private judgeIdEcho(id: string, notice: Record<string, unknown>, what: string): void {
    this.tally.exercised('notice echoes the id');
    this.tally.judged('notice echoes the id');
    if (notice.id !== id)
      this.violate(
        'notice echoes the id',
        `${what}: id ${JSON.stringify(notice.id)}`,
        `id ${JSON.stringify(id)} echoed`,
      );
  }

  private judgeSuccessShape(
    t: TransitionName,
    n: Record<string, unknown>,
    method: string,
    message: string,
    what: string,
  ): void {
    const expected = `{"method":"${method}","message":"${message}","code":"${STATUS.OK}"} with data null when present`;
    const bad =
      n.method !== method || n.message !== message || n.code !== STATUS.OK || ('data' in n && n.data !== null);
    if (bad)
      this.violate(t, `${what} answered ${JSON.stringify(n).slice(0, 300)}`, expected, shapeRule(n, method, message));
  }

  private applySuccess(
    step: Extract<Step, { op: 'subscribe' | 'unsubscribe' }>,
    t: TransitionName,
    sentAt: number,
    at: number,
  ): void {
    const c = this.conn(step.conn);
    if (step.op === 'subscribe') {
      for (const p of c.subs ?? this.allIntervalPairs(c)) if (!step.pairs.includes(p)) this.stop(c, p, at, t);
      for (const p of step.pairs) this.start(c, p, sentAt, at, t, true);
      c.subs = new Set(step.pairs);
      return;
    }
    for (const p of step.pairs) this.stop(c, p, at, t);
    if (!c.subs) return;
    for (const p of step.pairs) c.subs.delete(p);
    // The pairs it did not list go on: their pushes are due after this answer, under its rule.
    for (const p of c.subs) this.start(c, p, sentAt, at, t, true);
  }

  /** A failed request changes nothing stated: the pairs it names may or may not be pushed from now on. */
  private applyFailure(step: Extract<Step, { op: 'subscribe' | 'unsubscribe' }>, sentAt: number): void {
    const c = this.conn(step.conn);
    const maybe = new Set([...(c.subs ?? []), ...(step.op === 'subscribe' ? step.pairs : [])]);
    for (const p of maybe) this.start(c, p, sentAt, undefined, 'subscribe replaces the subscription', false);
    for (const list of c.intervals.values()) for (const i of list) if (i.until === undefined) i.due = false;
    c.subs = undefined;
  }

  private allIntervalPairs(c: ConnModel): string[] {
    return [...c.intervals.entries()].filter(([, l]) => l.some((i) => i.until === undefined)).map(([p]) => p);
  }

  private start(
    c: ConnModel,
    p: string,
    from: number,
    answeredAt: number | undefined,
    by: TransitionName,
    due: boolean,
  ): void {
    const list = c.intervals.get(p) ?? [];
    const current = list.find((i) => i.until === undefined);
    if (current) {
      // Still subscribed: the same interval goes on, now known again (or no longer); pushes are due
      // after this answer, under the rule of the request that kept it.
      current.due = due;
      if (due) {
        current.by = by;
        current.step = this.step;
        if (answeredAt !== undefined) current.answeredAt = answeredAt;
      }
      return;
    }
    list.push({ from, by, due, step: this.step, ...(answeredAt === undefined ? {} : { answeredAt }) });
    c.intervals.set(p, list);
  }

  private stop(c: ConnModel, p: string, at: number, by: TransitionName): void {
    for (const i of c.intervals.get(p) ?? [])
      if (i.until === undefined) {
        i.until = at;
        i.stopStep = this.step;
      }
    c.stoppedBy.set(p, by);
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

/** The statement a success notice's wrong field breaks. */
function shapeRule(n: Record<string, unknown>, method: string, message: string): StatementKey {
  if (n.code !== STATUS.OK) return 'field:notice:code';
  if (n.method !== method) return 'field:notice:method';
  if (n.message !== message)
    return method === METHOD.unsubscribe ? 'rule:unsubscribe:success-reply' : 'field:notice:message';
  return 'field:notice:data';
}
