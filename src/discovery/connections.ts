/**
 * The stream connections discovery opens: one at a time, counted, each closed before the next,
 * through the engine's stream transports.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { streamFactoryFor } from '../transports/stream-factory.ts';
import type { OpenResult, StreamClient, StreamSession } from '../transports/stream.ts';
import { METHOD, STATUS } from '../spec.ts';
import { SOCKETIO_EVENTS } from './candidates.ts';
import { DISCOVERY_WAITS } from '../timing/index.ts';
import type { DiscoveryOptions, StreamCandidate } from './model.ts';
import { statusOf } from './readings.ts';

/** Sends a subscribe of `pairs` and waits for the notice that answers it. */
export async function subscribe(
  session: StreamSession,
  pairs: readonly string[],
  id: string,
  waitMs: number,
): Promise<Record<string, unknown> | undefined> {
  return session
    .request({ id, method: METHOD.subscribe, params: { pairs: [...pairs] } }, waitMs)
    .catch(() => undefined);
}

/**
 * Opens with `key`; a 50009 right after discovery closed a connection of the key is the target
 * not having freed its slot yet (spec: the allowance is not shown, nor how soon a slot is freed),
 * so it is waited out, up to DISCOVERY_WAITS.releaseMs.
 */
async function openWaitingOut(client: StreamClient, key: string | null): Promise<OpenResult> {
  const started = performance.now();
  for (let pause: number = DISCOVERY_WAITS.firstRetryMs; ; pause = Math.min(pause * 2, DISCOVERY_WAITS.maxRetryMs)) {
    const r = await client.open({ key });
    const limited = !r.ok && String(statusOf(r.json)) === STATUS.CONNECTION_LIMIT;
    if (!limited || key === null || performance.now() - started > DISCOVERY_WAITS.releaseMs) return r;
    await sleep(pause);
  }
}

/** Counts the stream connections discovery holds, so none is opened while another is. */
export class Tally {
  open = 0;
  opened = 0;
  most = 0;
  /** When a connection of the primary key last closed: the target may count its slot a while longer. */
  lastKeyClose: number | undefined;
  constructor(private readonly primaryKey: string) {}
  async with<T>(client: StreamClient, run: (r: OpenResult) => Promise<T>, key: string | null): Promise<T> {
    this.open++;
    this.opened++;
    this.most = Math.max(this.most, this.open);
    try {
      const r = await openWaitingOut(client, key);
      try {
        return await run(r);
      } finally {
        if (r.ok) {
          await r.session.close().catch(() => undefined);
          if (key === this.primaryKey) this.lastKeyClose = performance.now();
        }
      }
    } finally {
      this.open--;
    }
  }
}

/** A stream client of a candidate (Socket.IO with the event and namespace to try), recording nothing. */
export function clientFor(
  options: DiscoveryOptions,
  c: StreamCandidate,
  event?: string,
  namespace?: string,
): StreamClient {
  const factory = streamFactoryFor(
    c.transport === 'socketio'
      ? { transport: 'socketio', event: event ?? SOCKETIO_EVENTS[0]!, ...(namespace ? { namespace } : {}) }
      : {},
  );
  return factory({
    url: c.url,
    ...(options.ca ? { ca: options.ca } : {}),
    primaryKey: options.key,
    record: () => undefined,
    redact: options.redact,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/** An error's message, for an observation or a candidate's reason. */
export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
