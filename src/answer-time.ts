/**
 * A check's time limit and how slowly the target answers its REST requests. The spec states no
 * answer time, so what an answer takes beyond REST_ANSWER_ALLOWANCE_MS is the target's pace, not
 * the check's, and lengthens the check's limit by as much, up to SLOW_ANSWER_STRETCH_MAX times the
 * limit it started with. Only an answer lengthens it: a request the target never answers runs the
 * limit down as before.
 */
import type { CheckResult } from './check.ts';
import type { RunSummary } from './summary.ts';
import { REST_ANSWER_ALLOWANCE_MS, SLOW_ANSWER_STRETCH_MAX } from './timing/index.ts';

/** One check's account of its slow REST answers. */
export interface AnswerTime {
  /** An answer came `ms` after its request was sent. */
  answered(ms: number): void;
  /** How much the limit has grown for slow answers so far, ms. */
  lengthenedMs(): number;
}

/**
 * The account of a check whose limit is `limitMs`, lengthening it through `extend`. Answers that
 * overlap (a check's concurrent reads) each count in full: that errs towards waiting, and the bound
 * keeps it finite.
 */
export function answerTime(limitMs: number, extend: (ms: number) => void): AnswerTime {
  const bound = SLOW_ANSWER_STRETCH_MAX * limitMs;
  let granted = 0;
  return {
    answered(ms) {
      const extra = Math.min(ms - REST_ANSWER_ALLOWANCE_MS, bound - granted);
      if (!(extra > 0)) return;
      granted += extra;
      extend(extra);
    },
    lengthenedMs: () => granted,
  };
}

/**
 * What the run's summary says of slow answers: the checks that ran past their limits for them, and
 * the run's slowest answer (`slowestMs`); undefined when no check needed the time.
 */
export function slowAnswersOf(results: readonly CheckResult[], slowestMs: number): RunSummary['slowAnswers'] {
  const slowed = results.filter((r) => r.slowAnswerMs !== undefined);
  if (slowed.length === 0) return undefined;
  return {
    slowestMs: Math.round(slowestMs),
    lengthenedMs: slowed.reduce((sum, r) => sum + r.slowAnswerMs!, 0),
    checks: slowed.length,
  };
}
