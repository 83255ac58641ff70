/**
 * A slot the target frees long after a close (6.5 s, past the engine's first 5 s of retries) is
 * waited out and recorded, and the limit checks pass. A test of its own in the ci tier: it waits
 * the release out several times over, some 45 s. Real reference servers on loopback, port 0.
 */
import { describe, expect, it } from 'vitest';
import { runChecks } from '../../src/runner.ts';
import { limitChecks } from '../../suites/ws/limits.ts';
import { budgetServers, withTiming } from '../helpers/budget-servers.ts';

const serve = budgetServers();

describe('a slow slot release', () => {
  it('is waited out past 5 s and recorded: the limit checks pass when a slot frees 6.5 s after a close', async () => {
    const s = await serve({ primary: 1, limited: 1, stated: false, slotReleaseMs: 6500 });
    const ids = ['ws.limits.connections.limited', 'ws.limits.connections.slot-freed'];
    const { results } = await runChecks({
      profile: withTiming(s.profile),
      checks: limitChecks.filter((c) => ids.includes(c.id)),
      settings: { concurrency: 2 },
    });
    expect(results.map((r) => `${r.id} ${r.outcome} ${r.reason ?? r.violations[0]?.received ?? ''}`)).toEqual(
      ids.map((id) => `${id} pass `),
    );
    const slotFreed = results.find((r) => r.id === 'ws.limits.connections.slot-freed')!;
    const freed = slotFreed.observations.find((o) => o.name === 'freed-after-ms');
    expect(freed?.value).toBeGreaterThanOrEqual(6000);
  }, 90_000);
});
