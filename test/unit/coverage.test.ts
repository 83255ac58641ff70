/** Honest coverage: the rule figure and the check figures of a run, and every report stating them. */
import { unlockLines } from '../../src/unlock.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { coverage, NOTHING_TO_JUDGE, ruleCoverage } from '../../src/coverage.ts';
import type { CheckResult, Evidence } from '../../src/check.ts';
import { SPEC_STATEMENTS, type StatementKey } from '../../src/statements.ts';
import { ruleLine } from '../../reports/format.ts';
import { blankResult } from '../../src/context.ts';
import { runChecks } from '../../src/runner.ts';
import { reportHandlers } from '../../reports/index.ts';
import type { JsonReport } from '../../reports/json.ts';
import { pushInspector, pushViolations } from '../../src/push-inspection.ts';
import { validator } from '../../src/validator.ts';
import { startServer, synthetic, testProfile, type TestServer } from '../helpers/engine.ts';

const result = (id: string, outcome: CheckResult['outcome'], extra: Partial<CheckResult> = {}): CheckResult => ({
  ...blankResult(synthetic(id, async () => {})),
  outcome,
  ...extra,
});

/** An answer of the target in a transcript: what a pass needs to count. */
const ANSWER: Evidence = {
  kind: 'http',
  request: { method: 'GET', url: 'http://127.0.0.1:1/v1/pairs', headers: {} },
  response: { status: 200, headers: {}, body: '{}' },
  curl: 'curl http://127.0.0.1:1/v1/pairs',
  atMs: 0,
};
const statements = (...keys: StatementKey[]) => SPEC_STATEMENTS.filter((st) => keys.includes(st.key));

describe('ruleCoverage()', () => {
  const rules = statements(
    'field:pair:code',
    'rule:ping:reply',
    'event:pong',
    'status:50004',
    'status:50005',
    'status:50001',
    'limit:connections-per-key',
  );
  const results = [
    result('passed', 'pass', { enforces: ['field:pair:code'], evidence: [ANSWER] }),
    // Nothing asked of the target, nothing judged: a pass, but no rule checked.
    result('vacuous', 'pass', { enforces: ['rule:ping:reply'] }),
    result('errored', 'error', { enforces: ['event:pong'], errorCode: 'NETWORK', evidence: [ANSWER] }),
    result('keyless', 'skip', {
      enforces: ['status:50004'],
      reason: 'profile has no keys.cryptoOnly',
      missing: ['keys.cryptoOnly'],
    }),
    result('failed', 'fail', { enforces: ['status:50005'] }),
    result('staged', 'skip', { enforces: ['status:50001'], reason: 'profile has no probe of status 50001' }),
    result('one-address', 'pass', {
      enforces: ['limit:connections-per-key'],
      evidence: [ANSWER],
      partly: { reason: 'one source address', statements: ['limit:connections-per-key'] },
    }),
    result('two-addresses', 'skip', {
      enforces: ['limit:connections-per-key'],
      reason: 'profile has no keys.limited',
      missing: ['keys.limited'],
    }),
  ];
  const c = ruleCoverage(results, rules);
  const state = (key: string) => c.rules.find((r) => r.key === key)!;

  it('counts a rule checked when a check enforcing it decided: a pass on an answer, or a fail', () => {
    expect(state('field:pair:code')).toMatchObject({ state: 'checked', checks: ['passed'] });
    expect(state('status:50005')).toMatchObject({ state: 'checked' });
    expect(state('limit:connections-per-key')).toMatchObject({
      state: 'partly',
      reason: 'one-address: one source address',
      unlock: 'keys.limited',
    });
  });

  it('does not count a pass with nothing judged, nor an error', () => {
    expect(state('rule:ping:reply')).toMatchObject({ state: 'unchecked', kind: 'vacuous' });
    expect(state('event:pong')).toMatchObject({ state: 'unchecked', kind: 'errored', reason: 'errored: NETWORK' });
  });

  it("says what would check the rest: another key from the checks' needs, an operator state apart", () => {
    expect(state('status:50004')).toMatchObject({ kind: 'key', need: 'keys.cryptoOnly', unlock: 'keys.cryptoOnly' });
    expect(state('status:50001')).toMatchObject({ kind: 'operator', need: 'maintenance' });
    expect(state('status:50001').unlock).toContain('rest.probe.50001');
  });

  it('counts partly checked rules among the checked, and leaves operator states out of the gated figure', () => {
    expect(c).toMatchObject({ total: 7, checked: 3, partly: 1, gateTotal: 6, gateChecked: 3, percent: 50 });
    expect(c.unchecked.map((g) => [g.kind, g.count])).toEqual([
      ['key', 1],
      ['operator', 1],
      ['errored', 1],
      ['vacuous', 1],
    ]);
    expect(ruleLine(coverage(results, 50, rules))).toBe(
      'Rules: 2 of 7 stated rules checked, 1 partly; 1 need another key (keys.cryptoOnly: 1); ' +
        '1 need an operator state (maintenance: 1); 1 errored; 1 passed with nothing judged; ' +
        '3 of the 6 rules that need no operator state (50 %), minimum 50 %: met',
    );
  });

  it('counts a statement no check of the run enforces as not checked, with its stated reason', () => {
    const none = ruleCoverage([], statements('rule:price:client-checks-status', 'event:pong'));
    expect(none.checked).toBe(0);
    const of = (key: string) => none.rules.find((r) => r.key === key);
    expect(of('rule:price:client-checks-status')).toMatchObject({
      kind: 'no-check',
      unlock: 'none needed: it binds clients',
    });
    expect(of('event:pong')).toMatchObject({ kind: 'no-check', reason: 'no check of this run enforces it' });
  });
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
    expect(c).toMatchObject({ mustTotal: 6, mustRan: 3, mustSkipped: 3, mustPercent: 50 });
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

  it('gates on the rule figure: meets a minimum exactly at the boundary and misses it just below', () => {
    const three = statements('field:pair:code', 'field:pair:name', 'field:pair:base');
    // Every must check ran, yet a third of the rules went unjudged: the gate reads the rules.
    const ran = [
      result('a', 'pass', { enforces: ['field:pair:code'], evidence: [ANSWER] }),
      result('b', 'pass', { enforces: ['field:pair:name'], evidence: [ANSWER] }),
      result('c', 'pass', { enforces: ['field:pair:base'] }),
    ];
    expect(coverage(ran, 66.6, three)).toMatchObject({ mustPercent: 100, met: true, rules: { percent: 66.6 } });
    expect(coverage(ran, 66.7, three)).toMatchObject({ mustPercent: 100, met: false });
    expect(coverage([], 100, [])).toMatchObject({ mustTotal: 0, mustPercent: 100, met: true });
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
      synthetic(
        'rest.c.pass',
        async (ctx) => {
          await ctx.rest.get({ path: '/v1/pairs' });
        },
        { enforces: ['field:envelope:ts', 'field:envelope:data'] },
      ),
      synthetic(
        'rest.c.partly',
        async (ctx) => {
          ctx.partly('one source address');
          await ctx.rest.get({ path: '/v1/pairs' });
        },
        { enforces: ['limit:connections-per-key'] },
      ),
      // A pass that asked the target nothing, and an error: neither checks its rule.
      synthetic('rest.c.vacuous', async () => {}, { enforces: ['rule:ping:reply'] }),
      synthetic(
        'rest.c.error',
        async () => {
          throw new Error('broke');
        },
        { enforces: ['event:pong'] },
      ),
      synthetic('rest.c.keys', async () => {}, { enforces: ['status:50109'], needs: ['keys.cryptoOnly'] }),
      synthetic('rest.c.staged', async (ctx) => ctx.skip('profile has no probe of status 50001'), {
        enforces: ['status:50001'],
      }),
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
        listUnchecked: true,
        // The whole detail, each line whole: what the console says, apart from how it is laid out.
        verbose: true,
        width: 10_000,
      }),
    });
  });
  afterAll(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const total = SPEC_STATEMENTS.length;
  const staged = SPEC_STATEMENTS.filter((st) => st.operatorState).length;
  const rules =
    `Rules: 2 of ${total} stated rules checked, 1 partly; 1 need another key (keys.cryptoOnly: 1); ` +
    `${staged} need an operator state (`;
  const report = async (): Promise<JsonReport> =>
    JSON.parse(await readFile(path.join(dir, 'conform-report.json'), 'utf8')) as JsonReport;

  it('the console states the rules, the checks, warns of nothing to judge, and fails below the minimum', async () => {
    const line = ruleLine((await report()).summary.coverage);
    expect(line.startsWith(rules)).toBe(true);
    expect(line).toMatch(/; 1 errored; 1 passed with nothing judged; .*BELOW THE MINIMUM of 50 %: the run fails$/);
    expect(consoleText).toContain(`\n${line}\n`);
    expect(consoleText).toMatch(/^Checks: 4 of 8 must checks ran \(50 %\)/m);
    expect(consoleText).toMatch(
      new RegExp(
        /^!! NOTHING TO JUDGE: the target gave the harness no priced pair \(1 checks skipped: rest\.c\.priced\); /
          .source + /no live pair \(1 checks skipped: ws\.c\.live\)/.source,
        'm',
      ),
    );
    expect(consoleText).toMatch(/^FAIL: 3 passed, 0 failed, 1 errors, 4 skipped of 8 checks/m);
  });

  it('--list-unchecked lists every rule not checked in full, with why and what would check it', () => {
    expect(consoleText).toMatch(/^Rules not checked in full \(\d+\):$/m);
    expect(consoleText).toContain(
      '  passed with nothing judged: Method ping: reply (rule:ping:reply) — rest.c.vacuous',
    );
    expect(consoleText).toContain('  errored: Events: Plain text Pong! (event:pong) — rest.c.error: ');
    expect(consoleText).toContain('profile has no keys.cryptoOnly; unlock: keys.cryptoOnly');
    expect(consoleText).toContain('  partly: Limits: WebSocket connections per API key (limit:connections-per-key)');
  });

  it('the JSON summary carries the same figures', async () => {
    const r = await report();
    expect(r.summary.verdict).toBe('fail');
    expect(r.summary.coverage).toMatchObject({
      rules: { total, checked: 3, partly: 1 },
      mustTotal: 8,
      mustRan: 4,
      minimum: 50,
      met: false,
      nothingToJudge: [
        { what: 'no priced pair', ids: ['rest.c.priced'] },
        { what: 'no live pair', ids: ['ws.c.live'] },
      ],
    });
    expect(r.summary.coverage.rules.rules.find((x) => x.key === 'rule:ping:reply')).toMatchObject({ kind: 'vacuous' });
  });

  it('every JUnit suite carries the same rule figure, the checks and nothing-to-judge properties', async () => {
    const line = ruleLine((await report()).summary.coverage);
    const doc = new XMLParser({
      ignoreAttributes: false,
      isArray: (name) => ['testsuite', 'property'].includes(name),
    }).parse(await readFile(path.join(dir, 'conform-junit.xml'), 'utf8'));
    for (const suite of doc.testsuites.testsuite as {
      properties: { property: Record<string, string>[] };
      'system-out': string;
    }[]) {
      const property = (name: string) => suite.properties.property.find((p) => p['@_name'] === name)!['@_value'];
      expect(property('rules')).toBe(line);
      expect(property('verdict')).toBe('FAIL');
      expect(property('coverage')).toMatch(/^4 of 8 must checks ran/);
      expect(property('nothing-to-judge')).toContain('NOTHING TO JUDGE');
      expect(suite['system-out']).toContain(line);
    }
  });

  it('the HTML report shows the same rule figure under the verdict, and the warning', async () => {
    const line = ruleLine((await report()).summary.coverage);
    const html = await readFile(path.join(dir, 'conform-report.html'), 'utf8');
    expect(html).toContain(`<p class="rules">${line}</p>`);
    expect(html).toMatch(/class="verdict v-fail nothing-to-judge">NOTHING TO JUDGE/);
    expect(html.indexOf('class="rules"')).toBeGreaterThan(html.indexOf('id="verdict"'));
    expect(html.indexOf('class="rules"')).toBeLessThan(html.indexOf('id="failures"'));
    expect(html).toContain('<tr class="rule-unchecked"><td>Method ping</td><td>reply</td>');
  });
});

describe('what conform init says would unlock the rules still not checked', () => {
  it('lists only what unlocks a rule as an unlock; what only adds checks of checked rules is one closing line', () => {
    const lines = unlockLines([
      { needs: 'keys.cryptoOnly', checks: ['rest.c'], rules: ['status:50109'] },
      { needs: 'keys.limited', checks: ['ws.limit.a', 'ws.limit.b'], rules: [] },
    ]);
    expect(lines).toEqual([
      '  keys.cryptoOnly → 1 rule: status:50109 (rest.c)',
      '  and more checks of rules already checked: keys.limited (ws.limit.a, ws.limit.b)',
    ]);
    expect(lines.join('\n')).not.toMatch(/→ 0 rules/);
  });
});
