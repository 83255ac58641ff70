import { describe, expect, it } from 'vitest';
import { CheckFailed, CheckSkipped } from '../../src/context.ts';
import { AbortedError, NetworkError, TimeoutError } from '../../src/errors.ts';
import { createRedactor } from '../../src/redact.ts';
import { notRun, verdictOf } from '../../src/verdict.ts';
import { SECRET, synthetic } from '../helpers/engine.ts';

const redact = createRedactor({ primary: SECRET });
const returned = { ok: true } as const;
const threw = (error: unknown) => ({ ok: false, error }) as const;

describe('verdict of a check that ran', () => {
  it('is pass when the body returned and recorded no violation', () => {
    expect(verdictOf('must', 0, returned, redact)).toEqual({ outcome: 'pass' });
  });

  it('is fail when a violation was recorded, whatever the body did next', () => {
    expect(verdictOf('must', 2, returned, redact)).toEqual({ outcome: 'fail' });
    expect(verdictOf('must', 1, threw(new TimeoutError('t.x did not finish within 5 ms')), redact)).toEqual({
      outcome: 'fail',
    });
    expect(verdictOf('must', 1, threw(new CheckSkipped('nothing to judge')), redact)).toEqual({ outcome: 'fail' });
  });

  it('is fail on ctx.fail for a must check and pass for an observe check, whose violations are observations', () => {
    expect(verdictOf('must', 0, threw(new CheckFailed('bad')), redact)).toEqual({ outcome: 'fail' });
    expect(verdictOf('observe', 0, threw(new CheckFailed('bad')), redact)).toEqual({ outcome: 'pass' });
  });

  it('is skip with the reason of ctx.skip, and what the target gave nothing of when it says so', () => {
    expect(verdictOf('must', 0, threw(new CheckSkipped('profile has nothing for this')), redact)).toEqual({
      outcome: 'skip',
      reason: 'profile has nothing for this',
    });
    expect(verdictOf('must', 0, threw(new CheckSkipped('no pair has a price', 'no priced pair')), redact)).toEqual({
      outcome: 'skip',
      reason: 'no pair has a price',
      nothingToJudge: 'no priced pair',
    });
  });

  it('is error with the stable code of anything else thrown, the reason on one line and without the key', () => {
    expect(verdictOf('must', 0, threw(new TimeoutError('t.x did not finish within 5 ms')), redact)).toEqual({
      outcome: 'error',
      errorCode: 'CONFORM_TIMEOUT',
      reason: 't.x did not finish within 5 ms',
    });
    expect(
      verdictOf('must', 0, threw(new NetworkError(`reset\nwhile sending ${SECRET}`, 'ECONNRESET')), redact),
    ).toEqual({
      outcome: 'error',
      errorCode: 'CONFORM_NETWORK',
      reason: 'reset while sending <key:primary>',
    });
    expect(verdictOf('observe', 0, threw(new TypeError('harness bug')), redact)).toEqual({
      outcome: 'error',
      errorCode: 'CONFORM_CHECK_CRASHED',
      reason: 'harness bug',
    });
    expect(verdictOf('must', 0, threw('a string'), redact)).toEqual({
      outcome: 'error',
      errorCode: 'CONFORM_CHECK_CRASHED',
      reason: 'a string',
    });
    expect(verdictOf('must', 0, threw(new AbortedError('the run was stopped')), redact)).toMatchObject({
      outcome: 'error',
      errorCode: 'CONFORM_ABORTED',
    });
  });
});

describe('result of a check that did not run', () => {
  const check = synthetic('t.idle', async () => undefined, { needs: ['keys.cryptoOnly', 'pairs.stale'] });

  it('skips naming the profile fields it needs and the profile lacks', () => {
    expect(notRun(check, { kind: 'missing', fields: ['keys.cryptoOnly', 'pairs.stale'] })).toMatchObject({
      id: 't.idle',
      outcome: 'skip',
      reason: 'profile has no keys.cryptoOnly, pairs.stale',
      violations: [],
      durationMs: 0,
    });
  });

  it('is a timeout error when the target fell silent, keeping the evidence of the silence', () => {
    const evidence = [{ kind: 'note' as const, text: 'GET /v1/pairs: no response', atMs: 12 }];
    const result = notRun(check, { kind: 'silent', reason: 'not run: the target stopped answering', evidence });
    expect(result).toMatchObject({
      outcome: 'error',
      errorCode: 'CONFORM_TIMEOUT',
      reason: 'not run: the target stopped answering',
      evidence,
    });
    expect(result.evidence).not.toBe(evidence);
    expect(notRun(check, { kind: 'silent', reason: 'silent' }).evidence).toEqual([]);
  });

  it('skips after --bail naming the check that stopped the run, and after a stop saying so', () => {
    expect(notRun(check, { kind: 'bail', after: 't.first' })).toMatchObject({
      outcome: 'skip',
      reason: 'not run: --bail after t.first',
    });
    expect(notRun(check, { kind: 'stopped' })).toMatchObject({
      outcome: 'skip',
      reason: 'not run: the run was stopped',
    });
  });
});
