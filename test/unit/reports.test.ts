import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { runChecks } from '../../src/runner.ts';
import { reportHandlers } from '../../reports/index.ts';
import { REPORT_SCHEMA_VERSION, type JsonReport } from '../../reports/json.ts';
import { OTHER_SECRET, SECRET, startServer, synthetic, testProfile, type TestServer } from '../helpers/engine.ts';

let server: TestServer;
let dir: string;
let consoleText = '';
beforeAll(async () => {
  // Echoes the key and a control character back: both must be handled by every writer.
  server = await startServer((req, res) =>
    res.end(
      JSON.stringify({
        status_number: '50005',
        ts: 1,
        data: null,
        message: `bad key ${String(req.headers['x-api-key'])}\u0001<&>`,
      }),
    ),
  );
  dir = await mkdtemp(path.join(os.tmpdir(), 'conform-reports-'));
  const checks = [
    synthetic('rest.t.pass', async (ctx) => {
      await ctx.rest.get({ path: '/v1/pairs' });
    }),
    synthetic('rest.t.fail', async (ctx) => {
      const ex = await ctx.rest.get({ path: '/v1/pairs', key: OTHER_SECRET });
      ctx.violation({ received: `HTTP ${ex.status} ${ex.text}`, expected: 'status_number "200"' });
    }),
    synthetic('rest.t.skip', async (ctx) => ctx.skip('profile has no keys.cryptoOnly')),
    synthetic('rest.t.error', async () => {
      throw new Error(`crash with ${SECRET}`);
    }),
    synthetic(
      'rest.t.observe',
      async (ctx) => {
        ctx.observe('ts-unit', 'milliseconds', 'not shown');
      },
      { severity: 'observe' },
    ),
    synthetic(
      'ws.t.frames',
      async (ctx) => {
        ctx.note(`> {"method":"subscribe","key":"${SECRET}"}`);
        ctx.fail({ received: 'no notice', expected: 'a notice' });
      },
      { tags: ['ws'] },
    ),
  ];
  await runChecks({
    profile: testProfile(server.url),
    checks,
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

describe('reports', () => {
  it('writes the JSON report with its schema version and every result with evidence', async () => {
    const report = JSON.parse(await readFile(path.join(dir, 'conform-report.json'), 'utf8')) as JsonReport;
    expect(report).toMatchObject({
      schema: 'conform-report',
      schemaVersion: REPORT_SCHEMA_VERSION,
      summary: { total: 6, pass: 2, fail: 2, skip: 1, error: 1, verdict: 'fail' },
    });
    const failed = report.results.find((r) => r.id === 'rest.t.fail')!;
    expect(failed.evidence[0]).toMatchObject({
      kind: 'http',
      curl: expect.stringContaining('X-API-Key: <key:suspended>'),
    });
    expect(report.results.find((r) => r.id === 'rest.t.observe')!.observations).toEqual([
      { name: 'ts-unit', value: 'milliseconds', note: 'not shown' },
    ]);
  });

  it('writes JUnit XML a strict parser accepts, one testcase per check with failure, error and skipped', async () => {
    const xml = await readFile(path.join(dir, 'conform-junit.xml'), 'utf8');
    expect(XMLValidator.validate(xml, { allowBooleanAttributes: false })).toBe(true);
    const doc = new XMLParser({
      ignoreAttributes: false,
      isArray: (name) => ['testsuite', 'testcase'].includes(name),
    }).parse(xml);
    const cases = doc.testsuites.testsuite.flatMap((s: { testcase: unknown[] }) => s.testcase) as Record<
      string,
      unknown
    >[];
    expect(cases).toHaveLength(6);
    expect(doc.testsuites['@_failures']).toBe('2');
    const fail = cases.find((c) => String(c['@_name']).startsWith('rest.t.fail'))!;
    expect(String((fail.failure as Record<string, string>)['#text'])).toMatch(
      /Received: HTTP 200[\s\S]*Expected \(spec: REST envelope: synthetic\)[\s\S]*Reproduce with:[\s\S]*curl /,
    );
    expect(cases.find((c) => String(c['@_name']).startsWith('rest.t.skip'))!.skipped).toBeDefined();
    expect(cases.find((c) => String(c['@_name']).startsWith('rest.t.error'))!.error).toBeDefined();
  });

  it('writes one self-contained HTML file: verdict, failures first, spec clauses, observed behaviour', async () => {
    const html = await readFile(path.join(dir, 'conform-report.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<script|<link|src=|https?:\/\/(?!127\.0\.0\.1)/);
    // Overview first, then the failures view, then every check.
    expect(html.indexOf('id="overview"')).toBeGreaterThan(0);
    expect(html.indexOf('id="overview"')).toBeLessThan(html.indexOf('id="failures"'));
    expect(html.indexOf('id="failures"')).toBeLessThan(html.indexOf('id="checks"'));
    expect(html.match(/<details class="failure/g)).toHaveLength(3);
    expect(html).toContain('FAIL: 2 passed, 2 failed, 1 errors, 1 skipped of 6');
    expect(html).toContain('Observed behaviour (1)');
    expect(html).toContain('REST envelope: synthetic');
    expect(html).toContain('bad key &lt;key:suspended&gt;');
  });

  it('prints failures with Received, Expected (spec: …) and a way to reproduce on the console', () => {
    expect(consoleText).toMatch(/FAIL {2}rest\.t\.fail/);
    expect(consoleText).toMatch(/Received: HTTP 200 .*bad key <key:suspended>/);
    expect(consoleText).toContain('Expected (spec: REST envelope: synthetic): status_number "200"');
    expect(consoleText).toMatch(/Reproduce with:\n\s+curl -sS -i/);
    expect(consoleText).toMatch(/# > \{"method":"subscribe","key":"<key:primary>"\}/);
    expect(consoleText).toMatch(/^FAIL: 2 passed, 2 failed, 1 errors, 1 skipped of 6 checks/m);
  });

  it('never writes a key into any output', async () => {
    const outputs = [consoleText];
    for (const f of await readdir(dir)) outputs.push(await readFile(path.join(dir, f), 'utf8'));
    expect(outputs).toHaveLength(4);
    for (const text of outputs) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(OTHER_SECRET);
    }
  });
});

describe('console progress', () => {
  it('on a terminal rewrites one count line in place between result lines; else prints plain lines only', async () => {
    const { consoleHandler } = await import('../../reports/console.ts');
    const checks = [synthetic('rest.t.a', async () => {}), synthetic('rest.t.b', async (ctx) => ctx.skip('no'))];
    const outputs: Record<string, string> = { tty: '', plain: '' };
    for (const mode of ['tty', 'plain'] as const) {
      await runChecks({
        profile: testProfile(server.url),
        checks,
        settings: { concurrency: 1 },
        handlers: [
          consoleHandler({
            write: (t) => {
              outputs[mode] += t;
            },
            tty: mode === 'tty',
            color: false,
            verbose: true,
          }),
        ],
      });
    }
    expect(outputs.tty).toContain('[1/2] 1 passed, 0 failed, 0 errors, 0 skipped');
    expect(outputs.tty).toContain('\r\x1b[2KSKIP  rest.t.b');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no escape sequence may reach a plain output
    expect(outputs.plain).not.toMatch(/\r|\x1b|\[1\/2\]/);
    expect(outputs.plain).toMatch(/^PASS {2}rest\.t\.a {2}\d+ ms\nSKIP {2}rest\.t\.b {2}\d+ ms {2}\(no\)$/m);
  });
});
