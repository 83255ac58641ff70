/**
 * A connection refused or reset before the target answered is the network's doing as often as the
 * target's (a proxy restarting, a load balancer dropping an idle flow): an ordinary client tries
 * again after a pause, and so does the harness, a bounded number of times with a growing pause.
 * What still fails afterwards is a network error, which the run reports as such, never as the
 * target breaking a rule.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { NetworkError } from '../errors.ts';
import { NETWORK_RETRY_STEPS_MS } from '../timing/index.ts';
import type { StreamClient } from './stream.ts';

/**
 * A connection that ended before any answer: refused, reset, or broken while sending (the errno,
 * or as the stream transports write it into the message).
 */
const BEFORE_ANSWER = /\b(ECONNREFUSED|ECONNRESET|EPIPE|ECONNABORTED)\b|socket hang up/i;

/** Whether `err` is a connection refused or reset before the target answered. */
export const isTransient = (err: unknown): err is NetworkError =>
  err instanceof NetworkError && BEFORE_ANSWER.test(`${err.errno ?? ''} ${err.message}`);

/**
 * Runs `attempt`, and again after each pause of `steps` while it fails with a connection refused
 * or reset; `note` hears of each retry. The last failure is thrown as it came.
 */
export async function retryingNetwork<T>(
  attempt: () => Promise<T>,
  note: (text: string) => void,
  signal?: AbortSignal,
  steps: readonly number[] = NETWORK_RETRY_STEPS_MS,
): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      if (!isTransient(err) || i >= steps.length || signal?.aborted) throw err;
      note(`${err.message}: the connection ended before any answer; trying again in ${steps[i]} ms`);
      await sleep(steps[i]!, undefined, signal ? { signal } : {});
    }
  }
}

/** A stream client whose handshakes are retried when the connection is refused or reset before the answer. */
export function retryingStream(inner: StreamClient, note: (text: string) => void, signal?: AbortSignal): StreamClient {
  return {
    now: () => inner.now(),
    closeAll: () => inner.closeAll(),
    open: (options) => retryingNetwork(() => inner.open(options), note, signal),
  };
}
