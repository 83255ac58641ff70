/**
 * HDR histograms of a load run (hdr-histogram-js): values are recorded in microseconds as
 * integers, moved between threads as compressed base64, and summarised in milliseconds.
 */
import * as hdr from 'hdr-histogram-js';

export type Histogram = hdr.Histogram;

/** Highest value tracked: one minute in µs; larger values are clamped there and still counted. */
export const HIGHEST_US = 60_000_000;

/** A histogram for µs values, 3 significant digits, plain JS (no WebAssembly in workers). */
export function createHistogram(): Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_US,
    numberOfSignificantValueDigits: 3,
    bitBucketSize: 32,
    autoResize: false,
    useWebAssembly: false,
  });
}

/** Milliseconds as whole µs, clamped to [0, HIGHEST_US]. */
function toMicros(ms: number): number {
  const us = Math.round(ms * 1000);
  return us > 0 ? Math.min(us, HIGHEST_US) : 0;
}

/** Records milliseconds (clamped to [0, HIGHEST_US] µs). */
export function recordMs(h: Histogram, ms: number): void {
  h.recordValue(toMicros(ms));
}

// The bucket layout of createHistogram()'s histograms (lowest 1, 3 significant digits):
// 2,048 sub-buckets, the upper 1,024 of them repeated once per power of two above 2,047.
const HALF_MAGNITUDE = 10;
const SUB_BUCKETS = 2 << HALF_MAGNITUDE;
const indexOf = (us: number): number => {
  const b = us < SUB_BUCKETS ? 0 : 31 - Math.clz32(us) - HALF_MAGNITUDE;
  return (b << HALF_MAGNITUDE) + (us >>> b);
};
/** The lowest value of bucket index `i`: recording it lands in the same bucket. */
const lowestOfBucket = (i: number): number => {
  if (i < SUB_BUCKETS) return i;
  const b = (i >>> HALF_MAGNITUDE) - 1;
  return ((i & ((1 << HALF_MAGNITUDE) - 1)) + (SUB_BUCKETS >>> 1)) * 2 ** b;
};
const COUNTS = indexOf(HIGHEST_US) + 1;

/**
 * The per-frame front of a histogram: hdr-histogram-js's recordValue costs about 180 ns (log2
 * and pow per value), which a load worker pays twice per frame. This counts into the same bucket
 * layout with clz32 for a few ns and moves the counts into an HDR histogram on drain, so the
 * percentiles are the ones direct recording gives; the max is carried over exactly.
 */
export class FastRecorder {
  private readonly counts = new Uint32Array(COUNTS);
  private lo = COUNTS;
  private hi = -1;
  private max = -1;

  recordMs(ms: number): void {
    const us = toMicros(ms);
    const i = indexOf(us);
    this.counts[i]!++;
    if (i < this.lo) this.lo = i;
    if (i > this.hi) this.hi = i;
    if (us > this.max) this.max = us;
  }

  /** Adds every count into `h` and starts empty again. */
  drainInto(h: Histogram): void {
    const maxIndex = this.max < 0 ? -1 : indexOf(this.max);
    for (let i = this.lo; i <= this.hi; i++) {
      const n = this.counts[i]!;
      if (n === 0) continue;
      this.counts[i] = 0;
      if (i === maxIndex) {
        if (n > 1) h.recordValueWithCount(lowestOfBucket(i), n - 1);
        h.recordValue(this.max);
      } else h.recordValueWithCount(lowestOfBucket(i), n);
    }
    this.lo = COUNTS;
    this.hi = -1;
    this.max = -1;
  }

  /** The counts so far as an encoded histogram (see encode); starts empty again. */
  takeEncoded(): string {
    this.scratch ??= createHistogram();
    this.scratch.reset();
    this.drainInto(this.scratch);
    return encode(this.scratch);
  }

  private scratch: Histogram | undefined;
}

export function encode(h: Histogram): string {
  return hdr.encodeIntoCompressedBase64(h);
}

/** Adds an encoded histogram into `into`. */
export function addEncoded(into: Histogram, encoded: string): void {
  const h = decode(encoded);
  into.add(h);
  h.destroy();
}

/**
 * Adds every value of `from` into `into` moved by `shiftUs` (negated first when `negate`: `from`
 * then holds magnitudes of values below zero). Each bucket moves at its median value, so the
 * result keeps the 3 significant digits of the value before the move. A moved value below zero
 * is not recorded: the count of those is returned (the caller's shift was wrong if it is not 0).
 */
export function addShifted(into: Histogram, from: Histogram, shiftUs: number, negate = false): number {
  const h = from as unknown as {
    countsArrayLength: number;
    getCountAtIndex(i: number): number;
    valueFromIndex(i: number): number;
    medianEquivalentValue(v: number): number;
  };
  let below = 0;
  for (let i = 0; i < h.countsArrayLength; i++) {
    const n = h.getCountAtIndex(i);
    if (n === 0) continue;
    const v = h.medianEquivalentValue(h.valueFromIndex(i));
    const moved = Math.round((negate ? -v : v) + shiftUs);
    if (moved < 0) {
      below += n;
      continue;
    }
    into.recordValueWithCount(Math.min(moved, HIGHEST_US), n);
  }
  return below;
}

/** Decodes an encoded histogram (see encode). */
export function decode(encoded: string): Histogram {
  return hdr.decodeFromCompressedBase64(encoded, 32, false);
}

/** p50/p90/p99/p99.9/max in milliseconds, and the count; null fields when nothing was recorded. */
export interface Percentiles {
  count: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  p999: number | null;
  max: number | null;
  mean: number | null;
}

const ms = (us: number): number => Math.round(us) / 1000;

export function summarize(h: Histogram): Percentiles {
  const count = h.totalCount;
  if (!count) return { count: 0, p50: null, p90: null, p99: null, p999: null, max: null, mean: null };
  // A percentile is its bucket's highest equivalent value; the max is exact and caps it.
  const at = (p: number): number => ms(Math.min(h.getValueAtPercentile(p), h.maxValue));
  return {
    count,
    p50: at(50),
    p90: at(90),
    p99: at(99),
    p999: at(99.9),
    max: ms(h.maxValue),
    mean: ms(h.mean),
  };
}

/** The percentile curve (for the HTML chart): value in ms at percentiles from 0 to 99.999. */
export function percentileCurve(h: Histogram): { percentile: number; ms: number }[] {
  if (!h.totalCount) return [];
  const points = [0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 100];
  return points.map((p) => ({ percentile: p, ms: ms(p === 100 ? h.maxValue : h.getValueAtPercentile(p)) }));
}

/** Equal-width buckets over raw values in ms (for the skew histogram chart). */
export function bucketize(values: readonly number[], count = 20): { fromMs: number; toMs: number; count: number }[] {
  if (!values.length) return [];
  let max = 0;
  for (const v of values) if (v > max) max = v;
  const width = max > 0 ? max / count : 1;
  const out = Array.from({ length: count }, (_, i) => ({
    fromMs: round3(i * width),
    toMs: round3((i + 1) * width),
    count: 0,
  }));
  for (const v of values) out[Math.min(count - 1, Math.floor(v / width))]!.count++;
  return out;
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;
