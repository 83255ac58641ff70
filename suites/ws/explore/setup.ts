/**
 * What the explorer learns before its first sequence: the keys it may open (every key of the
 * profile that streams, with the allowance the run's connection budget knows), the pool of pairs
 * the target takes (listed pairs, a refused one replaced as every stream check replaces it), the
 * pairs each key may not read, a full list of the pair limit, and the watching connection, a
 * connection of the primary key subscribed to the pool whose pushes show when each pair's price
 * moves.
 */
import type { CheckContext } from '../../../src/check.ts';
import { CheckSkipped } from '../../../src/context.ts';
import { LIMITS, parsePairCode } from '../../../src/spec.ts';
import { CADENCE_PUSHES, keepAliveTiming, longIdleMs, shortIdleMs } from '../../../src/timing/index.ts';
import type { StreamSession } from '../../../src/transports/stream.ts';
import type { KeyFacts, ModelSetup } from '../../../src/explore/model.ts';
import { ask, unsubscribe } from '../notices.ts';
import { livePairs, streamPairs, subscribeListed, UNKNOWN_PAIR } from '../pair-choice.ts';
import { learnCadence } from '../pushes.ts';
import { keepOpen, openSession } from '../sessions.ts';

/** Keys of the profile that stream, in the order commands index them (the primary key first). */
const STREAM_KEYS = ['primary', 'limited', 'cryptoOnly', 'whitelisted', 'secondary'] as const;
/** Pairs of the pool the sequences subscribe to: few, so that sequences overlap. */
const POOL = 4;

/** The explorer's setup: the model's facts, the key values by name, and the watching connection. */
export interface ExploreSetup {
  model: ModelSetup;
  keyValues: ReadonlyMap<string, string>;
  /** The watching connection, when the primary key allows one beside the sequences' connections. */
  watch?: StreamSession;
}

/** The profile's keys that stream, with their values. */
function streamKeys(ctx: CheckContext): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of STREAM_KEYS) {
    const key = (ctx.profile.keys[name] as { key?: unknown } | undefined)?.key;
    if (typeof key === 'string' && ![...out.values()].includes(key)) out.set(name, key);
  }
  return out;
}

/** Whether a key may read a pair, by what the profile states of it (asset types, whitelist). */
function permits(ctx: CheckContext, name: string, pair: string): boolean {
  const entry = ctx.profile.keys[name] as { assetTypes?: unknown; pairs?: unknown } | undefined;
  const types = Array.isArray(entry?.assetTypes) ? (entry.assetTypes as string[]) : undefined;
  const pairs = Array.isArray(entry?.pairs) ? (entry.pairs as string[]) : undefined;
  if (types && !types.includes(parsePairCode(pair)?.assetType ?? '')) return false;
  return !pairs || pairs.includes(pair);
}

/** A list of exactly the pair limit the target takes, beside the pool; undefined when the catalogue is smaller. */
async function atLimit(
  ctx: CheckContext,
  watch: StreamSession,
  pool: readonly string[],
): Promise<string[] | undefined> {
  const listed = (await streamPairs(ctx, LIMITS.maxPairsPerSubscribe + pool.length)).filter((p) => !pool.includes(p));
  const want = listed.length >= LIMITS.maxPairsPerSubscribe ? listed.slice(0, LIMITS.maxPairsPerSubscribe) : undefined;
  if (!want) return undefined;
  // A catalogue whose spare pairs are refused (inactive or suspended) gives no full list: the
  // explorer goes on without one rather than skip.
  const got = await subscribeListed(ctx, watch, want, 'explore-limit').catch((err: unknown) => {
    if (err instanceof CheckSkipped) return undefined;
    throw err;
  });
  if (!got) return undefined;
  const { notice, pairs } = got;
  if (String(notice.code) !== '200' || pairs.length !== LIMITS.maxPairsPerSubscribe) return undefined;
  // Emptied before the pool is subscribed, so that no earlier set stands beside the watching one.
  await ask(ctx, watch, unsubscribe(pairs, 'explore-limit-off'), 'the unsubscribe of the limit list answered');
  return pairs;
}

/**
 * Learns the keys and pairs, and opens the watching connection. Skips the check when the primary
 * key lists no pair the target takes.
 */
export async function exploreSetup(ctx: CheckContext): Promise<ExploreSetup> {
  const keyValues = streamKeys(ctx);
  const whitelist = (ctx.profile.keys.whitelisted?.pairs as string[] | undefined) ?? [];
  const types = (ctx.profile.keys.cryptoOnly?.assetTypes as string[] | undefined) ?? [];
  // Pairs whose market is open first: a pair that does not move shows nothing of a subscription. The
  // keys limited to asset types or a whitelist get pairs of their own.
  const live = await livePairs(ctx, POOL);
  const typed = types.length ? await streamPairs(ctx, POOL, { assetType: types[0]! }) : [];
  const listed = [...new Set([...live, ...(await streamPairs(ctx, POOL)), ...typed, ...whitelist])];
  if (listed.length === 0) ctx.skip('the primary key lists no pair to subscribe to');
  const primaryLent = ctx.connections.allowance(keyValues.get('primary')).lent;
  // The watching connection takes a slot of the primary key: only where one is left for the sequences.
  const watch = primaryLent >= 2 ? await openSession(ctx, { keepAlive: false }) : undefined;
  if (watch) keepOpen(ctx, watch);
  let pool = listed;
  let limit: string[] | undefined;
  if (watch) {
    // Beside the pairs that move only (the primary key's pool comes from them): a catalogue a little
    // larger than the limit still gives a full list, and a later subscribe of the pool goes past it.
    limit = await atLimit(ctx, watch, live.length ? live : listed);
    const { notice, pairs } = await subscribeListed(ctx, watch, listed, 'explore-watch');
    if (String(notice.code) !== '200')
      ctx.skip(`the watching connection's subscribe was refused: ${JSON.stringify(notice)}`);
    // The pairs the watching connection sees move come first in each key's pool.
    await learnCadence(ctx, watch, pairs);
    const moves = (p: string): number => Math.min(CADENCE_PUSHES, watch.pushes({ pair: p }).length);
    pool = [...pairs].sort((a, b) => moves(b) - moves(a));
  } else ctx.note('the primary key allows one connection: missing pushes are not judged (no watching connection)');
  const accepted = new Set([...pool, ...(limit ?? [])]);
  const keys: KeyFacts[] = [...keyValues.keys()].map((name) => {
    const allowance = ctx.connections.allowance(keyValues.get(name));
    return {
      name,
      ...(allowance.source === 'profile' || allowance.source === 'found' ? { allowance: allowance.connections! } : {}),
      pairs: pool.filter((p) => permits(ctx, name, p)).slice(0, POOL),
      refused: pool.filter((p) => !permits(ctx, name, p)),
    };
  });
  const k = keepAliveTiming(ctx.profile);
  return {
    keyValues,
    ...(watch ? { watch } : {}),
    model: {
      keys,
      unknownPair: UNKNOWN_PAIR,
      ...(limit ? { atLimit: limit } : {}),
      accepted,
      idleMs: { short: shortIdleMs(k), long: longIdleMs(k) },
    },
  };
}
