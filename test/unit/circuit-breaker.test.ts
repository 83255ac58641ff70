import { describe, expect, it } from 'vitest';
import type { CheckResult, Evidence } from '../../src/check.ts';
import { BREAKER_MIN, CircuitBreaker, gotNoAnswer } from '../../src/circuit-breaker.ts';

const request = { method: 'GET', url: 'http://127.0.0.1:1/v1/pairs', headers: {} };
const unanswered: Evidence = { kind: 'http', request, error: 'timeout', curl: 'curl …', atMs: 1 };
const answered: Evidence = {
  kind: 'http',
  request,
  response: { status: 200, headers: {}, body: '{}' },
  curl: 'curl …',
  atMs: 1,
};

function result(id: string, over: Partial<CheckResult>): CheckResult {
  return {
    id,
    title: id,
    expectation: '',
    clause: { section: 'REST envelope', rule: 'synthetic' },
    severity: 'must',
    tags: ['rest'],
    outcome: 'pass',
    violations: [],
    observations: [],
    evidence: [],
    durationMs: 1,
    ...over,
  };
}
const timedOut = (id: string, evidence: Evidence[] = [unanswered]): CheckResult =>
  result(id, { outcome: 'error', errorCode: 'CONFORM_TIMEOUT', reason: `${id} did not finish within 50 ms`, evidence });

describe('a check that got no answer', () => {
  it('is a timeout or network error without an HTTP response or an inbound frame', () => {
    expect(gotNoAnswer(timedOut('t.a'))).toBe(true);
    expect(gotNoAnswer(timedOut('t.a', []))).toBe(true);
    expect(gotNoAnswer(result('t.b', { outcome: 'error', errorCode: 'CONFORM_NETWORK', evidence: [] }))).toBe(true);
    expect(gotNoAnswer(timedOut('t.c', [unanswered, answered]))).toBe(false);
    const inbound: Evidence = { kind: 'frame', direction: 'in', data: '{}', atMs: 2 };
    const outbound: Evidence = { kind: 'frame', direction: 'out', data: '{}', atMs: 2 };
    expect(gotNoAnswer(timedOut('t.d', [inbound]))).toBe(false);
    expect(gotNoAnswer(timedOut('t.e', [outbound]))).toBe(true);
  });

  it('is not a failure, a skip, a crash or an abort', () => {
    expect(gotNoAnswer(result('t.f', { outcome: 'fail' }))).toBe(false);
    expect(gotNoAnswer(result('t.g', { outcome: 'skip', reason: 'profile has no ws' }))).toBe(false);
    expect(gotNoAnswer(result('t.h', { outcome: 'error', errorCode: 'CONFORM_CHECK_CRASHED' }))).toBe(false);
    expect(gotNoAnswer(result('t.i', { outcome: 'error', errorCode: 'CONFORM_ABORTED' }))).toBe(false);
  });
});

describe('circuit breaker', () => {
  it('trips on the threshold-th silent check in a row, once, naming the streak and the last check', () => {
    const breaker = new CircuitBreaker(3);
    expect(breaker.record(timedOut('t.1'))).toBeUndefined();
    expect(breaker.record(timedOut('t.2'))).toBeUndefined();
    expect(breaker.tripped).toBeUndefined();
    const why =
      'not run: the target stopped answering (3 checks in a row got no answer; the last, t.3: ' +
      't.3 did not finish within 50 ms)';
    expect(breaker.record(timedOut('t.3'))).toBe(why);
    expect(breaker.tripped).toBe(why);
    expect(breaker.record(timedOut('t.4'))).toBeUndefined();
    expect(breaker.tripped).toBe(why);
  });

  it('names the error code of the last check when it has no reason', () => {
    const breaker = new CircuitBreaker(1);
    expect(breaker.record(result('t.n', { outcome: 'error', errorCode: 'CONFORM_NETWORK' }))).toBe(
      'not run: the target stopped answering (1 checks in a row got no answer; the last, t.n: CONFORM_NETWORK)',
    );
  });

  it('starts the streak again after an answer, and lets skips pass without counting them', () => {
    const breaker = new CircuitBreaker(3);
    breaker.record(timedOut('t.1'));
    breaker.record(timedOut('t.2'));
    breaker.record(result('t.pass', { outcome: 'pass', evidence: [answered] }));
    breaker.record(timedOut('t.3'));
    breaker.record(result('t.skip', { outcome: 'skip', reason: 'profile has no keys.limited' }));
    breaker.record(timedOut('t.4'));
    expect(breaker.tripped).toBeUndefined();
    expect(breaker.record(timedOut('t.5'))).toMatch(/^not run: the target stopped answering \(3 checks/);
  });

  it('is not tripped by a check that timed out after the target answered it', () => {
    const breaker = new CircuitBreaker(2);
    breaker.record(timedOut('t.1'));
    breaker.record(timedOut('t.2', [answered]));
    breaker.record(timedOut('t.3'));
    expect(breaker.tripped).toBeUndefined();
  });

  it('waits for more silent checks than a run has in flight, and never fewer than BREAKER_MIN', () => {
    expect(CircuitBreaker.forConcurrency(1).threshold).toBe(BREAKER_MIN);
    expect(CircuitBreaker.forConcurrency(4).threshold).toBe(BREAKER_MIN);
    expect(CircuitBreaker.forConcurrency(16).threshold).toBe(18);
  });

  it('blames the silence for the checks it aborted, and leaves every other result as it was', () => {
    const breaker = new CircuitBreaker(1);
    const before = result('t.early', { outcome: 'error', errorCode: 'CONFORM_ABORTED', reason: 'aborted' });
    breaker.attribute(before);
    expect(before).toMatchObject({ errorCode: 'CONFORM_ABORTED', reason: 'aborted' });

    const why = breaker.record(timedOut('t.silent'))!;
    const aborted = result('t.inflight', { outcome: 'error', errorCode: 'CONFORM_ABORTED', reason: 'aborted' });
    breaker.attribute(aborted);
    expect(aborted).toMatchObject({ outcome: 'error', errorCode: 'CONFORM_TIMEOUT', reason: why });
    const failed = result('t.failed', { outcome: 'fail' });
    breaker.attribute(failed);
    expect(failed).toEqual(result('t.failed', { outcome: 'fail' }));
    const crashed = result('t.crashed', { outcome: 'error', errorCode: 'CONFORM_CHECK_CRASHED', reason: 'bug' });
    breaker.attribute(crashed);
    expect(crashed).toMatchObject({ errorCode: 'CONFORM_CHECK_CRASHED', reason: 'bug' });
  });
});
