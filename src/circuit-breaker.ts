/**
 * The run's circuit breaker: a target that stops answering mid-run ends the run in seconds rather
 * than costing every remaining check its timeout. It counts checks in a row that got no answer at
 * all (a timeout or network error with no HTTP response and no inbound frame); a skip neither
 * counts nor breaks the streak, any other result breaks it.
 */
import type { CheckResult } from './check.ts';
import { AbortedError, NetworkError, TimeoutError } from './errors.ts';

/** Fewest silent checks in a row that trip the breaker (more with a higher concurrency). */
export const BREAKER_MIN = 6;

/** A check that ended in a timeout or network error without one HTTP response or inbound frame. */
export function gotNoAnswer(r: CheckResult): boolean {
  if (r.outcome !== 'error' || (r.errorCode !== TimeoutError.code && r.errorCode !== NetworkError.code)) return false;
  return !r.evidence.some(
    (e) => (e.kind === 'http' && e.response !== undefined) || (e.kind === 'frame' && e.direction === 'in'),
  );
}

export class CircuitBreaker {
  private streak = 0;
  private why: string | undefined;

  /** `threshold`: silent checks in a row that trip it. */
  constructor(readonly threshold: number) {}

  /** The breaker of a run with `concurrency` checks in flight: BREAKER_MIN, or more than the checks in flight. */
  static forConcurrency(concurrency: number): CircuitBreaker {
    return new CircuitBreaker(Math.max(BREAKER_MIN, concurrency + 2));
  }

  /** Why the run stopped, once the breaker has tripped; the reason of every check it kept from running. */
  get tripped(): string | undefined {
    return this.why;
  }

  /** Counts a finished check; returns the reason on the result that trips the breaker, once. */
  record(result: CheckResult): string | undefined {
    if (gotNoAnswer(result)) {
      if (++this.streak >= this.threshold && !this.why) {
        this.why =
          `not run: the target stopped answering (${this.streak} checks in a row got no answer; ` +
          `the last, ${result.id}: ${result.reason ?? result.errorCode})`;
        return this.why;
      }
    } else if (result.outcome !== 'skip') this.streak = 0;
    return undefined;
  }

  /**
   * A check in flight that the tripped breaker aborted ends as a timeout with the breaker's reason:
   * the target's silence stopped it, not the harness.
   */
  attribute(result: CheckResult): void {
    if (this.why && result.outcome === 'error' && result.errorCode === AbortedError.code) {
      result.errorCode = TimeoutError.code;
      result.reason = this.why;
    }
  }
}
