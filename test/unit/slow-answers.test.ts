/**
 * A target whose REST answers come slowly is waited for: each answer that takes longer than a
 * check's limit allows an answer lengthens the limit by the rest, up to a bound, and the run says
 * how much. A target that never answers still times out. Real servers on loopback whose answer
 * time is known, and the reference holding back every REST answer as across a network.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startReferenceServer } from '../../reference/index.ts';
import { answerTime } from '../../src/answer-time.ts';
import { type RunEvent, runChecks } from '../../src/runner.ts';
import { summaryLines } from '../../reports/console.ts';
import { restChecks } from '../../suites/rest/index.ts';
import { REST_ANSWER_ALLOWANCE_MS, SLOW_ANSWER_STRETCH_MAX } from '../../src/timing/index.ts';
import { startKnownDelayServer } from '../helpers/known-delay-server.ts';
import { startServer, synthetic, testProfile } from '../helpers/engine.ts';

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A check that reads `/v1/price` `times` times, one after the other. */
const reads = (times: number, timeoutMs: number) =>
  synthetic(
    'synthetic.slow-reads',
    async (ctx) => {
      for (let i = 0; i < times; i++) await ctx.rest.get({ path: '/v1/price', query: { code: 'Crypto:ALL:BTC/USD' } });
    },
    { timeoutMs },
  );

describe('slow REST answers', () => {
  it("lengthens a check's time limit by what its answers took beyond the allowance, and reports it", async () => {
    // Six answers of 400 ms take 2.4 s, past the check's own 1.5 s.
    const server = await startKnownDelayServer({ delayMs: 400 });
    servers.push(server);
    const ends: RunEvent[] = [];
    const { results, summary } = await runChecks({
      profile: testProfile(server.url),
      checks: [reads(6, 1500)],
      skipPreflight: true,
      handlers: [{ handle: (e) => void (e.type === 'run-end' && ends.push(e)) }],
    });
    const [r] = results;
    expect(r!.reason).toBeUndefined();
    expect(r!.outcome).toBe('pass');
    expect(r!.durationMs).toBeGreaterThan(1500);
    expect(r!.slowAnswerMs).toBeGreaterThanOrEqual(6 * (400 - REST_ANSWER_ALLOWANCE_MS));
    expect(summary.slowAnswers).toEqual({ slowestMs: expect.any(Number), lengthenedMs: r!.slowAnswerMs, checks: 1 });
    expect(summary.slowAnswers!.slowestMs).toBeGreaterThanOrEqual(400);
    const end = ends[0] as Extract<RunEvent, { type: 'run-end' }>;
    expect(summaryLines(end)).toContainEqual(
      expect.stringMatching(
        /^REST answers: the slowest took 0\.\d s; 1 check ran past its time limit, lengthened by \d+\.\d s in all/,
      ),
    );
  });

  it('leaves the limit of a check whose answers come at once as it was', async () => {
    const server = await startKnownDelayServer({ delayMs: 0 });
    servers.push(server);
    const { results, summary } = await runChecks({
      profile: testProfile(server.url),
      checks: [reads(3, 1500)],
      skipPreflight: true,
    });
    expect(results[0]!.outcome).toBe('pass');
    expect(results[0]!.slowAnswerMs).toBeUndefined();
    expect(summary.slowAnswers).toBeUndefined();
  });

  it('still times out a check whose target never answers', async () => {
    const server = await startServer(() => undefined);
    servers.push(server);
    const { results } = await runChecks({
      profile: testProfile(server.url),
      checks: [reads(1, 600)],
      skipPreflight: true,
    });
    const [r] = results;
    expect(r!.outcome).toBe('error');
    expect(r!.errorCode).toBe('CONFORM_TIMEOUT');
    expect(r!.slowAnswerMs).toBeUndefined();
    expect(r!.durationMs).toBeLessThan(3000);
  });
});

describe('checks against a reference that answers slowly', () => {
  it('decides checks whose REST answers together take longer than their own time limit', async () => {
    // Five or six answers of 400 ms each: over 2 s, against a limit of 1.5 s.
    const reference = await startReferenceServer({ dialect: { rest: { latencyMs: 400 } } });
    servers.push(reference);
    const ids = ['rest.envelope.schema', 'rest.price.mid'];
    const { results } = await runChecks({
      profile: reference.profile,
      checks: restChecks.filter((c) => ids.includes(c.id)),
      settings: { timeoutMs: 1500 },
    });
    expect(results.map((r) => `${r.id} ${r.outcome} ${r.reason ?? ''}`.trim())).toEqual(ids.map((id) => `${id} pass`));
    for (const r of results) expect(r.slowAnswerMs, r.id).toBeGreaterThan(0);
  });
});

describe("the bound on a check's lengthening", () => {
  it('grows the limit by each answer past the allowance, at most the bound in all', () => {
    const grants: number[] = [];
    const account = answerTime(1000, (ms) => grants.push(ms));
    account.answered(REST_ANSWER_ALLOWANCE_MS);
    account.answered(REST_ANSWER_ALLOWANCE_MS / 2);
    expect(grants).toEqual([]);
    account.answered(REST_ANSWER_ALLOWANCE_MS + 700);
    expect(grants).toEqual([700]);
    for (let i = 0; i < 10; i++) account.answered(REST_ANSWER_ALLOWANCE_MS + 900);
    expect(account.lengthenedMs()).toBe(SLOW_ANSWER_STRETCH_MAX * 1000);
    expect(grants.reduce((a, b) => a + b, 0)).toBe(SLOW_ANSWER_STRETCH_MAX * 1000);
  });
});
