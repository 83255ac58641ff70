/**
 * Failures grouped by cause: one fault of the target seen through many checks leads every report
 * as one cause with its checks under it, and a reproduction keeps the exchanges that show it.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { causeOf, causesOf, evidenceShowing } from '../../reports/causes.ts';
import type { JsonReport } from '../../reports/json.ts';
import type { CheckResult, Evidence } from '../../src/check.ts';
import { conform, type Run } from '../helpers/conform-cli.ts';

const http = (url: string, body: string): Evidence => ({
  kind: 'http',
  request: { method: 'GET', url, headers: {} },
  response: { status: 200, headers: {}, body },
  curl: `curl '${url}'`,
  atMs: 0,
});

const failed = (id: string, received: string[], evidence: Evidence[] = []): CheckResult => ({
  id,
  title: id,
  expectation: 'e',
  clause: { section: 's', rule: 'r' },
  severity: 'must',
  tags: [],
  outcome: 'fail',
  violations: received.map((r) => ({ received: r, expected: 'x' })),
  observations: [],
  evidence,
  durationMs: 1,
});

describe('causes', () => {
  it('reads the same violation out of texts that differ in where it was seen and in the values', () => {
    expect(causeOf('Crypto:ALL:BTC/USD: bid 1.01, price 1.03, ask 1.04: price 1.03 is not the mid 1.02 of ask')).toBe(
      'price … is not the mid … of ask',
    );
    expect(causeOf('push {"code":"X:Y:A/B","price":"2"}: price 2.5 is not the mid 2.4 of ask')).toBe(
      'price … is not the mid … of ask',
    );
  });

  it('groups checks sharing a violation, leaves a failure of its own alone, lists each check once', () => {
    const results = [
      failed('a', ['A:B:C/D: price 1.5 is not the mid 1.4 of ask']),
      failed('b', ['GET /x: price 2.5 is not the mid 2.4 of ask', 'status 500 answered']),
      failed('c', ['status 500 answered']),
      failed('d', ['no frame within 100 ms']),
    ];
    expect(causesOf(results).map((c) => [c.cause, c.ids])).toEqual([['price … is not the mid … of ask', ['a', 'b']]]);
  });

  it('keeps the exchanges quoting the violation and the one before the first of them', () => {
    const evidence = [
      http('/v1/pairs?page=1', '{"data":[{"code":"A:B:C/D"}]}'),
      http('/v1/pairs?page=2', '{"data":[]}'),
      http('/v1/price?code=A%3AB%3AC%2FD', '{"price":"1.50","ask":"1.6","bid":"1.2"}'),
      http('/v1/price?code=E%3AF%3AG%2FH', '{"price":"7.00","ask":"7.01","bid":"6.99"}'),
    ];
    const r = failed('a', ['A:B:C/D: bid 1.2, price 1.50, ask 1.6: price 1.50 is not the mid 1.4'], evidence);
    expect(evidenceShowing(r)).toEqual([evidence[1], evidence[2]]);
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
    run = await conform(['--profile', profile, '--report', 'console,json,html,junit', '--out', dir]);
    report = JSON.parse(await readFile(path.join(dir, 'conform-report.json'), 'utf8')) as JsonReport;
    html = await readFile(path.join(dir, 'conform-report.html'), 'utf8');
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('leads the JSON report with one cause covering every failure', () => {
    const ids = report.results.filter((r) => r.outcome === 'fail').map((r) => r.id);
    expect(ids.length).toBeGreaterThanOrEqual(10);
    expect(Object.keys(report).indexOf('causes')).toBeLessThan(Object.keys(report).indexOf('results'));
    expect(report.causes).toHaveLength(1);
    expect(report.causes![0]!.cause).toMatch(/^price … > ask …/);
    expect(report.causes![0]!.ids).toEqual(ids);
  });

  it('leads the console summary with the cause, its checks listed under it, before the failures', () => {
    const n = report.causes![0]!.ids.length;
    const head = run.stdout.indexOf(`${n} checks, 1 cause: price … > ask`);
    expect(head).toBeGreaterThan(0);
    expect(head).toBeLessThan(run.stdout.indexOf('Failures and errors ('));
    expect(run.stdout).toContain('(rest.price.mid, rest.price.catalogue, ');
    for (const id of report.causes![0]!.ids) expect(run.stdout.slice(head)).toContain(`\n    ${id}\n`);
  });

  it('leads every JUnit suite with the cause, as a property and in its output', async () => {
    const xml = await readFile(path.join(dir, 'conform-junit.xml'), 'utf8');
    const n = report.causes![0]!.ids.length;
    const suites = xml.match(/<testsuite /g)!.length;
    expect(
      xml.match(new RegExp(`<property name="causes" value="${n} checks, 1 cause: price … &gt; ask`, 'g')),
    ).toHaveLength(suites);
    expect(xml.match(new RegExp(`<system-out>${n} checks, 1 cause: `, 'g'))).toHaveLength(suites);
  });

  it('leads the HTML report with the cause, each check a link to its failure', () => {
    const causes = html.indexOf('<section id="causes">');
    expect(causes).toBeGreaterThan(0);
    expect(causes).toBeLessThan(html.indexOf('<section id="overview">'));
    for (const id of report.causes![0]!.ids) {
      expect(html).toContain(`<a href="#${id}"><code>${id}</code></a>`);
      expect(html).toContain(`<details class="failure is-fail" id="${id}">`);
    }
  });

  it('links the failure counts of the overview, and each section with failures, to a failure', () => {
    const first = report.results.find((r) => r.outcome === 'fail')!;
    expect(html).toContain(`<b class="o-fail"><a href="#${first.id}">${report.summary.fail}</a></b>`);
    const section = `<a href="#${first.id}">${first.clause.section.replace(/`/g, '&#96;')}</a>`;
    expect(html.replace(/`/g, '&#96;')).toContain(section);
    for (const [, id] of html.matchAll(/<a href="#([^"]+)">/g)) expect(html).toContain(`id="${id}"`);
  });

  it('reproduces rest.price.mid with at most six exchanges, each violation by its own', () => {
    const mid = report.results.find((r) => r.id === 'rest.price.mid')!;
    const block = run.stdout.slice(run.stdout.indexOf('FAIL rest.price.mid:'));
    const repro = block.slice(block.indexOf('Reproduce with:'), block.indexOf('\n\n'));
    const curls = repro.split('\n').filter((l) => l.trimStart().startsWith('curl '));
    expect(curls.length).toBeGreaterThan(0);
    expect(curls.length).toBeLessThanOrEqual(6);
    expect(curls.filter((l) => l.includes('/v1/price?'))).toHaveLength(mid.violations.length);
    // The catalogue it sampled was read once this run, by another check: its transcript says so.
    expect(mid.evidence.some((e) => e.kind === 'note' && /as read once this run/.test(e.text))).toBe(true);
  });
});
