/**
 * The seeded PRNG of everything that draws reproducibly: the reference's price walk and dialect
 * draw, the harness's catalogue sample, the load schedule. A PRNG reads nothing of the spec, so
 * sharing it cannot hide a misreading on both sides.
 */

/** mulberry32: a small seeded PRNG, so the same seed draws the same sequence. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
