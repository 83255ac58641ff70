/** Honest coverage: the figures of a run, and every report stating them. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { coverage, NOTHING_TO_JUDGE } from '../src/coverage.ts';
import type { CheckResult } from '../src/check.ts';
import { blankResult } from '../src/context.ts';
import { runChecks } from '../src/runner.ts';
import { reportHandlers } from '../reports/index.ts';
import type { JsonReport } from '../reports/json.ts';
import { pushInspector, pushViolations } from '../src/push-inspection.ts';
import { validator } from '../src/validator.ts';
import { startServer, synthetic, testProfile, type TestServer } from './engine-helpers.ts';

const result = (id: string, outcome: CheckResult['outcome'], extra: Partial<CheckResult> = {}): CheckResult => ({
  ...blankResult(synthetic(id, async () => {})),
  outcome,
  ...extra,
});

describe('coverage()', () => {
  it('counts the must checks that ran, groups the skips by reason and ignores observe checks', () => {
    const c = coverage([
      result('a', 'pass'),
      result('b', 'fail'),
      result('c', 'error'),
      result('d', 'skip', { reason: 'profile has no keys.cryptoOnly' }),
      result('e', 'skip', { reason: 'profile has no keys.cryptoOnly' }),
      result('f', 'skip', {
        reason: 'no sampled pair answered with a price',
        nothingToJudge: NOTHING_TO_JUDGE.pricedPair,
      }),
      result('o', 'skip', {
        severity: 'observe',
        reason: 'needs 3 live pairs; found 0',
        nothingToJudge: NOTHING_TO_JUDGE.livePair,
      }),
    ]);
    expect(c).toMatchObject({ mustTotal: 6, mustRan: 3, mustSkipped: 3, percent: 50 });
    expect(c.skipped).toEqual([
      { reason: 'profile has no keys.cryptoOnly', ids: ['d', 'e'] },
      { reason: 'no sampled pair answered with a price', ids: ['f'] },
    ]);
    expect(c.nothingToJudge).toEqual([
      { what: 'no priced pair', ids: ['f'] },
      { what: 'no live pair', ids: ['o'] },
    ]);
    expect(c.minimum).toBeUndefined();
  });

  it('meets a minimum exactly at the boundary and misses it just below; rounds the shown percentage down', () => {
    const three = [result('a', 'pass'), result('b', 'pass'), result('c', 'skip', { reason: 'x' })];
    expect(coverage(three, 66.6)).toMatchObject({ percent: 66.6, met: true });
    expect(coverage(three, 66.7)).toMatchObject({ percent: 66.6, met: false });
    expect(coverage([], 100)).toMatchObject({ mustTotal: 0, percent: 100, met: true });
  });
});

describe('push inspection', () => {
  it("reports a push frame's schema errors and quote problems, and lists only the first frames in full", () => {
    const bad = { code: 'Crypto:ALL:BTC/USD', ask: '1.00', bid: '1.10', price: 1.05 };
    expect(pushViolations(validator, bad, JSON.stringify(bad)).map((v) => v.received)).toEqual([
      expect.stringContaining('/price: must be string'),
    ]);
    const inverted = { code: 'Crypto:ALL:BTC/USD', ask: '1.00', bid: '1.10', price: '1.05' };
    expect(pushViolations(validator, inverted, JSON.stringify(inverted)).map((v) => v.received)).toEqual([
      expect.stringContaining('bid 1.1 > price 1.05'),
      expect.stringContaining('price 1.05 > ask 1'),
    ]);
    expect(
      pushViolations(validator, { code: 'Crypto:ALL:BTC/USD', ask: '1.02', bid: '1.00', price: '1.01' }, ''),
    ).toEqual([]);
    const seen: string[] = [];
    const inspector = pushInspector(validator, (v) => seen.push(v.received));
    for (let i = 0; i < 8; i++) inspector.inspect({ value: bad, text: JSON.stringify(bad) });
    inspector.finish();
    inspector.inspect({ value: bad, text: JSON.stringify(bad) });
    expect(seen).toHaveLength(6);
    expect(seen.at(-1)).toBe('3 more push frame(s) received after 5 with problems, not inspected');
  });
});

describe('coverage in every report', () => {
  let server: TestServer;
  let dir: string;
  let consoleText = '';
  beforeAll(async () => {
    server = await startServer((_req, res) => res.end(JSON.stringify({ status_number: '200', ts: 1, data: [] })));
    dir = await mkdtemp(path.join(os.tmpdir(), 'conform-coverage-'));
    const checks = [
      synthetic('rest.c.pass', async () => {}),
      synthetic('rest.c.keys', async (ctx) => ctx.skip('profile has no keys.cryptoOnly')),
      synthetic('rest.c.priced', async (ctx) =>
        ctx.skip('no sampled pair answered with a price', NOTHING_TO_JUDGE.pricedPair),
      ),
      synthetic(
        'ws.c.live',
        async (ctx) => ctx.skip('needs 1 pair(s) with an open market; found 0', NOTHING_TO_JUDGE.livePair),
        { tags: ['ws'] },
      ),
    ];
    await runChecks({
      profile: testProfile(server.url),
      checks,
      settings: { minCoverage: 50 },
      handlers: reportHandlers({
        formats: ['console', 'json', 'junit', 'html'],
        outDir: dir,
        version: '0.0.0-test',
        write: (t) => {
          consoleText += t;
        },
        tty: false,
      }),
    });
  });
  afterAll(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const line =
    '1 of 4 must checks ran (25 %); 3 skipped: profile has no keys.cryptoOnly (1: rest.c.keys); ' +
    'no sampled pair answered with a price (1: rest.c.priced); needs 1 pair(s) with an open ' +
    'market; found 0 (1: ws.c.live); BELOW THE MINIMUM of 50 %: the run fails';

  it('the console states the coverage, warns of nothing to judge, and fails the verdict below the minimum', () => {
    expect(consoleText).toContain(`Coverage: ${line}`);
    expect(consoleText).toMatch(
      new RegExp(
        /^!! NOTHING TO JUDGE: the target gave the harness no priced pair \(1 checks skipped: rest\.c\.priced\); /
          .source + /no live pair \(1 checks skipped: ws\.c\.live\)/.source,
        'm',
      ),
    );
    expect(consoleText).toMatch(/^FAIL: 1 passed, 0 failed, 0 errors, 3 skipped of 4 checks/m);
  });

  it('the JSON summary carries the same figures', async () => {
    const report = JSON.parse(await readFile(path.join(dir, 'conform-report.json'), 'utf8')) as JsonReport;
    expect(report.summary.verdict).toBe('fail');
    expect(report.summary.coverage).toMatchObject({
      mustTotal: 4,
      mustRan: 1,
      percent: 25,
      minimum: 50,
      met: false,
      nothingToJudge: [
        { what: 'no priced pair', ids: ['rest.c.priced'] },
        { what: 'no live pair', ids: ['ws.c.live'] },
      ],
    });
  });

  it('every JUnit suite carries the coverage and nothing-to-judge properties', async () => {
    const doc = new XMLParser({
      ignoreAttributes: false,
      isArray: (name) => ['testsuite', 'property'].includes(name),
    }).parse(await readFile(path.join(dir, 'conform-junit.xml'), 'utf8'));
    for (const suite of doc.testsuites.testsuite as {
      properties: { property: Record<string, string>[] };
      'system-out': string;
    }[]) {
      expect(suite.properties.property.find((p) => p['@_name'] === 'coverage')!['@_value']).toBe(line);
      expect(suite.properties.property.find((p) => p['@_name'] === 'nothing-to-judge')!['@_value']).toContain(
        'NOTHING TO JUDGE',
      );
      expect(suite['system-out']).toContain(`Coverage: ${line}`);
    }
  });

  it('the HTML report shows the coverage line under the verdict and the warning', async () => {
    const html = await readFile(path.join(dir, 'conform-report.html'), 'utf8');
    expect(html).toContain(`<p class="coverage">Coverage: ${line}</p>`);
    expect(html).toMatch(/class="verdict v-fail nothing-to-judge">NOTHING TO JUDGE/);
    expect(html.indexOf('class="coverage"')).toBeGreaterThan(0);
    expect(html.indexOf('class="coverage"')).toBeLessThan(html.indexOf('id="failures"'));
  });
});
