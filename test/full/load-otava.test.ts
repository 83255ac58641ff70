import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { changePoints } from '../../load/trend/e-divisive.ts';
import { readHistory } from '../../load/trend/history.ts';
import { ROOT } from '../helpers/conform-cli.ts';
import { loadCli } from '../helpers/load-cli.ts';
import { historyOf, mulberry32, normal, writeHistoryCsv } from '../helpers/trend-series.ts';

// Apache Otava is installed by scripts/install-otava.sh, pinned, into a virtualenv whose place the
// script prints. Without it the test skips and says so, unless the environment asks for the
// outside tools (CI), where a missing tool fails.
const venv = execFileSync('bash', [path.join(ROOT, 'scripts/install-otava.sh'), '--path'], { encoding: 'utf8' }).trim();
const OTAVA = path.join(venv, 'bin', 'otava');
const present = existsSync(OTAVA);
if (!present && process.env.CONFORM_REQUIRE_TOOLS)
  throw new Error(`otava missing at ${OTAVA}: run scripts/install-otava.sh`);

const dir = mkdtempSync(path.join(tmpdir(), 'conform-otava-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SERIES = 24;

/**
 * Series of a night's latency p99 like this machine's (40 ms, 2 % to 10 % noise), each with 0 to 3
 * persistent shifts of 5 % to 40 % at drawn nights, 30 to 120 nights long; seeded.
 */
function drawSeries(seed: number): number[] {
  const random = mulberry32(seed);
  const n = 30 + Math.floor(random() * 91);
  const cv = 0.02 + random() * 0.08;
  const shifts = new Map<number, number>();
  for (let k = Math.floor(random() * 4); k > 0; k--)
    shifts.set(5 + Math.floor(random() * (n - 10)), (random() < 0.5 ? -1 : 1) * (0.05 + random() * 0.35));
  let level = 40;
  return Array.from({ length: n }, (_, i) => {
    level *= 1 + (shifts.get(i) ?? 0);
    return level * (1 + cv * normal(random));
  });
}

/** Otava's change point indexes of each test in one `otava analyze … --output json`. */
function otava(names: string[], config: string): Promise<Record<string, number[]>> {
  return new Promise((resolve, reject) =>
    execFile(
      OTAVA,
      ['analyze', ...names, '--config-file', config, '--output', 'json'],
      { cwd: dir, env: { ...process.env, OTAVA_CONFIG: config }, timeout: 300_000, maxBuffer: 1 << 24 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`otava: ${err.message}\n${stderr}`));
        const out: Record<string, number[]> = {};
        for (const line of stdout.split('\n').filter((l) => l.startsWith('{')))
          for (const [name, groups] of Object.entries(
            JSON.parse(line) as Record<string, { changes: { index: number }[] }[]>,
          ))
            out[name] = groups.flatMap((g) => g.changes.map((c) => c.index));
        resolve(out);
      },
    ),
  );
}

describe.skipIf(!present)('the trend judgement against Apache Otava', () => {
  it(`finds the change points Otava finds on the same ${SERIES} history CSVs`, { timeout: 600_000 }, async () => {
    // Nightly runs ending today: Otava reads a year back by default.
    const start = Date.now() - 130 * 86_400_000;
    const tests: string[] = [];
    for (let s = 1; s <= SERIES; s++) {
      const file = path.join(dir, `s${s}.csv`);
      await writeHistoryCsv(file, historyOf('rest', { 'latency.p99': drawSeries(s) }, start));
      tests.push(
        `  s${s}:\n    type: csv\n    file: ${file}\n    time_column: time\n    attributes: [night]\n` +
          '    metrics: [latency.p99]\n',
      );
    }
    const config = path.join(dir, 'otava.yaml');
    writeFileSync(config, `tests:\n${tests.join('')}`);
    const theirs = await otava(
      tests.map((_, i) => `s${i + 1}`),
      config,
    );
    const rows: string[] = [];
    let same = 0;
    let withinOne = 0;
    for (let s = 1; s <= SERIES; s++) {
      const file = path.join(dir, `s${s}.csv`);
      const values = (await readHistory(file)).rows.map((r) => r.metrics['latency.p99']!);
      const ours = changePoints(values).map((c) => c.index);
      const expected = theirs[`s${s}`] ?? [];
      if (JSON.stringify(ours) === JSON.stringify(expected)) same++;
      if (ours.length === expected.length && ours.every((x, i) => Math.abs(x - expected[i]!) <= 1)) withinOne++;
      rows.push(`s${s}: ${values.length} runs, Otava ${JSON.stringify(expected)}, conform ${JSON.stringify(ours)}`);
    }
    console.log(`${rows.join('\n')}\nthe same: ${same} of ${SERIES}; within one run: ${withinOne} of ${SERIES}`);
    expect(withinOne).toBe(SERIES);
    expect(Object.values(theirs).flat().length).toBeGreaterThan(SERIES / 2);

    // The command reads the same CSV: every change point it reports by E-divisive is one of Otava's.
    const r = await loadCli([
      'load',
      'trend',
      '--history',
      path.join(dir, 's1.csv'),
      '--metric',
      'latency.p99',
      '--report',
      'json',
      '--out',
      dir,
    ]);
    expect(r.code === 0 || r.code === 1, r.err).toBe(true);
    const trend = JSON.parse(readFileSync(path.join(dir, 'load-trend-rest.json'), 'utf8'));
    const reported = trend.metrics[0].shifts
      .filter((x: { by: string }) => x.by === 'e-divisive')
      .map((x: { at: number }) => x.at);
    for (const at of reported) expect(theirs.s1).toContain(at);
  });
});
