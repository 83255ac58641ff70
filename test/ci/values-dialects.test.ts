/**
 * Values the spec leaves open, and market rules it states for every pair: conforming dialects of
 * the reference that write them otherwise pass the whole suite (prices in exponent notation
 * with 24 significant digits, lenient paging, an acknowledged empty subscribe, any documented REST
 * refusal, notices without data, gateway answers without ts), and the faults that break the
 * market rules on pairs no sample reaches are caught by the checks that read every pair.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { mergeDialect, startReferenceServer, type PartialDialect } from '../../reference/index.ts';
import type { CheckResult } from '../../src/check.ts';
import { isDecimalString, isIanaZone, places } from '../../src/quote-rules.ts';
import { PATHS } from '../../src/spec.ts';
import { CHECKS } from '../../suites/index.ts';
import { cleanProblems, runSuite } from '../helpers/mutation.ts';

const observed = (results: readonly CheckResult[], id: string): unknown[] =>
  results.find((r) => r.id === id)!.observations.map((o) => o.value);

/** Runs the default suite against `dialect`; returns the results and the wall time. */
async function suiteUnder(dialect: PartialDialect): Promise<{ results: CheckResult[]; ms: number }> {
  const t0 = performance.now();
  const results = await runSuite(undefined, { dialect: mergeDialect(dialect) });
  return { results, ms: Math.round(performance.now() - t0) };
}

describe('a dialect writing prices in exponent notation with 24 significant digits', () => {
  const dialect: PartialDialect = { numbers: { notation: 'exponent', significantDigits: 24 } };

  it('serves such prices', async () => {
    const s = await startReferenceServer({ dialect });
    try {
      const res = await fetch(`${s.profile.rest}${PATHS.price}?code=Crypto:ALL:BTC/USD`, {
        headers: { 'X-API-Key': s.profile.keys.primary.key },
      });
      const { ask, bid, price } = ((await res.json()) as { data: Record<string, string> }).data;
      for (const v of [ask!, bid!, price!]) {
        expect(v).toMatch(/^\d\.\d{23}E\+4$/);
        expect(isDecimalString(v)).toBe(true);
        expect(places(v)).toBe(19);
      }
    } finally {
      await s.close();
    }
  });

  it('passes the whole suite, recording the notation', async () => {
    const { results, ms } = await suiteUnder(dialect);
    expect(cleanProblems(results)).toEqual([]);
    expect(observed(results, 'rest.price.mid')).toContainEqual({
      ask: 'exponent',
      bid: 'exponent',
      price: 'exponent',
    });
    // The wall time of the run, for the report.
    console.info(`exponent notation, 24 significant digits: the suite ran in ${ms} ms`);
  });
});

describe('a dialect lenient with parameters', () => {
  it('answers bad paging with the defaults, acknowledges an empty subscribe, and passes the suite', async () => {
    const { results } = await suiteUnder({
      rest: { invalidPaging: 'defaults' },
      stream: { emptySubscribe: 'acknowledge' },
    });
    expect(cleanProblems(results)).toEqual([]);
    for (const id of ['page-zero', 'page-negative', 'page-text', 'per-page-zero', 'per-page-text'])
      expect(observed(results, `rest.pairs.invalid-param.${id}`)).toEqual(['defaults']);
    expect(observed(results, 'ws.subscribe.invalid.empty-list')).toEqual(['acknowledged']);
  });

  it('records a refusal when the target refuses them', async () => {
    const { results } = await suiteUnder({});
    expect(observed(results, 'rest.pairs.invalid-param.page-zero')).toEqual(['refused']);
    expect(observed(results, 'ws.subscribe.invalid.empty-list')).toEqual(['refused']);
  });
});

describe('a dialect refusing pairs on REST with one documented code', () => {
  const ENTITLEMENTS = CHECKS.filter((c) => c.id.startsWith('rest.entitlements.') || c.id.startsWith('rest.probe.'));
  for (const denial of ['50010', '50107', '50109', '50104'] as const)
    it(`passes the entitlement checks and probes with ${denial}, recording it`, async () => {
      const results = await runSuite(undefined, { dialect: mergeDialect({ rest: { denial } }) }, ENTITLEMENTS);
      expect(cleanProblems(results)).toEqual([]);
      expect(observed(results, 'rest.entitlements.whitelist-price')).toContainEqual({
        status_number: denial,
        http: expect.any(Number),
      });
      expect(observed(results, 'rest.entitlements.asset-types')).toContainEqual({
        status_number: denial,
        http: expect.any(Number),
      });
    });
});

describe('a dialect leaving out the optional fields', () => {
  it('sends notices without data and gateway answers without ts, and passes the suite', async () => {
    const { results } = await suiteUnder({ stream: { noticeData: 'absent' }, rest: { gatewayTs: 'absent' } });
    expect(cleanProblems(results)).toEqual([]);
    expect(observed(results, 'ws.notice.error-shape')).toContain('absent');
  });
});

describe('a target failing on lenient parameters', () => {
  for (const [fault, prefix, checks, message] of [
    [
      'pairs-invalid-page-internal-error',
      'rest.pairs.',
      [
        'rest.pairs.invalid-param.page-negative',
        'rest.pairs.invalid-param.page-text',
        'rest.pairs.invalid-param.page-zero',
      ],
      /"50000"/,
    ],
    [
      'pairs-invalid-per-page-internal-error',
      'rest.pairs.',
      ['rest.pairs.invalid-param.per-page-text', 'rest.pairs.invalid-param.per-page-zero'],
      /"50000"/,
    ],
    ['subscribe-empty-internal-error', 'ws.subscribe.invalid.', ['ws.subscribe.invalid.empty-list'], /"50000"/],
  ] as const)
    it(`is caught: ${fault} by ${checks.length} check(s), and nothing else`, async () => {
      const results = await runSuite(
        fault,
        {},
        CHECKS.filter((c) => c.id.startsWith(prefix)),
      );
      const failing = results.filter((r) => r.outcome !== 'pass' && r.outcome !== 'skip');
      expect(failing.map((r) => r.id).sort()).toEqual([...checks].sort());
      for (const r of failing) expect(r.violations.map((v) => v.received).join('\n')).toMatch(message);
    });
});

describe('the market rules on every pair', () => {
  it('reads the tz database names as zones, links among them, and other spellings not', () => {
    const names = [
      'America/New_York',
      'Europe/London',
      'UTC',
      'Etc/GMT+5',
      'Europe/Kyiv',
      'EST5EDT',
      'US/Eastern',
      'GB',
    ];
    for (const z of names) expect(isIanaZone(z), z).toBe(true);
    for (const z of ['utc', 'america/new_york', 'America/New York']) expect(isIanaZone(z), z).toBe(false);
  });

  const PRICE_CHECKS = CHECKS.filter((c) => c.id.startsWith('rest.price.'));
  // Each fault fails exactly its owners among the price checks: the checks whose `catches` name it.
  const ownersOf = (fault: string): string[] =>
    PRICE_CHECKS.filter((c) => (c.catches as readonly string[] | undefined)?.includes(fault)).map((c) => c.id);
  for (const [fault, checks, message] of [
    ['market-crypto-deep-session', ownersOf('market-crypto-deep-session'), /session/],
    ['market-timezone-alias', ownersOf('market-timezone-alias'), /america\/new_york/],
    ['market-extended-hours-non-us', ownersOf('market-extended-hours-non-us'), /(pre|post)_session/],
  ] as const)
    it(`catches ${fault} with ${checks.join(' and ')}, and nothing else`, async () => {
      const results = await runSuite(fault, {}, PRICE_CHECKS);
      const failing = results.filter((r) => r.outcome !== 'pass' && r.outcome !== 'skip');
      expect(failing.map((r) => r.id).sort()).toEqual([...checks].sort());
      for (const r of failing) expect(r.violations.map((v) => v.received).join('\n')).toMatch(message);
    });
});
