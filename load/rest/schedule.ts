/**
 * Intended send times of an open-model REST run: requests arrive at a rate whatever the target
 * does, evenly spaced or as a Poisson process. Pure (no clock, no I/O): the generator asks for
 * the next time and compares it with its own clock.
 */
import { mulberry32 } from '../../src/random.ts';

export type Arrival = 'uniform' | 'poisson';
export const ARRIVALS: readonly Arrival[] = ['uniform', 'poisson'];

/**
 * The intended times (ms after the run's start) of successive requests at `rate` per second, one
 * per call. Uniform: i × 1000 / rate. Poisson: exponential gaps of mean 1000 / rate drawn from
 * `seed`, so the same seed replays the same arrivals.
 */
export function arrivalClock(rate: number, arrival: Arrival, seed = 1): () => number {
  const mean = 1000 / rate;
  let i = 0;
  if (arrival === 'uniform') return () => i++ * mean;
  const random = mulberry32(seed);
  let t = 0;
  return () => {
    const at = t;
    // 1 − u lies in (0, 1], so the log is finite.
    t += -Math.log(1 - random()) * mean;
    return at;
  };
}
