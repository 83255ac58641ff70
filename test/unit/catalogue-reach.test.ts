/**
 * Catalogue-wide checks reach the whole catalogue, quickly: keep-alive connections, pages read
 * several at a time, a time limit that grows with the catalogue, every asset type read however
 * late it is listed (a seeded sample past the bound), and every 50102 held to HTTP 200.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { createRestClient } from '../../src/transports/rest-client.ts';
import { runChecks } from '../../src/runner.ts';
import type { Profile } from '../../src/profile.ts';
import { CHECKS } from '../../suites/index.ts';
import { CATALOGUE_BOUND, sampleCodes } from '../../suites/rest/catalogue.ts';
import { SECRET, startServer } from '../helpers/engine.ts';

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const pick = (...ids: string[]) => CHECKS.filter((c) => ids.includes(c.id));

async function reference(options: Parameters<typeof startReferenceServer>[0]): Promise<ReferenceServer> {
  const server = await startReferenceServer(options);
  servers.push(server);
  return server;
}

describe('large catalogues', () => {
  it('sends its requests over kept-alive connections', async () => {
    const server = await startServer((_req, res) => res.end('{"status_number":"200","ts":1,"data":[]}'));
    servers.push(server);
    const rest = createRestClient({
      baseUrl: server.url,
      primaryKey: SECRET,
      record: () => undefined,
      redact: (s) => s,
    });
    for (let i = 0; i < 20; i++) await rest.get({ path: '/v1/pairs' });
    // A client that opens a connection per request shows 20 sockets here.
    expect(server.requests).toHaveLength(20);
    expect(new Set(server.requests.map((r) => r.socket)).size).toBe(1);
  });

  it("decides catalogue-wide checks on hundreds of pairs across a slow network within the check's time", async () => {
    // Scaled down: 300 pairs 100 ms away, and a 2.5 s time per check where the default is 15 s.
    const ref = await reference({ dialect: { rest: { catalogueSize: 300, latencyMs: 100 } } });
    const checks = pick('rest.pairs.code-form', 'rest.entitlements.crypto-only-pairs', 'rest.observe.page-past-end');
    expect(checks).toHaveLength(3);
    const { results } = await runChecks({ profile: ref.profile, checks, settings: { timeoutMs: 2500 } });
    for (const r of results) {
      expect(r.reason, r.id).toBeUndefined();
      expect(r.outcome, r.id).toBe('pass');
    }
  }, 60_000);
});

describe('catalogue-wide rules reach every pair', () => {
  it('samples past the bound with a seed: a pair of every asset type, the same sample for the same seed', () => {
    const codes = [
      ...Array.from({ length: 900 }, (_, i) => `Crypto:ALL:C${i}/USD`),
      'Metal:ALL:XAU/USD',
      ...Array.from({ length: 10 }, (_, i) => `Forex:ALL:F${i}/USD`),
    ];
    const a = sampleCodes(codes, CATALOGUE_BOUND, 7);
    expect(a).toHaveLength(CATALOGUE_BOUND);
    expect(a).toContain('Metal:ALL:XAU/USD');
    expect(a.some((c) => c.startsWith('Forex:'))).toBe(true);
    expect(sampleCodes(codes, CATALOGUE_BOUND, 7)).toEqual(a);
    expect(sampleCodes(codes, CATALOGUE_BOUND, 8)).not.toEqual(a);
    expect(sampleCodes(codes.slice(0, 20), CATALOGUE_BOUND, 7)).toEqual(codes.slice(0, 20));
  });

  it('catches an asset type listed after 600 pairs whose prices break a rule, and reports the seed', async () => {
    const ref = await reference({ dialect: { rest: { catalogueSize: 600 } }, fault: 'price-late-type-inverted' });
    const profile: Profile = { ...ref.profile, sampleSeed: 11 };
    const { results } = await runChecks({ profile, checks: pick('rest.price.catalogue', 'rest.price.mid') });
    // The catalogue's read of the late pairs fails the mid-price's owner, and the catalogue cites it.
    const mid = results.find((r) => r.id === 'rest.price.mid')!;
    expect(mid.outcome).toBe('fail');
    expect(mid.violations.some((v) => v.seenBy === 'rest.price.catalogue' && /bid .* > price/.test(v.received))).toBe(
      true,
    );
    const catalogue = results.find((r) => r.id === 'rest.price.catalogue')!;
    expect(catalogue.outcome).toBe('pass');
    expect(catalogue.alsoSeen?.[0]).toMatchObject({ rule: 'field:price:price', owner: 'rest.price.mid' });
    expect(catalogue.observations).toContainEqual(expect.objectContaining({ name: 'sample-seed', value: 11 }));
  }, 120_000);

  it('holds every 50102 with data the run meets to HTTP 200, with no stale pair named in the profile', async () => {
    const ref = await reference({ fault: 'stale-http-503' });
    const { stale: _named, ...pairs } = ref.profile.pairs!;
    const profile: Profile = { ...ref.profile, pairs };
    const { results } = await runChecks({ profile, checks: pick('rest.price.catalogue', 'rest.price.stale') });
    const byId = Object.fromEntries(results.map((r) => [r.id, r]));
    expect(byId['rest.price.stale']!.outcome).toBe('skip');
    expect(byId['rest.price.catalogue']!.outcome).toBe('fail');
    expect(byId['rest.price.catalogue']!.violations).toContainEqual(
      expect.objectContaining({ received: expect.stringMatching(/status_number 50102 with data and HTTP 503/) }),
    );
  }, 60_000);
});
