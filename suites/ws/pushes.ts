/**
 * Pushes as the checks wait for them: a pair's next pushes, the cadence its first pushes show, the
 * push times the stream windows are measured against (src/timing/stream-windows.ts), and whether a
 * pair that stayed silent had a price that moved (its REST price read again).
 */
import { Decimal } from 'decimal.js';
import type { CheckContext } from '../../src/check.ts';
import { PATHS, QUERY } from '../../src/spec.ts';
import {
  CADENCE_PUSHES,
  cadenceWaitMs,
  MOVE_POLL_MS,
  STOP_RECORD_STEP_MS,
  type PushTimes,
} from '../../src/timing/index.ts';
import { isPush, jsonObject, type StreamSession } from '../../src/transports/stream.ts';
import { places } from './rules.ts';
import { isSilence, pause, until } from './sessions.ts';

/** Waits until `pair` has pushed at least `count` frames since `sinceMs`; false on timeout or close. */
export async function awaitPushes(
  session: StreamSession,
  pair: string,
  count: number,
  sinceMs: number,
  timeoutMs: number,
): Promise<boolean> {
  let have = session.pushes({ pair, sinceMs }).length;
  if (have >= count) return true;
  try {
    // Counts each new frame once: a flooding peer costs O(1) per frame, not a rescan.
    await session.next((f) => {
      if (f.atMs >= sinceMs && isPush(f) && jsonObject(f)!.code === pair) have++;
      return have >= count;
    }, timeoutMs);
    return true;
  } catch (err) {
    if (isSilence(err)) return false;
    throw err;
  }
}

/**
 * Waits, up to a push wait, for a third push of each of `pairs`, whose gaps the window for frames
 * in flight is measured against: a service may push a snapshot right after the subscribe, so the
 * gap between the first two pushes can be far shorter than the cadence. Decides nothing: a pair
 * that pushes only on change may not push again.
 */
export async function learnCadence(ctx: CheckContext, session: StreamSession, pairs: readonly string[]): Promise<void> {
  await Promise.all(pairs.map((p) => awaitPushes(session, p, CADENCE_PUSHES, 0, cadenceWaitMs(ctx.waits))));
}

/** When each push of `session` arrived, by pair (pushes whose code is no string are left out). */
export function pushTimes(session: StreamSession): PushTimes {
  const times = new Map<string, number[]>();
  for (const p of session.pushes()) {
    if (typeof p.value.code !== 'string') continue;
    const list = times.get(p.value.code);
    if (list) list.push(p.atMs);
    else times.set(p.value.code, [p.atMs]);
  }
  return times;
}

/** Records how many pushes of `pair` arrived within the in-flight window after the stop (at `stopMs`). */
export function observeInFlight(
  ctx: CheckContext,
  session: StreamSession,
  pair: string,
  stopMs: number,
  windowMs: number,
): void {
  const within = session.pushes({ pair, sinceMs: stopMs }).filter((p) => p.atMs < stopMs + windowMs);
  ctx.observe(
    'in-flight-pushes',
    within.length,
    `pushes of ${pair} within ${windowMs} ms after the notice that stopped them`,
  );
  // In steps, so that a baseline shows a target that starts stopping later, not timer jitter.
  const last = within.at(-1)?.atMs;
  ctx.observe(
    'stopped-within-ms',
    last === undefined ? 0 : Math.ceil((last - stopMs) / STOP_RECORD_STEP_MS) * STOP_RECORD_STEP_MS,
    `when the last push of ${pair} came after the notice that stopped it, in ${STOP_RECORD_STEP_MS} ms steps`,
  );
}

/**
 * A pair's REST price as one comparable value: ask, bid and price as numbers (so "1.50" and "1.5"
 * agree, whatever decimals a channel prints), or undefined when the read carries no price.
 */
export async function restQuote(ctx: CheckContext, pair: string): Promise<string | undefined> {
  const res = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: pair } });
  const data = (res.json as { data?: unknown } | undefined)?.data as Record<string, unknown> | null | undefined;
  if (!data || typeof data !== 'object') return undefined;
  const parts = [data.ask, data.bid, data.price].map((v) =>
    places(v) === undefined ? undefined : new Decimal(v as string).toString(),
  );
  return parts.includes(undefined) ? undefined : parts.join(' ');
}

/** REST quotes of several pairs, read one after the other. */
export async function restQuotes(
  ctx: CheckContext,
  pairs: readonly string[],
): Promise<Map<string, string | undefined>> {
  const out = new Map<string, string | undefined>();
  for (const pair of pairs) out.set(pair, await restQuote(ctx, pair));
  return out;
}

/**
 * REST quotes of `pairs` read once `atMs` has come (the cutoff after a stop, say): the baseline of a
 * move after `atMs`. A move before it may rightly have been pushed before it, so measured from an
 * earlier read it would count as a move owed a push after `atMs`, and a still-subscribed pair that
 * moved once and then held would fail. Started at once and awaited later, beside the watch.
 */
export function quotesAt(
  ctx: CheckContext,
  pairs: readonly string[],
  atMs: number,
): Promise<Map<string, string | undefined>> {
  const read = (async () => {
    await until(ctx, atMs);
    return restQuotes(ctx, pairs);
  })();
  // Awaited only later, or never when the check ends first: a failed read must not go unhandled.
  read.catch(() => undefined);
  return read;
}

/**
 * The `pairs` whose REST price moved away from `before` within `ms`, reading them again every
 * MOVE_POLL_MS until all have moved or the time is up. Pushes may wait for a change (on-change
 * services), so a pair only shows whether it is still pushed once its price has moved.
 */
export async function movedWithin(
  ctx: CheckContext,
  pairs: readonly string[],
  before: ReadonlyMap<string, string | undefined>,
  ms: number,
): Promise<string[]> {
  const moved = new Set<string>();
  const end = ctx.stream.now() + ms;
  for (;;) {
    for (const p of pairs) {
      if (moved.has(p) || before.get(p) === undefined) continue;
      const now = await restQuote(ctx, p);
      if (now !== undefined && now !== before.get(p)) {
        moved.add(p);
        ctx.pairLedger.moved(p);
      }
    }
    if (moved.size === pairs.length || ctx.stream.now() >= end) return pairs.filter((p) => moved.has(p));
    await pause(MOVE_POLL_MS, ctx);
  }
}

/**
 * Whether `pair`, still subscribed, goes on being pushed after `sinceMs`: true once it pushes; false
 * when its REST price moved away from `before` and no push followed within a push wait; undefined
 * when it neither pushed nor moved (a pair may stay quiet for a while when pushes come on change).
 * `before` is read at `sinceMs` or later (`quotesAt`): pushes count from `sinceMs`, so only a move
 * after it owes one.
 */
export async function keptPushing(
  ctx: CheckContext,
  session: StreamSession,
  pair: string,
  before: ReadonlyMap<string, string | undefined>,
  sinceMs: number,
): Promise<boolean | undefined> {
  if (await awaitPushes(session, pair, 1, sinceMs, ctx.waits.pushMs)) return true;
  await skipIfClosed(ctx, session, `a push of ${pair} came`);
  if ((await movedWithin(ctx, [pair], before, ctx.waits.pushMs)).length === 0) return undefined;
  if (await awaitPushes(session, pair, 1, sinceMs, ctx.waits.pushMs)) return true;
  await skipIfClosed(ctx, session, `a push of ${pair} came`);
  return false;
}

/**
 * Ends the check with a skip when the target has closed `session`: a connection it closed (its
 * keep-alive, say) stops every push, so the silence that follows says nothing of the rule waited
 * on, and the close is the keep-alive checks' to judge.
 */
export async function skipIfClosed(ctx: CheckContext, session: StreamSession, waitedFor: string): Promise<void> {
  if (session.isOpen) return;
  const c = await session.closed;
  ctx.skip(
    `the target closed the connection (${c.code}, by ${c.by}) before ${waitedFor}: the silence ` +
      'after a close says nothing of this rule (the keep-alive checks judge the close)',
  );
}

/**
 * Sorts the `pairs` that sent no push since `sinceMs` into those whose price moved and those that
 * stayed quiet. The spec shows no push interval or trigger, so silence alone proves nothing: each
 * silent pair is read on REST again, and one whose price moved since `before` is given another
 * push wait (a slow cadence may batch the change) before it counts as `missed`. A pair whose price
 * did not move, or could not be read, is `quiet`: nothing to judge.
 */
export async function unpushedMoves(
  ctx: CheckContext,
  session: StreamSession,
  pairs: readonly string[],
  before: ReadonlyMap<string, string | undefined>,
  sinceMs: number,
): Promise<{ missed: string[]; quiet: string[] }> {
  const silent = pairs.filter((p) => session.pushes({ pair: p, sinceMs }).length === 0);
  const after = await restQuotes(ctx, silent);
  const moved = silent.filter(
    (p) => before.get(p) !== undefined && after.get(p) !== undefined && before.get(p) !== after.get(p),
  );
  for (const p of moved) ctx.pairLedger.moved(p);
  await Promise.all(moved.map((p) => awaitPushes(session, p, 1, sinceMs, ctx.waits.pushMs)));
  if (moved.some((p) => session.pushes({ pair: p, sinceMs }).length === 0))
    await skipIfClosed(ctx, session, `a push of ${moved.join(', ')} came`);
  return {
    missed: moved.filter((p) => session.pushes({ pair: p, sinceMs }).length === 0),
    quiet: silent.filter((p) => !moved.includes(p)),
  };
}

/**
 * Ends a check whose rule is about pushes when none arrived: nothing to judge, and the missing
 * pushes are ws.subscribe.pushes-start's failure, reported there once.
 */
export function noPushes(ctx: CheckContext, what: string): never {
  return ctx.skip(
    `${what}: no push arrived, so this rule cannot be observed (ws.subscribe.pushes-start judges the missing pushes)`,
  );
}

/**
 * A stopped pair's silence proves its pushes stopped only if the target would have pushed it: a
 * service that pushes the same price again (seen on `session` before the stop) would have; one that
 * may push only on change sends nothing for a pair that did not move, subscribed or not. Skips the
 * check, saying so, when such a target's REST price for `pair` stayed where it was at the stop (`before`).
 */
export async function stoppedPairMoved(
  ctx: CheckContext,
  session: StreamSession,
  pair: string,
  before: ReadonlyMap<string, string | undefined>,
  stop: string,
): Promise<void> {
  const prices = session.pushes({ pair }).map((p) => p.value.price);
  if (prices.some((p, i) => i > 0 && p === prices[i - 1])) return;
  if ((await movedWithin(ctx, [pair], before, ctx.waits.pushMs)).length > 0) return;
  ctx.skip(
    `no push for ${pair} after ${stop}, but its REST price did not move within ${ctx.waits.pushMs} ms either, ` +
      'so its silence does not show its pushes stopped (the push trigger is not shown)',
  );
}
