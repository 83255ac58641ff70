/**
 * What a check comes to, decided from data alone: the outcome of a check that ran, from what it
 * recorded and how its body ended; the result of a check that did not run, from why. No clock,
 * no socket: the runner measures, these functions judge.
 */
import type { Check, CheckResult, Evidence, Severity } from './check.ts';
import { blankResult, CheckFailed, CheckSkipped } from './context.ts';
import { errorCode, TimeoutError } from './errors.ts';
import { oneLine, type Redact } from './redact.ts';
import type { TargetInfo } from './target.ts';

/** How a check's body ended: it returned, or it threw (a timeout and an abort are thrown too). */
export type Ending = { ok: true } | { ok: false; error: unknown };

/** The outcome of a check, with the reason and stable code of a skip or an error. */
export type Verdict =
  | { outcome: 'pass' | 'fail' }
  | { outcome: 'skip'; reason: string; nothingToJudge?: string }
  | { outcome: 'error'; errorCode: string; reason: string };

/**
 * The verdict of a check that ran. A violation recorded is a fail whatever the body did next;
 * `ctx.fail` is a fail (an observe check's violations are observations, so a pass); `ctx.skip` is
 * a skip with its reason; anything else thrown is an error of the harness or the network, never
 * the target's failure.
 */
export function verdictOf(severity: Severity, violations: number, ending: Ending, redact: Redact): Verdict {
  if (violations > 0) return { outcome: 'fail' };
  if (ending.ok) return { outcome: 'pass' };
  const err = ending.error;
  if (err instanceof CheckFailed) return { outcome: severity === 'observe' ? 'pass' : 'fail' };
  if (err instanceof CheckSkipped)
    return err.nothingToJudge
      ? { outcome: 'skip', reason: err.message, nothingToJudge: err.nothingToJudge }
      : { outcome: 'skip', reason: err.message };
  return {
    outcome: 'error',
    errorCode: errorCode(err),
    reason: oneLine(redact(err instanceof Error ? err.message : String(err))),
  };
}

/** Why a check did not run. */
export type NotRunReason =
  /** The profile lacks fields the check needs: nothing to run it with. `source`: where the profile came from. */
  | { kind: 'missing'; fields: readonly string[]; source?: TargetInfo['source'] }
  /** The target answered nothing (a stalled preflight, a tripped circuit breaker): its silence is to blame. */
  | { kind: 'silent'; reason: string; evidence?: readonly Evidence[] }
  /** `--bail` stopped the run after the check named. */
  | { kind: 'bail'; after: string }
  /** The run was stopped from outside. */
  | { kind: 'stopped' };

/**
 * Why a check of a `--target` run did not run, in its words: there is no profile, only one key and
 * what discovery found (`needs keys.suspended: a --target run has one key; conform init writes a
 * profile to name more`).
 */
function notGivenByTarget(fields: readonly string[]): string {
  const keys = fields.filter((f) => f.startsWith('keys.'));
  const found = fields.filter((f) => !f.startsWith('keys.'));
  const why = [
    ...(keys.length ? ['a --target run has one key'] : []),
    ...(found.length ? [`discovery found no ${found.join(', ')}`] : []),
  ];
  return `needs ${fields.join(', ')}: ${why.join(', and ')}; conform init writes a profile to name more`;
}

/**
 * The result of a check that did not run: a skip with the reason, or a timeout error when the
 * target's silence kept it from running (a run that reads as skipped would hide a dead target).
 */
export function notRun(check: Check, why: NotRunReason): CheckResult {
  const result = blankResult(check);
  switch (why.kind) {
    case 'missing':
      result.outcome = 'skip';
      result.reason =
        why.source === 'target' ? notGivenByTarget(why.fields) : `profile has no ${why.fields.join(', ')}`;
      result.missing = [...why.fields];
      break;
    case 'silent':
      result.outcome = 'error';
      result.errorCode = TimeoutError.code;
      result.reason = why.reason;
      if (why.evidence) result.evidence = [...why.evidence];
      break;
    case 'bail':
      result.outcome = 'skip';
      result.reason = `not run: --bail after ${why.after}`;
      break;
    case 'stopped':
      result.outcome = 'skip';
      result.reason = 'not run: the run was stopped';
      break;
  }
  return result;
}
