/**
 * What a connection received, held to the model over time: the pushes (a pair is pushed only while
 * subscribed, with a window for frames in flight after a stop; a subscribed pair whose price the
 * watching connection sees move is pushed), the replies to pings (the plain text Pong!), and the
 * keep-alive (a connection that pings stays open; a silent one is closed after the window and its
 * grace, never before the window). The windows are the scripted checks' own (src/timing/). Pure.
 */
import { METHOD, TEXT } from '../spec.ts';
import { EARLY_TOLERANCE_MS, closeWaitMs, type KeepAliveTiming } from '../timing/index.ts';
import { WATCHED_PUSHES } from '../timing/explore.ts';
import type { ConnModel, ModelView, PushInterval } from './model-types.ts';
import { TRANSITIONS } from './transitions.ts';

/** A frame as the judge reads it. */
export type SeenFrame =
  | { kind: 'push'; code: string; atMs: number }
  | { kind: 'text'; text: string; atMs: number }
  | { kind: 'notice'; method: unknown; atMs: number }
  | { kind: 'other'; atMs: number };

/** What the judge needs of one connection at a judgement. */
export interface ConnView {
  /** Every frame so far that was read, in order. */
  frames: readonly SeenFrame[];
  /**
   * Frames the connection received but dropped before they were read (a session's kept limits):
   * a Pong! or a push may be among them, so silence on this connection is not judged.
   */
  lost?: number;
  /** The window for frames in flight after a stop of `pair` (stream-windows.ts `inFlightMs`). */
  inFlightMs(pair: string): number;
  /** Closed by the target, and when. */
  serverClosedAt?: number;
}

/** What a judgement knows of the run: now, the waits and when the watching connection saw each pair move. */
export interface JudgeTimes {
  now: number;
  noticeMs: number;
  keepAlive: KeepAliveTiming;
  /** Push times of the watching connection by pair; undefined without one (missing pushes are not judged). */
  watched?: ReadonlyMap<string, readonly number[]>;
}

/** Per interval, what has been judged of it. */
interface IntervalMarks {
  started?: number;
  stopJudged?: boolean;
}

/** Judges the frames of a sequence's connections as they arrive, each frame and each rule once. */
export class FrameJudge {
  private readonly pushCursor = new Map<string, number>();
  private readonly marks = new WeakMap<PushInterval, IntervalMarks>();
  private readonly pongsJudged = new Map<string, number>();
  private readonly textCursor = new Map<string, number>();
  private readonly keepAliveJudged = new Set<string>();

  constructor(private readonly model: ModelView) {}

  /** Judges what `conn` received up to `t.now`. */
  judge(c: ConnModel, view: ConnView, t: JudgeTimes): void {
    this.pushesAllowed(c, view);
    this.pushesDue(c, view, t);
    this.stopsWatched(c, view, t);
    this.pongs(c, view, t);
    this.keepAlive(c, view, t);
  }

  /**
   * Whether what step `step` did to `c` is still to be judged: a pair it started or kept whose
   * pushes have not shown yet, or a pair it stopped that has not been seen to move since, among
   * the pairs the watching connection saw move within `recentMs` (a pair that does not move shows
   * nothing either way).
   */
  pending(c: ConnModel, t: JudgeTimes, step: number, recentMs: number): boolean {
    if (!t.watched || !c.open) return false;
    for (const [pair, intervals] of c.intervals) {
      const moves = t.watched.get(pair) ?? [];
      if (!moves.some((at) => at > t.now - recentMs)) continue;
      for (const iv of intervals) {
        const m = this.marks.get(iv);
        if (iv.step === step && iv.until === undefined && iv.due && m?.started !== iv.answeredAt) return true;
        if (iv.stopStep === step && c.stoppedBy.has(pair) && !m?.stopJudged) return true;
      }
    }
    return false;
  }

  private mark(i: PushInterval): IntervalMarks {
    let m = this.marks.get(i);
    if (!m) {
      m = {};
      this.marks.set(i, m);
    }
    return m;
  }

  /**
   * A push of a pair outside its intervals (and their windows for frames in flight) breaks the stop
   * that ended them.
   */
  private pushesAllowed(c: ConnModel, view: ConnView): void {
    const from = this.pushCursor.get(c.name) ?? 0;
    const frames = view.frames;
    for (let i = from; i < frames.length; i++) {
      const f = frames[i]!;
      if (f.kind !== 'push') continue;
      const intervals = c.intervals.get(f.code) ?? [];
      const late = (iv: PushInterval): boolean => iv.until !== undefined && f.atMs > iv.until + view.inFlightMs(f.code);
      if (intervals.some((iv) => f.atMs >= iv.from && !late(iv))) continue;
      const by = c.stoppedBy.get(f.code);
      if (by !== undefined) {
        const last = intervals.at(-1)!;
        const after = Math.round(f.atMs - (last.until ?? f.atMs));
        this.model.violate(
          by,
          `a push of ${f.code} on ${c.name} ${after} ms after the notice that stopped it ` +
            `(window for frames in flight: ${Math.round(view.inFlightMs(f.code))} ms)`,
          `pushes for ${f.code} stop`,
          undefined,
          last.stopStep,
        );
      } else
        this.model.violate(
          'subscribe from no subscription',
          `a push of ${f.code} on ${c.name}, which never subscribed to it`,
          'only subscribed pairs are pushed',
          'field:push:code',
          c.openStep,
        );
    }
    this.pushCursor.set(c.name, frames.length);
  }

  /**
   * A pair subscribed on `c` (exactly known) whose price the watching connection saw move
   * WATCHED_PUSHES times since the notice (and its window for frames in flight) must have been
   * pushed on `c` too.
   */
  private pushesDue(c: ConnModel, view: ConnView, t: JudgeTimes): void {
    if (!t.watched || !c.open) return;
    for (const [pair, intervals] of c.intervals) {
      const iv = intervals.at(-1);
      if (!iv || iv.until !== undefined || !iv.due || iv.answeredAt === undefined) continue;
      const m = this.mark(iv);
      if (m.started === iv.answeredAt) continue;
      const slack = view.inFlightMs(pair);
      const own = view.frames.some((f) => f.kind === 'push' && f.code === pair && f.atMs > iv.answeredAt! + slack);
      const moves = (t.watched.get(pair) ?? []).filter((at) => at > iv.answeredAt! + slack && at <= t.now - slack);
      if (!own && (moves.length < WATCHED_PUSHES || view.lost)) continue;
      m.started = iv.answeredAt;
      this.model.tally.judged(iv.by);
      if (!own)
        this.model.violate(
          iv.by,
          `no push of ${pair} on ${c.name} in the ${Math.round(t.now - iv.answeredAt)} ms since the notice, ` +
            `while the watching connection got ${moves.length} pushes of it`,
          `${pair} is subscribed on ${c.name}, so its pushes go on`,
          iv.by === 'subscribe from no subscription' ? 'rule:subscribe:pushes-without-requests' : undefined,
          iv.step,
        );
    }
  }

  /** A stop is judged once the pair was seen to move after its window for frames in flight. */
  private stopsWatched(c: ConnModel, view: ConnView, t: JudgeTimes): void {
    if (!t.watched) return;
    for (const [pair, intervals] of c.intervals) {
      const by = c.stoppedBy.get(pair);
      for (const iv of intervals) {
        if (iv.until === undefined || by === undefined || c.closedAt === iv.until) continue;
        const m = this.mark(iv);
        if (m.stopJudged) continue;
        const cutoff = iv.until + view.inFlightMs(pair);
        if ((t.watched.get(pair) ?? []).some((at) => at > cutoff && at <= t.now)) {
          m.stopJudged = true;
          this.model.tally.judged(by);
        }
      }
    }
  }

  /** Each ping is answered by the text frame Pong! within the notice wait, and nothing else is a text frame. */
  private pongs(c: ConnModel, view: ConnView, t: JudgeTimes): void {
    const t0 = this.textCursor.get(c.name) ?? 0;
    for (let i = t0; i < view.frames.length; i++) {
      const f = view.frames[i]!;
      if (f.kind === 'text' && f.text !== TEXT.pong)
        this.model.violate(
          'ping answered with Pong!',
          `the text frame ${JSON.stringify(f.text.slice(0, 80))} on ${c.name}`,
          `the ping reply is exactly ${TEXT.pong}`,
        );
      if (f.kind === 'notice' && f.method === METHOD.ping)
        this.model.violate(
          'ping answered with Pong!',
          `a JSON notice with method "ping" on ${c.name}`,
          `the ping reply is the plain text ${TEXT.pong}`,
        );
    }
    this.textCursor.set(c.name, view.frames.length);
    const end = view.serverClosedAt ?? c.closedAt ?? Number.POSITIVE_INFINITY;
    const due = c.pings.filter((p) => p + t.noticeMs <= Math.min(t.now, end) && p < end).length;
    const done = this.pongsJudged.get(c.name) ?? 0;
    if (due <= done) return;
    this.pongsJudged.set(c.name, due);
    const answered = view.frames.filter((f) => f.kind === 'text' && f.text === TEXT.pong).length;
    // The missing Pong! may be among the frames dropped unread: these pings are not judged.
    if (answered < due && view.lost) return;
    for (let i = done; i < due; i++) {
      this.model.tally.exercised('ping answered with Pong!');
      this.model.tally.judged('ping answered with Pong!');
    }
    if (answered < due)
      this.model.violate(
        'ping answered with Pong!',
        `${answered} ${TEXT.pong} for ${due} pings on ${c.name}${c.intervals.size ? ' (subscribed)' : ''}, ` +
          `each given ${t.noticeMs} ms`,
        `every ping is answered with the plain text ${TEXT.pong}`,
        undefined,
        c.pingSteps[Math.max(answered, done)],
      );
  }

  /** The keep-alive: pinged connections stay open; a silent one closes after the window, not before. */
  private keepAlive(c: ConnModel, view: ConnView, t: JudgeTimes): void {
    if (this.keepAliveJudged.has(c.name)) return;
    const k = t.keepAlive;
    const closedAt = view.serverClosedAt;
    // The target starts its window somewhere between the handshake's start and the open: the early
    // bound counts from the start, the late one from the open.
    const lastPing = (at: number, from: number): number => Math.max(from, ...c.pings.filter((p) => p <= at));
    if (closedAt !== undefined) {
      // A close is early only after a ping the target is known to have read: its Pong! came before
      // the close. A ping still queued on a busy target has not restarted its window yet.
      const pongs = view.frames.filter((f) => f.kind === 'text' && f.text === TEXT.pong).map((f) => f.atMs);
      const read = c.pings.filter((_p, k) => k < pongs.length && pongs[k]! <= closedAt);
      const quiet = closedAt - Math.max(c.startedAt, ...read);
      const early = quiet < k.windowMs - EARLY_TOLERANCE_MS;
      const t1 = c.silent ? 'silent connection closed after the window' : 'pinged connection stays open';
      this.keepAliveJudged.add(c.name);
      this.model.tally.exercised(t1);
      // A pinged connection the client failed to ping in time (a stalled event loop) is not judged.
      if (!early && !c.silent) return;
      this.model.tally.judged(t1);
      if (early)
        this.model.violate(
          t1,
          `${c.name} closed by the target ${Math.round(quiet)} ms after its last ping (or its open)`,
          `not closed before the ${k.windowMs} ms window without a ping has passed`,
          'limit:ping-interval',
          c.openStep,
        );
      return;
    }
    if (!c.open) return;
    const quiet = t.now - lastPing(t.now, c.openedAt);
    if (c.silent && quiet > closeWaitMs(k)) {
      this.keepAliveJudged.add(c.name);
      this.model.tally.exercised('silent connection closed after the window');
      this.model.tally.judged('silent connection closed after the window');
      this.model.violate(
        'silent connection closed after the window',
        `${c.name} still open ${Math.round(quiet)} ms after its last ping (or its open)`,
        `closed once no ping arrived for the ${k.windowMs} ms window (grace ${k.graceMs} ms)`,
        TRANSITIONS['silent connection closed after the window'][0],
        c.openStep,
      );
    } else if (!c.silent && t.now - c.openedAt > k.windowMs) {
      this.keepAliveJudged.add(c.name);
      this.model.tally.exercised('pinged connection stays open');
      this.model.tally.judged('pinged connection stays open');
    }
  }
}
