import { describe, expect, it } from 'vitest';
import { type Command, drawSequence, sequenceArbitrary, stepText, type Step } from '../../src/explore/commands.ts';
import { keptPastFrom, mayBreakAgain, plannedTransition } from '../../src/explore/candidates.ts';
import { FrameJudge, type SeenFrame } from '../../src/explore/frames.ts';
import { ExploreModel, type ModelSetup, SHORT_FILL_MAX } from '../../src/explore/model.ts';
import { parseReplay, REPLAY_FORMAT, REPLAY_VERSION } from '../../src/explore/replay-file.ts';
import { checkSeed, parseBudget } from '../../src/explore/settings.ts';
import { type FailurePoint, type Numbered, shrink, slice } from '../../src/explore/shrink.ts';
import { MODEL_STATEMENTS, TRANSITIONS } from '../../src/explore/transitions.ts';
import { LIMITS, METHOD, STATUS, TEXT } from '../../src/spec.ts';
import { SPEC_STATEMENTS } from '../../src/statements.ts';

const A = 'Crypto:ALL:BTC/USD';
const B = 'Crypto:ALL:ETH/USD';
const C = 'Crypto:ALL:SOL/USD';
const SETUP: ModelSetup = {
  keys: [
    { name: 'primary', allowance: 3, pairs: [A, B, C], refused: [] },
    { name: 'cryptoOnly', allowance: 2, pairs: [A, B], refused: ['Forex:ALL:EUR/USD'] },
  ],
  unknownPair: 'Crypto:ALL:NOSUCH/USD',
  accepted: new Set([A, B, C]),
  idleMs: { short: 100, long: 5000 },
};
const KEEP = { windowMs: 2000, graceMs: 2000, holdWindows: 1.3 };
const ok = (method: string, id: string) => ({
  method,
  message: method === METHOD.subscribe ? TEXT.subscribeSuccess : TEXT.unsubscribeSuccess,
  code: STATUS.OK,
  id,
  data: null,
});

/** A model with connection c1 of the primary key opened at 0 and subscribed to `pairs` at 10. */
function subscribed(pairs: string[]): ExploreModel {
  const m = new ExploreModel(SETUP);
  m.judgeOpen(
    { op: 'open', conn: 'c1', key: 'primary', silent: false },
    { accepted: true, at: 0, startedAt: 0 },
    false,
  );
  const step: Step = { op: 'subscribe', conn: 'c1', pairs, id: 'x1' };
  m.judgeNotice(step, m.plan(step), ok(METHOD.subscribe, 'x1'), 5, 10);
  return m;
}

const push = (code: string, atMs: number): SeenFrame => ({ kind: 'push', code, atMs });
/** Judges c1's `frames` at `now` with every pair moving every 50 ms on the watching connection. */
function judge(m: ExploreModel, frames: SeenFrame[], now: number): void {
  const moves = Array.from({ length: now / 50 }, (_, i) => i * 50);
  const watched = new Map([A, B, C].map((p) => [p, moves]));
  new FrameJudge(m).judge(
    m.conn('c1'),
    { frames, inFlightMs: () => 250 },
    { now, noticeMs: 500, keepAlive: KEEP, watched },
  );
}

describe('the model of the subscription', () => {
  it('a subscribe replaces the set: a pair left out that is still pushed after its window breaks the replace', () => {
    const m = subscribed([A, B]);
    const step: Step = { op: 'subscribe', conn: 'c1', pairs: [C], id: 'x2' };
    expect(m.plan(step).transition).toBe('subscribe replaces the subscription');
    m.judgeNotice(step, m.plan(step), ok(METHOD.subscribe, 'x2'), 100, 110);
    judge(m, [push(A, 200), push(C, 400), push(A, 700)], 1000);
    expect(m.violations.map((v) => [v.rule, v.at])).toEqual([['transition:subscribed/subscribe', 0]]);
  });

  it('a pair kept by a replace must go on being pushed while the watching connection sees it move', () => {
    const m = subscribed([A, B]);
    const step: Step = { op: 'subscribe', conn: 'c1', pairs: [B, C], id: 'x2' };
    m.judgeNotice(step, m.plan(step), ok(METHOD.subscribe, 'x2'), 100, 110);
    judge(m, [push(C, 400), push(C, 450)], 1000);
    expect(m.violations.map((v) => v.received)).toEqual([expect.stringContaining(`no push of ${B} on c1`)]);
  });

  it('an unsubscribe stops only the listed pairs', () => {
    const m = subscribed([A, B]);
    const step: Step = { op: 'unsubscribe', conn: 'c1', pairs: [A], id: 'x2' };
    m.judgeNotice(step, m.plan(step), ok(METHOD.unsubscribe, 'x2'), 100, 110);
    judge(m, [push(B, 500), push(B, 550)], 1000);
    expect(m.violations).toEqual([]);
    judge(m, [], 1000);
    const silent = subscribed([A, B]);
    silent.judgeNotice(step, silent.plan(step), ok(METHOD.unsubscribe, 'x2'), 100, 110);
    judge(silent, [], 1000);
    expect(silent.violations.map((v) => v.rule)).toEqual(['transition:subscribed/unsubscribe']);
  });

  it('an unsubscribe of some of a subscription goes to a connection that has one', () => {
    const m = subscribed([A, B]);
    m.judgeOpen(
      { op: 'open', conn: 'c2', key: 'primary', silent: false },
      { accepted: true, at: 0, startedAt: 0 },
      false,
    );
    const some = m.resolve({ op: 'unsubscribe', conn: 0, pairs: { kind: 'subset', pick: [0] } }, 0);
    expect(some).toMatchObject({ op: 'unsubscribe', conn: 'c1', pairs: [A] });
    const unsubscribed = m.resolve({ op: 'unsubscribe', conn: 0, pairs: { kind: 'unsubscribed', pick: [0] } }, 0);
    expect(unsubscribed).toMatchObject({ op: 'unsubscribe', conn: 'c2' });
  });

  it("a subscribe of the limit's list goes to a connection of the key it was made for", () => {
    const m = new ExploreModel({ ...SETUP, atLimit: [A, B] });
    for (const [conn, key] of [
      ['c1', 'primary'],
      ['c2', 'cryptoOnly'],
    ] as const)
      m.judgeOpen({ op: 'open', conn, key, silent: false }, { accepted: true, at: 0, startedAt: 0 }, false);
    const full = m.resolve({ op: 'subscribe', conn: 0, pairs: { kind: 'at-limit' } }, 0);
    expect(full).toMatchObject({ op: 'subscribe', conn: 'c1', pairs: [A, B] });
  });

  it('an unsubscribe of a pair not subscribed is not shown: success and error are both allowed and recorded', () => {
    for (const notice of [ok(METHOD.unsubscribe, 'x2'), { method: 'error', message: 'no', code: '50004', id: 'x2' }]) {
      const m = subscribed([A]);
      const step: Step = { op: 'unsubscribe', conn: 'c1', pairs: [C], id: 'x2' };
      expect(m.plan(step).transition).toBe('unsubscribe pairs not subscribed');
      m.judgeNotice(step, m.plan(step), notice, 100, 110);
      expect(m.violations).toEqual([]);
      expect(m.observed.map((o) => o.name)).toEqual(['unsubscribe-not-subscribed']);
    }
  });

  it('a subscribe naming an unknown pair expects 50104 with the message of the spec', () => {
    const m = subscribed([A]);
    const step: Step = { op: 'subscribe', conn: 'c1', pairs: [A, SETUP.unknownPair], id: 'x2' };
    const plan = m.plan(step);
    m.judgeNotice(step, plan, { method: 'error', message: 'unknown', code: STATUS.PAIR_NOT_FOUND, id: 'x2' }, 1, 2);
    expect(m.violations.map((v) => v.rule)).toEqual(['rule:subscribe:unknown-pair-message']);
  });

  it('the id is echoed, the code is a string', () => {
    const m = new ExploreModel(SETUP);
    m.judgeOpen(
      { op: 'open', conn: 'c1', key: 'primary', silent: false },
      { accepted: true, at: 0, startedAt: 0 },
      false,
    );
    const step: Step = { op: 'subscribe', conn: 'c1', pairs: [A], id: 'x1' };
    m.judgeNotice(step, m.plan(step), { ...ok(METHOD.subscribe, 'x1'), id: undefined, code: 200 }, 1, 2);
    expect(m.violations.map((v) => v.rule).sort()).toEqual(['field:notice:code', 'field:notice:id']);
  });
});

describe('the model of the allowance and the keep-alive', () => {
  it('beyond the allowance the handshake is refused with 50009, within it accepted', () => {
    const m = new ExploreModel(SETUP);
    const open = (conn: string) => ({ op: 'open' as const, conn, key: 'cryptoOnly', silent: false });
    m.judgeOpen(open('c1'), { accepted: true, at: 0, startedAt: 0 }, false);
    m.judgeOpen(open('c2'), { accepted: true, at: 0, startedAt: 0 }, false);
    expect(m.beyond('cryptoOnly')).toBe(true);
    const body = { status_number: STATUS.CONNECTION_LIMIT, message: 'full' };
    m.judgeOpen(open('c3'), { accepted: false, status: 429, body, text: JSON.stringify(body) }, false);
    expect(m.violations).toEqual([]);
    m.closed('c1', 10, 'client');
    m.judgeOpen(open('c4'), { accepted: false, status: 429, body, text: JSON.stringify(body) }, false);
    expect(m.violations.map((v) => v.transition)).toEqual(['open within the allowance']);
  });

  it('never resolves an open beyond an allowance twice, nor beyond one it does not know', () => {
    const m = new ExploreModel({ ...SETUP, keys: [{ name: 'primary', pairs: [A], refused: [] }] });
    expect(m.resolve({ op: 'open', key: 0, silent: false }, 0)).toBeDefined();
    m.judgeOpen(
      { op: 'open', conn: 'c1', key: 'primary', silent: false },
      { accepted: true, at: 0, startedAt: 0 },
      false,
    );
    expect(m.resolve({ op: 'open', key: 0, silent: false }, 0)).toBeUndefined();
  });

  it('right after its refusal closes one connection of the key and opens one again, then goes on', () => {
    const m = new ExploreModel(SETUP);
    const open = (conn: string) => ({ op: 'open' as const, conn, key: 'cryptoOnly', silent: false });
    expect(m.resolve({ op: 'open', key: 1, silent: false, fill: true }, 0)).toEqual(open('c1'));
    expect(m.refillStep()).toBeUndefined();
    m.judgeOpen(open('c1'), { accepted: true, at: 0, startedAt: 0 }, false);
    m.judgeOpen(open('c2'), { accepted: true, at: 0, startedAt: 0 }, false);
    const body = { status_number: STATUS.CONNECTION_LIMIT, message: 'full' };
    m.judgeOpen(open('c3'), { accepted: false, status: 429, body, text: JSON.stringify(body) }, false);
    expect(m.refillStep()).toEqual({ op: 'close', conn: 'c1' });
    m.closed('c1', 10, 'client');
    expect(m.refillStep()).toEqual(open('c4'));
    m.judgeOpen(open('c4'), { accepted: true, at: 20, startedAt: 20 }, false);
    expect(m.refillStep()).toBeUndefined();
    expect(m.violations).toEqual([]);
  });

  it('fills a key of a small allowance where the profile has one, whatever key was opened last', () => {
    const keys = [{ name: 'primary', allowance: SHORT_FILL_MAX + 1, pairs: [A], refused: [] }, SETUP.keys[1]!];
    const m = new ExploreModel({ ...SETUP, keys });
    m.judgeOpen(
      { op: 'open', conn: 'c1', key: 'primary', silent: false },
      { accepted: true, at: 0, startedAt: 0 },
      false,
    );
    expect(m.resolve({ op: 'open', key: 0, silent: false, fill: true }, 0)).toMatchObject({ key: 'cryptoOnly' });
    expect(m.resolve({ op: 'open', key: 0, silent: false }, 0)).toMatchObject({ key: 'primary' });
  });

  it('a silent connection closed before the window breaks the keep-alive; a pinged one closed at all does', () => {
    const m = new ExploreModel(SETUP);
    m.judgeOpen(
      { op: 'open', conn: 'c1', key: 'primary', silent: true },
      { accepted: true, at: 0, startedAt: 0 },
      false,
    );
    new FrameJudge(m).judge(
      m.conn('c1'),
      { frames: [], inFlightMs: () => 250, serverClosedAt: 1500 },
      { now: 1600, noticeMs: 500, keepAlive: KEEP },
    );
    expect(m.violations.map((v) => v.rule)).toEqual(['limit:ping-interval']);
    const late = new ExploreModel(SETUP);
    late.judgeOpen(
      { op: 'open', conn: 'c1', key: 'primary', silent: true },
      { accepted: true, at: 0, startedAt: 0 },
      false,
    );
    new FrameJudge(late).judge(
      late.conn('c1'),
      { frames: [], inFlightMs: () => 250 },
      { now: 6000, noticeMs: 500, keepAlive: KEEP },
    );
    expect(late.violations.map((v) => v.rule)).toEqual(['transition:connected/no-ping']);
  });

  it('every ping is answered with the text Pong!, subscribed or not', () => {
    const m = subscribed([A]);
    m.pinged('c1', 100, true);
    const text: SeenFrame = { kind: 'text', text: 'pong!', atMs: 120 };
    judge(m, [push(A, 60), text, push(A, 350)], 1000);
    expect(m.violations.map((v) => v.rule)).toEqual(['rule:ping:reply', 'rule:ping:reply']);
  });
});

/** Resolves `cmds` in turn, each open accepted and each request answered with success; returns the steps. */
function walk(m: ExploreModel, cmds: readonly Command[]): Step[] {
  const out: Step[] = [];
  for (const cmd of cmds) {
    const step = m.resolve(cmd, 0);
    if (!step) continue;
    out.push(step);
    if (step.op === 'open') m.judgeOpen(step, { accepted: true, at: 0, startedAt: 0 }, false);
    else if (step.op === 'subscribe' || step.op === 'unsubscribe')
      m.judgeNotice(
        step,
        m.plan(step),
        ok(step.op === 'subscribe' ? METHOD.subscribe : METHOD.unsubscribe, step.id),
        1,
        2,
      );
  }
  return out;
}

describe("what the commands draw on: the connection's past", () => {
  const sub = (pairs: Extract<Command, { op: 'subscribe' }>['pairs']): Command => ({ op: 'subscribe', conn: 0, pairs });
  const unsub = (kind: 'subset' | 'all'): Command => ({ op: 'unsubscribe', conn: 0, pairs: { kind, pick: [0] } });
  const openPrimary: Command = { op: 'open', key: 0, silent: false, home: true };

  it('a replace that keeps pairs, an unsubscribe of some, the same pairs again and all: on one connection', () => {
    const m = new ExploreModel(SETUP);
    const steps = walk(m, [
      openPrimary,
      openPrimary,
      sub({ kind: 'pool', pick: [0, 1] }),
      sub({ kind: 'kept', pick: [0] }),
      unsub('subset'),
      sub({ kind: 'again', pick: [0] }),
      unsub('all'),
    ]);
    expect(steps.slice(2).map(stepText)).toEqual([
      `subscribe c2 [${A}, ${B}]`,
      `subscribe c2 [${B}, ${C}]`,
      `unsubscribe c2 [${B}]`,
      `subscribe c2 [${B}]`,
      `unsubscribe c2 [${B}]`,
    ]);
    expect(m.violations).toEqual([]);
  });

  it('without an unsubscribe, the pairs again are the set the last subscribe replaced', () => {
    const m = new ExploreModel(SETUP);
    const steps = walk(m, [
      openPrimary,
      sub({ kind: 'pool', pick: [0] }),
      sub({ kind: 'pool', pick: [1] }),
      sub({ kind: 'again', pick: [0] }),
    ]);
    expect(steps.map(stepText).slice(1)).toEqual([`subscribe c1 [${A}]`, `subscribe c1 [${B}]`, `subscribe c1 [${A}]`]);
  });

  it('two large subscribes in a row name more pairs than the limit between them, each within it', () => {
    const limit = Array.from({ length: LIMITS.maxPairsPerSubscribe }, (_, i) => `Crypto:ALL:T${i}/USD`);
    const m = new ExploreModel({ ...SETUP, atLimit: limit, accepted: new Set([A, B, C, ...limit]) });
    const cryptoOnly: Command = { op: 'open', key: 3, silent: false };
    const large = sub({ kind: 'large', pick: [0] });
    const steps = walk(m, [openPrimary, cryptoOnly, large, large]) as Extract<Step, { op: 'subscribe' }>[];
    const [first, second] = steps.slice(2);
    expect([first!.conn, second!.conn]).toEqual(['c1', 'c1']);
    for (const s of [first!, second!]) expect(s.pairs.length).toBeLessThanOrEqual(LIMITS.maxPairsPerSubscribe);
    expect(new Set([...first!.pairs, ...second!.pairs]).size).toBeGreaterThan(LIMITS.maxPairsPerSubscribe);
    expect(m.violations).toEqual([]);
  });

  it('goes beyond the allowance of the key it fills first, wherever the fill comes, a key of several first', () => {
    const keys = [
      { name: 'primary', allowance: SHORT_FILL_MAX + 1, pairs: [A], refused: [] },
      { name: 'limited', allowance: 1, pairs: [A], refused: [] },
      SETUP.keys[1]!,
    ];
    const m = new ExploreModel({ ...SETUP, keys });
    const fill: Command = { op: 'open', key: 0, silent: false, fill: true };
    const steps = walk(m, [openPrimary, fill, fill, fill]);
    expect(steps.map(stepText)).toEqual([
      'c1 = open keys.primary',
      'c2 = open keys.cryptoOnly',
      'c3 = open keys.cryptoOnly',
      'c4 = open keys.cryptoOnly',
    ]);
    expect(m.beyond('cryptoOnly')).toBe(true);
  });

  it('nearly every sequence fills first and holds both chains', () => {
    const drawn = Array.from({ length: 40 }, (_, n) => drawSequence(1, n));
    const kinds = (cmds: Command[]) => new Set(cmds.flatMap((c) => (c.op === 'subscribe' ? [c.pairs.kind] : [])));
    const both = drawn.filter((cmds) => kinds(cmds).has('again') && kinds(cmds).has('large'));
    expect(both.length).toBeGreaterThanOrEqual(36);
    expect(drawn.filter((cmds) => cmds[0]!.op === 'open' && cmds[0]!.fill).length).toBeGreaterThanOrEqual(36);
  });
});

describe('generation, shrinking and the replay file', () => {
  it('the same seed draws the same sequence, another seed another', () => {
    expect(drawSequence(7, 3)).toEqual(drawSequence(7, 3));
    expect(drawSequence(7, 3)).not.toEqual(drawSequence(8, 3));
    expect(sequenceArbitrary).toBeDefined();
  });

  const steps: Numbered[] = [
    { n: 0, step: { op: 'open', conn: 'c1', key: 'primary', silent: false } },
    { n: 1, step: { op: 'open', conn: 'c2', key: 'cryptoOnly', silent: false } },
    { n: 2, step: { op: 'subscribe', conn: 'c2', pairs: [A], id: 'x1' } },
    { n: 3, step: { op: 'subscribe', conn: 'c1', pairs: [A, B], id: 'x2' } },
    { n: 4, step: { op: 'idle', ms: 100 } },
    { n: 5, step: { op: 'subscribe', conn: 'c1', pairs: [B, C], id: 'x3' } },
    { n: 6, step: { op: 'ping', conn: 'c2', id: 'x4' } },
  ];
  const failure: FailurePoint = { rule: 'transition:subscribed/subscribe', at: 5 };

  it("the model's slice keeps the failing connection's steps, its key's opens and closes, and the idles", () => {
    expect(slice(steps, failure).map((s) => s.n)).toEqual([0, 3, 4, 5]);
  });

  it('shrinks to the steps the failure needs, and confirms it with a run of its own', async () => {
    // A target that fails whenever c1 subscribed twice, the second time to B.
    const run = async (c: readonly Numbered[]): Promise<FailurePoint | undefined> =>
      c.filter((s) => s.step.op === 'subscribe' && s.step.conn === 'c1').length === 2 && c.some((s) => s.n === 5)
        ? failure
        : undefined;
    const shrunk = await shrink(steps, failure, { run, timeLeft: () => true });
    expect(shrunk.steps.map((s) => s.n)).toEqual([0, 3, 5]);
    expect(shrunk.confirmed).toBe(true);
    expect(shrunk.steps.map((s) => stepText(s.step))).toEqual([
      'c1 = open keys.primary',
      `subscribe c1 [${A}, ${B}]`,
      `subscribe c1 [${B}, ${C}]`,
    ]);
  });

  it('keeps the steps up to the one that made the failure show, when it is charged to an earlier one', async () => {
    // A push of A after the replace that stopped it (step 2), which only the unsubscribe (step 4) brings.
    const later: Numbered[] = [
      { n: 0, step: { op: 'open', conn: 'c1', key: 'primary', silent: false } },
      { n: 1, step: { op: 'subscribe', conn: 'c1', pairs: [A], id: 'x1' } },
      { n: 2, step: { op: 'subscribe', conn: 'c1', pairs: [B], id: 'x2' } },
      { n: 3, step: { op: 'idle', ms: 100 } },
      { n: 4, step: { op: 'unsubscribe', conn: 'c1', pairs: [B], id: 'x3' } },
      { n: 5, step: { op: 'ping', conn: 'c1', id: 'x4' } },
    ];
    const charged: FailurePoint = { rule: 'transition:subscribed/subscribe', at: 2, seen: 4 };
    const run = async (c: readonly Numbered[]): Promise<FailurePoint | undefined> =>
      [1, 2, 4].every((n) => c.some((s) => s.n === n)) ? charged : undefined;
    expect(slice(later, charged).map((s) => s.n)).toEqual([0, 1, 2, 3, 4]);
    const shrunk = await shrink(later, charged, { run, timeLeft: () => true });
    expect(shrunk.steps.map((s) => s.n)).toEqual([0, 1, 2, 4]);
    expect(shrunk.confirmed).toBe(true);
  });

  it("tries the failing connection's own steps first, before the other connections of its key", async () => {
    const two: Numbered[] = [
      { n: 0, step: { op: 'open', conn: 'c1', key: 'primary', silent: false } },
      { n: 1, step: { op: 'open', conn: 'c2', key: 'primary', silent: false } },
      { n: 2, step: { op: 'subscribe', conn: 'c2', pairs: [A], id: 'x1' } },
      { n: 3, step: { op: 'close', conn: 'c1' } },
      { n: 4, step: { op: 'subscribe', conn: 'c2', pairs: [B], id: 'x2' } },
    ];
    const at4: FailurePoint = { rule: 'transition:subscribed/subscribe', at: 4 };
    let runs = 0;
    const run = async (c: readonly Numbered[]): Promise<FailurePoint | undefined> => {
      runs++;
      return c.some((s) => s.n === 2) ? at4 : undefined;
    };
    // Time for two attempts (the connection's open and last step, then its own steps) and the confirming run.
    const shrunk = await shrink(two, at4, { run, timeLeft: () => runs < 2 });
    expect(shrunk.steps.map((s) => s.n)).toEqual([1, 2, 4]);
    expect(shrunk.confirmed).toBe(true);
  });

  it("drops the failing connection's early requests before anything else", async () => {
    const early: Numbered[] = [
      { n: 0, step: { op: 'open', conn: 'c1', key: 'primary', silent: false } },
      { n: 1, step: { op: 'subscribe', conn: 'c1', pairs: [C], id: 'x1' } },
      { n: 2, step: { op: 'ping', conn: 'c1', id: 'x2' } },
      { n: 3, step: { op: 'subscribe', conn: 'c1', pairs: [B, C], id: 'x3' } },
      { n: 4, step: { op: 'ping', conn: 'c1', id: 'x4' } },
      { n: 5, step: { op: 'subscribe', conn: 'c1', pairs: [A, B], id: 'x5' } },
      { n: 6, step: { op: 'unsubscribe', conn: 'c1', pairs: [A], id: 'x6' } },
    ];
    const at6: FailurePoint = { rule: 'transition:subscribed/unsubscribe', at: 6 };
    let runs = 0;
    const run = async (c: readonly Numbered[]): Promise<FailurePoint | undefined> => {
      runs++;
      return c.some((s) => s.n === 5) ? at6 : undefined;
    };
    // Time for two attempts, and the confirming run.
    const shrunk = await shrink(early, at6, { run, timeLeft: () => runs < 2 });
    expect(shrunk.steps.map((s) => s.n)).toEqual([0, 5, 6]);
    expect(shrunk.confirmed).toBe(true);
  });

  it("bisects how many of the connection's latest steps a failure needs: a long past shrinks in 3 runs", async () => {
    // c1 opened, ten requests, then the failing one: the failure needs only the last five before it.
    const long: Numbered[] = [
      { n: 0, step: { op: 'open', conn: 'c1', key: 'primary', silent: false } },
      ...Array.from(
        { length: 11 },
        (_, i): Numbered => ({
          n: i + 1,
          step: { op: 'subscribe', conn: 'c1', pairs: [[A, B, C][i % 3]!], id: `x${i + 1}` },
        }),
      ),
    ];
    const at11: FailurePoint = { rule: 'transition:subscribed/subscribe', at: 11 };
    let runs = 0;
    const run = async (c: readonly Numbered[]): Promise<FailurePoint | undefined> => {
      runs++;
      return [6, 7, 8, 9, 10].every((n) => c.some((s) => s.n === n)) ? at11 : undefined;
    };
    // Time for three attempts and the confirming run: trying the latest steps fewest first spent
    // them on one, two and three steps that pass, and kept all twelve.
    const shrunk = await shrink(long, at11, { run, timeLeft: () => runs < 3 });
    expect(shrunk.steps.map((s) => s.n)).toEqual([0, 6, 7, 8, 9, 10, 11]);
    expect(shrunk.confirmed).toBe(true);
  });

  it("tries the connection's open and the past the model draws on before all its steps", async () => {
    // Eleven steps on c6 take 10 s of a 20 s budget: time for one attempt and the confirming run.
    const past: Numbered[] = [
      { n: 5, step: { op: 'open', conn: 'c6', key: 'primary', silent: false } },
      ...Array.from(
        { length: 8 },
        (_, i): Numbered => ({
          n: i + 7,
          step: { op: 'subscribe', conn: 'c6', pairs: [[A, B, C][i % 3]!, [A, B, C][(i + 1) % 3]!], id: `x${i + 1}` },
        }),
      ),
      { n: 15, step: { op: 'unsubscribe', conn: 'c6', pairs: [A], id: 'x9' } },
      { n: 16, step: { op: 'subscribe', conn: 'c6', pairs: [A], id: 'x10' } },
      { n: 17, step: { op: 'unsubscribe', conn: 'c6', pairs: [A], id: 'x11' } },
    ];
    const at16: FailurePoint = { rule: 'transition:subscribed/subscribe', at: 16, seen: 17 };
    let runs = 0;
    const run = async (c: readonly Numbered[]): Promise<FailurePoint | undefined> => {
      runs++;
      return [14, 16, 17].every((n) => c.some((s) => s.n === n)) ? at16 : undefined;
    };
    expect(keptPastFrom(SETUP, past, 16)).toBe(13);
    const shrunk = await shrink(past, at16, { run, timeLeft: () => runs < 1, pastFrom: 13 });
    expect(shrunk.steps.map((s) => s.n)).toEqual([5, 13, 14, 15, 16, 17]);
    expect(shrunk.confirmed).toBe(true);
  });

  it('the past the model draws on begins at the second-to-last subscribe it plans to succeed', () => {
    const refused: Numbered[] = [
      { n: 0, step: { op: 'open', conn: 'c1', key: 'primary', silent: false } },
      { n: 1, step: { op: 'subscribe', conn: 'c1', pairs: [A], id: 'x1' } },
      { n: 2, step: { op: 'subscribe', conn: 'c1', pairs: [B], id: 'x2' } },
      { n: 3, step: { op: 'subscribe', conn: 'c1', pairs: [SETUP.unknownPair], id: 'x3' } },
      { n: 4, step: { op: 'unsubscribe', conn: 'c1', pairs: [B], id: 'x4' } },
      { n: 5, step: { op: 'subscribe', conn: 'c1', pairs: [C], id: 'x5' } },
    ];
    expect(keptPastFrom(SETUP, refused, 5)).toBe(1);
    expect(keptPastFrom(SETUP, refused, 2)).toBeUndefined();
  });

  it('runs no candidate the model rules out, and none twice', async () => {
    const ran: string[] = [];
    const run = async (c: readonly Numbered[]): Promise<FailurePoint | undefined> => {
      ran.push(c.map((s) => s.n).join(','));
      return c.some((s) => s.n === 3) ? failure : undefined;
    };
    // The model rules out every candidate without c1's first subscribe (step 3): step 5 is no replace then.
    const possible = (c: readonly Numbered[]): boolean => c.some((s) => s.n === 3);
    const shrunk = await shrink(steps, failure, { run, timeLeft: () => true, possible });
    expect(shrunk.steps.map((s) => s.n)).toEqual([0, 3, 5]);
    expect(ran.slice(0, -1).every((c) => c.split(',').includes('3'))).toBe(true);
    expect(new Set(ran.slice(0, -1)).size).toBe(ran.length - 1);
  });

  it("the model plans a candidate's failing step: a replace whose first subscribe was cut is ruled out", () => {
    const found: Numbered[] = [
      { n: 0, step: { op: 'open', conn: 'c1', key: 'primary', silent: false } },
      { n: 1, step: { op: 'open', conn: 'c2', key: 'primary', silent: false } },
      { n: 2, step: { op: 'subscribe', conn: 'c1', pairs: [A, B], id: 'x1' } },
      { n: 3, step: { op: 'ping', conn: 'c1', id: 'x2' } },
      { n: 4, step: { op: 'subscribe', conn: 'c1', pairs: [B, C], id: 'x3' } },
    ];
    const v = {
      transition: 'subscribe replaces the subscription',
      rule: 'transition:subscribed/subscribe',
      at: 4,
    } as const;
    expect(plannedTransition(SETUP, found, 4)).toBe(v.transition);
    const possible = mayBreakAgain(SETUP, v, found);
    const keep = (...ns: number[]) => found.filter((s) => ns.includes(s.n));
    expect(possible(keep(0, 2, 4))).toBe(true);
    expect(possible(keep(0, 3, 4))).toBe(false);
    expect(plannedTransition(SETUP, keep(0, 3, 4), 4)).toBe('subscribe from no subscription');
    // An unsubscribe of pairs not subscribed may succeed or fail: what follows it is not planned.
    const unsub: Numbered = { n: 3, step: { op: 'unsubscribe', conn: 'c1', pairs: [C], id: 'x2' } };
    expect(plannedTransition(SETUP, [found[0]!, unsub, found[4]!], 4)).toBeUndefined();
    // A rule the failing transition does not judge (the id echoed) rules nothing out.
    expect(mayBreakAgain(SETUP, { ...v, rule: 'field:notice:id' }, found)(keep(0, 3, 4))).toBe(true);
  });

  it('takes no candidate that fails under another rule or at another step', async () => {
    const run = async (c: readonly Numbered[]): Promise<FailurePoint | undefined> => ({
      rule: 'limit:connections-per-key',
      at: c.at(-1)!.n,
    });
    const shrunk = await shrink(steps.slice(0, 6), failure, { run, timeLeft: () => true });
    expect(shrunk.steps.length).toBe(6);
    expect(shrunk.confirmed).toBe(false);
  });

  it('reads back a replay file and names the problem of one it cannot read', () => {
    const file = {
      format: REPLAY_FORMAT,
      version: REPLAY_VERSION,
      seed: 1,
      sequence: 0,
      target: { rest: 'http://127.0.0.1:1' },
      steps: steps.map((s) => s.step),
      failure: { step: 5, transition: 't', rule: 'r', expected: 'e', received: 'x' },
      transcript: [],
    };
    expect(parseReplay(JSON.stringify(file), 'f.json').steps).toHaveLength(7);
    expect(() => parseReplay('{', 'f.json')).toThrow(/^f\.json: is not JSON/);
    expect(() => parseReplay(JSON.stringify({ ...file, steps: [{ op: 'jump' }] }), 'f.json')).toThrow(
      /steps\[0\].*jump/,
    );
  });

  it('reads budgets as typed and refuses what is not one', () => {
    expect(parseBudget('60s', '--explore')).toBe(60_000);
    expect(parseBudget('1500ms', '--explore')).toBe(1500);
    expect(parseBudget('2m', '--explore')).toBe(120_000);
    expect(parseBudget('20', '--budget')).toBe(20_000);
    expect(() => parseBudget('soon', '--explore')).toThrow(/^--explore: "soon" is not a duration/);
    expect(() => parseBudget('10ms', '--explore')).toThrow(/out of range/);
    expect(() => checkSeed(-1)).toThrow(/^--seed/);
  });

  it('every transition credits statements of the spec, and the explorer enforces each of them', () => {
    const keys = new Set(SPEC_STATEMENTS.map((s) => s.key));
    for (const statements of Object.values(TRANSITIONS)) for (const k of statements) expect(keys.has(k)).toBe(true);
    expect(MODEL_STATEMENTS.length).toBeGreaterThan(10);
  });
});
