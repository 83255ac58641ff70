/**
 * Coverage credits a rule only where a check judged the target's answer against it: an observation,
 * a check that never provoked what a statement describes, and a pass with nothing to judge credit
 * nothing, and a rule judged in part reads "partly" with what would judge the rest. Each case runs
 * the real checks against a loopback server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import type { CheckResult } from '../../src/check.ts';
import { ruleCoverage } from '../../src/coverage.ts';
import type { Profile } from '../../src/profile.ts';
import { runChecks } from '../../src/runner.ts';
import { CHECKS } from '../../suites/index.ts';
import { SECRET, startServer, type TestServer } from '../helpers/engine.ts';

const pick = (...ids: string[]) => CHECKS.filter((c) => ids.includes(c.id));
const stateOf = (results: readonly CheckResult[], key: string) =>
  ruleCoverage(results).rules.find((r) => r.key === key)!;

const result = (id: string, outcome: CheckResult['outcome'], extra: Partial<CheckResult> = {}): CheckResult => ({
  id,
  title: id,
  expectation: 'e',
  clause: { section: 's', rule: 'r' },
  severity: 'must',
  tags: ['rest'],
  outcome,
  violations: [],
  observations: [],
  evidence: [{ kind: 'ws-open', url: 'ws://x', headers: {}, outcome: 'open', atMs: 0 }],
  durationMs: 1,
  ...extra,
});

describe('observations credit no rule a service can break', () => {
  it('leaves a rule unchecked when its must check errored and an observation of it passed', () => {
    const results = [
      result('ws.unsubscribe.notice', 'error', { enforces: ['rule:unsubscribe:success-reply'], errorCode: 'X' }),
      result('ws.unsubscribe.observe-not-subscribed', 'pass', {
        severity: 'observe',
        enforces: ['rule:unsubscribe:success-reply'],
      }),
    ];
    expect(stateOf(results, 'rule:unsubscribe:success-reply')).toMatchObject({ state: 'unchecked', kind: 'errored' });
  });

  it('credits an observation of a statement that states nothing to break, the only thing a run can do of it', () => {
    const results = [
      result('rest.observe.http-status', 'pass', {
        severity: 'observe',
        enforces: ['rule:price:client-checks-status'],
      }),
    ];
    expect(stateOf(results, 'rule:price:client-checks-status').state).toBe('checked');
  });
});

describe('against the reference with the primary key alone', () => {
  let ref: ReferenceServer;
  let primaryOnly: Profile;
  beforeAll(async () => {
    ref = await startReferenceServer({ pingTimeoutMs: 2000 });
    const { whitelisted: _w, cryptoOnly: _c, ...keys } = ref.profile.keys;
    primaryOnly = { ...ref.profile, keys: keys as Profile['keys'] };
  });
  afterAll(async () => {
    await ref?.close();
  });

  it('credits ws.notice.error-shape with no denial it did not provoke (50010, 50109)', async () => {
    const { results } = await runChecks({ profile: primaryOnly, checks: pick('ws.notice.error-shape') });
    expect(results[0]!.outcome).toBe('pass');
    expect(results[0]!.unjudged?.statements).toEqual(['notice:50010', 'notice:50109', 'rule:auth:after-connection']);
    for (const key of ['notice:50010', 'notice:50109', 'rule:auth:after-connection'])
      expect(stateOf(results, key).state, key).toBe('unchecked');
    expect(stateOf(results, 'notice:50104').state).toBe('checked');
  });

  it('credits the pair-code rule where another check read the listing first: it holds its own answer', async () => {
    const byId = (id: string) => CHECKS.find((c) => c.id === id)!;
    const { results } = await runChecks({
      profile: ref.profile,
      // One at a time, the walker first, so the code check finds the listing read.
      checks: [byId('rest.observe.page-past-end'), byId('rest.pairs.code-form')],
      settings: { concurrency: 1 },
    });
    expect(results.map((r) => r.outcome)).toEqual(['pass', 'pass']);
    expect(results[1]!.evidence.some((e) => e.kind === 'note' && /shared/.test(e.text))).toBe(true);
    expect(stateOf(results, 'rule:pair-code:form').state).toBe('checked');
  });

  it('reads the connection limit partly checked while ws.limits.connections.per-key is not run', async () => {
    const { results } = await runChecks({
      profile: ref.profile,
      checks: pick('ws.limits.connections.slot-freed', 'ws.limits.keys-apart'),
    });
    expect(results.map((r) => r.outcome)).toEqual(['pass', 'pass']);
    expect(stateOf(results, 'limit:connections-per-key').state).toBe('partly');
  });
});

describe('a pass with nothing to judge is a skip', () => {
  let empty: TestServer;
  beforeAll(async () => {
    // Lists no pair, to any key.
    empty = await startServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ status_number: '200', ts: Date.now(), data: [] }));
    });
  });
  afterAll(async () => {
    await empty?.close();
  });

  it('skips the listing checks of an empty catalogue, and the listings of limited keys that list nothing', async () => {
    const profile: Profile = {
      rest: empty.url,
      keys: {
        primary: { key: SECRET },
        cryptoOnly: { key: 'crypto-only-0a1b2c', assetTypes: ['Crypto'] },
        whitelisted: { key: 'whitelist-0a1b2c', pairs: ['Crypto:ALL:BTC/USD'] },
      },
    };
    const ids = [
      'rest.pairs.defaults',
      'rest.pairs.per-page',
      'rest.pairs.code-form',
      'rest.entitlements.crypto-only-pairs',
      'rest.entitlements.whitelist-pairs',
    ];
    const { results } = await runChecks({ profile, checks: pick(...ids), skipPreflight: true });
    expect(results.map((r) => [r.id, r.outcome])).toEqual(ids.map((id) => [id, 'skip']));
  });
});
