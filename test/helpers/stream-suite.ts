/**
 * What test/unit/ws-suite.test.ts and test/unit/socketio-suite.test.ts share: the reference service with a
 * short ping window on either transport, the stream suite run through the real runner, and the
 * faults that name ws checks. Only the transport differs between the two files.
 */
import { expect } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { FAULTS, MUTATION_EXPLORE } from './mutation.ts';
import { runChecks } from '../../src/runner.ts';
import type { CheckResult } from '../../src/check.ts';
import type { Profile } from '../../src/profile.ts';
import type { ExploreSettings } from '../../src/explore/index.ts';
import { wsChecks } from '../../suites/ws/index.ts';

/** The scripted stream checks: the explorer (tag `explore`) has its own tests and sweeps. */
export const scriptedWsChecks = wsChecks.filter((c) => !c.tags.includes('explore'));

/** Keep-alive window of the test servers: short, so slow checks take ~4 s, with room for a busy machine. */
const WINDOW_MS = 1500;
const GRACE_MS = 1000;
/** The Socket.IO event the reference serves in these tests. */
export const EVENT = 'price';

export type Transport = 'ws' | 'socketio';

export async function startSuiteServer(transport: Transport, fault?: string): Promise<ReferenceServer> {
  return startReferenceServer({
    pingTimeoutMs: WINDOW_MS,
    tickMs: 50,
    ...(transport === 'socketio' ? { transport, event: EVENT } : {}),
    ...(fault ? { fault } : {}),
  });
}

export const withGrace = (profile: Profile): Profile => ({
  ...profile,
  timing: { ...profile.timing, pingTimeoutMs: WINDOW_MS, pingGraceMs: GRACE_MS },
});

/**
 * Runs the checks `ids` (the runner picks the profile's transport); with the rest, every scripted
 * check that is not slow runs beside them, in registry order, as in a real run without --explore.
 */
export async function runSuite(
  server: ReferenceServer,
  ids: readonly string[],
  withRest = false,
  explore?: ExploreSettings,
): Promise<Map<string, CheckResult>> {
  const checks = wsChecks.filter(
    (c) => ids.includes(c.id) || (withRest && scriptedWsChecks.includes(c) && !c.tags.includes('slow')),
  );
  expect(
    checks
      .filter((c) => ids.includes(c.id))
      .map((c) => c.id)
      .sort(),
  ).toEqual([...ids].sort());
  const { results } = await runChecks({
    profile: withGrace(server.profile),
    checks,
    settings: { concurrency: 4, timeoutMs: 20_000, ...(explore ? { explore } : {}) },
  });
  return new Map(results.map((r) => [r.id, r]));
}

export const describeResult = (r: CheckResult | undefined): string =>
  r
    ? `${r.id}: ${r.outcome}${r.reason ? ` (${r.errorCode ?? ''} ${r.reason})` : ''} ` +
      `${r.violations.map((v) => `${v.received} / expected ${v.expected}`).join('; ')}`
    : 'no result';

/** Every fault that names ws checks, with those checks, as `[fault, ids]` rows for it.for. */
export const WS_FAULTS = FAULTS.map((f) => [f.name, f.catches.filter((id) => id.startsWith('ws.'))] as const).filter(
  ([, ids]) => ids.length > 0,
);

/**
 * Runs a fault's checks with the whole non-slow suite beside them (some faults, a leaked slot,
 * show only after another check) and expects each of them to fail with a violation. The explorer,
 * when the fault names it, runs as in the mutation sweep: alone, on a server of its own with the
 * fault, with the sweep's seed and sequences (beside the scripted checks it would hand what it
 * meets to their owners).
 */
export async function expectFaultFails(
  transport: Transport,
  fault: string,
  ids: readonly string[],
  local: typeof expect,
): Promise<void> {
  const explorer = ids.filter((id) => !scriptedWsChecks.some((c) => c.id === id));
  const scripted = ids.filter((id) => !explorer.includes(id));
  const results = new Map<string, CheckResult>();
  const runOn = async (run: (server: ReferenceServer) => Promise<Map<string, CheckResult>>): Promise<void> => {
    const server = await startSuiteServer(transport, fault);
    try {
      for (const [id, r] of await run(server)) results.set(id, r);
    } finally {
      await server.close();
    }
  };
  await Promise.all([
    scripted.length ? runOn((s) => runSuite(s, scripted, true)) : undefined,
    explorer.length ? runOn((s) => runSuite(s, explorer, false, MUTATION_EXPLORE)) : undefined,
  ]);
  for (const id of ids) {
    const r = results.get(id);
    local(r?.outcome, describeResult(r)).toBe('fail');
    local(r?.violations.length, describeResult(r)).toBeGreaterThan(0);
  }
}

/** The keys of the server's profile never appear in its results. */
export function expectNoKey(server: ReferenceServer, results: Map<string, CheckResult>): void {
  const text = JSON.stringify([...results.values()]);
  for (const entry of Object.values(server.profile.keys)) if (entry) expect(text).not.toContain(entry.key);
}
