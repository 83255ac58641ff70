/**
 * This machine's run-to-run noise of the load metrics, read from histories of repeated runs
 * (scripts/load-noise.ts writes them to test/helpers/noise/): the scenarios, and the mean and
 * coefficient of variation of each metric over the trusted runs.
 */
import { readHistory } from '../../load/trend/history.ts';
import { sampleVar, summarize } from '../../load/trend/significance.ts';

/**
 * The nightly scenario (.github/workflows/nightly-load.yml) scaled to this 2-core machine, 200
 * clients where it has 1,000: what the noise is measured on. Its measured phase is 60 s, the
 * workflow's REST runs (test/helpers/noise/); the workflow's fan-out runs are of 10 s, measured
 * with DURATION=10s (test/helpers/noise/short/).
 */
export const NOISE_SCENARIOS = [
  {
    kind: 'fanout',
    args: ['load', 'fanout', '--clients', '200', '--pairs', '10', '--duration', '60s', '--ramp-rate', '500/s'],
  },
  { kind: 'rest', args: ['load', 'rest', '--endpoint', 'price', '--rate', '200', '--duration', '60s'] },
] as const;

export interface Noise {
  runs: number;
  trusted: number;
  /** Per metric with a value in every trusted run: mean, and standard deviation / mean (sample, n − 1). */
  metrics: Record<string, { mean: number; cv: number }>;
  /** The load averages the runs ended with. */
  loadAverages: number[];
  /** The trusted runs' metrics, for nights drawn from them whole. */
  trustedRuns: Record<string, number | null>[];
}

/** The noise of the metrics in the history at `file`. */
export async function noiseOf(file: string): Promise<Noise> {
  const h = await readHistory(file);
  const trusted = h.rows.filter((r) => r.trustworthy);
  const metrics: Noise['metrics'] = {};
  for (const name of Object.keys(trusted[0]?.metrics ?? {})) {
    const values = trusted.map((r) => r.metrics[name]);
    if (values.some((v) => v === null)) continue;
    const s = summarize(values as number[]);
    const sd = Math.sqrt(sampleVar(s));
    metrics[name] = { mean: s.mean, cv: s.mean === 0 ? 0 : sd / Math.abs(s.mean) };
  }
  return {
    runs: h.rows.length,
    trusted: trusted.length,
    metrics,
    loadAverages: h.rows.map((r) => r.loadAverage ?? Number.NaN),
    trustedRuns: trusted.map((r) => r.metrics),
  };
}
