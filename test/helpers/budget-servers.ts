/**
 * Reference servers for the connection budget's tests: a short keep-alive window, a 50 ms tick, the
 * key allowances under test, each closed after its test.
 */
import { afterEach } from 'vitest';
import { startReferenceServer, type PartialDialect, type ReferenceServer } from '../../reference/index.ts';
import type { Profile } from '../../src/profile.ts';

/** Keep-alive window of these servers: short, so the suite's slow checks take seconds. */
export const WINDOW_MS = 1500;

/** `serve(keys)` starts a server with those allowances; every server is closed after each test. */
export function budgetServers(): (keys: PartialDialect['keys']) => Promise<ReferenceServer> {
  const servers: ReferenceServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return async (keys) => {
    const s = await startReferenceServer({ pingTimeoutMs: WINDOW_MS, dialect: { keys, stream: { tickMs: 50 } } });
    servers.push(s);
    return s;
  };
}

/** The window and a grace, and nothing else of the timing: the budget learns the release time itself. */
export const withTiming = (p: Profile): Profile => ({
  ...p,
  timing: { pingTimeoutMs: WINDOW_MS, pingGraceMs: 1000 },
});
