/**
 * The WebSocket suite through the real runner against the reference service on loopback: every
 * check passes against the clean service, and every fault of reference/faults.ts that names a
 * ws check makes that check fail. A short ping window keeps the keep-alive checks to seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer, FAULTS, type ReferenceServer } from '../reference/index.ts';
import { runChecks } from '../src/runner.ts';
import type { CheckResult } from '../src/check.ts';
import type { Profile } from '../src/profile.ts';
import { wsChecks } from '../suites/ws/index.ts';

/** Keep-alive window of the test servers: short, so slow checks take ~4 s, with room for a busy machine. */
const WINDOW_MS = 1500;
const GRACE_MS = 1000;

async function start(fault?: string): Promise<ReferenceServer> {
  return startReferenceServer({ pingTimeoutMs: WINDOW_MS, tickMs: 50, ...(fault ? { fault } : {}) });
}

const withGrace = (profile: Profile): Profile => ({ ...profile, timing: { pingTimeoutMs: WINDOW_MS, pingGraceMs: GRACE_MS } });

async function run(server: ReferenceServer, ids: readonly string[], withRest = false): Promise<Map<string, CheckResult>> {
  // With the rest: every check that is not slow runs beside them, in registry order, as in a real run.
  const checks = wsChecks.filter((c) => ids.includes(c.id) || (withRest && !c.tags.includes('slow')));
  expect(checks.filter((c) => ids.includes(c.id)).map((c) => c.id).sort()).toEqual([...ids].sort());
  const { results } = await runChecks({ profile: withGrace(server.profile), checks, settings: { concurrency: 4, timeoutMs: 20_000 } });
  return new Map(results.map((r) => [r.id, r]));
}

const describeResult = (r: CheckResult | undefined): string =>
  r ? `${r.id}: ${r.outcome}${r.reason ? ` (${r.errorCode ?? ''} ${r.reason})` : ''} ${r.violations.map((v) => `${v.received} / expected ${v.expected}`).join('; ')}` : 'no result';

describe('ws suite against the clean reference service', () => {
  let server: ReferenceServer;
  let results: Map<string, CheckResult>;
  beforeAll(async () => {
    server = await start();
    results = await run(server, wsChecks.map((c) => c.id));
  });
  afterAll(() => server?.close());

  it.each(wsChecks.map((c) => [c.id, c.severity] as const))('%s (%s) passes', (id) => {
    const r = results.get(id);
    expect(r?.outcome, describeResult(r)).toBe('pass');
    expect(r?.violations).toEqual([]);
  });

  it('records the observations the spec leaves open', () => {
    const observed = (id: string): string[] => results.get(id)!.observations.map((o) => o.name);
    expect(observed('ws.subscribe.observe-failed-keeps-previous')).toContain('previous-subscription');
    expect(observed('ws.unsubscribe.observe-not-subscribed')).toEqual(['known-pair-never-subscribed', 'unknown-pair']);
    expect(observed('ws.push.observe-timestamps')).toEqual(['last-updated-monotonic', 'sent-at-not-before-last-updated', 'timestamp-unit']);
    expect(observed('ws.keepalive.observe-other-traffic')).toEqual(['other-traffic-keeps-alive']);
    expect(observed('ws.push.observe-interval').length).toBeGreaterThan(0);
  });

  it('never puts a key of the profile into a result', () => {
    const text = JSON.stringify([...results.values()]);
    for (const entry of Object.values(server.profile.keys)) if (entry) expect(text).not.toContain(entry.key);
  });
});

/** Every fault that names ws checks, with those checks. */
const WS_FAULTS = FAULTS.map((f) => ({ name: f.name, ids: f.catches.filter((id) => id.startsWith('ws.')) })).filter((f) => f.ids.length > 0);

/** Each fault runs with the whole non-slow ws suite beside its checks: some faults (a leaked slot) show only after another check. */
describe('ws suite against each fault of the reference service', () => {
  // Concurrent (vitest's default of 5 at once): each run mostly waits on timers; its own server and key gates.
  it.concurrent.for(WS_FAULTS.map((f) => [f.name, f.ids] as const))('fault %s fails %j', async ([fault, ids], { expect: local }) => {
    const server = await start(fault);
    try {
      const results = await run(server, ids, true);
      for (const id of ids) {
        const r = results.get(id);
        local(r?.outcome, describeResult(r)).toBe('fail');
        local(r?.violations.length, describeResult(r)).toBeGreaterThan(0);
      }
    } finally {
      await server.close();
    }
  });
});

describe('ws checks sharing a key allowance', () => {
  it('measures keys.primary\'s allowance while a slow check holds one of its connections', async () => {
    const server = await start();
    try {
      const ids = ['ws.keepalive.ping-keeps-alive', 'ws.limits.connections.primary'];
      const checks = ids.map((id) => wsChecks.find((c) => c.id === id)!);
      // Both start at once: the slow check takes its slot first, the limit check counts it.
      const { results } = await runChecks({ profile: withGrace(server.profile), checks, settings: { concurrency: 2, timeoutMs: 20_000 } });
      for (const r of results) expect(r.outcome, describeResult(r)).toBe('pass');
      const notes = results[1]!.evidence.filter((e) => e.kind === 'note').map((e) => (e as { text: string }).text);
      expect(notes).toContain(`1 connection(s) of this key held by other checks count toward its allowance of ${server.profile.keys.primary.connections}`);
    } finally {
      await server.close();
    }
  });
});
