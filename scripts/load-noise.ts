/**
 * Measures this machine's run-to-run noise of every load metric: RUNS repeated runs of the nightly
 * scenario (`conform load fanout`, then `conform load rest`, alternating) against the embedded
 * reference, each appended to a history CSV with `--history`, then the coefficient of variation
 * (standard deviation / mean) of each metric over the trusted runs. The histories are what the
 * judgement's power test draws its synthetic noise from (test/helpers/noise/).
 *
 *   npx tsx scripts/load-noise.ts [OUT_DIR]     # RUNS=20; DURATION overrides the scenarios' 60s
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { noiseOf, NOISE_SCENARIOS } from '../test/helpers/load-noise.ts';

const out = process.argv[2] ?? 'test/helpers/noise';
const runs = Number(process.env.RUNS ?? 20);
const duration = process.env.DURATION;
mkdirSync(out, { recursive: true });
for (const s of NOISE_SCENARIOS) rmSync(path.join(out, `${s.kind}.csv`), { force: true });
const each = duration ? `, ${duration} each` : '';
const load = loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');
console.log(`${new Date().toISOString()}: ${runs} runs of each scenario${each}; load average ${load}`);
for (let i = 1; i <= runs; i++)
  for (const s of NOISE_SCENARIOS) {
    const args = [
      ...s.args,
      ...(duration ? ['--duration', duration] : []),
      '--history',
      path.join(out, `${s.kind}.csv`),
      '--label',
      `run=${i}`,
      '--report',
      'json',
    ];
    execFileSync(process.execPath, ['bin/conform.js', ...args, '--out', path.join('conform-reports', 'noise')], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    console.log(`run ${i} ${s.kind} done; load average ${loadavg()[0]!.toFixed(2)}`);
  }
for (const s of NOISE_SCENARIOS) {
  const noise = await noiseOf(path.join(out, `${s.kind}.csv`));
  console.log(`\n${s.kind}: ${noise.trusted} trusted of ${noise.runs} runs`);
  for (const [metric, m] of Object.entries(noise.metrics))
    console.log(
      `  ${metric.padEnd(24)} mean ${m.mean.toPrecision(4).padStart(10)}  CV ${(m.cv * 100).toFixed(1).padStart(6)} %`,
    );
}
