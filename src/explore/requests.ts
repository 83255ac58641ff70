/**
 * The requests of the model: what a subscribe or unsubscribe expects of its notice (its plan),
 * and what the notice that came does to the connection's subscription and its pushes. Pure.
 */
import { LIMITS, METHOD, STATUS, TEXT, pairNotFoundMessage } from '../spec.ts';
import type { StatementKey } from '../statements.ts';
import type { Step } from './commands.ts';
import type { ConnModel, ModelView, RequestPlan } from './model-types.ts';
import type { TransitionName } from './transitions.ts';

/** What a subscribe or unsubscribe step expects of its notice. */
export function planRequest(m: ModelView, step: Extract<Step, { op: 'subscribe' | 'unsubscribe' }>): RequestPlan {
  const c = m.conn(step.conn);
  c.changeStep = m.step;
  return step.op === 'subscribe' ? subscribePlan(m, c, step.pairs) : unsubscribePlan(c, step.pairs);
}

function subscribePlan(m: ModelView, c: ConnModel, pairs: readonly string[]): RequestPlan {
  const key = m.key(c.key);
  const unknown = pairs.filter((p) => p === m.setup.unknownPair);
  const refused = pairs.filter((p) => key.refused.includes(p));
  const unvetted = pairs.filter((p) => !m.setup.accepted.has(p) && p !== m.setup.unknownPair);
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

function unsubscribePlan(c: ConnModel, pairs: readonly string[]): RequestPlan {
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
export function judgeNotice(
  m: ModelView,
  step: Extract<Step, { op: 'subscribe' | 'unsubscribe' }>,
  plan: RequestPlan,
  notice: Record<string, unknown> | undefined,
  sentAt: number,
  at: number,
): 'success' | 'error' | 'none' {
  const t = plan.transition;
  m.tally.exercised(t);
  m.tally.judged(t);
  const what = `${step.op} ${step.pairs.length > 4 ? `of ${step.pairs.length} pairs` : JSON.stringify(step.pairs)}`;
  if (!notice) {
    m.violate(
      t,
      `no notice answered the ${what}`,
      'a notice answers every subscribe and unsubscribe',
      'event:notice-error',
    );
    return 'none';
  }
  judgeIdEcho(m, step.id, notice, what);
  const ok = String(notice.code) === STATUS.OK && notice.method !== METHOD.error;
  const exp = plan.expect;
  const shown = JSON.stringify(notice).slice(0, 300);
  if (exp.kind === 'success' || (exp.kind === 'either' && ok)) {
    if (!ok) {
      m.violate(t, `${what} answered ${shown}`, `the ${step.op} succeeds: notice code "${STATUS.OK}"`);
      return 'error';
    }
    judgeSuccessShape(m, t, notice, exp.method, exp.message, what);
    applySuccess(m, step, t, sentAt, at);
    if (exp.kind === 'either')
      m.observed.push({
        name: 'unsubscribe-not-subscribed',
        value: 'success',
        note: 'an unsubscribe naming a pair that is not subscribed (spec: not shown)',
      });
    return 'success';
  }
  if (exp.kind === 'either') {
    applyFailure(m, step, sentAt);
    m.observed.push({
      name: 'unsubscribe-not-subscribed',
      value: `error ${String(notice.code)}`,
      note: 'an unsubscribe naming a pair that is not subscribed (spec: not shown)',
    });
    return 'error';
  }
  if (ok) {
    m.violate(
      t,
      `${what} answered ${shown}`,
      `an error notice with code ${exp.codes.map((c) => `"${c}"`).join(' or ')}`,
    );
    applySuccess(m, step, t, sentAt, at);
    return 'success';
  }
  if (notice.method !== METHOD.error || !exp.codes.includes(String(notice.code)))
    m.violate(t, `${what} answered ${shown}`, `method "error" and code ${exp.codes.map((c) => `"${c}"`).join(' or ')}`);
  else if (exp.message !== undefined && notice.message !== exp.message && String(notice.code) === STATUS.PAIR_NOT_FOUND)
    m.violate(
      t,
      `${what} answered ${shown}`,
      `message ${JSON.stringify(exp.message)}`,
      'rule:subscribe:unknown-pair-message',
    );
  applyFailure(m, step, sentAt);
  return 'error';
}

function judgeIdEcho(m: ModelView, id: string, notice: Record<string, unknown>, what: string): void {
  m.tally.exercised('notice echoes the id');
  m.tally.judged('notice echoes the id');
  if (notice.id !== id)
    m.violate('notice echoes the id', `${what}: id ${JSON.stringify(notice.id)}`, `id ${JSON.stringify(id)} echoed`);
}

function judgeSuccessShape(
  m: ModelView,
  t: TransitionName,
  n: Record<string, unknown>,
  method: string,
  message: string,
  what: string,
): void {
  const expected = `{"method":"${method}","message":"${message}","code":"${STATUS.OK}"} with data null when present`;
  const bad = n.method !== method || n.message !== message || n.code !== STATUS.OK || ('data' in n && n.data !== null);
  if (bad) m.violate(t, `${what} answered ${JSON.stringify(n).slice(0, 300)}`, expected, shapeRule(n, method, message));
}

function applySuccess(
  m: ModelView,
  step: Extract<Step, { op: 'subscribe' | 'unsubscribe' }>,
  t: TransitionName,
  sentAt: number,
  at: number,
): void {
  const c = m.conn(step.conn);
  if (step.op === 'subscribe') {
    for (const p of c.subs ?? allIntervalPairs(c)) if (!step.pairs.includes(p)) stop(m, c, p, at, t);
    for (const p of step.pairs) start(m, c, p, sentAt, at, t, true);
    c.replaced = [...(c.subs ?? [])];
    c.subs = new Set(step.pairs);
    return;
  }
  for (const p of step.pairs) stop(m, c, p, at, t);
  if (!c.subs) return;
  for (const p of step.pairs) if (c.subs.delete(p)) c.unsubscribed.add(p);
  // The pairs it did not list go on: their pushes are due after this answer, under its rule.
  for (const p of c.subs) start(m, c, p, sentAt, at, t, true);
}

/** A failed request changes nothing stated: the pairs it names may or may not be pushed from now on. */
function applyFailure(m: ModelView, step: Extract<Step, { op: 'subscribe' | 'unsubscribe' }>, sentAt: number): void {
  const c = m.conn(step.conn);
  const maybe = new Set([...(c.subs ?? []), ...(step.op === 'subscribe' ? step.pairs : [])]);
  for (const p of maybe) start(m, c, p, sentAt, undefined, 'subscribe replaces the subscription', false);
  for (const list of c.intervals.values()) for (const i of list) if (i.until === undefined) i.due = false;
  c.subs = undefined;
}

function allIntervalPairs(c: ConnModel): string[] {
  return [...c.intervals.entries()].filter(([, l]) => l.some((i) => i.until === undefined)).map(([p]) => p);
}

function start(
  m: ModelView,
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
      current.step = m.step;
      if (answeredAt !== undefined) current.answeredAt = answeredAt;
    }
    return;
  }
  list.push({ from, by, due, step: m.step, ...(answeredAt === undefined ? {} : { answeredAt }) });
  c.intervals.set(p, list);
}

function stop(m: ModelView, c: ConnModel, p: string, at: number, by: TransitionName): void {
  for (const i of c.intervals.get(p) ?? [])
    if (i.until === undefined) {
      i.until = at;
      i.stopStep = m.step;
    }
  c.stoppedBy.set(p, by);
}

/** The statement a success notice's wrong field breaks. */
function shapeRule(n: Record<string, unknown>, method: string, message: string): StatementKey {
  if (n.code !== STATUS.OK) return 'field:notice:code';
  if (n.method !== method) return 'field:notice:method';
  if (n.message !== message)
    return method === METHOD.unsubscribe ? 'rule:unsubscribe:success-reply' : 'field:notice:message';
  return 'field:notice:data';
}
