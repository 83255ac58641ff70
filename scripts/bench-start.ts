/**
 * `conform --version` start time, side by side in one run: the installed package's start (the
 * compiled JavaScript in dist/, built here first so it is current) against the start from the
 * TypeScript sources through tsx (what a clone of the repository runs), and an eager start: tsx
 * plus every module the CLI could import up front (the checks, the validator, yargs) before
 * printing the version. One run, one after the other, 20 rounds each. Figures go to
 * conform-reports/bench-start.json with the load average beside them, and to docs/benchmarks.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bench } from 'tinybench';
import { table, writeBenchmarkSection } from '../load/bench/benchmarks-doc.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });

const starts = {
  'compiled (dist/bin/cli.js, the installed package)': [path.join(ROOT, 'dist/bin/cli.js')],
  'sources through tsx (bin/conform.js in a clone)': [path.join(ROOT, 'bin/conform.js')],
  'eager: tsx, everything imported up front': [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    "await Promise.all([import('./bin/commands/conform.ts'), import('./src/conform.ts'), " +
      "import('./reports/index.ts'), import('./suites/index.ts'), import('yargs')]); console.log(process.argv.at(-1))",
    '--',
  ],
};
const bench = new Bench({ iterations: ROUNDS, time: 0, warmup: true, warmupIterations: 2 });
for (const [name, args] of Object.entries(starts)) {
  bench.add(name, () => {
    execFileSync(process.execPath, [...args, '--version'], { cwd: ROOT, stdio: 'ignore' });
  });
}
const before = loadavg();
await bench.run();
const after = loadavg();

const figures = bench.tasks.map((t) => {
  const l = (t.result as unknown as { latency: { p50: number; min: number; max: number } }).latency;
  return {
    start: t.name,
    medianMs: Math.round(l.p50),
    minMs: Math.round(l.min),
    maxMs: Math.round(l.max),
    rounds: ROUNDS,
  };
});
const ratio = figures[2]!.medianMs / figures[0]!.medianMs;
const report = {
  benchmark: 'conform --version start',
  goal: 'compiled start under 300 ms',
  loadAverage: { before: before.map((x) => +x.toFixed(2)), after: after.map((x) => +x.toFixed(2)) },
  figures,
  eagerOverCompiled: +ratio.toFixed(2),
};
mkdirSync(path.join(ROOT, 'conform-reports'), { recursive: true });
writeFileSync(path.join(ROOT, 'conform-reports/bench-start.json'), `${JSON.stringify(report, null, 2)}\n`);
console.table(figures);
console.log(`load average ${report.loadAverage.before.join(' ')} -> ${report.loadAverage.after.join(' ')}`);
console.log(
  `conform --version: compiled ${figures[0]!.medianMs} ms, sources through tsx ${figures[1]!.medianMs} ` +
    `ms, eager ${figures[2]!.medianMs} ms (medians of ${ROUNDS}; eager/compiled ${ratio.toFixed(1)}x)`,
);
writeBenchmarkSection({
  id: 'start',
  title: 'Start time of conform --version',
  method:
    `Each start run ${ROUNDS} times, one after the other in one run; medians. Goal: the compiled start ` +
    'under 300 ms. `--version` is answered before the checks, the validator and yargs are imported.',
  body: table(
    ['start', 'median', 'min', 'max'],
    figures.map((f) => [f.start, `${f.medianMs} ms`, `${f.minMs} ms`, `${f.maxMs} ms`]),
  ),
});
