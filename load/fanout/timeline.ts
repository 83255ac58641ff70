/**
 * The fan-out run second by second, from the workers' ticks: frames, open connections and the
 * latency of each second, and which workers sent nothing for it. Pure, fed by the aggregator.
 */
import { addEncoded, createHistogram, summarize, type Histogram } from '../histogram.ts';
import type { TimelinePoint } from './measurements.ts';
import type { Tick } from './protocol.ts';

interface Bucket {
  frames: number;
  latency: Histogram;
  below: Histogram | null;
  open: Map<number, number>;
  /** Per worker: frames and the ms its ticks here cover (since its tick before). */
  covered: Map<number, { frames: number; spanMs: number }>;
  steady: boolean;
}

/** Moves a latency histogram (and the magnitudes below zero) to the final clock; null when none holds. */
export type LatencyCorrection = (pos: Histogram, below: Histogram | null) => Histogram | null;

/** The seconds of a run, each filled by the ticks that cover it. */
export class Timeline {
  private readonly buckets = new Map<number, Bucket>();
  /** Per worker: its last tick's time and the first and last second it sent a tick for. */
  private readonly workerTicks = new Map<number, { lastAtMs: number; firstKey: number; lastKey: number }>();
  private startMs = 0;

  constructor(private readonly tickMs: number) {}

  /** The ramp began at this mono ms: second 0. */
  start(atMs: number): void {
    this.startMs = atMs;
  }

  /** Puts one tick into the second it covers. */
  add(tick: Tick): void {
    const key = this.bucketKey(tick.atMs);
    const b = this.bucket(key);
    b.frames += tick.frames;
    const seen = this.workerTicks.get(tick.workerIndex);
    // A worker's first tick covers its interval from before the start: take it as one nominal tick.
    const spanMs = seen ? Math.max(0, tick.atMs - seen.lastAtMs) : this.tickMs;
    const cov = b.covered.get(tick.workerIndex) ?? { frames: 0, spanMs: 0 };
    cov.frames += tick.frames;
    cov.spanMs += spanMs;
    b.covered.set(tick.workerIndex, cov);
    this.workerTicks.set(tick.workerIndex, {
      lastAtMs: Math.max(tick.atMs, seen?.lastAtMs ?? tick.atMs),
      firstKey: Math.min(key, seen?.firstKey ?? key),
      lastKey: Math.max(key, seen?.lastKey ?? key),
    });
    addEncoded(b.latency, tick.latency);
    if (tick.latencyBelowZero) {
      b.below ??= createHistogram();
      addEncoded(b.below, tick.latencyBelowZero);
    }
    b.open.set(tick.workerIndex, tick.open);
    if (tick.steady) b.steady = true;
  }

  /**
   * The run second by second. A worker that was running (it sent ticks before and after) but sent
   * none for a second leaves that second's frames and connections unknown: null, with the worker
   * named, never a drop to what the other workers saw. Its late tick then covers two seconds, and
   * its frames count over the time they cover, not as a spike.
   */
  points(corrected: LatencyCorrection): TimelinePoint[] {
    const keys = [...this.buckets.keys()];
    if (!keys.length) return [];
    const none = createHistogram();
    const points: TimelinePoint[] = [];
    for (let k = Math.min(...keys); k <= Math.max(...keys); k++) {
      const b = this.buckets.get(k);
      const missingWorkers = [...this.workerTicks.entries()]
        .filter(([w, t]) => t.firstKey <= k && k <= t.lastKey && !b?.covered.has(w))
        .map(([w]) => w)
        .sort((x, y) => x - y);
      const s = b ? summarize(corrected(b.latency, b.below) ?? none) : null;
      let rate = 0;
      let conns = 0;
      for (const c of b?.covered.values() ?? []) rate += c.spanMs > 0 ? (c.frames * 1000) / c.spanMs : 0;
      for (const v of b?.open.values() ?? []) conns += v;
      const known = b !== undefined && missingWorkers.length === 0;
      points.push({
        t: (k * this.tickMs) / 1000,
        framesPerSecond: known ? Math.round(rate) : null,
        connections: known ? conns : null,
        latencyP50Ms: s?.p50 ?? null,
        latencyP99Ms: s?.p99 ?? null,
        steady: b?.steady ?? false,
        missingWorkers,
      });
    }
    none.destroy();
    return points;
  }

  /** The second a tick belongs to: a tick covers the second before it was sent. */
  private bucketKey(atMs: number): number {
    return Math.max(0, Math.ceil((atMs - this.startMs) / this.tickMs - 1e-6));
  }

  private bucket(key: number): Bucket {
    let b = this.buckets.get(key);
    if (!b) {
      b = { frames: 0, latency: createHistogram(), below: null, open: new Map(), covered: new Map(), steady: false };
      this.buckets.set(key, b);
    }
    return b;
  }
}
