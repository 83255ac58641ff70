/**
 * A slot not freed is one verdict: against a service whose closed connections never free their
 * slots, the connection budget's finding fails ws.limits.connections.slot-freed alone, and every
 * check that then needs a connection of a key the target keeps ends at once, not judged, naming
 * the cause, instead of each waiting out the release and failing on the same 50009.
 */
import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/summary.ts';
import { NOTHING_TO_JUDGE } from '../../src/coverage.ts';
import { runSuite } from '../helpers/mutation.ts';

describe('a service that never frees the slot of a closed connection', () => {
  it('fails ws.limits.connections.slot-freed alone, one broken rule; the rest not judged', {
    timeout: 120_000,
  }, async () => {
    const results = await runSuite('limit-slots-never-freed');
    const summary = summarize(results, 0);
    expect(results.filter((r) => r.outcome === 'fail').map((r) => r.id)).toEqual(['ws.limits.connections.slot-freed']);
    expect(results.filter((r) => r.outcome === 'error').map((r) => `${r.id}: ${r.reason}`)).toEqual([]);
    expect(summary.broken.map((b) => b.rule)).toEqual(['limit:connections-per-key']);
    const slot = results.find((r) => r.id === 'ws.limits.connections.slot-freed')!;
    expect(slot.violations[0]!.received).toMatch(
      /within its allowance .* refused with HTTP \d+ .*50009.* for the whole release wait/,
    );
    const notJudged = results.filter((r) => r.nothingToJudge === NOTHING_TO_JUDGE.connection);
    expect(notJudged.length).toBeGreaterThan(5);
    for (const r of notJudged)
      expect(r.reason).toMatch(/^not judged: no connection of keys\.\w+: the target keeps the slots/);
  });
});
