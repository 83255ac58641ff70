/**
 * One rule, one verdict: a violation fails the check that owns its statement in the run, however
 * many checks meet it and whichever ends first; the others cite it and pass or fail on their own
 * rule; a check that cannot get what it needs ends not judged. Synthetic checks against a loopback
 * server, so the order of the checks is the test's to set.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RuleOwners } from '../../src/ownership.ts';
import { runChecks, type RunEvent } from '../../src/runner.ts';
import { summarize } from '../../src/summary.ts';
import { verdictWord } from '../../reports/format.ts';
import type { CheckResult } from '../../src/check.ts';
import { startServer, synthetic, testProfile, type TestServer } from '../helpers/engine.ts';

let server: TestServer;
beforeEach(async () => {
  server = await startServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ status_number: '200', ts: 1, data: [] }));
  });
});
afterEach(async () => {
  await server.close();
});

const answer = async (ctx: Parameters<Parameters<typeof synthetic>[1]>[0]): Promise<void> => {
  await ctx.rest.get({ path: '/v1/pairs' });
};

describe('the owners of a run', () => {
  it('gives a statement to the check naming it earliest, the registry first among equals, a channel each', () => {
    const owners = new RuleOwners([
      synthetic('a', answer, { enforces: ['field:price:ask', 'field:price:price'] }),
      synthetic('b', answer, { enforces: ['field:price:price'] }),
      synthetic('c', answer, { enforces: ['field:price:ask'] }),
      synthetic('w', answer, { enforces: ['field:price:price'], tags: ['ws'] }),
      synthetic('o', answer, { enforces: ['field:envelope:ts'], severity: 'observe' }),
    ]);
    expect(owners.ownerOf('field:price:price', 'rest')).toBe('b');
    expect(owners.ownerOf('field:price:ask', 'rest')).toBe('a');
    expect(owners.ownerOf('field:price:price', 'stream')).toBe('w');
    expect(owners.ownerOf('field:envelope:ts', 'rest')).toBeUndefined();
  });
});

describe('one rule, one verdict', () => {
  it('fails the owner once, even when another check meets the violation after the owner ended', async () => {
    const events: RunEvent[] = [];
    const checks = [
      // The owner ends at once, having seen nothing wrong itself.
      synthetic('t.owner', answer, { enforces: ['field:price:price'] }),
      synthetic(
        't.meets',
        async (ctx) => {
          await answer(ctx);
          await sleep(100);
          ctx.violation({ received: 'price 2 is not the mid 1.5', expected: 'the mid', rule: 'field:price:price' });
          ctx.violation({ received: 'price 3 is not the mid 2.5', expected: 'the mid', rule: 'field:price:price' });
        },
        { enforces: ['field:envelope:ts'] },
      ),
    ];
    const { results, summary } = await runChecks({
      profile: testProfile(server.url),
      checks,
      settings: { concurrency: 1 },
      handlers: [{ handle: (e) => void events.push(e) }],
    });
    const [owner, meets] = results as [CheckResult, CheckResult];
    expect(owner.outcome).toBe('fail');
    expect(owner.violations.map((v) => [v.rule, v.seenBy])).toEqual([
      ['field:price:price', 't.meets'],
      ['field:price:price', 't.meets'],
    ]);
    expect(meets.outcome).toBe('pass');
    expect(meets.alsoSeen?.map((v) => v.owner)).toEqual(['t.owner', 't.owner']);
    // Told when the owner's verdict changed after its check-end.
    const amend = events.find((e) => e.type === 'check-amend');
    expect(amend).toMatchObject({ type: 'check-amend', was: 'pass', result: { id: 't.owner', outcome: 'fail' } });
    expect(summary.broken).toMatchObject([{ rule: 'field:price:price', failed: ['t.owner'], alsoSeen: ['t.meets'] }]);
    expect(summary.fail).toBe(1);
  });

  it('ends a check not judged when what it needed broke a rule another check owns; the owner fails', async () => {
    const checks = [
      synthetic('t.owner', answer, { enforces: ['status:200'] }),
      synthetic(
        't.needs',
        async (ctx) => {
          await answer(ctx);
          ctx.fail({ received: 'GET /v1/pairs: HTTP 500', expected: 'a page of pairs', rule: 'status:200' });
        },
        { enforces: ['parameter:pairs:type'] },
      ),
    ];
    const { results } = await runChecks({ profile: testProfile(server.url), checks, settings: { concurrency: 1 } });
    expect(results.map((r) => [r.id, r.outcome])).toEqual([
      ['t.owner', 'fail'],
      ['t.needs', 'skip'],
    ]);
    expect(results[1]!.reason).toMatch(
      /^not judged: GET \/v1\/pairs: HTTP 500, which breaks status:200 \(judged by t\.owner\)/,
    );
    expect(results[1]!.nothingToJudge).toBe('an answer that breaks a rule another check judges');
  });

  it('leaves a violation whose statement no check of the run enforces with the check that met it', async () => {
    const checks = [
      synthetic(
        't.alone',
        async (ctx) => {
          await answer(ctx);
          ctx.violation({ received: 'x', expected: 'y', rule: 'field:push:price' });
        },
        { enforces: ['field:envelope:ts'] },
      ),
    ];
    const { results } = await runChecks({ profile: testProfile(server.url), checks });
    expect(results[0]).toMatchObject({ outcome: 'fail', violations: [{ rule: 'field:push:price' }] });
  });
});

describe('a run the network kept from a verdict', () => {
  const result = (id: string, outcome: CheckResult['outcome'], errorCode?: string): CheckResult => ({
    id,
    title: id,
    expectation: 'e',
    clause: { section: 's', rule: 'r' },
    severity: 'must',
    tags: ['rest'],
    outcome,
    ...(errorCode ? { errorCode } : {}),
    violations: [],
    observations: [],
    evidence: [],
    durationMs: 1,
  });

  it('reads INCONCLUSIVE: network when its only problems are network errors, FAIL with anything else', () => {
    const network = summarize([result('a', 'pass'), result('b', 'error', 'CONFORM_NETWORK')], 1);
    expect(network).toMatchObject({ verdict: 'inconclusive', inconclusive: ['network'] });
    expect(verdictWord(network)).toBe('INCONCLUSIVE: network');
    expect(summarize([result('b', 'error', 'CONFORM_NETWORK'), result('c', 'fail')], 1).verdict).toBe('fail');
    expect(
      summarize([result('b', 'error', 'CONFORM_NETWORK'), result('d', 'error', 'CONFORM_TIMEOUT')], 1).verdict,
    ).toBe('fail');
  });
});
