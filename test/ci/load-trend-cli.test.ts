import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCli } from '../helpers/load-cli.ts';
import { historyOf, mulberry32, series, writeHistoryCsv } from '../helpers/trend-series.ts';

const tmp = (): Promise<string> => mkdtemp(path.join(tmpdir(), 'conform-trend-'));
const steady = (n: number, seed: number): number[] => series({ mean: 40, cv: 0.02 }, n, mulberry32(seed));

describe('conform load trend', () => {
  it('exits 1 naming the regression, 0 on a steady history, 2 on a damaged line', async () => {
    const dir = await tmp();
    const regressed = path.join(dir, 'regressed.csv');
    const p99 = series({ mean: 40, cv: 0.02, shift: { from: 30, factor: 1.25 } }, 34, mulberry32(12));
    const h = historyOf('rest', { 'latency.p99': p99 });
    for (const row of h.rows) row.thresholds = ['latency.p99<45', 'errors==0'];
    await writeHistoryCsv(regressed, h);
    const r = await loadCli(['load', 'trend', '--history', regressed, '--report', 'console,json,html', '--out', dir]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/REGRESSION latency\.p99: \+2\d\.\d % \[\+\d+\.\d %, \+\d+\.\d %\]/);
    expect(r.out).toMatch(/since the run of 2026-01-31T00:00:00\.000Z \(line 32, night=31\)/);
    const html = await readFile(path.join(dir, 'load-trend-rest.html'), 'utf8');
    expect(html).toContain('latency.p99: regression');
    expect(html).toMatch(/<line class="vline"[^>]*><title>regression: /);
    // The newest run's threshold on its metric, and the newest run itself.
    expect(html).toMatch(/<line class="hline"[^>]*><title>threshold latency\.p99&lt;45<\/title>/);
    expect(html).toMatch(/<title>newest run: 2026-02-03T00:00:00\.000Z<\/title>/);
    expect(JSON.parse(await readFile(path.join(dir, 'load-trend-rest.json'), 'utf8')).regressions).toEqual([
      'latency.p99',
    ]);

    const steadyFile = path.join(dir, 'steady.csv');
    await writeHistoryCsv(steadyFile, historyOf('rest', { 'latency.p99': steady(34, 13) }));
    expect((await loadCli(['load', 'trend', '--history', steadyFile, '--report', 'console'])).code).toBe(0);

    await writeFile(steadyFile, `${await readFile(steadyFile, 'utf8')}not,a,row\n`);
    const bad = await loadCli(['load', 'trend', '--history', steadyFile]);
    expect(bad.code).toBe(2);
    expect(bad.err.trim().split('\n')).toHaveLength(1);
    expect(bad.err).toMatch(/steady\.csv line 36: 3 fields where the header has/);
  });
});

describe('conform load rest --history --judge', () => {
  it('appends the run, judges the history with it, and stops at a damaged line without losing a row', async () => {
    const dir = await tmp();
    const file = path.join(dir, 'history', 'rest.csv');
    const run = (): ReturnType<typeof loadCli> =>
      loadCli([
        'load',
        'rest',
        '--rate',
        '50',
        '--duration',
        '1s',
        '--warmup',
        '0',
        '--history',
        file,
        '--label',
        'version=1.4.2',
        '--judge',
        '--report',
        'console',
        '--out',
        dir,
      ]);
    const first = await run();
    expect(first.code, first.err).toBe(0);
    expect(first.out).toMatch(/appended to .*rest\.csv/);
    expect(first.out).toMatch(/conform load trend — .*rest\.csv: 1 runs of rest/);
    expect(first.out).toMatch(/verdict: no regression in the newest runs/);
    const text = await readFile(file, 'utf8');
    await writeFile(file, `${text}2026-01-01T00:00:00.000Z,rest,emb`);
    const damaged = await run();
    expect(damaged.code).toBe(2);
    expect(damaged.err.trim()).toMatch(/rest\.csv line 3: the line does not end/);
    expect(await readFile(file, 'utf8')).toBe(`${text}2026-01-01T00:00:00.000Z,rest,emb`);
  });
});
