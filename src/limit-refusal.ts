/**
 * A 50009 (spec: Limits, "WebSocket connections per API key") as the connection budget reads it,
 * and an open that waits one out: a refusal of a connection the harness believes within the key's
 * allowance means the target has not freed a closed connection's slot yet.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { STATUS } from './spec.ts';
import { RETRY_STEPS_MS } from './timing/index.ts';
import type { OpenOptions, OpenResult, Refusal, StreamClient } from './transports/stream.ts';

/** `status_number` of a handshake refusal body, when it has one. */
export function refusalStatus(refusal: Refusal): unknown {
  const body = refusal.json;
  return body !== null && typeof body === 'object' ? (body as Record<string, unknown>).status_number : undefined;
}
/**
 * Whether the engine treats a refusal as the key's limit when it budgets: a 50009 under
 * `status_number`, or under a `code` a target put in its place. Judging the body is the checks'
 * work; a budget that missed a misshapen 50009 would open past the allowance and blame the target
 * for refusals the run caused.
 */
export const isLimitRefusal = (r: OpenResult): r is Refusal => {
  if (r.ok) return false;
  const body = r.json;
  if (body === null || typeof body !== 'object') return false;
  const { status_number, code } = body as Record<string, unknown>;
  return [status_number, code].some((v) => String(v) === STATUS.CONNECTION_LIMIT);
};

/**
 * Opens a connection the harness believes is within the key's allowance. A 50009 then means the
 * target has not freed a slot yet; it is waited out for `releaseWaitMs`, attempt by attempt.
 * Resolves with the last result and how many 50009s were waited out.
 */
export async function openWaitingOut(
  client: StreamClient,
  options: OpenOptions,
  signal: AbortSignal,
  note: (text: string) => void,
  releaseWaitMs: number,
  steps: readonly number[] = RETRY_STEPS_MS,
  waiting: <T>(pause: Promise<T>) => Promise<T> = (pause) => pause,
): Promise<OpenResult & { waitedOut?: number; waitedMs?: number }> {
  const first = performance.now();
  for (let attempt = 0; ; attempt++) {
    const result = await client.open(options);
    if (!isLimitRefusal(result))
      return Object.assign(result, attempt > 0 ? { waitedOut: attempt, waitedMs: performance.now() - first } : {});
    const waited = performance.now() - first;
    if (waited >= releaseWaitMs) return Object.assign(result, { waitedOut: attempt });
    const pauseMs = Math.min(steps[Math.min(attempt, steps.length - 1)]!, releaseWaitMs - waited);
    note(
      `refused with ${STATUS.CONNECTION_LIMIT} while within the key's allowance: a slot closed ` +
        `a moment ago may not be free yet; trying again in ${Math.round(pauseMs)} ms`,
    );
    // Only the pauses are the target's time: a handshake that hangs still runs down the check's limit.
    await waiting(sleep(pauseMs, undefined, { signal }));
  }
}

/** A refusal in a few words for a finding: `HTTP 429 {"status_number":"50009",…}`. */
export const describeRefusalBody = (r: Refusal): string => `HTTP ${r.status} ${r.text.slice(0, 200)}`;
