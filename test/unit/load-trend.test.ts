import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { changePoints } from '../../load/trend/e-divisive.ts';
import { appendHistory, parseHistory, readHistory, type HistoryRow } from '../../load/trend/history.ts';
import { formatTrendSummary } from '../../load/report/trend-console.ts';
import { judgeHistory } from '../../load/trend/judge.ts';
import { parseTrendArgs, runTrend } from '../../load/trend/run.ts';
import { parseLoadArgs } from '../../load/invocation.ts';
import { TREND_DEFAULTS } from '../../load/options.ts';
import { HistoryError, LoadUsageError } from '../../src/errors.ts';
import { ROOT } from '../helpers/conform-cli.ts';
import { historyOf, historyOfNights, mulberry32, series } from '../helpers/trend-series.ts';

const tmp = (): Promise<string> => mkdtemp(path.join(tmpdir(), 'conform-trend-'));

/** A rest run's row with the given latency p99, everything else steady. */
function row(p99: number, o: Partial<HistoryRow> = {}): HistoryRow {
  return {
    time: new Date(Date.UTC(2026, 0, 1) + (o.labels?.night ? Number(o.labels.night) : 0) * 86_400_000).toISOString(),
    kind: 'rest',
    target: 'embedded',
    trustworthy: true,
    reasons: '',
    loadAverage: 0.5,
    thresholds: ['latency.p99<50'],
    labels: {},
    metrics: { 'latency.p50': 1, 'latency.p99': p99, rps: 200, requests: 4000, errors: 0 },
    ...o,
  };
}

describe('E-divisive means', () => {
  // Series and change points as Apache Otava 0.8.0's compute_change_points (its defaults) finds them.
  const A = [
    95.05, 96.71, 95.0, 95.57, 100.98, 96.09, 101.78, 101.7, 110.13, 93.04, 104.44, 99.55, 99.93, 92.75, 97.7, 103.72,
    99.59, 100.41, 98.55, 105.77, 99.89, 89.0, 96.54, 90.16, 83.74, 97.35, 106.67, 100.24, 94.14, 118.85, 113.38,
    112.76, 112.19, 112.71, 117.02,
  ];
  const B = [
    98.2, 95.37, 107.22, 103.33, 101.1, 104.63, 105.31, 101.71, 87.71, 96.62, 97.72, 95.08, 100.99, 105.96, 97.58,
    94.33, 110.14, 97.74, 93.84, 82.99, 89.42, 83.92, 82.05, 86.79, 89.34, 83.29, 87.44, 85.62, 98.17, 82.97, 91.97,
    85.8, 85.48, 89.12, 89.87, 91.47, 87.43, 83.44, 83.71,
  ];
  const C = [
    91.27, 103.78, 95.77, 103.89, 100.65, 92.32, 106.25, 107.21, 99.67, 98.63, 99.2, 95.12, 105.49, 97.29, 99.74, 96.03,
    96.87, 93.61, 106.29, 99.23, 104.83, 100.07, 96.53, 98.37, 97.2, 100.04, 98.12, 98.5, 93.11, 95.97, 108.27, 96.64,
    94.73, 101.69, 107.04, 92.73, 98.96, 96.84, 91.19, 103.67,
  ];

  it('finds the change points Apache Otava finds in the same series, with its p-values', () => {
    const a = changePoints(A);
    expect(a.map((c) => c.index)).toEqual([29]);
    expect(a[0]!.p).toBeCloseTo(3.679007769383596e-8, 12);
    expect(changePoints(B).map((c) => c.index)).toEqual([19]);
    expect(changePoints(B)[0]!.p).toBeCloseTo(3.492058715150343e-10, 14);
    expect(changePoints(C)).toEqual([]);
  });

  it('finds a step in a quiet series at the run it began, and nothing in a flat one', () => {
    const flat = Array.from({ length: 60 }, () => 10);
    expect(changePoints(flat)).toEqual([]);
    const step = series({ mean: 100, cv: 0.02, shift: { from: 37, factor: 1.3 } }, 60, mulberry32(3));
    expect(changePoints(step).map((c) => c.index)).toEqual([37]);
  });
});

describe('the load history', () => {
  it('writes a header once and a row per run, every metric a column Otava reads by name', async () => {
    // A history in a folder that does not exist yet (a first night): the folder is made.
    const file = path.join(await tmp(), 'load-history', 'h.csv');
    await appendHistory(file, row(40, { labels: { version: '1.4.2' } }));
    await appendHistory(file, row(41, { labels: { version: '1.4.3' } }));
    const text = await readFile(file, 'utf8');
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]!.split(',').slice(0, 9)).toEqual([
      'time',
      'kind',
      'target',
      'trustworthy',
      'untrustworthy_reasons',
      'load_average',
      'thresholds',
      'version',
      'latency.p50',
    ]);
    const h = await readHistory(file);
    expect(h.kind).toBe('rest');
    expect(h.rows.map((r) => [r.line, r.labels.version, r.metrics['latency.p99']])).toEqual([
      [2, '1.4.2', 40],
      [3, '1.4.3', 41],
    ]);
    // A metric the run did not produce is an empty cell, read back as unknown.
    expect(h.rows[0]!.metrics.timeouts).toBeNull();
  });

  it('names the line of a damaged row, and a failed append leaves every earlier row as it was', async () => {
    const file = path.join(await tmp(), 'h.csv');
    await appendHistory(file, row(40));
    await appendHistory(file, row(41));
    const good = await readFile(file, 'utf8');
    // A write cut short: the third line has a few fields and no end.
    await writeFile(file, `${good}2026-01-09T00:00:00.000Z,rest,embe`);
    const cut = await readFile(file, 'utf8');
    await expect(readHistory(file)).rejects.toThrow(/h\.csv line 4: the line does not end/);
    await expect(appendHistory(file, row(42))).rejects.toThrow(HistoryError);
    expect(await readFile(file, 'utf8')).toBe(cut);
    // A value that is not a number, in the middle of the file.
    const lines = good.split('\n');
    lines[1] = lines[1]!.replace(/,40,/, ',forty,');
    expect(() => parseHistory(lines.join('\n'), 'h.csv')).toThrow(
      /h\.csv line 2: latency\.p99 "forty" is not a number/,
    );
    expect(() => parseHistory(`${lines[0]}\n${lines[2]}\nx,y\n`, 'h.csv')).toThrow(
      /h\.csv line 3: 2 fields where the header has \d+ \(a damaged line\)/,
    );
  });

  it('keeps one header and every row when two processes append at once', async () => {
    const dir = await tmp();
    const file = path.join(dir, 'h.csv');
    const script = path.join(dir, 'append.mts');
    await writeFile(
      script,
      `import { appendHistory } from ${JSON.stringify(path.join(ROOT, 'load/trend/history.ts'))};\n` +
        `const who = process.argv[2];\n` +
        `for (let i = 0; i < 25; i++) await appendHistory(${JSON.stringify(file)}, {\n` +
        `  time: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), kind: 'rest', target: who,\n` +
        `  trustworthy: true,\n` +
        `  reasons: '', loadAverage: 1, thresholds: [], labels: { writer: who }, metrics: { 'latency.p99': i } });\n`,
    );
    const run = (who: string): Promise<void> =>
      new Promise((resolve, reject) =>
        execFile(process.execPath, ['--import', 'tsx', script, who], { cwd: ROOT }, (err) =>
          err ? reject(err) : resolve(),
        ),
      );
    await Promise.all([run('a'), run('b')]);
    const h = await readHistory(file);
    expect(h.rows).toHaveLength(50);
    expect(h.rows.filter((r) => r.target === 'a')).toHaveLength(25);
    expect((await readFile(file, 'utf8')).match(/^time,/gm)).toHaveLength(1);
  });

  it('adds a label first given later as a column, the earlier rows kept with it empty', async () => {
    const file = path.join(await tmp(), 'h.csv');
    await appendHistory(file, row(40));
    await appendHistory(file, row(41, { labels: { commit: 'abc123' } }));
    const h = await readHistory(file);
    expect(h.labels).toEqual(['commit']);
    expect(h.rows.map((r) => [r.labels.commit, r.metrics['latency.p99']])).toEqual([
      ['', 40],
      ['abc123', 41],
    ]);
  });

  it('refuses to mix kinds of run in one history', async () => {
    const file = path.join(await tmp(), 'h.csv');
    await appendHistory(file, row(40));
    await expect(appendHistory(file, { ...row(40), kind: 'fanout' })).rejects.toThrow(/holds rest runs, not fanout/);
  });
});

const steady = (n: number, seed: number): number[] => series({ mean: 40, cv: 0.02 }, n, mulberry32(seed));

describe('the regression judgement', () => {
  it('names the metric, the run the shift began at and its size with an interval', () => {
    const p99 = series({ mean: 40, cv: 0.02, shift: { from: 30, factor: 1.2 } }, 40, mulberry32(5));
    const t = judgeHistory(historyOf('rest', { 'latency.p99': p99, rps: steady(40, 6).map((v) => v * 5) }));
    expect(t.regressions).toEqual(['latency.p99']);
    const m = t.metrics.find((x) => x.metric === 'latency.p99')!;
    const s = m.shifts.at(-1)!;
    expect(s.at).toBe(30);
    expect(s.run.labels.night).toBe('31');
    expect(s.change!).toBeGreaterThan(0.15);
    expect(s.low!).toBeLessThan(s.change!);
    expect(s.high!).toBeGreaterThan(s.change!);
    expect(t.metrics.find((x) => x.metric === 'rps')!.verdict).toBe('steady');
  });

  it('judges throughput down and latency down by their bad directions', () => {
    const rps = series({ mean: 200, cv: 0.02, shift: { from: 30, factor: 0.8 } }, 40, mulberry32(7));
    const p99 = series({ mean: 40, cv: 0.02, shift: { from: 30, factor: 0.8 } }, 40, mulberry32(8));
    const t = judgeHistory(historyOf('rest', { rps, 'latency.p99': p99 }));
    expect(t.metrics.find((m) => m.metric === 'rps')!.verdict).toBe('regression');
    expect(t.metrics.find((m) => m.metric === 'latency.p99')!.verdict).toBe('improvement');
  });

  it('flags the newest runs as a regression after two nights, but not after one', () => {
    const base = steady(30, 9);
    const one = judgeHistory(historyOf('rest', { 'latency.p99': [...base, 52] }));
    expect(one.regressions).toEqual([]);
    const two = judgeHistory(historyOf('rest', { 'latency.p99': [...base, 52, 51] }));
    expect(two.regressions).toEqual(['latency.p99']);
    expect(two.metrics.find((m) => m.metric === 'latency.p99')!.shifts.at(-1)!.at).toBe(30);
  });

  it('calls no regression when a metric returns to its usual level after two better nights', () => {
    // E-divisive splits off the two better nights; judged against them, the return looks 30 % worse.
    for (const seed of [1, 2, 3, 4]) {
      const p99 = [...steady(30, seed), 30, 30.5, 40.2, 39.8];
      const t = judgeHistory(historyOf('rest', { 'latency.p99': p99 }), { metrics: ['latency.p99'] });
      expect(t.regressions, `seed ${seed}`).toEqual([]);
      expect(t.metrics[0]!.verdict).toBe('steady');
    }
    // A step that stays is still found: the blip's runs join the baseline, not the newest segment.
    const stays = [...steady(30, 1), 30, 30.5, 48.2, 47.9];
    expect(judgeHistory(historyOf('rest', { 'latency.p99': stays }), { metrics: ['latency.p99'] }).regressions).toEqual(
      ['latency.p99'],
    );
  });

  it('judges a shift E-divisive splits off among the newest three runs by the newest runs’ test', () => {
    // Three nights 10 % up at 3 % noise: E-divisive finds the split, but its p-value pays for every
    // place it could have split, and alone it is not significant.
    for (const seed of [117, 258, 347]) {
      const p99 = series({ mean: 4, cv: 0.03, shift: { from: 30, factor: 1.1 } }, 33, mulberry32(seed));
      const t = judgeHistory(historyOf('rest', { 'latency.p99': p99 }), { metrics: ['latency.p99'] });
      expect(t.regressions, `seed ${seed}`).toEqual(['latency.p99']);
      const s = t.metrics[0]!.shifts.at(-1)!;
      expect(s.by).toBe('newest-runs');
      expect(s.at).toBe(30);
    }
  });

  it('does not alarm on a real shift whose interval lies wholly below the minimum effect', () => {
    const p99 = series({ mean: 40, cv: 0.005, shift: { from: 30, factor: 1.03 } }, 50, mulberry32(10));
    const t = judgeHistory(historyOf('rest', { 'latency.p99': p99 }));
    const m = t.metrics.find((x) => x.metric === 'latency.p99')!;
    expect(m.shifts.at(-1)!.kind).toBe('within-minimum');
    expect(t.regressions).toEqual([]);
    expect(judgeHistory(historyOf('rest', { 'latency.p99': p99 }), { minEffect: 0.02 }).regressions).toEqual([
      'latency.p99',
    ]);
  });

  it('judges a latency on the log scale: two slow nights no further out than its usual ones are no shift', () => {
    // Log-normal nights (CV 25 %): slow nights lie further above the usual than fast ones below it.
    // The two newest are slow, but two nights of the 30 before were slower still.
    const p99 = [
      56.83, 49.44, 25.63, 45.07, 32.35, 44.65, 26.4, 53.36, 35.84, 35.28, 44.99, 52.7, 32.19, 41.63, 36.67, 35.25,
      57.56, 37.6, 26.23, 42.22, 29.21, 36.34, 45.54, 30.29, 29.91, 50.43, 30.13, 34.53, 51.01, 34.48, 55.29, 57.47,
    ];
    const t = judgeHistory(historyOf('rest', { 'latency.p99': p99 }), { metrics: ['latency.p99'] });
    expect(t.regressions).toEqual([]);
    expect(t.metrics[0]!.scale).toBe('log');
  });

  it('calls no shift when a metric read in whole milliseconds steps up three nights in a row, as it often does', () => {
    // 11 of 30 nights a millisecond up, as a service's staleness read from whole-millisecond stamps
    // is; three such nights in a row are as common as that says.
    const ms = [2, 3, 2, 2, 2, 3, 2, 2, 2, 2, 2, 2, 3, 2, 3, 3, 2, 3, 2, 2, 3, 3, 3, 2, 2, 2, 3, 3, 2, 2];
    const t = judgeHistory(historyOf('fanout', { 'server_latency.p50': [...ms, 3, 3, 3] }), {
      metrics: ['server_latency.p50'],
    });
    expect(t.regressions).toEqual([]);
    const last = t.metrics[0]!.shifts.at(-1);
    if (last) expect(last.pRank!).toBeGreaterThan(TREND_DEFAULTS.rankPValue);
    // Once every night is a step up, the step is a shift.
    const h = [...ms, ...Array.from({ length: 12 }, () => 3)];
    expect(
      judgeHistory(historyOf('fanout', { 'server_latency.p50': h }), { metrics: ['server_latency.p50'] }).regressions,
    ).toEqual(['server_latency.p50']);
  });

  it('flags a release twice as slow on its second night after a week of history', () => {
    // Seven nights are too few for any order of the ranks to reach its level: the rank test has no say.
    const week = series({ mean: 3, cv: 0.1 }, 7, mulberry32(4));
    const slower = series({ mean: 6.5, cv: 0.1 }, 2, mulberry32(9));
    const t = judgeHistory(historyOf('rest', { 'latency.p99': [...week, ...slower] }));
    expect(t.regressions).toEqual(['latency.p99']);
    expect(t.metrics.find((m) => m.metric === 'latency.p99')!.shifts.at(-1)!.pRank).toBeNull();
  });

  it('shows a regression with an interval wholly on its bad side, from the test that found it', () => {
    // Three nights far beyond a steady week and more, and far apart from each other: the newest
    // runs' test finds them, and their own spread must not widen the interval across 0.
    const p99 = [...series({ mean: 10, cv: 0.03 }, 10, mulberry32(12)), 13, 25, 60];
    const t = judgeHistory(historyOf('rest', { 'latency.p99': p99 }), { metrics: ['latency.p99'] });
    const s = t.metrics[0]!.shifts.at(-1)!;
    expect(s.kind).toBe('regression');
    expect(s.low!).toBeGreaterThan(0);
    // And so on every history: any significant shift's interval lies on the side it moved to.
    const random = mulberry32(13);
    let judged = 0;
    for (let i = 0; i < 300; i++) {
      const nights = 8 + Math.floor(random() * 30);
      const from = 5 + Math.floor(random() * (nights - 5));
      const spec = { mean: 40, cv: 0.02 + random() * 0.3, shift: { from, factor: 0.4 + random() * 2.4 } };
      const shape = random() < 0.5 ? ('normal' as const) : ('log-normal' as const);
      const r = judgeHistory(historyOf('rest', { 'latency.p99': series({ ...spec, shape }, nights, random) }), {
        metrics: ['latency.p99'],
      });
      for (const x of r.metrics[0]!.shifts) {
        if (x.kind === 'regression') expect(x.low!, `history ${i}`).toBeGreaterThan(0);
        if (x.kind === 'improvement') expect(x.high!, `history ${i}`).toBeLessThan(0);
        if (x.kind === 'regression' || x.kind === 'improvement') judged++;
      }
    }
    expect(judged).toBeGreaterThan(100);
  });

  it('gives a p-value far below 1e-16 as its value, not as 0', () => {
    const p99 = [
      ...series({ mean: 10, cv: 0.01 }, 20, mulberry32(14)),
      ...series({ mean: 20, cv: 0.01 }, 20, mulberry32(15)),
    ];
    const t = judgeHistory(historyOf('rest', { 'latency.p99': p99 }), { metrics: ['latency.p99'] });
    const s = t.metrics[0]!.shifts.at(-1)!;
    expect(s.p).toBeGreaterThan(0);
    expect(s.p).toBeLessThan(1e-16);
    expect(formatTrendSummary(t, 'h.csv')).toMatch(/REGRESSION latency\.p99: .* p=\d\.\de-\d+ \(e-divisive\)/);
  });

  const nightsOf = (runs: number[], perNight: number) => historyOfNights('rest', { 'latency.p99': runs }, perNight);

  it('judges nights of several runs by their means: two slow runs ending a night are one slow night, no shift', () => {
    const runs = [...steady(100, 12), 40, 40, 40, 52, 51];
    expect(judgeHistory(nightsOf(runs, 5)).regressions).toEqual(['latency.p99']);
    const t = judgeHistory(nightsOf(runs, 5), { groupBy: 'night' });
    expect(t.regressions).toEqual([]);
    const m = t.metrics.find((x) => x.metric === 'latency.p99')!;
    expect(m.points).toHaveLength(21);
    expect(m.points.at(-1)).toMatchObject({ runs: 5, line: 102, labels: { night: '21' } });
    expect(m.points.at(-1)!.value).toBeCloseTo(44.6, 10);
  });

  it('flags a shift of whole nights at the first run of the night it began, and says how it grouped', () => {
    const runs = [...steady(100, 13), ...steady(10, 14).map((v) => v * 1.3)];
    const t = judgeHistory(nightsOf(runs, 5), { groupBy: 'night' });
    expect(t.regressions).toEqual(['latency.p99']);
    const s = t.metrics.find((x) => x.metric === 'latency.p99')!.shifts.at(-1)!;
    expect(s.at).toBe(20);
    expect(s.run).toMatchObject({ line: 102, labels: { night: '21' } });
    expect(formatTrendSummary(t, 'h.csv')).toContain(
      'each point the mean of the trusted runs with the same night label (a run without one stands alone): 22 points',
    );
  });

  it('refuses --group-by with a label the history lacks, or a run not given that label', async () => {
    const dir = await tmp();
    const file = path.join(dir, 'rest.csv');
    for (const r of nightsOf(steady(6, 15), 3).rows) await appendHistory(file, r);
    const inv = { ...parseTrendArgs({ history: file, 'group-by': 'nite' }), reports: [] };
    await expect(runTrend(inv, { out: () => {} })).rejects.toThrow(
      new LoadUsageError(`--group-by nite: not a label of ${file} (its labels: night)`),
    );
    expect(() =>
      parseLoadArgs({ mode: 'rest', history: file, judge: true, 'group-by': 'night', label: 'version=1' }),
    ).toThrow(new LoadUsageError('--group-by night: give the run that label too (--label NAME=VALUE)'));
    expect(
      parseLoadArgs({ mode: 'rest', history: file, judge: true, 'group-by': 'night', label: 'night=3' }).history,
    ).toMatchObject({ groupBy: 'night', labels: { night: '3' } });
  });

  it('leaves untrustworthy runs out of every judgement and lists them', () => {
    const h = historyOf('rest', { 'latency.p99': steady(30, 11) });
    // Two saturated runs with a latency far above the rest: flagged, they must not read as a shift.
    for (const r of h.rows.slice(-2)) Object.assign(r, { trustworthy: false, reasons: 'busy 97% > 90%' });
    for (const r of h.rows.slice(-2)) r.metrics['latency.p99'] = 400;
    const t = judgeHistory(h);
    expect(t.regressions).toEqual([]);
    expect(t.untrustworthy.map((u) => u.line)).toEqual([30, 31]);
    expect(t.metrics.find((m) => m.metric === 'latency.p99')!.excluded).toBe(2);
  });
});
