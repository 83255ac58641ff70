/**
 * Choices the spec leaves to a service that a strict reading once rejected, each taken by a dialect
 * of the reference: zone names that are links of the tz database, a mid of the service's own (on a
 * coarser tick, or weighted), a fan-out that drops a stopped pair a second late, listed pairs that
 * are suspended, a closed market answered 50102 without data, US equities labelled by their exchange
 * in pre-market hours, codes with a space or a slash in the base, a code search that reads names,
 * and a gateway that limits requests without a key. The checks that judge each rule must pass: the
 * spec allows every one of these.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startReferenceServer, type PartialDialect, type ReferenceServer } from '../../reference/index.ts';
import type { CheckResult } from '../../src/check.ts';
import type { Profile } from '../../src/profile.ts';
import { runChecks } from '../../src/runner.ts';
import { CHECKS } from '../../suites/index.ts';
import { get, q } from '../helpers/reference.ts';

const WINDOW_MS = 1500;

const servers: ReferenceServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(dialect: PartialDialect, clock?: () => number): Promise<ReferenceServer> {
  const s = await startReferenceServer({ pingTimeoutMs: WINDOW_MS, dialect, ...(clock ? { clock } : {}) });
  servers.push(s);
  return s;
}

/** The server's profile with a short ping window, `first` leading its sample. */
function profileOf(s: ReferenceServer, first: readonly string[] = []): Profile {
  const p = s.profile;
  const sample = [...first, ...(p.pairs?.sample ?? []).filter((c) => !first.includes(c))];
  return { ...p, pairs: { ...p.pairs, sample }, timing: { ...p.timing, pingTimeoutMs: WINDOW_MS, pingGraceMs: 1000 } };
}

async function run(profile: Profile, ids: readonly string[]): Promise<Map<string, CheckResult>> {
  const checks = CHECKS.filter((c) => ids.includes(c.id));
  expect(checks.map((c) => c.id).sort()).toEqual([...ids].sort());
  const { results } = await runChecks({ profile, checks, settings: { concurrency: 3, timeoutMs: 30_000 } });
  return new Map(results.map((r) => [r.id, r]));
}

const line = (r: CheckResult | undefined): string => {
  if (!r) return 'no result';
  if (r.outcome === 'pass') return `${r.id} pass`;
  return `${r.id} ${r.outcome} ${r.reason ?? ''} ${r.violations.map((v) => v.received).join('; ')}`;
};
const allPass = (results: Map<string, CheckResult>, ids: readonly string[]): void =>
  expect(ids.map((id) => line(results.get(id)))).toEqual(ids.map((id) => `${id} pass`));
const observed = (results: Map<string, CheckResult>, id: string): Record<string, unknown> =>
  Object.fromEntries((results.get(id)?.observations ?? []).map((o) => [o.name, o.value]));

/** Monday 30 November 2026, 05:00 in New York (10:00 UTC), pre-market; Saturday the 28th, only Crypto open. */
const PRE_MARKET = Date.parse('2026-11-30T10:00:00Z');
const WEEKEND = Date.parse('2026-11-28T15:00:00Z');
const frozenAt = (at: number): (() => number) => {
  const started = Date.now();
  return () => at + (Date.now() - started);
};

const PRICE_CHECKS = ['rest.price.schema', 'rest.price.market.combination', 'rest.price.catalogue'];

describe('zone names that are links of the tz database (rest.zoneNames: links)', () => {
  it('pass the zone, schema and catalogue checks, and are recorded as links', async () => {
    const s = await serve({ rest: { zoneNames: 'links' } });
    const r = await get(s, `/v1/price${q({ code: 'Equity:US:AAPL/USD' })}`);
    expect((r.body.data as { market: { timezone: string } }).market.timezone).toBe('US/Eastern');
    const ids = ['rest.price.market.timezone', ...PRICE_CHECKS];
    const results = await run(profileOf(s), ids);
    allPass(results, ids);
    expect(Object.values(observed(results, 'rest.price.market.timezone'))).toContain('US/Eastern');
  }, 60_000);
});

describe("a mid-price of the service's own (numbers.mid)", () => {
  const ids = ['rest.price.mid', 'ws.push.mid', 'ws.consistency.rest-agrees', 'ws.subscribe.notice', ...PRICE_CHECKS];

  it.each(['tick', 'weighted'] as const)(
    '%s: the price and push checks pass and record it',
    async (mid) => {
      const s = await serve({ numbers: { mid } });
      const results = await run(profileOf(s), ids);
      allPass(results, ids);
      expect(observed(results, 'ws.push.mid').mid).toContain('other');
    },
    60_000,
  );
});

describe('a fan-out that drops a stopped pair a second late (stream.stopLagMs)', () => {
  it('passes the stop checks, and records how long the pair took to stop', async () => {
    // Pushes every 100 ms: four push gaps are 400 ms, the lag 1 s.
    const s = await serve({ stream: { stopLagMs: 1000, tickMs: 100 }, keys: { stated: false } });
    const ids = ['ws.unsubscribe.stops', 'ws.unsubscribe.stops-several', 'ws.subscribe.replaces'];
    const results = await run(profileOf(s), ids);
    allPass(results, ids);
    expect(observed(results, 'ws.unsubscribe.stops')['stopped-within-ms']).toBeGreaterThanOrEqual(750);
  }, 60_000);
});

describe('listed pairs that are suspended (stream.suspendedListed)', () => {
  it('are refused on REST too, and replaced by the subscribe checks of other rules', async () => {
    const s = await serve({
      stream: { suspendedListed: true, subscribeErrors: 'pairs-first' },
      rest: { catalogueSize: 250 },
    });
    // The suspended pairs, as a client finds them: listed, and refused on REST.
    const listed = (await get(s, `/v1/pairs${q({ per_page: '100' })}`)).body.data as { code: string }[];
    const suspended: string[] = [];
    for (const { code } of listed) {
      const r = await get(s, `/v1/price${q({ code })}`);
      if (r.body.status_number === '50105') suspended.push(code);
    }
    const equity = suspended.find((c) => c.startsWith('Equity:'));
    expect(equity).toBeDefined();
    const ids = ['ws.subscribe.whitelist', 'ws.subscribe.asset-type', 'ws.subscribe.too-many-pairs'];
    const results = await run(profileOf(s, [equity!]), ids);
    allPass(results, ids);
    const refused = [...results.values()].flatMap((x) =>
      x.observations.filter((o) => o.name === 'listed-pair-refused').map((o) => o.value),
    );
    expect(refused).toContain(equity);
  }, 90_000);
});

describe('a closed market answered 50102 without data, on HTTP 503 (rest.closedMarket: 50102-no-data)', () => {
  it('passes the price checks, which record the HTTP status', async () => {
    const s = await serve({ rest: { closedMarket: '50102-no-data' } }, frozenAt(WEEKEND));
    const r = await get(s, `/v1/price${q({ code: 'Forex:ALL:EUR/USD' })}`);
    expect([r.status, r.body.status_number, r.body.data]).toEqual([503, '50102', null]);
    const ids = [...PRICE_CHECKS, 'rest.price.mid'];
    const results = await run(profileOf(s), ids);
    allPass(results, ids);
  }, 60_000);
});

describe('US equities labelled by their exchange, in pre-market hours (rest.equityMarkets: exchanges)', () => {
  it('pass the market checks: the market of a code is a scope label', async () => {
    const s = await serve({ rest: { equityMarkets: 'exchanges' } }, frozenAt(PRE_MARKET));
    const r = await get(s, `/v1/price${q({ code: 'Equity:NASDAQ:MSFT/USD' })}`);
    expect((r.body.data as { market: { reason: string } }).market.reason).toBe('pre_session');
    const ids = [...PRICE_CHECKS, 'rest.price.market.equity-session'];
    allPass(await run(profileOf(s), ids), ids);
  }, 60_000);
});

describe('codes with a space or a slash in the base (rest.codeSpelling: spaced)', () => {
  it('pass the code, schema and catalogue checks', async () => {
    const s = await serve({ rest: { codeSpelling: 'spaced' } });
    const r = await get(s, `/v1/price${q({ code: 'Commodity:ALL:Crude Oil/USD' })}`);
    expect(r.body.status_number).toBe('200');
    const ids = ['rest.pairs.code-form', 'rest.pairs.schema', ...PRICE_CHECKS];
    allPass(await run(profileOf(s), ids), ids);
  }, 60_000);
});

describe('a code search that also reads names (rest.codeSearch: code-or-name)', () => {
  it('passes the search check, which records the matches by name', async () => {
    const s = await serve({ rest: { codeSearch: 'code-or-name' } });
    const results = await run(profileOf(s), ['rest.pairs.code-search']);
    allPass(results, ['rest.pairs.code-search']);
    expect(Object.keys(observed(results, 'rest.pairs.code-search'))).toContain('search by name BTC');
  }, 60_000);
});

describe('a gateway that limits requests without a valid key per address (rest.keylessLimit)', () => {
  it('has the keyless requests paced, so the 401 checks pass', async () => {
    const s = await serve({ rest: { keylessLimit: { requests: 1, windowMs: 1500 } } });
    const ids = ['rest.auth.missing-key', 'rest.auth.invalid-key'];
    allPass(await run(profileOf(s), ids), ids);
  }, 60_000);
});
