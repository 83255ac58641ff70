/**
 * What the model says of a shrinking candidate before it runs: the transition its failing step
 * would take (so a candidate that cannot break the same rule costs no run), and where the part of
 * the failing connection's past the model draws on begins (so the first candidate holds it and
 * little else). Pure: a dry run of the model with every request answered as planned.
 */
import type { StatementKey } from '../statements.ts';
import { ExploreModel, type ModelSetup, type ModelViolation, type RequestPlan } from './model.ts';
import type { Numbered } from './shrink.ts';
import { TRANSITIONS, type TransitionName } from './transitions.ts';

/**
 * The plans of the requests on `conn` in `steps`, each request before answered as planned, by
 * original index; `open` is the index of the first request whose answer the spec leaves open (an
 * unsubscribe of pairs not subscribed, taken as a success): the transitions after it are not known.
 */
function dryRun(
  setup: ModelSetup,
  steps: readonly Numbered[],
  conn: string,
): { plans: Map<number, RequestPlan>; open?: number } {
  const m = new ExploreModel(setup);
  const plans = new Map<number, RequestPlan>();
  let open: number | undefined;
  for (const { n, step } of steps) {
    m.step = n;
    if (step.op === 'open') m.opened_(step, 0);
    // A step on a connection not open does not run.
    if (!('conn' in step) || step.conn !== conn || !m.conn(step.conn)?.open) continue;
    const c = m.conn(step.conn);
    if (step.op === 'close') m.closed(step.conn, 0, 'client');
    if (step.op !== 'subscribe' && step.op !== 'unsubscribe') continue;
    const plan = m.plan(step);
    plans.set(n, plan);
    // What the answer does to the subscription (requests.ts, applySuccess and applyFailure).
    if (plan.expect.kind === 'either') open ??= n;
    if (plan.expect.kind === 'error') c.subs = undefined;
    else if (step.op === 'subscribe') c.subs = new Set(step.pairs);
    else for (const p of step.pairs) c.subs?.delete(p);
  }
  return { plans, ...(open === undefined ? {} : { open }) };
}

const connOf = (steps: readonly Numbered[], at: number): string | undefined => {
  const s = steps.find((x) => x.n === at)?.step;
  return s && 'conn' in s ? s.conn : undefined;
};

/**
 * The transition the model plans for step `at` of `steps` when every request before it on its
 * connection is answered as planned: what that step is judged by in a run of these steps, known
 * before the run. Undefined when step `at` is no subscribe or unsubscribe, or when an answer the
 * spec leaves open (an unsubscribe of pairs not subscribed) comes before it.
 */
export function plannedTransition(
  setup: ModelSetup,
  steps: readonly Numbered[],
  at: number,
): TransitionName | undefined {
  const conn = connOf(steps, at);
  if (conn === undefined) return undefined;
  const { plans, open } = dryRun(setup, steps, conn);
  return open === undefined || open >= at ? plans.get(at)?.transition : undefined;
}

/**
 * Whether a run of `candidate` (a shrinking attempt of the steps `found`, which broke `v`) can break
 * the same rule at the same step: false when the model plans there a transition that does not
 * judge the rule. Rules out nothing unless the steps as found plan the transition that broke, so
 * a failure the plan does not explain is shrunk by runs alone.
 */
export function mayBreakAgain(
  setup: ModelSetup,
  v: Pick<ModelViolation, 'transition' | 'rule' | 'at'>,
  found: readonly Numbered[],
): (candidate: readonly Numbered[]) => boolean {
  const judges = (t: TransitionName): boolean => (TRANSITIONS[t] as readonly StatementKey[]).includes(v.rule);
  if (!judges(v.transition) || plannedTransition(setup, found, v.at) !== v.transition) return () => true;
  return (candidate) => {
    const t = plannedTransition(setup, candidate, v.at);
    return t === undefined || judges(t);
  };
}

/**
 * Where the past of step `at`'s connection that the model draws on begins: the second-to-last
 * subscribe before it that the model plans to succeed. The model holds a connection's set and the
 * set its last subscribe replaced (what later requests name again), and the requests from that
 * subscribe on built both; what came before it is what a shrunk transcript can most often do
 * without. Undefined when the connection has no two such subscribes before `at`.
 */
export function keptPastFrom(setup: ModelSetup, steps: readonly Numbered[], at: number): number | undefined {
  const conn = connOf(steps, at);
  if (conn === undefined) return undefined;
  const { plans } = dryRun(setup, steps, conn);
  const sets = steps.filter((s) => s.n < at && s.step.op === 'subscribe' && plans.get(s.n)?.expect.kind === 'success');
  return sets.at(-2)?.n;
}
