/**
 * Stream checks against reference dialects that choose what the spec leaves open about pairs and
 * pushes: listed pairs a subscribe refuses with 50104, pairs whose price never moves on a service
 * that pushes only on change, pushes of a dropped pair flushed a few ticks after the notice, and
 * REST prices served now and then from a delayed feed under 50102. Each check must pass (or say why
 * it cannot judge), never fail the target for a conforming choice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startReferenceServer, type PartialDialect, type ReferenceServer } from '../../reference/index.ts';
import type { CheckResult } from '../../src/check.ts';
import type { Profile } from '../../src/profile.ts';
import { runChecks } from '../../src/runner.ts';
import { wsChecks } from '../../suites/ws/index.ts';

const WINDOW_MS = 1500;

const servers: ReferenceServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(dialect: PartialDialect): Promise<ReferenceServer> {
  const s = await startReferenceServer({ pingTimeoutMs: WINDOW_MS, dialect });
  servers.push(s);
  return s;
}

/** The profile with `first` leading its sample, so that the checks pick those pairs first. */
function leading(s: ReferenceServer, first: readonly string[]): Profile {
  const p = s.profile;
  const sample = [...first, ...(p.pairs?.sample ?? []).filter((c) => !first.includes(c))];
  return {
    ...p,
    pairs: { ...p.pairs, sample },
    timing: { ...p.timing, pingTimeoutMs: WINDOW_MS, pingGraceMs: 1000 },
  };
}

async function run(profile: Profile, ids: readonly string[]): Promise<Map<string, CheckResult>> {
  const checks = wsChecks.filter((c) => ids.includes(c.id));
  expect(checks.map((c) => c.id).sort()).toEqual([...ids].sort());
  const { results } = await runChecks({ profile, checks, settings: { concurrency: 3, timeoutMs: 20_000 } });
  return new Map(results.map((r) => [r.id, r]));
}

const line = (r: CheckResult | undefined): string => {
  if (!r) return 'no result';
  if (r.outcome === 'pass') return `${r.id} pass`;
  return `${r.id} ${r.outcome} ${r.reason ?? ''} ${r.violations.map((v) => v.received).join('; ')}`;
};

// Pairs of the default catalogue each dialect option picks (every nth active pair; none a whitelist names).
const SUSPENDED = ['Crypto:ALL:ETH/USD', 'Crypto:ALL:DOT/USD'];
const STILL = ['Crypto:ALL:SOL/USD', 'Crypto:ALL:DOT/USD', 'Crypto:ALL:UNI/USDT'];
const DELAYED = ['Crypto:ALL:XRP/USD', 'Crypto:ALL:LINK/USD'];

describe('listed pairs that refuse a subscribe (stream.suspendedListed)', () => {
  it('are recorded and replaced: the checks about other rules pass', async () => {
    // A catalogue beyond 100 pairs, so that 100 subscribable ones remain once the suspended are left out.
    const s = await serve({ stream: { suspendedListed: true }, rest: { catalogueSize: 250 } });
    const ids = [
      'ws.subscribe.notice',
      'ws.subscribe.max-pairs',
      'ws.notice.id-echo',
      'ws.handshake.header-case',
      'ws.unsubscribe.notice',
      'ws.subscribe.unknown-among-known',
    ];
    const results = await run(leading(s, SUSPENDED), ids);
    expect(ids.map((id) => line(results.get(id)))).toEqual(ids.map((id) => `${id} pass`));
    const refused = [...results.values()].flatMap((r) =>
      r.observations.filter((o) => o.name === 'listed-pair-refused').map((o) => o.value),
    );
    expect(refused).toContain(SUSPENDED[0]);
  }, 60_000);

  it("leave the profile's inactive pair to its own rule: its 50104 is judged, never replaced", async () => {
    const s = await serve({ stream: { suspendedListed: true } });
    const results = await run(leading(s, []), ['ws.subscribe.inactive-pair']);
    expect(line(results.get('ws.subscribe.inactive-pair'))).toBe('ws.subscribe.inactive-pair pass');
  }, 30_000);
});

describe('pairs whose price never moves (stream.stillPairs)', () => {
  it('pushes-start skips, saying the prices did not move, when only still pairs pushed on change', async () => {
    const s = await serve({ stream: { stillPairs: true, pushes: 'on-change' } });
    const results = await run(leading(s, STILL), ['ws.subscribe.pushes-start']);
    const r = results.get('ws.subscribe.pushes-start')!;
    expect(line(r)).toMatch(/^ws\.subscribe\.pushes-start skip .*did not move/);
  }, 30_000);

  it('pushes-start passes once a moving pair is among them', async () => {
    const s = await serve({ stream: { stillPairs: true, pushes: 'on-change' } });
    const results = await run(leading(s, [...STILL.slice(0, 2), 'Crypto:ALL:BTC/USD']), ['ws.subscribe.pushes-start']);
    expect(line(results.get('ws.subscribe.pushes-start'))).toBe('ws.subscribe.pushes-start pass');
  }, 30_000);
});

describe('pushes of a dropped pair flushed after the notice (stream.stopLagTicks)', () => {
  it('are frames in flight, within a window of the observed cadence: the stop checks pass', async () => {
    const s = await serve({ stream: { stopLagTicks: 3, tickMs: 200 } });
    const ids = ['ws.unsubscribe.stops', 'ws.subscribe.replaces'];
    const results = await run(leading(s, []), ids);
    expect(ids.map((id) => line(results.get(id)))).toEqual(ids.map((id) => `${id} pass`));
    const inFlight = results.get('ws.unsubscribe.stops')!.observations.find((o) => o.name === 'in-flight-pushes');
    expect(inFlight?.value).toBeGreaterThan(0);
  }, 60_000);
});

describe('REST prices from a delayed feed under 50102 (rest.delayedPrices)', () => {
  it('are not compared with the stream: rest-agrees decides on a live (200) read', async () => {
    const s = await serve({ rest: { delayedPrices: true } });
    const results = await run(leading(s, DELAYED), ['ws.consistency.rest-agrees']);
    const r = results.get('ws.consistency.rest-agrees')!;
    expect(line(r)).toBe('ws.consistency.rest-agrees pass');
    expect(r.observations.some((o) => o.name.startsWith('rest-read-'))).toBe(true);
  }, 30_000);
});
