/**
 * The stream suite over Socket.IO through the real runner against the reference service serving
 * Socket.IO (event `price`): every check passes against the clean service, and every fault that
 * names a ws check makes that check fail, as it does over raw WebSocket. The checks are the same
 * objects as test/ws-suite.test.ts runs; only the profile's transport differs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer, FAULTS, type ReferenceServer } from '../reference/index.ts';
import { runChecks } from '../src/runner.ts';
import type { CheckResult } from '../src/check.ts';
import type { Profile } from '../src/profile.ts';
import { streamFactoryFor } from '../src/transports/stream-factory.ts';
import { wsChecks } from '../suites/ws/index.ts';

const WINDOW_MS = 1500;
const GRACE_MS = 1000;
const EVENT = 'price';

async function start(fault?: string): Promise<ReferenceServer> {
  return startReferenceServer({ pingTimeoutMs: WINDOW_MS, tickMs: 50, transport: 'socketio', event: EVENT, ...(fault ? { fault } : {}) });
}

const withGrace = (profile: Profile): Profile => ({ ...profile, timing: { pingTimeoutMs: WINDOW_MS, pingGraceMs: GRACE_MS } });

async function run(server: ReferenceServer, ids: readonly string[], withRest = false): Promise<Map<string, CheckResult>> {
  // With the rest: every check that is not slow runs beside them, in registry order, as in a real run.
  const checks = wsChecks.filter((c) => ids.includes(c.id) || (withRest && !c.tags.includes('slow')));
  expect(checks.filter((c) => ids.includes(c.id)).map((c) => c.id).sort()).toEqual([...ids].sort());
  const profile = withGrace(server.profile);
  const { results } = await runChecks({ profile, checks, settings: { concurrency: 4, timeoutMs: 20_000 }, createStream: streamFactoryFor(profile) });
  return new Map(results.map((r) => [r.id, r]));
}

const describeResult = (r: CheckResult | undefined): string =>
  r ? `${r.id}: ${r.outcome}${r.reason ? ` (${r.errorCode ?? ''} ${r.reason})` : ''} ${r.violations.map((v) => `${v.received} / expected ${v.expected}`).join('; ')}` : 'no result';

describe('stream suite over Socket.IO against the clean reference service', () => {
  let server: ReferenceServer;
  let results: Map<string, CheckResult>;
  beforeAll(async () => {
    server = await start();
    expect(server.profile).toMatchObject({ transport: 'socketio', event: EVENT, ws: server.socketIoUrl });
    results = await run(server, wsChecks.map((c) => c.id));
  });
  afterAll(() => server?.close());

  it.each(wsChecks.map((c) => [c.id, c.severity] as const))('%s (%s) passes over Socket.IO', (id) => {
    const r = results.get(id);
    expect(r?.outcome, describeResult(r)).toBe('pass');
    expect(r?.violations).toEqual([]);
  });

  it('saw the handshake refusals in the HTTP phase, as JSON bodies', () => {
    const evidence = JSON.stringify(results.get('ws.handshake.error-body')!.evidence);
    expect(evidence).toContain('refused: HTTP 401 {\\"status_number\\":\\"50005\\"');
  });

  it('never puts a key of the profile into a result', () => {
    const text = JSON.stringify([...results.values()]);
    for (const entry of Object.values(server.profile.keys)) if (entry) expect(text).not.toContain(entry.key);
  });
});

const WS_FAULTS = FAULTS.map((f) => ({ name: f.name, ids: f.catches.filter((id) => id.startsWith('ws.')) })).filter((f) => f.ids.length > 0);

/** Each fault runs with the whole non-slow stream suite beside its checks, as test/ws-suite.test.ts does over raw WebSocket. */
describe('stream suite over Socket.IO against each fault of the reference service', () => {
  it.concurrent.for(WS_FAULTS.map((f) => [f.name, f.ids] as const))('fault %s fails %j over Socket.IO', async ([fault, ids], { expect: local }) => {
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
