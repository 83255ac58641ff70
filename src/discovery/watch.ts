/**
 * Watching the stream found, with one connection of the key: the listed pairs that refuse a
 * subscribe, which pairs push and move, the push cadence and the unit of the push timestamps.
 */
import type { StreamClient, StreamSession } from '../transports/stream.ts';
import { LIMITS, STATUS } from '../spec.ts';
import { clientFor, errorText, subscribe, type Tally } from './connections.ts';
import { cadenceBand, DISCOVERY_WAITS } from '../timing/index.ts';
import type { DiscoveryOptions, FoundStream, Observe } from './model.ts';
import { refusedPair, statusOf, timestampUnit } from './readings.ts';

/** Most subscribes spent dropping listed pairs that refuse one. */
const SUBSCRIBE_ROUNDS = 6;

/** Subscribes to the listed pairs, dropping each one a subscribe refuses as not found, and tries again. */
async function subscribeListed(
  s: StreamSession,
  listed: readonly string[],
): Promise<{ pairs: string[]; accepted: boolean; refusing: string[] }> {
  const refusing: string[] = [];
  let pairs = listed.slice(0, LIMITS.maxPairsPerSubscribe);
  let accepted = false;
  for (let round = 0; round < SUBSCRIBE_ROUNDS && pairs.length > 0; round++) {
    const notice = await subscribe(s, pairs, `conform-discovery-${round}`, DISCOVERY_WAITS.noticeMs);
    if (!notice) break;
    if (String(notice.code) === STATUS.OK) {
      accepted = true;
      break;
    }
    const refused = String(notice.code) === STATUS.PAIR_NOT_FOUND ? refusedPair(notice, pairs) : undefined;
    if (!refused) break;
    refusing.push(refused);
    pairs = pairs.filter((p) => p !== refused);
  }
  return { pairs, accepted, refusing };
}

/** Watches the pushes of the subscribed `pairs` for a window; returns the pairs that moved. */
async function observePushes(
  client: StreamClient,
  s: StreamSession,
  pairs: readonly string[],
  observe: Observe,
): Promise<string[]> {
  const moving: string[] = [];
  const since = s.pushes().length === 0 ? client.now() : s.pushes()[0]!.atMs;
  await s.next(() => false, DISCOVERY_WAITS.pushWindowMs).catch(() => undefined);
  const byPair = s.pushesByPair(since);
  const intervals: number[] = [];
  let unit: string | undefined;
  for (const [code, pushes] of byPair) {
    const prices = new Set(pushes.map((p) => `${String(p.value.bid)} ${String(p.value.ask)}`));
    if (prices.size > 1 || pushes.length > 1) moving.push(code);
    for (let i = 1; i < pushes.length; i++) intervals.push(pushes[i]!.atMs - pushes[i - 1]!.atMs);
    unit ??= timestampUnit(pushes[0]?.value.sent_at ?? pushes[0]?.value.last_updated);
  }
  intervals.sort((a, b) => a - b);
  // Values a baseline compares are kept coarse (timing jitters from run to run); the figures go in the notes.
  const share = (n: number): string => (n === 0 ? 'none' : n === pairs.length ? 'all' : 'some');
  observe(
    'stream.pushing-pairs',
    share(byPair.size),
    `${byPair.size} of ${pairs.length} subscribed, in ${DISCOVERY_WAITS.pushWindowMs} ms`,
  );
  observe(
    'stream.moving-pairs',
    share(moving.length),
    `${moving.length} whose price changed or that pushed more than once`,
  );
  if (intervals.length > 0) {
    const median = Math.round(intervals[Math.floor(intervals.length / 2)]!);
    observe('stream.push-interval', cadenceBand(median), `median ${median} ms per pair`);
  }
  observe('stream.timestamp-unit', unit ?? 'not seen', 'of sent_at or last_updated');
  return moving;
}

/** What one connection with the key shows: listed pairs that refuse a subscribe, pushes, cadence, units. */
async function watchStream(
  client: StreamClient,
  tally: Tally,
  key: string,
  listed: readonly string[],
  observe: Observe,
): Promise<{ refusing: string[]; moving: string[] }> {
  let refusing: string[] = [];
  let moving: string[] = [];
  await tally.with(
    client,
    async (r) => {
      if (!r.ok) {
        observe('stream.watch', `refused: HTTP ${r.status} status_number ${JSON.stringify(statusOf(r.json))}`);
        return;
      }
      const subscribed = await subscribeListed(r.session, listed);
      refusing = subscribed.refusing;
      if (!subscribed.accepted) return;
      moving = await observePushes(client, r.session, subscribed.pairs, observe);
    },
    key,
  );
  return { refusing, moving };
}

/**
 * Watches the stream found with one connection of the key; returns the pairs that moved and the
 * first listed pair that refused a subscribe (the inactive pair). A failed watch is an observation.
 */
export async function watchFound(
  options: DiscoveryOptions,
  tally: Tally,
  stream: FoundStream,
  listed: readonly string[],
  observe: Observe,
): Promise<{ moving: string[]; inactive?: string }> {
  const client = clientFor(options, stream, stream.event, stream.namespace);
  try {
    const watched = await watchStream(client, tally, options.key, listed, observe);
    observe(
      'stream.refusing-pairs',
      watched.refusing,
      `listed pairs a subscribe refused with ${STATUS.PAIR_NOT_FOUND}`,
    );
    const inactive = watched.refusing[0];
    return { moving: watched.moving, ...(inactive ? { inactive } : {}) };
  } catch (err) {
    observe('stream.watch', `failed: ${errorText(err)}`);
    return { moving: [] };
  } finally {
    await client.closeAll().catch(() => undefined);
  }
}
