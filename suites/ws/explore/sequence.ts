/**
 * Runs one sequence against the target: each command resolved by the model into a step (or the
 * steps of a replay or a shrinking attempt as they are), sent on real connections, and what came
 * back held to the model after every step and once more when the windows the steps opened have
 * closed. The key's allowance is the run's connection budget's: each key is frozen for the sequence
 * (its count holds still, the connections other checks hold count toward it), so the one deliberate
 * connection beyond an allowance goes through the budget and no other is ever made.
 */
import type { CheckContext, KeyLease } from '../../../src/check.ts';
import { type Command, type Step, stepText } from '../../../src/explore/commands.ts';
import { FrameJudge, type SeenFrame } from '../../../src/explore/frames.ts';
import { ExploreModel, type ModelViolation } from '../../../src/explore/model.ts';
import type { FailurePoint, Numbered } from '../../../src/explore/shrink.ts';
import { METHOD } from '../../../src/spec.ts';
import {
  CADENCE_PUSHES,
  EXPLORE_POLL_MS,
  REPLACE_GAP_MS,
  settleBackoffMs,
  inFlightMs,
  keepAliveTiming,
  keepOpenPingMs,
  sequenceSettleMs,
  watchMs,
} from '../../../src/timing/index.ts';
import { jsonObject, isNotice, type JsonObject, type StreamSession } from '../../../src/transports/stream.ts';
import { answers } from '../notices.ts';
import { isSilence, pause } from '../sessions.ts';
import type { ExploreSetup } from './setup.ts';

/** What a sequence did: its steps, one line each, and the rule it broke first, if any. */
export interface SequenceRun {
  steps: Numbered[];
  lines: string[];
  failure?: { point: FailurePoint; violation: ModelViolation };
  model: ExploreModel;
}

/** A connection of the sequence: its session, its keep-alive timer, and its frames as the judge reads them. */
interface Live {
  session: StreamSession;
  timer?: NodeJS.Timeout;
  seen: SeenFrame[];
  /** The number (`session.received` counts) of the next frame to read. */
  cursor: number;
  /** Frames the session no longer held when they were to be read (its kept limits). */
  lost: number;
  times: Map<string, number[]>;
  serverClosedAt?: number;
  lastRequestAt?: number;
}

/**
 * Reads a session's new frames into the judge's form and its push times. By number, not index: a
 * session drops its oldest frames past its kept limits, which shifts the indices of the rest.
 */
function catchUp(live: Live): void {
  const { frames, received } = live.session;
  const first = received - frames.length;
  if (live.cursor < first) {
    live.lost += first - live.cursor;
    live.cursor = first;
  }
  for (; live.cursor < received; live.cursor++) {
    const f = frames[live.cursor - first]!;
    const o = jsonObject(f);
    if (f.kind === 'text') live.seen.push({ kind: 'text', text: f.text, atMs: f.atMs });
    else if (o && 'method' in o) live.seen.push({ kind: 'notice', method: o.method, atMs: f.atMs });
    else if (o && typeof o.code === 'string') {
      live.seen.push({ kind: 'push', code: o.code, atMs: f.atMs });
      const list = live.times.get(o.code);
      if (list) list.push(f.atMs);
      else live.times.set(o.code, [f.atMs]);
    } else live.seen.push({ kind: 'other', atMs: f.atMs });
  }
}

/** Sends a request and resolves with the notice that answers it; undefined on silence or close. */
async function request(
  ctx: CheckContext,
  session: StreamSession,
  message: JsonObject,
): Promise<JsonObject | undefined> {
  const reply = session.next((f) => isNotice(f) && answers(message, jsonObject(f)!), ctx.waits.noticeMs);
  reply.catch(() => undefined);
  try {
    session.send(message);
    return jsonObject(await reply);
  } catch (err) {
    if (isSilence(err)) return undefined;
    throw err;
  }
}

/** One sequence's run: its model, connections and leases. */
class SequenceRunner {
  readonly model: ExploreModel;
  private readonly judge: FrameJudge;
  private readonly live = new Map<string, Live>();
  private readonly leases = new Map<string, { lease: KeyLease; closed0: number }>();
  private readonly watchTimes = new Map<string, number[]>();
  private watchLive?: Live;
  readonly lines: string[] = [];
  readonly ran: Numbered[] = [];

  constructor(
    private readonly ctx: CheckContext,
    private readonly setup: ExploreSetup,
  ) {
    this.model = new ExploreModel(setup.model);
    this.judge = new FrameJudge(this.model);
    if (setup.watch) this.watchLive = { session: setup.watch, seen: [], cursor: 0, lost: 0, times: this.watchTimes };
  }

  /** Freezes every key the sequence may open: their counts hold still until `end`. */
  async begin(): Promise<void> {
    for (const [name, value] of this.setup.keyValues) {
      const lease = await this.ctx.connections.freeze(value);
      await lease.settled();
      this.leases.set(name, { lease, closed0: lease.closedSince() });
      // The watching connection is the check's own, outside the lease: the target counts it too.
      const watching = this.setup.watch && value === this.setup.keyValues.get('primary') ? 1 : 0;
      this.model.heldBefore(name, lease.heldByOthers() + watching);
    }
  }

  private countMoved(key: string): boolean {
    const l = this.leases.get(key);
    return l !== undefined && l.lease.closedSince() !== l.closed0;
  }

  /** The window for frames in flight of `pair` on a connection: its own pushes' cadence, else the watching one's. */
  private inFlight(live: Live, pair: string): number {
    const own = live.times.get(pair) ?? [];
    if (own.length >= CADENCE_PUSHES || !this.watchTimes.has(pair)) return inFlightMs(this.ctx.waits, live.times, pair);
    const times = new Map(live.times);
    times.set(pair, this.watchTimes.get(pair)!);
    return inFlightMs(this.ctx.waits, times, pair);
  }

  /** Judges what every connection of the sequence received so far. */
  judgeAll(): void {
    if (this.watchLive) catchUp(this.watchLive);
    const now = this.ctx.stream.now();
    const keepAlive = keepAliveTiming(this.ctx.profile);
    for (const c of this.model.conns) {
      const live = this.live.get(c.name);
      if (!live) continue;
      catchUp(live);
      this.judge.judge(
        c,
        {
          frames: live.seen,
          lost: live.lost,
          inFlightMs: (p) => this.inFlight(live, p),
          ...(live.serverClosedAt === undefined ? {} : { serverClosedAt: live.serverClosedAt }),
        },
        {
          now,
          noticeMs: this.ctx.waits.noticeMs,
          keepAlive,
          ...(this.watchLive ? { watched: this.watchTimes } : {}),
        },
      );
    }
  }

  /** Runs one step; returns the line that says what came back. */
  async step(step: Step): Promise<string> {
    switch (step.op) {
      case 'open':
        return this.open(step);
      case 'close': {
        const live = this.live.get(step.conn)!;
        clearInterval(live.timer);
        const closed = await live.session.close();
        this.model.closed(step.conn, closed.atMs, 'client');
        return 'closed';
      }
      case 'subscribe':
      case 'unsubscribe': {
        const live = this.live.get(step.conn)!;
        await this.paced(live);
        const plan = this.model.plan(step);
        const sentAt = this.ctx.stream.now();
        const notice = await request(this.ctx, live.session, {
          id: step.id,
          method: step.op === 'subscribe' ? METHOD.subscribe : METHOD.unsubscribe,
          params: { pairs: step.pairs },
        });
        // A connection the target closed meanwhile (a silent one's keep-alive) answers nothing: not judged.
        if (!notice && !live.session.isOpen) return 'the connection was closed';
        const outcome = this.model.judgeNotice(step, plan, notice, sentAt, this.ctx.stream.now());
        return notice ? `notice ${JSON.stringify(notice).slice(0, 160)} (${outcome})` : 'no notice';
      }
      case 'ping': {
        const live = this.live.get(step.conn)!;
        if (!live.session.isOpen) return 'the connection was closed';
        await this.paced(live);
        const reply = live.session.next((f) => f.kind === 'text' || isNotice(f), this.ctx.waits.noticeMs);
        reply.catch(() => undefined);
        live.session.send({ id: step.id, method: METHOD.ping });
        this.model.pinged(step.conn, this.ctx.stream.now(), true);
        // The judge holds the reply to the model; the step only waits for it, so a sequence goes on after it.
        const got = await reply.catch(() => undefined);
        return got === undefined ? 'no reply' : got.kind === 'text' ? JSON.stringify(got.text) : 'a notice';
      }
      case 'idle':
        await this.idle(step.ms);
        return 'idled';
    }
  }

  /**
   * Idles `ms`, reading the frames meanwhile: a fast stream passes a session's kept limits within
   * seconds, and frames dropped before they were read leave silence that cannot be judged.
   */
  private async idle(ms: number): Promise<void> {
    const until = this.ctx.stream.now() + ms;
    for (let left = ms; left > 0; left = until - this.ctx.stream.now()) {
      await pause(Math.min(left, EXPLORE_POLL_MS), this.ctx);
      if (this.watchLive) catchUp(this.watchLive);
      for (const live of this.live.values()) catchUp(live);
    }
  }

  /**
   * Waits until the last request on the connection is REPLACE_GAP_MS old: the spec states no message
   * rate, and a service may close a connection that sends many requests in a second.
   */
  private async paced(live: Live): Promise<void> {
    const wait = (live.lastRequestAt ?? Number.NEGATIVE_INFINITY) + REPLACE_GAP_MS - this.ctx.stream.now();
    if (wait > 0) await pause(wait, this.ctx);
    live.lastRequestAt = this.ctx.stream.now();
  }

  private async open(step: Extract<Step, { op: 'open' }>): Promise<string> {
    const result = await this.ctx.stream.open({ key: this.setup.keyValues.get(step.key)! });
    const moved = this.countMoved(step.key);
    if (!result.ok) {
      this.model.judgeOpen(
        step,
        { accepted: false, status: result.status, body: result.json, text: result.text },
        moved,
      );
      return `refused: HTTP ${result.status} ${result.text.slice(0, 160)}`;
    }
    const session = result.session;
    const live: Live = { session, seen: [], cursor: 0, lost: 0, times: new Map() };
    this.live.set(step.conn, live);
    this.model.judgeOpen(step, { accepted: true, at: session.openedAtMs, startedAt: session.startedAtMs }, moved);
    void session.closed.then((ci) => {
      clearInterval(live.timer);
      if (ci.by !== 'server') return;
      live.serverClosedAt = ci.atMs;
      this.model.closed(step.conn, ci.atMs, 'server');
    });
    if (!step.silent) {
      // The explorer's own keep-alive, recorded: every ping it sends is one the model expects a Pong! for.
      live.timer = setInterval(
        () => {
          if (!session.isOpen) return;
          session.send({ method: METHOD.ping });
          this.model.pinged(step.conn, this.ctx.stream.now(), false);
        },
        keepOpenPingMs(keepAliveTiming(this.ctx.profile)),
      );
    }
    return 'accepted';
  }

  /** When the windows the steps opened have all closed (at most the settle wait from now). */
  private settleUntil(): number {
    const now = this.ctx.stream.now();
    let until = now;
    for (const c of this.model.conns) {
      const live = this.live.get(c.name);
      if (!live) continue;
      for (const [pair, intervals] of c.intervals)
        for (const iv of intervals) {
          const base = iv.until ?? (iv.due && c.open ? iv.answeredAt : undefined);
          if (base !== undefined)
            until = Math.max(until, base + 2 * this.inFlight(live, pair) + watchMs(this.ctx.waits, live.times, pair));
        }
    }
    return Math.min(until, now + sequenceSettleMs(this.ctx.waits));
  }

  /**
   * After a request: waits until what it did to the pushes has been judged (the pairs it started or
   * kept pushed, the pairs it stopped seen to move and not pushed), at most the settle wait, so that
   * the next step does not hide it.
   */
  async observe(step: number): Promise<void> {
    const until = this.ctx.stream.now() + sequenceSettleMs(this.ctx.waits);
    const keepAlive = keepAliveTiming(this.ctx.profile);
    for (;;) {
      this.judgeAll();
      const now = this.ctx.stream.now();
      if (this.model.violations.length > 0 || now >= until) return;
      const t = {
        now,
        noticeMs: this.ctx.waits.noticeMs,
        keepAlive,
        ...(this.watchLive ? { watched: this.watchTimes } : {}),
      };
      const waiting = this.model.conns.some((c) => this.judge.pending(c, t, step, this.ctx.waits.cadenceMs));
      if (!waiting) return;
      await pause(EXPLORE_POLL_MS, this.ctx);
    }
  }

  /** When the last ping still unanswered may still be answered; undefined when every ping was answered. */
  private pongsDue(): number | undefined {
    let due: number | undefined;
    for (const c of this.model.conns) {
      const live = this.live.get(c.name);
      if (!live || live.serverClosedAt !== undefined) continue;
      catchUp(live);
      const pongs = live.seen.filter((f) => f.kind === 'text').length;
      if (pongs < c.pings.length) due = Math.max(due ?? 0, c.pings.at(-1)! + this.ctx.waits.noticeMs);
    }
    return due;
  }

  /**
   * Waits for the steps' windows and the replies to pings, judging as frames come, until they close
   * or a rule breaks.
   */
  async settle(): Promise<void> {
    const pushesUntil = this.settleUntil();
    // The explorer's own keep-alive pings go on meanwhile: the wait for their replies has a bound too.
    const latest = pushesUntil + this.ctx.waits.noticeMs;
    for (;;) {
      this.judgeAll();
      const now = this.ctx.stream.now();
      const pongs = this.pongsDue();
      if (this.model.violations.length > 0 || now >= latest) return;
      if (now >= pushesUntil && (pongs === undefined || now >= pongs)) return;
      await pause(EXPLORE_POLL_MS, this.ctx);
    }
  }

  /** Closes the sequence's connections and gives the keys back. */
  async end(): Promise<void> {
    for (const live of this.live.values()) clearInterval(live.timer);
    await Promise.all([...this.live.values()].map((l) => l.session.close().catch(() => undefined)));
    for (const { lease } of this.leases.values()) lease.release();
  }
}

/** Whether a given step can run now: its connection is open, an open stays within what the model allows. */
function runnable(model: ExploreModel, step: Step): boolean {
  if (step.op === 'idle') return true;
  if (step.op === 'open') {
    const beyond = model.beyond(step.key);
    if (beyond === undefined) return model.openCount(step.key) === 0;
    return !beyond || !model.refusalUsed;
  }
  return model.conns.some((c) => c.name === step.conn && c.open);
}

/** Opens one fill command makes at most: an allowance of 10 and the one beyond it. */
const FILL_MAX = 11;

/**
 * The steps of a source, one at a time: generated commands resolved against the model as it
 * stands (an open that fills resolved again until it resolves to nothing, the refill of a key
 * right after its refusal), numbered in the order they come; given steps as they are.
 */
function steps(
  model: ExploreModel,
  source: { commands: readonly Command[] } | { steps: readonly Numbered[] },
  left: () => number,
): () => Numbered | undefined {
  if ('steps' in source) {
    let i = 0;
    return () => source.steps[i++];
  }
  let i = 0;
  let n = 0;
  let filling = 0;
  return () => {
    // Right after the deliberate refusal, the refill of its key: a slot it kept shows while it is fresh.
    const refill = model.refillStep();
    if (refill) return { n: n++, step: refill };
    while (i < source.commands.length) {
      const cmd = source.commands[i]!;
      const step = model.resolve(cmd, left());
      const fill = cmd.op === 'open' && cmd.fill === true;
      if (!fill || !step || ++filling >= FILL_MAX || model.beyondHeld(step.op === 'open' ? step.key : '')) {
        i++;
        filling = 0;
      }
      if (step) return { n: n++, step };
    }
    return undefined;
  };
}

/**
 * Runs a sequence: generated commands (resolved as they come, until `stopAt` on the stream clock),
 * or given steps (a replay, a shrinking attempt), each with its original index.
 */
export async function runSequence(
  ctx: CheckContext,
  setup: ExploreSetup,
  source: { commands: readonly Command[] } | { steps: readonly Numbered[] },
  stopAt: number,
): Promise<SequenceRun> {
  const r = new SequenceRunner(ctx, setup);
  try {
    await r.begin();
    const next = steps(r.model, source, () => stopAt - ctx.stream.now());
    for (let numbered = next(); numbered; numbered = next()) {
      if (!runnable(r.model, numbered.step)) continue;
      r.model.step = numbered.n;
      r.ran.push(numbered);
      r.lines.push(`${numbered.n}. ${stepText(numbered.step)} -> ${await r.step(numbered.step)}`);
      if (numbered.step.op === 'subscribe' || numbered.step.op === 'unsubscribe') await r.observe(numbered.n);
      r.judgeAll();
      if (r.model.violations.length > 0 || ctx.stream.now() >= stopAt) break;
    }
    if (r.model.violations.length === 0) await r.settle();
  } finally {
    await r.end();
  }
  const v = r.model.violations[0];
  return {
    steps: r.ran,
    lines: r.lines,
    model: r.model,
    ...(v ? { failure: { point: { rule: v.rule, at: v.at, seen: v.seen }, violation: v } } : {}),
  };
}

/**
 * Before an attempt to shrink a failure of a key's allowance: waits, until `deadline`, for every
 * slot of the key to be free again (all of its allowance opened at once, then closed), so that
 * what an earlier attempt left (a slot not yet freed) is not taken for the failure being shrunk.
 */
export async function settleKey(ctx: CheckContext, setup: ExploreSetup, key: string, deadline: number): Promise<void> {
  const value = setup.keyValues.get(key);
  const allowance = setup.model.keys.find((k) => k.name === key)?.allowance;
  if (value === undefined || allowance === undefined) return;
  // Each probe refused may itself be what keeps a slot (the failure being shrunk): the pauses double.
  for (let wait = ctx.waits.releaseMs; ; wait = settleBackoffMs(wait)) {
    await pause(Math.max(0, Math.min(wait, deadline - ctx.stream.now())), ctx);
    const lease = await ctx.connections.freeze(value);
    const sessions: StreamSession[] = [];
    let full = true;
    try {
      await lease.settled();
      const watching = setup.watch && value === setup.keyValues.get('primary') ? 1 : 0;
      for (let i = lease.heldByOthers() + watching; i < allowance && full; i++) {
        const r = await ctx.stream.open({ key: value });
        if (r.ok) sessions.push(r.session);
        else full = false;
      }
    } finally {
      await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
      lease.release();
    }
    if (full || ctx.stream.now() >= deadline) return;
  }
}
