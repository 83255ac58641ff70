import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { conform } from '../helpers/conform-cli.ts';
import { startServeProcess } from '../helpers/serve-process.ts';

// Debian's chromium, installed by scripts/install-chromium.sh (called by .ci/run). Without it the
// test skips and says so, unless the environment asks for the outside tools (CI).
const CHROMIUM = '/usr/bin/chromium';
const present = existsSync(CHROMIUM);
if (!present && process.env.CONFORM_REQUIRE_TOOLS)
  throw new Error(`chromium missing at ${CHROMIUM}: run scripts/install-chromium.sh`);
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const dir = mkdtempSync(path.join(tmpdir(), 'conform-browser-'));
const conformDir = path.join(dir, 'conformance');
const loadDir = path.join(dir, 'load');
let context: BrowserContext;

/** A page that records every console error, page error and request other than the report file itself. */
async function open(file: string): Promise<{ page: Page; errors: string[]; requests: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  const url = pathToFileURL(file).href;
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => {
    if (r.url() !== url) requests.push(r.url());
  });
  await page.goto(url, { waitUntil: 'load' });
  return { page, errors, requests };
}

describe.skipIf(!present)(
  `HTML reports in headless Chromium (${present ? CHROMIUM : 'not installed: scripts/install-chromium.sh'})`,
  () => {
    beforeAll(async () => {
      // A conformance run with failures: the reference with its mid-price off by a tick.
      const serve = await startServeProcess(dir, ['--fault', 'price-not-mid']);
      try {
        const run = await conform([
          '--profile',
          serve.profileFile,
          '--only',
          'rest',
          '--report',
          'html',
          '--out',
          conformDir,
        ]);
        expect(run.code, run.stderr).toBe(1);
      } finally {
        await serve.stop();
      }
      const load = await conform([
        'load',
        'fanout',
        '--clients',
        '4',
        '--pairs',
        '2',
        '--duration',
        '2s',
        '--workers',
        '1',
        '--report',
        'html',
        '--out',
        loadDir,
      ]);
      expect(load.code, load.stderr).toBe(0);
      context = await chromium.launchPersistentContext(mkdtempSync(path.join(dir, 'profile-')), {
        executablePath: CHROMIUM,
        headless: true,
        args: FLAGS,
        viewport: { width: 1280, height: 900 },
      });
    }, 240_000);
    afterAll(async () => {
      await context?.close();
      if (!process.env.CONFORM_KEEP_SCREENSHOTS) rmSync(dir, { recursive: true, force: true });
    });

    it('shows the verdict, the overview and each failure with its reproduction; no error, no request', async () => {
      const { page, errors, requests } = await open(path.join(conformDir, 'conform-report.html'));
      await expect.poll(() => page.locator('#verdict').isVisible()).toBe(true);
      expect(await page.locator('#verdict').innerText()).toMatch(/^FAIL: \d+ passed, [1-9]\d* failed/);
      expect(await page.locator('#overview').isVisible()).toBe(true);
      expect(await page.locator('#overview').innerText()).toContain('Must-check coverage');

      // The failures view is the one shown first; each failure is one line until opened.
      const failure = page.locator('details.failure#rest\\.price\\.mid');
      expect(await failure.isVisible()).toBe(true);
      expect(await failure.locator('summary').innerText()).toMatch(/rest\.price\.mid FAIL\s+Received .* · Expected /);
      const repro = failure.locator('pre.repro');
      expect(await repro.isVisible()).toBe(false);
      await failure.locator('summary').click();
      expect(await repro.isVisible()).toBe(true);
      expect(await repro.innerText()).toMatch(
        /^curl -sS -i 'http:\/\/127\.0\.0\.1:\d+\/v1\/price\?code=.*X-API-Key: <key:primary>'/m,
      );
      await page.screenshot({ path: path.join(conformDir, 'conform-report.png'), fullPage: true });

      // Every check, filtered to the failures by a CSS-only control.
      await page.locator('label[for=t-checks]').click();
      await page.locator('label[for=f-fail]').click();
      const rows = page.locator('#checks tr.row');
      // The test's type library has no DOM: the two members read in the page are typed here.
      const visible = await rows.evaluateAll((trs) =>
        (trs as unknown as { checkVisibility(): boolean; className: string }[])
          .filter((tr) => tr.checkVisibility())
          .map((tr) => tr.className),
      );
      expect(visible.length).toBeGreaterThan(0);
      expect(visible.every((c) => c === 'row o-fail')).toBe(true);
      expect(await rows.count()).toBeGreaterThan(visible.length);

      await page.locator('label[for=t-matrix]').click();
      expect(await page.locator('#matrix').isVisible()).toBe(true);
      expect(await page.locator('#failures').isVisible()).toBe(false);
      expect(await page.locator('#matrix code.o-fail', { hasText: 'rest.price.mid' }).first().isVisible()).toBe(true);

      expect(errors).toEqual([]);
      expect(requests).toEqual([]);
      expect(statSync(path.join(conformDir, 'conform-report.png')).size).toBeGreaterThan(10_000);
    });

    it('shows the load verdict and its charts, with no error and no request', async () => {
      const { page, errors, requests } = await open(path.join(loadDir, 'load-fanout.html'));
      const verdict = page.locator('p.good, p.bad').first();
      expect(await verdict.isVisible()).toBe(true);
      expect(await verdict.innerText()).toMatch(/Trustworthy|Untrustworthy/);
      const charts = page.locator('svg');
      expect(await charts.count()).toBeGreaterThanOrEqual(3);
      for (const chart of await charts.all()) {
        const box = await chart.boundingBox();
        expect(box!.width).toBeGreaterThan(100);
        expect(box!.height).toBeGreaterThan(50);
        expect(await chart.locator('path').count()).toBeGreaterThan(0);
      }
      await page.screenshot({ path: path.join(loadDir, 'load-report.png'), fullPage: true });
      expect(errors).toEqual([]);
      expect(requests).toEqual([]);
    });
  },
);
