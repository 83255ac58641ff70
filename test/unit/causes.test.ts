/**
 * Failures grouped by the rule they broke: one fault of the target met by many checks fails the
 * owner of its rule once per channel, and every report leads with it and counts one broken rule;
 * a reproduction keeps the exchanges that show it.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { causeOf, causesOf, evidenceShowing } from '../../reports/causes.ts';
import type { JsonReport } from '../../reports/json.ts';
import type { CheckResult, Evidence, JudgedViolation } from '../../src/check.ts';
import { conform, type Run } from '../helpers/conform-cli.ts';

const http = (url: string, body: string): Evidence => ({
  kind: 'http',
  request: { method: 'GET', url, headers: {} },
  response: { status: 200, headers: {}, body },
  curl: `curl '${url}'`,
  atMs: 0,
});

const failed = (
  id: string,
  received: string[],
  evidence: Evidence[] = [],
  rule: JudgedViolation['rule'] = 'field:price:price',
): CheckResult => ({
  id,
  title: id,
  expectation: 'e',
  clause: { section: 's', rule: 'r' },
  severity: 'must',
  tags: [],
  outcome: 'fail',
  violations: received.map((r) => ({ received: r, expected: 'x', rule })),
  observations: [],
  evidence,
  durationMs: 1,
});

describe('causes', () => {
  it('reads the same violation out of texts that differ in where it was seen and in the values', () => {
    expect(causeOf('Crypto:ALL:BTC/USD: bid 1.01, price 1.03, ask 1.04: price 1.03 is not the mid 1.02 of ask')).toBe(
      'price … is not the mid … of ask',
    );
  });

  it('counts one broken rule for a statement stated on both channels, its owners failed, the citers beside', () => {
    const citing: CheckResult = {
      ...failed('c', []),
      outcome: 'pass',
      alsoSeen: [{ received: 'push …', expected: 'x', rule: 'field:push:price', owner: 'b' }],
    };
    const results = [
      failed('a', ['A:B:C/D: price 1.5 is not the mid 1.4 of ask']),
      failed('b', ['push {…}: price 2.5 is not the mid 2.4 of ask'], [], 'field:push:price'),
      citing,
      failed('d', ['no frame within 100 ms'], [], 'event:push'),
    ];
    expect(causesOf(results).map((c) => [c.rule, c.statements, c.failed, c.alsoSeen])).toEqual([
      ['field:price:price', ['field:price:price', 'field:push:price'], ['a', 'b'], ['c']],
      ['event:push', ['event:push'], ['d'], []],
    ]);
  });

  it('keeps the requests quoting the violation, and not the unrelated listing before them', () => {
    const evidence = [
      http('/v1/pairs?page=1', '{"data":[{"code":"A:B:C/D"}]}'),
      http('/v1/pairs?page=12', '{"data":[]}'),
      http('/v1/price?code=A%3AB%3AC%2FD', '{"price":"1.50","ask":"1.6","bid":"1.2"}'),
      http('/v1/price?code=E%3AF%3AG%2FH', '{"price":"7.00","ask":"7.01","bid":"6.99"}'),
    ];
    const r = failed('a', ['A:B:C/D: bid 1.2, price 1.50, ask 1.6: price 1.50 is not the mid 1.4'], evidence);
    expect(evidenceShowing(r)).toEqual([evidence[2]]);
  });

  it('keeps a push quoting the violation with what set it up: the connection opened and the subscribe sent', () => {
    const frame = (direction: 'in' | 'out', data: string): Evidence => ({ kind: 'frame', direction, data, atMs: 0 });
    const evidence: Evidence[] = [
      http('/v1/pairs?page=12', '{"data":[]}'),
      { kind: 'ws-open', url: 'ws://h/v1/ws', headers: {}, outcome: '101', atMs: 0 },
      frame('out', '{"method":"subscribe","params":{"pairs":["A:B:C/D"]}}'),
      frame('in', '{"method":"subscribe","code":"200"}'),
      frame('in', '{"code":"A:B:C/D","price":"1.50","ask":"1.6","bid":"1.2"}'),
    ];
    const r = failed('a', ['push: bid 1.2, price 1.50, ask 1.6: price 1.50 is not the mid 1.4'], evidence);
    expect(evidenceShowing(r)).toEqual([evidence[1], evidence[2], evidence[4]]);
  });
});

describe('a run against a service whose price lies above the ask', () => {
  let server: ReferenceServer;
  let dir: string;
  let run: Run;
  let report: JsonReport;
  let html: string;

  beforeAll(async () => {
    // A short keep-alive window, which the profile states: the keep-alive checks take seconds, not the spec's 30.
    server = await startReferenceServer({ fault: 'price-not-mid', pingTimeoutMs: 2000 });
    dir = await mkdtemp(path.join(os.tmpdir(), 'conform-causes-'));
    const profile = path.join(dir, 'profile.json');
    await writeFile(profile, JSON.stringify(server.profile));
    // The console's whole detail (--verbose), each line whole: its layout apart from the width it fits.
    run = await conform(
      ['--profile', profile, '--report', 'console,json,html,junit,github', '--out', dir, '--verbose'],
      {
        COLUMNS: '10000',
      },
    );
    report = JSON.parse(await readFile(path.join(dir, 'conform-report.json'), 'utf8')) as JsonReport;
    html = await readFile(path.join(dir, 'conform-report.html'), 'utf8');
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('fails exactly the owners of the mid-price, once per channel; the checks that met it cite it', () => {
    const ids = report.results.filter((r) => r.outcome === 'fail').map((r) => r.id);
    expect(ids).toEqual(['rest.price.mid', 'ws.push.mid']);
    for (const r of report.results.filter((x) => x.outcome === 'fail'))
      for (const v of r.violations) expect(['field:price:price', 'field:push:price']).toContain(v.rule);
    const citing = report.results.filter((r) => r.alsoSeen?.length);
    expect(citing.map((r) => r.id)).toContain('rest.price.catalogue');
    expect(citing.every((r) => r.outcome !== 'fail')).toBe(true);
  });

  it('counts one broken rule in the JSON report, led by it', () => {
    expect(Object.keys(report).indexOf('causes')).toBeLessThan(Object.keys(report).indexOf('results'));
    expect(report.summary.broken).toHaveLength(1);
    expect(report.causes).toHaveLength(1);
    expect(report.causes![0]).toMatchObject({
      rule: 'field:price:price',
      failed: ['rest.price.mid', 'ws.push.mid'],
      statements: ['field:price:price', 'field:push:price'],
    });
    expect(report.causes![0]!.alsoSeen.length).toBeGreaterThan(0);
  });

  it('leads the console summary with the one broken rule, its owners under it, each failure naming it', () => {
    const head = run.stdout.indexOf('1 broken rule: field:price:price (');
    expect(head).toBeGreaterThan(0);
    expect(head).toBeLessThan(run.stdout.indexOf('Failures and errors ('));
    for (const id of ['rest.price.mid', 'ws.push.mid']) expect(run.stdout.slice(head)).toContain(`\n    ${id}\n`);
    expect(run.stdout).toContain('Breaks field:price:price (Price record');
    expect(run.stdout).toContain('Breaks field:push:price (WebSocket push data frame');
  });

  it('writes one annotation, for the broken rule, and counts one rule in the job summary', async () => {
    const annotations = run.stdout.split('\n').filter((l) => l.startsWith('::error'));
    expect(annotations).toHaveLength(1);
    expect(annotations[0]).toContain('title=broken rule field%3Aprice%3Aprice');
    const summary = await readFile(path.join(dir, 'conform-summary.md'), 'utf8');
    expect(summary).toContain('### Broken rules (1)');
  });

  it('leads every JUnit suite with the one broken rule, as a property and in its output', async () => {
    const xml = await readFile(path.join(dir, 'conform-junit.xml'), 'utf8');
    const suites = xml.match(/<testsuite /g)!.length;
    expect(xml.match(/<property name="causes" value="1 broken rule: field:price:price/g)).toHaveLength(suites);
    expect(xml.match(/<system-out>1 broken rule: /g)).toHaveLength(suites);
  });

  it('leads the HTML report with the broken rule, each owner a link to its failure, one section marked failed', () => {
    const causes = html.indexOf('<section id="causes">');
    expect(causes).toBeGreaterThan(0);
    expect(causes).toBeLessThan(html.indexOf('<section id="overview">'));
    for (const id of ['rest.price.mid', 'ws.push.mid']) {
      expect(html).toContain(`<a href="#${id}"><code>${id}</code></a>`);
      expect(html).toContain(`<details class="failure is-fail" id="${id}">`);
    }
    const bySection = html.slice(html.indexOf('By spec section'), html.indexOf('By tag'));
    expect(bySection.match(/class="n o-fail"><a href=/g)).toHaveLength(1);
  });

  it('links the failure counts of the overview to a failure', () => {
    const first = report.results.find((r) => r.outcome === 'fail')!;
    expect(html).toContain(`<b class="o-fail"><a href="#${first.id}">${report.summary.fail}</a></b>`);
    for (const [, id] of html.matchAll(/<a href="#([^"]+)">/g)) expect(html).toContain(`id="${id}"`);
  });

  it('reproduces rest.price.mid with at most six exchanges, each violation by its own', () => {
    const mid = report.results.find((r) => r.id === 'rest.price.mid')!;
    const block = run.stdout.slice(run.stdout.indexOf('FAIL rest.price.mid:'));
    const repro = block.slice(block.indexOf('Reproduce with:'), block.indexOf('\n\n'));
    const curls = repro.split('\n').filter((l) => l.trimStart().startsWith('curl '));
    expect(curls.length).toBeGreaterThan(0);
    expect(curls.length).toBeLessThanOrEqual(6);
    // Its own reads; the pairs rest.price.catalogue met are that check's evidence.
    const own = mid.violations.filter((v) => !v.seenBy);
    expect(curls.filter((l) => l.includes('/v1/price?'))).toHaveLength(own.length);
    expect(mid.evidence.length).toBeGreaterThan(curls.length);
    expect(html).toContain(`show all ${mid.evidence.length} exchanges`);
    // The catalogue it sampled was read once this run, by another check: its transcript says so.
    expect(mid.evidence.some((e) => e.kind === 'note' && /as read once this run/.test(e.text))).toBe(true);
  });
});
