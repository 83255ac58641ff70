/**
 * Prints how the trend judgement does on synthetic nightly series with this machine's noise (the
 * coefficients of variation of test/helpers/noise/, measured by scripts/load-noise.ts): false
 * alarms per 100 nights with every metric judged, the nights drawn normal, log-normal, or as the
 * measured runs themselves, and how often a persistent 10 % shift of latency p99 is flagged within
 * 3 nights, at the measured noise and at smaller ones. With PER_NIGHT (`5,9`), the same for nights
 * of that many runs each, drawn whole from the measured runs and judged by their means
 * (`--group-by night`). Seeded.
 *
 *   npx tsx scripts/trend-power.ts [TRIALS] [SEED] [NOISE_DIR]    # NOISE_DIR: test/helpers/noise
 */
import { noiseOf } from '../test/helpers/load-noise.ts';
import { detection, falseAlarms } from '../test/helpers/trend-power.ts';

const trials = Number(process.argv[2] ?? 20);
const seed = Number(process.argv[3] ?? 1);
const dir = process.argv[4] ?? 'test/helpers/noise';
const kinds = ['fanout', 'rest'] as const;
const noises = { fanout: await noiseOf(`${dir}/fanout.csv`), rest: await noiseOf(`${dir}/rest.csv`) };
for (const kind of kinds) {
  const noise = noises[kind];
  console.log(`${kind}: noise of ${noise.trusted} trusted of ${noise.runs} runs`);
  for (const draw of ['normal', 'log-normal', 'resampled'] as const) {
    const fa = falseAlarms({ kind, noise: noise.metrics, runs: noise.trustedRuns, draw, nights: 100, trials, seed });
    console.log(
      `  nights drawn ${draw}: false alarms ${fa.alarms} in ${fa.judged} nights judged ` +
        `(${fa.perHundredNights.toFixed(2)} per 100 nights; ${fa.failing} nights failing) ` +
        JSON.stringify(fa.byMetric),
    );
  }
  const p99 = noise.metrics['latency.p99']!;
  for (const cv of [p99.cv, 0.1, 0.05, 0.04, 0.03, 0.02]) {
    const d = detection({
      kind,
      metric: 'latency.p99',
      mean: p99.mean,
      cv,
      shift: 0.1,
      within: 3,
      trials: trials * 10,
      seed,
    });
    console.log(
      `  latency.p99 CV ${(cv * 100).toFixed(1)} %${cv === p99.cv ? ' (measured)' : ''}: ` +
        'a 10 % shift flagged within 3 nights ' +
        `in ${d.detected} of ${d.trials} (${(d.share * 100).toFixed(1)} %; nights 1–3: ${d.onNight.join(', ')})`,
    );
  }
}

const perNight = (process.env.PER_NIGHT ?? '').split(',').filter(Boolean).map(Number);
for (const k of perNight)
  for (const kind of kinds) {
    const noise = noises[kind];
    const runs = noise.trustedRuns;
    const fa = falseAlarms({
      kind,
      noise: noise.metrics,
      runs,
      draw: 'resampled',
      runsPerNight: k,
      nights: 100,
      trials,
      seed,
    });
    const p99 = runs.map((r) => r['latency.p99']!);
    const d = detection({
      kind,
      metric: 'latency.p99',
      shift: 0.1,
      within: 3,
      trials: trials * 10,
      seed,
      measured: { values: p99, perNight: k },
    });
    console.log(
      `${kind}, nights of ${k} measured runs: false alarms ${fa.alarms} in ${fa.judged} nights ` +
        `(${fa.perHundredNights.toFixed(2)} per 100) ${JSON.stringify(fa.byMetric)}; a 10 % p99 shift flagged ` +
        `within 3 nights in ${d.detected} of ${d.trials} (${(d.share * 100).toFixed(1)} %; ` +
        `nights 1–3: ${d.onNight.join(', ')})`,
    );
  }
