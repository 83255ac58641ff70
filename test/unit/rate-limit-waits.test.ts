/**
 * Waiting on a target's rate limit: a Retry-After longer than a request's timeout is honoured,
 * waits never count against a check's time limit, the IETF RateLimit headers are heeded, the run
 * stops waiting at its bound, and says how long it waited. Against a reference whose limit the
 * profile does not state (a scaled-down per-minute limit), the selected checks are all decided.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { createRestClient } from '../../src/transports/rest-client.ts';
import { rateLimitHeaders, RequestBudget } from '../../src/request-budget.ts';
import { runChecks } from '../../src/runner.ts';
import type { Evidence } from '../../src/check.ts';
import { CHECKS } from '../../suites/index.ts';
import { parseArgs } from '../../bin/commands/conform.ts';
import { validateOptions } from '../../src/options.ts';
import { REPORT_FORMAT_NAMES } from '../../reports/index.ts';
import { parseProfile } from '../../src/profile.ts';
import { SECRET, startServer, synthetic, testProfile } from '../helpers/engine.ts';

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const THROTTLED = JSON.stringify({ status_number: '50006', ts: 1, data: null, message: 'Too many requests' });
const OK = JSON.stringify({ status_number: '200', ts: 1, data: [] });

/** A server that answers the first `throttled` requests with 429 and `Retry-After: seconds`, then 200. */
async function throttlingServer(throttled: number, seconds: number) {
  let calls = 0;
  const server = await startServer((_req, res) => {
    if (++calls <= throttled) {
      res.writeHead(429, { 'retry-after': String(seconds), 'content-type': 'application/json' });
      res.end(THROTTLED);
      return;
    }
    res.end(OK);
  });
  servers.push(server);
  return server;
}

const fetchPairs = synthetic('synthetic.rate-wait', async (ctx) => {
  const ex = await ctx.rest.get({ path: '/v1/pairs' });
  if ((ex.json as { status_number?: string }).status_number !== '200')
    ctx.fail({ received: ex.text, expected: 'a 200 after the waits' });
});

describe('waiting on the rate limit', () => {
  it("waits out a Retry-After longer than the request's own timeout instead of ending it as throttled", async () => {
    const server = await throttlingServer(1, 1);
    const evidence: Evidence[] = [];
    const rest = createRestClient({
      baseUrl: server.url,
      primaryKey: SECRET,
      record: (e) => evidence.push(e),
      redact: (s) => s,
      // The request's own timeout is shorter than the wait the target asks for (as 15 s is to 60 s).
      timeoutMs: 400,
      budget: new RequestBudget(),
    });
    const ex = await rest.get({ path: '/v1/pairs' });
    expect((ex.json as { status_number: string }).status_number).toBe('200');
    expect(server.requests).toHaveLength(2);
  });

  it("does not count waits on the limit against the check's time limit, and reports them", async () => {
    const server = await throttlingServer(2, 1);
    const { results, summary } = await runChecks({
      profile: testProfile(server.url),
      checks: [{ ...fetchPairs, timeoutMs: 700 }],
      skipPreflight: true,
    });
    expect(results[0]!.reason).toBeUndefined();
    expect(results[0]!.outcome).toBe('pass');
    expect(summary.rateWaitMs).toBeGreaterThanOrEqual(1900);
    expect(summary.rateWaitMs).toBeLessThanOrEqual(summary.durationMs);
  });

  it("ends a request as throttled once the run's bound on waiting would be passed", async () => {
    const server = await throttlingServer(5, 2);
    const started = Date.now();
    const { results } = await runChecks({
      profile: testProfile(server.url),
      checks: [fetchPairs],
      skipPreflight: true,
      settings: { maxRateWaitMs: 500 },
    });
    expect(results[0]!.outcome).toBe('error');
    expect(results[0]!.errorCode).toBe('CONFORM_THROTTLED');
    expect(results[0]!.reason).toMatch(/bound on waiting/);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('reads the IETF RateLimit and RateLimit-Policy headers, current and older forms', () => {
    expect(rateLimitHeaders({ 'ratelimit-policy': '"burst";q=100;w=60, "daily";q=1000;w=86400' })).toEqual({
      policy: { requests: 1000, windowMs: 86_400_000 },
    });
    expect(rateLimitHeaders({ 'ratelimit-policy': '10;w=1, 50;w=60' }).policy).toEqual({
      requests: 50,
      windowMs: 60_000,
    });
    expect(rateLimitHeaders({ ratelimit: '"default";r=0;t=30' }).resetMs).toBe(30_000);
    expect(rateLimitHeaders({ ratelimit: '"default";r=5;t=30' }).resetMs).toBeUndefined();
    expect(rateLimitHeaders({ ratelimit: 'limit=10, remaining=0, reset=7' }).resetMs).toBe(7000);
    expect(rateLimitHeaders({ 'ratelimit-remaining': '0', 'ratelimit-reset': '4' }).resetMs).toBe(4000);
    expect(rateLimitHeaders({ ratelimit: 'garbage' })).toEqual({});
  });

  it('holds the next request until a quota the RateLimit header says is spent resets', async () => {
    let calls = 0;
    const server = await startServer((_req, res) => {
      res.writeHead(200, calls++ === 0 ? { ratelimit: '"default";r=0;t=1' } : {});
      res.end(OK);
    });
    servers.push(server);
    const evidence: Evidence[] = [];
    const rest = createRestClient({
      baseUrl: server.url,
      primaryKey: SECRET,
      record: (e) => evidence.push(e),
      redact: (s) => s,
      budget: new RequestBudget(),
    });
    await rest.get({ path: '/v1/pairs' });
    await rest.get({ path: '/v1/pairs' });
    const http = evidence.filter((e) => e.kind === 'http');
    expect(http[1]!.atMs - http[0]!.atMs).toBeGreaterThanOrEqual(950);
  });
});

describe("the run's bound on waiting", () => {
  const options = (argv: string[]) => {
    const r = parseArgs(['--target', 'http://127.0.0.1:1', '--key', 'k', ...argv]);
    if (r.kind !== 'run') throw new Error(r.kind === 'error' ? r.message : r.kind);
    return r.options;
  };

  it('is set by --max-rate-wait, a positive number of milliseconds, or the profile', () => {
    expect(options(['--max-rate-wait', '3600000']).maxRateWait).toBe(3_600_000);
    expect(options([]).maxRateWait).toBeUndefined();
    for (const bad of ['0', '-5', '1.5'])
      expect(() => validateOptions(options(['--max-rate-wait', bad]), REPORT_FORMAT_NAMES)).toThrow(
        /^--max-rate-wait: /,
      );
    const profile = { rest: 'http://127.0.0.1:1', keys: { primary: { key: 'k' } } };
    expect(parseProfile({ ...profile, maxRateWaitMs: 60_000 }, 'p.json').maxRateWaitMs).toBe(60_000);
    expect(() => parseProfile({ ...profile, maxRateWaitMs: 0 }, 'p.json')).toThrow(/maxRateWaitMs/);
  });
});

describe('a reference whose rate limit the profile does not state', () => {
  // Scaled down so the test stays short: a 4 s window stands for a minute, a 3 s request
  // timeout for the default 15 s; the target's Retry-After is longer than a request's timeout.
  const selection = ['rest.price.catalogue', 'rest.price.schema', 'rest.pairs.defaults', 'rest.pairs.pages-disjoint'];
  const checks = CHECKS.filter((c) => selection.includes(c.id));

  async function limited(rateLimitHeaders: boolean): Promise<ReferenceServer> {
    const server = await startReferenceServer({
      dialect: { rest: { rateLimit: { requests: 10, windowMs: 4000 }, catalogueSize: 12, rateLimitHeaders } },
    });
    servers.push(server);
    return server;
  }

  it.each([false, true])(
    'decides every selected check (RateLimit headers: %s)',
    async (headers) => {
      expect(checks.map((c) => c.id).sort()).toEqual([...selection].sort());
      const ref = await limited(headers);
      expect(ref.profile.keys.primary.rateLimit).toBeUndefined();
      const { results, summary } = await runChecks({ profile: ref.profile, checks, settings: { timeoutMs: 3000 } });
      for (const r of results) {
        expect(r.reason, r.id).toBeUndefined();
        expect(r.violations, r.id).toEqual([]);
        expect(r.outcome, r.id).toBe('pass');
      }
      expect(summary.rateWaitMs).toBeGreaterThan(0);
      const notes = results.flatMap((r) => r.evidence.filter((e) => e.kind === 'note').map((e) => e.text));
      if (!headers)
        expect(notes.some((t) => /^50006 \(rate limited\): waiting \d+ ms \(Retry-After: [1-4]\)/.test(t))).toBe(true);
    },
    60_000,
  );
});
