/**
 * How long a conformance run takes against the embedded reference: `conform` (every check, at the
 * spec's 30 s keep-alive window) and `conform --skip slow`, each started as a user starts it
 * (bin/conform.js, a process of its own), from the start of the process to its exit, the two in
 * turn so drift of the machine falls on both. Medians of BENCH_ROUNDS runs each (5 by default),
 * with each run's exit code, its summary line and the load average as it started. Figures go to
 * conform-reports/bench-run.json and to docs/benchmarks.md. Goals: the full run in 36 s or less, the
 * run without slow checks in 5 s or less.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { table, writeBenchmarkSection } from '../load/bench/benchmarks-doc.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const run = promisify(execFile);
const load1 = (): number => Math.round(loadavg()[0]! * 100) / 100;

const kinds = { 'conform (every check)': [], 'conform --skip slow': ['--skip', 'slow'] } as const;
type Kind = keyof typeof kinds;
interface RunFigure {
  seconds: number;
  exitCode: number;
  summary: string;
  loadAverage: number;
}

async function once(args: readonly string[]): Promise<RunFigure> {
  const loadAverage = load1();
  const t0 = performance.now();
  let stdout = '';
  let exitCode = 0;
  try {
    ({ stdout } = await run(process.execPath, [path.join(ROOT, 'bin/conform.js'), ...args], {
      cwd: ROOT,
      maxBuffer: 64 * 2 ** 20,
      env: { ...process.env, NO_COLOR: '1' },
    }));
  } catch (err) {
    const e = err as { code?: number; stdout?: string };
    if (typeof e.code !== 'number') throw err;
    exitCode = e.code;
    stdout = e.stdout ?? '';
  }
  const seconds = Math.round(performance.now() - t0) / 1000;
  // The verdict line ("PASS (partial): 86 of 116 stated rules checked — …"), not a check's ("PASS  id  41 ms").
  const summary = stdout.split('\n').findLast((l) => /^(PASS|FAIL)( \(|:)/.test(l.trim())) ?? '';
  return { seconds, exitCode, summary: summary.trim(), loadAverage };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
const figures = new Map<Kind, RunFigure[]>(Object.keys(kinds).map((k) => [k as Kind, []]));
for (let round = 0; round < ROUNDS; round++) {
  // Alternate which kind runs first, so neither always follows the other.
  const order = (Object.keys(kinds) as Kind[]).slice();
  if (round % 2) order.reverse();
  for (const kind of order) {
    const f = await once(kinds[kind]);
    figures.get(kind)!.push(f);
    console.log(`${kind} round ${round + 1}: ${f.seconds} s, exit ${f.exitCode}, load ${f.loadAverage}; ${f.summary}`);
  }
}
const goals: Record<Kind, number> = { 'conform (every check)': 36, 'conform --skip slow': 5 };
const rows = [...figures].map(([kind, runs]) => {
  const m = median(runs.map((r) => r.seconds));
  return {
    kind,
    medianSeconds: m,
    goalSeconds: goals[kind],
    met: m <= goals[kind],
    runs,
  };
});
mkdirSync(path.join(ROOT, 'conform-reports'), { recursive: true });
writeFileSync(
  path.join(ROOT, 'conform-reports/bench-run.json'),
  `${JSON.stringify({ benchmark: 'conformance run time', loadAtStart, rows }, null, 2)}\n`,
);
for (const r of rows) console.log(`${r.kind}: median ${r.medianSeconds} s (goal ≤ ${r.goalSeconds} s)`);
writeBenchmarkSection({
  id: 'run',
  title: 'A conformance run against the embedded reference',
  method:
    `\`conform\` and \`conform --skip slow\` with no target (the embedded reference, the spec's 30 s keep-alive ` +
    `window), each a process of its own started through bin/conform.js, timed from its start to its exit, the two ` +
    `in turn in alternating order, ${ROUNDS} runs each; medians. Load average ${loadAtStart.join(' ')} at the ` +
    'start. Goals: the full run in 36 s or less, `--skip slow` in 5 s or less.',
  body: [
    table(
      ['run', 'median', 'goal', 'each run (s)', 'exit codes', 'load average at each start'],
      rows.map((r) => [
        `\`${r.kind.replace(' (every check)', '')}\``,
        `**${r.medianSeconds} s**`,
        `≤ ${r.goalSeconds} s: ${r.met ? 'met' : 'missed'}`,
        r.runs.map((x) => x.seconds).join(', '),
        [...new Set(r.runs.map((x) => x.exitCode))].join(', '),
        r.runs.map((x) => x.loadAverage).join(', '),
      ]),
    ),
    '',
    ...rows.flatMap((r) => [
      '',
      `Verdict of the last \`${r.kind.replace(' (every check)', '')}\`: ${r.runs.at(-1)?.summary}`,
    ]),
  ].join('\n'),
});
