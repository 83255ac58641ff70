/**
 * Intended send times of an open-model REST run: requests arrive at a rate whatever the target
 * does, evenly spaced or as a Poisson process. Pure (no clock, no I/O): the generator asks for
 * the i-th time and compares it with its own clock.
 */

export type Arrival = 'uniform' | 'poisson';
export const ARRIVALS: readonly Arrival[] = ['uniform', 'poisson'];

/**
 * mulberry32: a 32-bit seeded generator, written here because the only need is a replayable
 * stream of uniform draws for the Poisson gaps (no library in the tree offers a seeded one).
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * The intended times (ms after the run's start) of successive requests at `rate` per second, one
 * per call. Uniform: i × 1000 / rate. Poisson: exponential gaps of mean 1000 / rate drawn from
 * `seed`, so the same seed replays the same arrivals.
 */
export function arrivalClock(rate: number, arrival: Arrival, seed = 1): () => number {
  const mean = 1000 / rate;
  let i = 0;
  if (arrival === 'uniform') return () => i++ * mean;
  const random = seededRandom(seed);
  let t = 0;
  return () => {
    const at = t;
    // 1 − u lies in (0, 1], so the log is finite.
    t += -Math.log(1 - random()) * mean;
    return at;
  };
}
