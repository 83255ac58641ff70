/**
 * A service whose idle sweep closes a connection without a ping as late as 1.4 windows after its last
 * ping conforms: the spec says the connection "is closed if no ping arrives within 30 seconds" and
 * sets no deadline after that. With a profile that states no grace, `ws.keepalive.timeout` allows half
 * a window, so the close passes, and when it came is recorded for a baseline to compare. The window is
 * long enough (15 s) that the grace of half a window differs from any fixed grace of a few seconds.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import type { Profile } from '../../src/profile.ts';
import { runChecks } from '../../src/runner.ts';
import { wsChecks } from '../../suites/ws/index.ts';

const WINDOW_MS = 15_000;

describe('a keep-alive close as late as an idle sweep (stream.idleCloseWindows 1.4)', () => {
  let server: ReferenceServer | undefined;
  afterAll(() => server?.close());

  it('passes ws.keepalive.timeout with the default grace, recording the close in windows', {
    timeout: 60_000,
  }, async () => {
    server = await startReferenceServer({ pingTimeoutMs: WINDOW_MS, dialect: { stream: { idleCloseWindows: 1.4 } } });
    // What an operator who knows only the spec writes: the window, no grace.
    const profile: Profile = { ...server.profile, timing: { pingTimeoutMs: WINDOW_MS } };
    const checks = wsChecks.filter((c) => c.id === 'ws.keepalive.timeout');
    const { results } = await runChecks({ profile, checks, settings: { concurrency: 1 } });
    const r = results[0]!;
    expect(`${r.outcome} ${r.violations.map((v) => v.received).join('; ')}`).toBe('pass ');
    const observed = Object.fromEntries(r.observations.map((o) => [o.name, o.value]));
    expect(observed['closed-after-windows']).toBe(1.4);
  });
});
