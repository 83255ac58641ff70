/**
 * Shrinking a failing sequence to a short one that still fails the same way, and confirming it.
 *
 * Written here rather than taken from fast-check's shrinker: fast-check shrinks by running the
 * property again for each candidate, hundreds of times, which is right for a pure function and
 * wrong for a live target, where each run takes seconds and leaves state behind (a slot cooling, a
 * price moved). This one makes few, chosen attempts (what a delta-debugging pass would try, the
 * failing connection's open and the past of it the model draws on first, then its own steps, then
 * the model's slice: the steps that touch the failing connection and its key), runs no candidate
 * twice nor one the model rules out, and accepts a
 * candidate only when it fails under the same rule at the same original step, so a failure that
 * state left by an earlier attempt provokes elsewhere is not taken for the one being shrunk.
 */
import type { Step } from './commands.ts';

/** A step with its index in the sequence as first found. */
export interface Numbered {
  n: number;
  step: Step;
}

/** How a run of a sequence failed: the rule, and the step it failed at (by original index). */
export interface FailurePoint {
  rule: string;
  /** Original index of the step whose judgement failed. */
  at: number;
  /** Original index of the step running when it showed (default `at`): the steps up to it made it show. */
  seen?: number;
}

/** The steps up to the one running when the failure showed. */
const upToSeen = (steps: readonly Numbered[], failure: FailurePoint): Numbered[] =>
  steps.filter((s) => s.n <= Math.max(failure.at, failure.seen ?? failure.at));

/** What shrinking needs of the explorer: a run of a candidate, and how much time is left. */
export interface ShrinkHooks {
  /** Runs the steps against the target; resolves with how it failed, or undefined when it passed. */
  run(steps: readonly Numbered[]): Promise<FailurePoint | undefined>;
  /** Whether time is left for one more attempt and the confirming run after it. */
  timeLeft(): boolean;
  /**
   * Only the model's slice is tried (a failure whose attempts each leave state that takes seconds to
   * clear, such as a key's allowance): one attempt and the confirming run.
   */
  sliceOnly?: boolean;
  /**
   * Whether a run of the steps can fail the same way at all (default: always). False spares a run
   * whose outcome is known before it starts: the model would judge the failing step by another
   * transition, whose statements do not hold the rule (a replace that became a first subscribe
   * once the subscribe before it was cut).
   */
  possible?(steps: readonly Numbered[]): boolean;
  /**
   * The original index where the failing connection's past that the model draws on begins
   * (candidates.ts, keptPastFrom): the first candidate is the connection's open and its steps from
   * there on.
   */
  pastFrom?: number;
}

/** The result: the shortest sequence found, how many runs it took, and whether a last run confirmed it. */
export interface Shrunk {
  steps: Numbered[];
  failure: FailurePoint;
  runs: number;
  confirmed: boolean;
}

const connOf = (s: Step): string | undefined => ('conn' in s ? s.conn : undefined);

/**
 * The model's slice of a failing sequence: the failing step, every step on its connection, the
 * opens and closes of the same keys (their counts bear on the allowance), and every idle (time
 * bears on the keep-alive and the pushes).
 */
export function slice(steps: readonly Numbered[], failure: FailurePoint): Numbered[] {
  const upTo = upToSeen(steps, failure);
  const failing = upTo.find((s) => s.n === failure.at);
  if (!failing) return [...upTo];
  const conn = connOf(failing.step);
  const keyOf = new Map(upTo.flatMap((s) => (s.step.op === 'open' ? [[s.step.conn, s.step.key] as const] : [])));
  const key = conn === undefined ? undefined : keyOf.get(conn);
  return upTo.filter((s) => {
    const c = connOf(s.step);
    if (s.n === failure.at || s.step.op === 'idle' || c === conn) return true;
    return key !== undefined && (s.step.op === 'open' || s.step.op === 'close') && keyOf.get(c!) === key;
  });
}

/** Whether a candidate's failure is the one being shrunk. */
const same = (a: FailurePoint | undefined, b: FailurePoint): boolean => a?.rule === b.rule && a.at === b.at;

/**
 * Steps a candidate must keep: the failing one, and the open of every connection a kept step
 * acts on (a step on a connection never opened cannot run).
 */
function valid(steps: readonly Numbered[], failure: FailurePoint): boolean {
  if (!steps.some((s) => s.n === failure.at)) return false;
  const opened = new Set<string>();
  for (const { step } of steps) {
    if (step.op === 'open') opened.add(step.conn);
    else if ('conn' in step && !opened.has(step.conn)) return false;
  }
  return true;
}

/** A candidate's identity: its steps' original indices. */
const ids = (steps: readonly Numbered[]): string => steps.map((s) => s.n).join(',');

/**
 * Shrinks `steps` (which failed with `failure`): the failing connection's open and the past of it
 * the model draws on first, else the connection's own steps, else the slice; then the connection's
 * open with its latest steps, bisecting how many; then removing chunks of halving size, then single
 * steps, each attempt kept when it fails the same way; then one more run of the result confirms it
 * still fails.
 */
export async function shrink(steps: readonly Numbered[], failure: FailurePoint, hooks: ShrinkHooks): Promise<Shrunk> {
  let best = upToSeen(steps, failure);
  let runs = 0;
  const tried = new Set<string>();
  // Worth a run: runnable, shorter than the best so far, not run before, and not ruled out by the
  // model. Checked before the time left, so a candidate that is not worth one costs nothing.
  const worth = (candidate: readonly Numbered[]): boolean =>
    valid(candidate, failure) &&
    candidate.length < best.length &&
    !tried.has(ids(candidate)) &&
    (hooks.possible?.(candidate) ?? true);
  const attempt = async (candidate: Numbered[]): Promise<boolean> => {
    if (!worth(candidate) || !hooks.timeLeft()) return false;
    tried.add(ids(candidate));
    runs++;
    if (!same(await hooks.run(candidate), failure)) return false;
    best = candidate;
    return true;
  };
  const sliced = slice(best, failure);
  const failing = steps.find((s) => s.n === failure.at)?.step;
  const conn = failing && connOf(failing);
  // Idles bear on the keep-alive and the pushes, not on a key's allowance: a slice-only failure
  // tries without them first. Any other tries the failing connection's own steps: what a
  // request does to a connection rarely needs the key's other connections, and dropping them one
  // attempt at a time costs a run each (a fill is five steps).
  const first = hooks.sliceOnly
    ? sliced.filter((s) => s.step.op !== 'idle')
    : sliced.filter((s) => s.n === failure.at || (conn !== undefined && connOf(s.step) === conn));
  // A connection's past the model does not draw on is rarely what failed, and a long one makes the
  // run of the connection's own steps so slow that no time is left for another attempt (eleven
  // steps took 10 s of a 20 s budget): the part it draws on is tried alone before them.
  const pastFrom = hooks.pastFrom;
  if (pastFrom !== undefined && !hooks.sliceOnly)
    await attempt(first.filter((s) => (s.step.op === 'open' && s.step.conn === conn) || s.n >= pastFrom));
  if (!(await attempt(first))) await attempt(sliced);
  // Then the connection's open and its latest steps alone: what its early requests left (a set near
  // the limit) is rarely what failed. How many latest steps it needs is bisected, taking a failure
  // with some of them to fail with more too: each run halves the range, where trying the fewest
  // first spent a run on every short one that passed and left a long connection's past unshrunk
  // when time ran out.
  const own = best.filter((s) => conn !== undefined && connOf(s.step) === conn);
  if (!hooks.sliceOnly && own[0]?.step.op === 'open') {
    const latest = Array.from({ length: own.length - 1 }, (_, j) => [own[0]!, ...own.slice(own.length - 1 - j)]).filter(
      worth,
    );
    for (let lo = 0, hi = latest.length; lo < hi && hooks.timeLeft(); ) {
      const mid = Math.floor((lo + hi) / 2);
      if (await attempt(latest[mid]!)) hi = mid;
      else lo = mid + 1;
    }
  }
  for (
    let size = hooks.sliceOnly ? 0 : Math.floor(best.length / 2);
    size >= 1 && hooks.timeLeft();
    size = Math.floor(size / 2)
  ) {
    // From the end back: later steps depend on earlier ones, so they go first.
    for (let start = best.length - size - 1; start >= 0 && hooks.timeLeft(); start--) {
      const candidate = [...best.slice(0, start), ...best.slice(start + size)];
      if (await attempt(candidate)) start = Math.min(start, best.length - size);
    }
  }
  // Always run: timeLeft kept the time for it.
  runs++;
  const confirmed = same(await hooks.run(best), failure);
  return { steps: best, failure, runs, confirmed };
}
