/**
 * Present: the observations a fan-out report states in words, read from its data alone: how the
 * stamps were read, what the target's clock did to latency, and the frames that were odd.
 */
import type { FanoutReport } from '../fanout/result.ts';

/** The sentences a fan-out report observes about its clock and its frames, in report order. */
export function fanoutObservations(r: Omit<FanoutReport, 'thresholds'>): string[] {
  const out: string[] = [];
  const c = r.clock;
  if (c.sentAtUnit)
    out.push(`sent_at and last_updated read as ${c.sentAtUnit} since the epoch (the spec does not show the unit)`);
  if (c.tsUnit) out.push(`REST ts read as ${c.tsUnit} since the epoch`);
  if (c.status === 'unknown') out.push(`latency unknown: ${c.reason}`);
  else if (c.status === 'corrected')
    out.push(
      `the target's clock runs ${c.offsetMs! > 0 ? 'ahead of' : 'behind'} ours ` +
        `by ${Math.abs(c.offsetMs!)} ms (between ${c.lowMs} and ${c.highMs} ms, ` +
        `from ${c.samples} REST round trips${c.narrowedByFrames ? ' and the frames' : ''}): ` +
        `latency corrected by it, true within ± ${c.latencyBoundMs} ms`,
    );
  else
    out.push(
      `the target's clock is ours within ${c.lowMs} to ${c.highMs} ms (${c.samples} ` +
        `REST round trips${c.narrowedByFrames ? ' and the frames' : ''}): latency ` +
        `not corrected, true within ± ${c.latencyBoundMs} ms`,
    );
  if (r.receiptsBeforeSentAt)
    out.push(
      `${r.receiptsBeforeSentAt} frames arrived before their sent_at on the clock estimated before ` +
        `the run: the estimate was narrowed by them and latency moved to it, never clamped`,
    );
  if (r.latencyBelowZeroAfterCorrection)
    out.push(
      `${r.latencyBelowZeroAfterCorrection} latencies still below zero after the ` +
        `correction (histogram rounding) are left out, not clamped`,
    );
  if (r.framesWithoutSentAt && r.framesWithoutSentAt < r.framesReceived)
    out.push(`${r.framesWithoutSentAt} of ${r.framesReceived} frames carry no sent_at: their latency is not measured`);
  if (r.duplicates)
    out.push(
      `${r.duplicates} frames repeated an update a client had already received (same code ` +
        `and last_updated): the push interval is not tied to price changes`,
    );
  if (r.outOfOrder) out.push(`${r.outOfOrder} frames carried an older last_updated than the client had already seen`);
  if (r.lateReceipts)
    out.push(`${r.lateReceipts} receipts arrived after the ${r.options.updateWindowMs} ms loss window`);
  return out;
}
