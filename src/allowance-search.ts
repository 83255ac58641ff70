/**
 * The search for a key's allowance the profile does not state (spec: Limits, "WebSocket connections
 * per API key": the allowance differs by key and is not shown): connections opened one at a time
 * until a 50009, then the time the target takes to free a closed connection's slot.
 */
import { performance } from 'node:perf_hooks';
import type { Allowance } from './check.ts';
import { STATUS } from './spec.ts';
import { ALLOWANCE_SEARCH_MAX_MS, RELEASE_TIMING_STEP_MS } from './timing/index.ts';
import type { OpenResult, Refusal, StreamClient, StreamSession } from './transports/stream.ts';
import { isLimitRefusal, openWaitingOut, refusalStatus } from './limit-refusal.ts';

/**
 * Most connections opened to find an allowance the profile does not state: more than a run holds
 * at once (4 checks and 3 keep-alive lanes, one connection each), few enough to open in well
 * under a second on any service. A key that accepts them all is lent this many.
 */
export const DISCOVERY_CAP = 10;

/** The allowance when every connection opened was accepted until `why` (the cap, or the time the search may take). */
function acceptedAll(count: number, steps: string[], why: string): Allowance {
  return {
    lent: count,
    connections: count,
    source: 'at-least',
    steps,
    note: `${count} connection(s) accepted before ${why}, none refused: the allowance is at least that`,
  };
}

/** The allowance when connection `n` failed (`why`) after `count` were accepted. */
function failedAt(count: number, n: number, steps: string[], why: string): Allowance {
  if (count > 0)
    return {
      lent: count,
      connections: count,
      source: 'at-least',
      steps,
      note: `${count} connection(s) accepted, then connection ${n} failed: the allowance is at least ${count}`,
    };
  // A stream that completes no handshake cannot be pushed over its allowance, and lending it one
  // connection at a time would only make every check wait out the last one's failure.
  return {
    lent: DISCOVERY_CAP,
    source: 'unknown',
    steps,
    note: `the first connection failed (${why}): lent as many at a time as the search would have opened`,
  };
}

/** The step line of connection `n` refused. */
const refusalStep = (n: number, result: Refusal): string =>
  `connection ${n}: refused, HTTP ${result.status}, status_number ${JSON.stringify(refusalStatus(result))}` +
  (isLimitRefusal(result) && refusalStatus(result) !== STATUS.CONNECTION_LIMIT
    ? `, ${STATUS.CONNECTION_LIMIT} under code`
    : '');

/** The allowance when connection `n` was refused after `count` were accepted: found when a 50009 refused it. */
function refusedAt(count: number, n: number, steps: string[], result: Refusal): Allowance {
  if (isLimitRefusal(result) && count > 0)
    return {
      lent: count,
      connections: count,
      source: 'found',
      steps,
      note: `${count} connection(s) accepted, connection ${n} refused with ${STATUS.CONNECTION_LIMIT}`,
    };
  return {
    lent: Math.max(1, count),
    source: 'unknown',
    steps,
    note:
      `connection ${n} refused with status_number ${JSON.stringify(refusalStatus(result))} ` +
      `(HTTP ${result.status}), not ${STATUS.CONNECTION_LIMIT}: ` +
      `${count > 0 ? `lent ${count} at a time` : 'lent one connection at a time'}`,
  };
}

/**
 * Opens connections of `key` one at a time until a 50009, another refusal, an error or the cap;
 * closes them all. When a 50009 ended the search, it also times how long the target takes to free
 * a closed connection's slot (one closed, the next open retried until accepted), so that checks
 * are not lent a slot the target still counts.
 */
export async function findAllowance(
  client: StreamClient,
  key: string,
  signal: AbortSignal,
  releaseWaitMs: number,
): Promise<{ allowance: Allowance; opened: number; releaseMs?: number }> {
  const sessions: StreamSession[] = [];
  const steps: string[] = [];
  let started = performance.now();
  let allowance: Allowance | undefined;
  let releaseMs: number | undefined;
  try {
    while (!allowance) {
      const n = sessions.length + 1;
      if (n > DISCOVERY_CAP || performance.now() - started > ALLOWANCE_SEARCH_MAX_MS) {
        const why =
          n > DISCOVERY_CAP ? `the cap of ${DISCOVERY_CAP}` : `the ${ALLOWANCE_SEARCH_MAX_MS} ms the search may take`;
        allowance = acceptedAll(sessions.length, steps, why);
        break;
      }
      let result: OpenResult;
      try {
        // The first connection is waited out like any other within the allowance: a key that can
        // stream allows one, and a slot of an earlier run may not be free yet.
        result =
          n === 1
            ? await openWaitingOut(client, { key }, signal, () => undefined, releaseWaitMs)
            : await client.open({ key });
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        steps.push(`connection ${n}: ${why}`);
        allowance = failedAt(sessions.length, n, steps, why);
        break;
      }
      if (result.ok) {
        sessions.push(result.session);
        steps.push(`connection ${n}: accepted`);
        // Waiting out a slot an earlier run still held is not the search's time.
        if (n === 1) started = performance.now();
        continue;
      }
      steps.push(refusalStep(n, result));
      allowance = refusedAt(sessions.length, n, steps, result);
      if (allowance.source === 'found') {
        releaseMs = await timeRelease(client, key, sessions, signal, releaseWaitMs);
        if (releaseMs !== undefined) steps.push(`one closed: its slot was free again after ${releaseMs} ms`);
      }
    }
  } finally {
    await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  }
  return { allowance, opened: sessions.length, ...(releaseMs === undefined ? {} : { releaseMs }) };
}

/**
 * Closes the last of `sessions` and reopens until accepted (at most `releaseWaitMs`); the ms from
 * close to accepted, or undefined.
 */
async function timeRelease(
  client: StreamClient,
  key: string,
  sessions: StreamSession[],
  signal: AbortSignal,
  releaseWaitMs: number,
): Promise<number | undefined> {
  const closed = await sessions.pop()!.close();
  // A dozen refusals over 3 s at most.
  const again = await openWaitingOut(client, { key }, signal, () => undefined, releaseWaitMs, [
    RELEASE_TIMING_STEP_MS,
  ]).catch(() => undefined);
  if (!again?.ok) return undefined;
  sessions.push(again.session);
  // Accepted at the first attempt: the slot was free by the time we asked.
  return again.waitedOut ? Math.max(0, Math.round(again.session.startedAtMs - closed.atMs)) : 0;
}
