/**
 * The run's REST request budget: a key's declared rate paces its requests, a 50006 is waited out
 * (Retry-After honoured) and retried instead of handed to the check, and the catalogue check reads
 * every pair of a rate-limited key without being judged on a 50006.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { DEFAULT_KEYS } from '../../reference/config.ts';
import { DEFAULT_PAIRS } from '../../reference/catalogue.ts';
import { createRestClient } from '../../src/transports/rest-client.ts';
import { RequestBudget, retryAfterMs } from '../../src/request-budget.ts';
import { createRedactor } from '../../src/redact.ts';
import { runChecks } from '../../src/runner.ts';
import type { Evidence } from '../../src/check.ts';
import type { Profile } from '../../src/profile.ts';
import { CHECKS } from '../../suites/index.ts';
import { CATALOGUE_BASE_TIMEOUT_MS } from '../../src/timing/index.ts';
import { SECRET, startServer, type TestServer } from '../helpers/engine.ts';

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const catalogueCheck = CHECKS.filter((c) => c.id === 'rest.price.catalogue');
const statusesOf = (evidence: readonly Evidence[]): string[] =>
  evidence.flatMap((e) =>
    e.kind === 'http' && e.response
      ? [String((JSON.parse(e.response.body) as { status_number?: unknown }).status_number)]
      : [],
  );

/**
 * A reference whose primary key may send `requests` per `windowMs`, with a catalogue of the first
 * 14 pairs (two default pages).
 */
async function rateLimitedReference(requests: number, windowMs: number): Promise<ReferenceServer> {
  const server = await startReferenceServer({
    config: {
      keys: { primary: { ...DEFAULT_KEYS.primary!, rateLimit: { requests, windowMs } } },
      pairs: DEFAULT_PAIRS.slice(0, 14),
    },
  });
  servers.push(server);
  return server;
}

describe('REST request budget', () => {
  it('reads Retry-After as delta-seconds or an HTTP date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });

  it("waits out a 50006 for the target's Retry-After, retries, hands the check the answer that followed", async () => {
    let calls = 0;
    const server: TestServer = await startServer((_req, res) => {
      calls++;
      if (calls === 1) {
        res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' });
        res.end(JSON.stringify({ status_number: '50006', ts: 1, data: null, message: 'Too many requests' }));
        return;
      }
      res.end(JSON.stringify({ status_number: '200', ts: 1, data: [] }));
    });
    servers.push(server);
    const evidence: Evidence[] = [];
    const rest = createRestClient({
      baseUrl: server.url,
      primaryKey: SECRET,
      record: (e) => evidence.push(e),
      redact: createRedactor({ primary: SECRET }),
      budget: new RequestBudget(),
    });
    const ex = await rest.get({ path: '/v1/pairs' });
    expect((ex.json as { status_number: string }).status_number).toBe('200');
    const http = evidence.filter((e) => e.kind === 'http');
    expect(http).toHaveLength(2);
    expect(evidence.find((e) => e.kind === 'note')).toMatchObject({ text: expect.stringContaining('Retry-After: 1') });
    expect(http[1]!.atMs - http[0]!.atMs).toBeGreaterThanOrEqual(1000);
  });

  it('hands a 50006 to a request that is not paced, and to a key declared at zero requests', async () => {
    const server = await startServer((_req, res) =>
      res.end(JSON.stringify({ status_number: '50006', ts: 1, data: null, message: 'Too many requests' })),
    );
    servers.push(server);
    const budget = new RequestBudget(new Map([['zero-key', { requests: 0, windowMs: 1000 }]]));
    const rest = createRestClient({
      baseUrl: server.url,
      primaryKey: SECRET,
      record: () => undefined,
      redact: (s) => s,
      budget,
    });
    expect(statusOf(await rest.get({ path: '/v1/pairs', paced: false }))).toBe('50006');
    expect(statusOf(await rest.get({ path: '/v1/pairs', key: 'zero-key' }))).toBe('50006');
    expect(server.requests).toHaveLength(2);
  });

  it('paces the catalogue walk within a declared rate: every pair read, not one 50006 provoked', async () => {
    const ref = await rateLimitedReference(6, 1000);
    expect(ref.profile.keys.primary.rateLimit).toEqual({ requests: 6, windowMs: 1000 });
    const { results } = await runChecks({ profile: ref.profile, checks: catalogueCheck });
    const r = results[0]!;
    expect(r.violations).toEqual([]);
    expect(r.outcome).toBe('pass');
    expect(statusesOf(r.evidence)).not.toContain('50006');
    // 14 prices; a page of 100 asked first (short: the catalogue holds 14), then two default-size pages.
    expect(statusesOf(r.evidence).filter((s) => s === '200').length).toBe(14 + 1 + 2);
    expect(r.durationMs).toBeLessThan(CATALOGUE_BASE_TIMEOUT_MS);
  });

  it('waits out and retries the 50006s of an undeclared limit: no catalogue check is judged on one', async () => {
    const ref = await rateLimitedReference(5, 1000);
    // The profile does not state the limit: the budget learns it from the target's 50006 answers.
    const profile: Profile = {
      ...ref.profile,
      keys: { ...ref.profile.keys, primary: { key: ref.profile.keys.primary.key } },
    };
    const { results } = await runChecks({ profile, checks: catalogueCheck });
    const r = results[0]!;
    expect(statusesOf(r.evidence)).toContain('50006');
    expect(r.evidence.some((e) => e.kind === 'note' && e.text.startsWith('50006 (rate limited): waiting'))).toBe(true);
    expect(r.violations).toEqual([]);
    expect(r.outcome).toBe('pass');
    expect(r.durationMs).toBeLessThan(CATALOGUE_BASE_TIMEOUT_MS);
  });
});

const statusOf = (ex: { json: unknown }): unknown => (ex.json as { status_number?: unknown }).status_number;
