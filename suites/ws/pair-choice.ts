/**
 * Steps the WebSocket checks share: open a session within the key's allowance, keep it alive,
 * find pairs to subscribe to, send a request and read its notice, compare a notice with what the
 * spec requires. A target that does not answer breaks a rule (fail); a harness that breaks is an error.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Decimal } from 'decimal.js';
import type { CheckContext } from '../../src/check.ts';
import {
  CADENCE_PUSHES,
  cadenceWaitMs,
  keepAliveTiming,
  keepOpenPingMs,
  MOVE_POLL_MS,
  REPLACE_GAP_MS,
  type PushTimes,
} from '../../src/timing/index.ts';
import { NOTHING_TO_JUDGE } from '../../src/coverage.ts';
import { StreamClosedError, WaitTimeoutError } from '../../src/errors.ts';
import { METHOD, PATHS, QUERY, STATUS, parsePairCode } from '../../src/spec.ts';
import {
  isNotice,
  isPush,
  jsonObject,
  type CloseInfo,
  type InboundFrame,
  type JsonObject,
  type OpenOptions,
  type OpenResult,
  type Refusal,
  type StreamSession,
} from '../../src/transports/stream.ts';
import { places } from './rules.ts';
import { pairPerAssetType } from '../rest/support.ts';

/** Whether an error is the target not answering (timeout, close) rather than the harness breaking. */
export function isSilence(err: unknown): err is WaitTimeoutError | StreamClosedError {
  return err instanceof WaitTimeoutError || err instanceof StreamClosedError;
}

// ---------------------------------------------------------------------------------------------
// Connections. The engine lends each key's allowance (src/connection-budget.ts): `ctx.stream.open()`
// waits for a slot, waits out a 50009 the target owes to a slot it has not freed yet, and gives the
// slot back when the session closes. Checks never count connections themselves.

/** `status_number` of a refusal body, when it has one. */
export { refusalStatus } from '../../src/limit-refusal.ts';

/** Opens a session within the key's allowance; a refusal comes back as data for the check to judge. */
export function tryOpen(ctx: CheckContext, options: OpenOptions = {}): Promise<OpenResult> {
  return ctx.stream.open(options);
}

/** Describes a refusal in one line for a violation. */
export const describeRefusal = (r: Refusal): string => `handshake refused: HTTP ${r.status} ${r.text.slice(0, 300)}`;

/**
 * Opens a session that must be accepted (a key with stream access); a refusal fails the check.
 * `keepAlive` pings every window/3 so that checks longer than a short test window are not
 * closed under them; ping and keep-alive checks turn it off.
 */
export async function openSession(
  ctx: CheckContext,
  options: OpenOptions & { keepAlive?: boolean } = {},
): Promise<StreamSession> {
  const { keepAlive = true, ...open } = options;
  const result = await tryOpen(ctx, open);
  if (!result.ok)
    ctx.fail({
      received: describeRefusal(result),
      expected: 'a valid key with stream access is accepted (spec: Authentication)',
    });
  const session = result.session;
  if (keepAlive) keepOpen(ctx, session);
  return session;
}

/**
 * Pings `session` every window/3 until it closes, so that the target's keep-alive window never
 * closes it under a check.
 */
export function keepOpen(ctx: CheckContext, session: StreamSession): void {
  const every = keepOpenPingMs(keepAliveTiming(ctx.profile));
  const timer = setInterval(() => {
    if (session.isOpen) session.send({ method: METHOD.ping });
  }, every);
  void session.closed.then(() => clearInterval(timer));
}

/** Waits for a frame; no frame (timeout or close) fails the check with `expected`. */
export async function waitFrame(
  ctx: CheckContext,
  session: StreamSession,
  predicate: (f: InboundFrame) => boolean,
  expected: string,
  timeoutMs?: number,
): Promise<InboundFrame> {
  try {
    return await session.next(predicate, timeoutMs ?? ctx.waits.noticeMs);
  } catch (err) {
    if (isSilence(err)) ctx.fail({ received: silence(err, timeoutMs ?? ctx.waits.noticeMs), expected });
    throw err;
  }
}

/** What the target's silence looked like: a timeout or a close. */
function silence(err: WaitTimeoutError | StreamClosedError, timeoutMs: number): string {
  return err instanceof WaitTimeoutError ? `no frame within ${timeoutMs} ms` : err.message;
}

/** A sent message, short, for a violation line. */
const preview = (message: unknown): string => {
  const text = typeof message === 'string' ? message : JSON.stringify(message);
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
};

/** Sends a message; a connection the target already closed fails the check with `expected`. */
export function sendOrFail(ctx: CheckContext, session: StreamSession, message: unknown, expected: string): void {
  try {
    if (typeof message === 'string') session.sendText(message);
    else session.send(message);
  } catch (err) {
    if (isSilence(err)) ctx.fail({ received: err.message, expected });
    throw err;
  }
}

/**
 * Whether `notice` answers `message`: it echoes the id, or it carries no id (or the request had
 * none) and its method is the request's or `error`. Ids are judged by ws.notice.id-echo alone, so
 * a target that drops them fails that check, not every check; a notice about something else
 * (another id, another method) is not taken for the answer.
 */
export function answers(message: unknown, notice: JsonObject): boolean {
  const sent = message !== null && typeof message === 'object' ? (message as JsonObject) : {};
  const sentId = typeof sent.id === 'string' ? sent.id : undefined;
  if (sentId !== undefined && notice.id === sentId) return true;
  if (sentId !== undefined && notice.id !== undefined) return false;
  return notice.method === METHOD.error || (sent.method !== undefined && notice.method === sent.method);
}

/** Sends `message` and resolves with the notice that answers it (see `answers`). */
export async function ask(
  ctx: CheckContext,
  session: StreamSession,
  message: unknown,
  expected: string,
  timeoutMs = ctx.waits.noticeMs,
): Promise<JsonObject> {
  const reply = session.next((f) => isNotice(f) && answers(message, jsonObject(f)!), timeoutMs);
  reply.catch(() => undefined);
  try {
    // A send on a connection the target already closed is the target's doing too.
    if (typeof message === 'string') session.sendText(message);
    else session.send(message);
    return jsonObject(await reply)!;
  } catch (err) {
    if (isSilence(err))
      ctx.fail({
        received: `${silence(err, timeoutMs)} answering ${preview(message)}`,
        expected: `a notice: ${expected}`,
      });
    throw err;
  }
}

/** What a notice must carry; `message` a string or a rule. */
export interface NoticeExpectation {
  method: string;
  code: string;
  message?: string | { test(s: string): boolean; describe: string };
  id?: string;
  /** `data` must be null when present (the notice table marks it not required). */
  dataNull?: boolean;
  /** Compare `code` by value only (200 and "200" alike): its type is ws.notice.schema's rule. */
  looseCode?: boolean;
}

/** Records a violation for every field of `notice` that differs from `want`; returns whether all matched. */
export function expectNotice(ctx: CheckContext, notice: JsonObject, want: NoticeExpectation, what: string): boolean {
  let ok = true;
  const bad = (field: string, expected: string): void => {
    ok = false;
    ctx.violation({
      received:
        `${what}: ${field} ${field in notice ? JSON.stringify(notice[field]) : 'absent'} ` +
        `in ${JSON.stringify(notice)}`,
      expected: `${field} ${expected}`,
    });
  };
  if (notice.method !== want.method) bad('method', JSON.stringify(want.method));
  if (want.looseCode ? String(notice.code) !== want.code : notice.code !== want.code)
    bad('code', want.looseCode ? JSON.stringify(want.code) : `${JSON.stringify(want.code)} (a string)`);
  if (typeof want.message === 'string' && notice.message !== want.message) bad('message', JSON.stringify(want.message));
  if (
    want.message &&
    typeof want.message === 'object' &&
    !(typeof notice.message === 'string' && want.message.test(notice.message))
  )
    bad('message', want.message.describe);
  if (want.id !== undefined && notice.id !== want.id) bad('id', `${JSON.stringify(want.id)} (echoed)`);
  if (want.dataNull && 'data' in notice && notice.data !== null) bad('data', 'null when present');
  return ok;
}

/** The subscribe request of the spec. */
export const subscribe = (pairs: unknown, id?: string): JsonObject => ({
  ...(id ? { id } : {}),
  method: METHOD.subscribe,
  params: { pairs },
});
export const unsubscribe = (pairs: unknown, id?: string): JsonObject => ({
  ...(id ? { id } : {}),
  method: METHOD.unsubscribe,
  params: { pairs },
});

// ---------------------------------------------------------------------------------------------
// Subscribing to listed pairs. /v1/pairs may list pairs that are inactive or suspended, and a
// subscribe naming one is rightly refused with 50104 (spec: Errors, 50104): for a check about
// another rule that is an observation, recorded in the run's pair ledger (ctx.pairLedger) so that no
// later check picks the pair again, and the pair is replaced by another listed one.

/**
 * Listed pairs a check replaces at most before it gives up on finding subscribable ones: this many,
 * or as many as it subscribes to at once.
 */
const MAX_REPLACED = 5;

/** What a replacement pair must be: of one asset type, or with an open market (REST 200). */
export interface PairNeeds {
  assetType?: string;
  live?: boolean;
}

const isSuccess = (notice: JsonObject): boolean => String(notice.code) === STATUS.OK && notice.method !== METHOD.error;

/**
 * The listed pair of `pairs` that `notice` refuses with 50104, when it names one (or `pairs` has
 * one only). The profile's `pairs.inactive` is no listed pair that happens to be refused: its
 * 50104 is a rule of its own (ws.subscribe.inactive-pair); nor is a pair the run saw accepted.
 */
function refusedListed(ctx: CheckContext, notice: JsonObject, pairs: readonly string[]): string | undefined {
  if (String(notice.code) !== STATUS.PAIR_NOT_FOUND) return undefined;
  const message = typeof notice.message === 'string' ? notice.message : '';
  const named = pairs.length === 1 ? pairs[0] : pairs.find((p) => message.includes(p));
  // A pair the run saw accepted is subscribable: its 50104 is the caller's to judge.
  return named === ctx.profile.pairs?.inactive || (named && ctx.pairLedger.isAccepted(named)) ? undefined : named;
}

/** Subscribes to each pair not yet seen accepted on its own, to find which one a 50104 that names none refused. */
async function probeRefused(
  ctx: CheckContext,
  session: StreamSession,
  pairs: readonly string[],
  id: string | undefined,
): Promise<string | undefined> {
  for (const [i, pair] of pairs.entries()) {
    if (ctx.pairLedger.isAccepted(pair)) continue;
    if (i > 0) await pause(REPLACE_GAP_MS, ctx);
    const notice = await ask(ctx, session, subscribe([pair], `${id ?? 'conform'}-probe-${i}`), `a notice for ${pair}`);
    if (isSuccess(notice)) ctx.pairLedger.accepted([pair]);
    else if (refusedListed(ctx, notice, [pair]) === pair) return pair;
  }
  return undefined;
}

/** Another listed pair for `refused`, not among `taken`, preferring what the run saw work. */
async function replacement(ctx: CheckContext, taken: readonly string[], needs: PairNeeds): Promise<string | undefined> {
  const want = taken.length + 1;
  const more = needs.live ? await livePairs(ctx, want) : await streamPairs(ctx, want, needs);
  return more.find((p) => !taken.includes(p));
}

/**
 * Sends a subscribe for `pairs` and resolves with its answer and the pairs it was for. A 50104 for
 * a listed pair (not the profile's `pairs.inactive`) is recorded and observed, and the pair replaced
 * by another listed one (of the same asset type, or live, per `needs`); the subscribe is sent again.
 * Any other answer is the caller's to judge.
 */
export async function subscribeListed(
  ctx: CheckContext,
  session: StreamSession,
  pairs: readonly string[],
  id?: string,
  needs: PairNeeds = {},
): Promise<{ notice: JsonObject; pairs: string[] }> {
  let current = [...pairs];
  for (let replaced = 0; ; replaced++) {
    const notice = await ask(ctx, session, subscribe(current, id), `subscribe ${current.length} pair(s) answered`);
    if (isSuccess(notice)) {
      ctx.pairLedger.accepted(current);
      return { notice, pairs: current };
    }
    if (String(notice.code) !== STATUS.PAIR_NOT_FOUND) return { notice, pairs: current };
    const refused = refusedListed(ctx, notice, current) ?? (await probeRefused(ctx, session, current, id));
    if (refused === undefined) return { notice, pairs: current };
    ctx.pairLedger.refused(refused, JSON.stringify(notice));
    ctx.observe(
      'listed-pair-refused',
      refused,
      `listed in the catalogue, but a subscribe is refused with ${STATUS.PAIR_NOT_FOUND} (inactive or suspended, ` +
        'which the spec allows); another listed pair is taken instead',
    );
    const next = replaced < Math.max(MAX_REPLACED, pairs.length) ? await replacement(ctx, current, needs) : undefined;
    if (next === undefined)
      return ctx.skip(
        `${refused} and ${replaced} other listed pair(s) are refused with ${STATUS.PAIR_NOT_FOUND} ` +
          '(inactive or suspended), and no other listed pair is left to subscribe to',
      );
    current = current.map((p) => (p === refused ? next : p));
    await pause(REPLACE_GAP_MS, ctx);
  }
}

/**
 * Subscribes as the setup of a later step and requires success; resolves with the pairs
 * subscribed (a listed pair refused with 50104 replaced, see subscribeListed). Success is read
 * loosely (code 200 as a string or a number, any method but error): the exact notice is
 * ws.subscribe.notice's rule, so a wrong notice fails that check and not every check that subscribes.
 */
export async function subscribeOk(
  ctx: CheckContext,
  session: StreamSession,
  pairs: readonly string[],
  id = 'conform-sub',
  needs: PairNeeds = {},
): Promise<string[]> {
  const { notice, pairs: subscribed } = await subscribeListed(ctx, session, pairs, id, needs);
  if (!isSuccess(notice))
    ctx.fail({
      received: `subscribe to ${subscribed.join(', ')} answered ${JSON.stringify(notice)}`,
      expected: 'the subscribe succeeds (notice code "200"), so the rule under test can be observed',
    });
  return subscribed;
}

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
  const n = session.pushes({ pair, sinceMs: stopMs }).filter((p) => p.atMs < stopMs + windowMs).length;
  ctx.observe('in-flight-pushes', n, `pushes of ${pair} within ${windowMs} ms after the notice that stopped them`);
}

/** Waits until `atMs` on the stream clock (no-op when it has passed). */
export async function until(ctx: CheckContext, atMs: number): Promise<void> {
  const left = atMs - ctx.stream.now();
  if (left > 0) await sleep(left, undefined, { signal: ctx.signal });
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
 * Waits `ms` or until the session closes, whichever comes first; resolves with the close, or
 * undefined when the time ran out. The timer that loses is cancelled, so no sleep outlives it.
 */
export async function closeWithin(
  ctx: CheckContext,
  session: StreamSession,
  ms: number,
): Promise<CloseInfo | undefined> {
  const stop = new AbortController();
  const timer = sleep(ms, undefined, { signal: AbortSignal.any([ctx.signal, stop.signal]) }).then(
    () => undefined,
    (err: unknown) => {
      if (stop.signal.aborted) return undefined;
      throw err;
    },
  );
  try {
    return await Promise.race([session.closed, timer]);
  } finally {
    stop.abort();
  }
}

/** Sleeps without ending early, unless the check is aborted. */
export const pause = (ms: number, ctx: CheckContext): Promise<void> => sleep(ms, undefined, { signal: ctx.signal });

// ---------------------------------------------------------------------------------------------
// Pairs to subscribe to.

/** Pairs asked per page, and pages read at most; without per_page (a maximum below 100 may refuse it) pages hold 10. */
const PAGE_SIZE = 100;
const MAX_PAGES = 20;
const MAX_DEFAULT_PAGES = 60;

/**
 * Up to `count` distinct pairs the primary key lists in /v1/pairs (optionally of one asset type),
 * without the profile's stale and inactive pairs; Crypto first, since it is always open and
 * therefore pushes. The profile's `pairs.sample` comes first when it has any.
 */
export async function streamPairs(
  ctx: CheckContext,
  count: number,
  options: { assetType?: string; key?: string } = {},
): Promise<string[]> {
  const skip = new Set(
    [ctx.profile.pairs?.stale, ctx.profile.pairs?.inactive].filter((x): x is string => typeof x === 'string'),
  );
  const out: string[] = [];
  const add = (code: unknown): void => {
    if (typeof code !== 'string' || skip.has(code) || out.includes(code) || ctx.pairLedger.isRefused(code)) return;
    const parts = parsePairCode(code);
    if (!parts || (options.assetType && parts.assetType !== options.assetType)) return;
    out.push(code);
  };
  if (!options.key) for (const code of ctx.profile.pairs?.sample ?? []) add(code);
  const types = options.assetType ? [options.assetType] : ['Crypto', undefined];
  // The per_page maximum is not shown, nor whether a larger value is clamped or refused: a refused
  // first page falls back to the default page size.
  let perPage: number | undefined = PAGE_SIZE;
  for (const type of types) {
    let previous = '';
    let size = 0;
    for (let page = 1; page <= (perPage ? MAX_PAGES : MAX_DEFAULT_PAGES) && out.length < count; page++) {
      const res = await ctx.rest.get({
        path: PATHS.pairs,
        query: {
          [QUERY.pairs.page]: String(page),
          ...(perPage ? { [QUERY.pairs.perPage]: String(perPage) } : {}),
          ...(type ? { [QUERY.pairs.type]: type } : {}),
        },
        ...(options.key ? { key: options.key } : {}),
      });
      const data = (res.json as { data?: unknown } | undefined)?.data;
      if (!Array.isArray(data) && page === 1 && perPage) {
        ctx.note(`${PATHS.pairs}?per_page=${perPage} refused; reading default-size pages`);
        perPage = undefined;
        page = 0;
        continue;
      }
      if (!Array.isArray(data) || data.length === 0) break;
      for (const item of data) add((item as { code?: unknown } | null)?.code);
      // A page that repeats the last one means the target ignores page: walking on reads it again.
      // (A page of pairs already taken is no end: the typed walk came first, in catalogue order.)
      // A per_page above the maximum may be clamped: the first page tells the size pages have.
      if (page === 1) size = data.length;
      const seen = JSON.stringify(data);
      if (seen === previous || data.length < size) break;
      previous = seen;
    }
    if (out.length >= count) break;
  }
  // Pairs the run saw move, then those it saw accepted, first: each is known to work.
  return ctx.pairLedger.prefer(out).slice(0, count);
}

/** Like streamPairs, but skips the check with the reason when fewer than `count` pairs exist. */
export async function needPairs(
  ctx: CheckContext,
  count: number,
  options: { assetType?: string } = {},
): Promise<string[]> {
  const pairs = await streamPairs(ctx, count, options);
  if (pairs.length < count)
    ctx.skip(
      `needs ${count} distinct pair(s)${options.assetType ? ` of ${options.assetType}` : ''} ` +
        `the primary key lists in ${PATHS.pairs}; found ${pairs.length}`,
    );
  return pairs;
}

/** A well-formed pair code that no catalogue carries. */
export const UNKNOWN_PAIR = 'Crypto:ALL:CONFORMNOSUCHPAIR/USD';

/**
 * One pair of each asset type in the primary key's catalogue, as codes of the key's own types and
 * of the others; the profile's special pairs (stale, inactive…) are left out.
 */
export async function pairsByAccess(
  ctx: CheckContext,
  allowed: readonly string[],
): Promise<{ own: string[]; other: string[] }> {
  const sample = (await pairPerAssetType(ctx)).map((p) => p.code);
  const isOwn = (code: string): boolean => allowed.includes(parsePairCode(code)?.assetType ?? '');
  return { own: sample.filter(isOwn), other: sample.filter((c) => !isOwn(c)) };
}

/**
 * Up to `count` pairs whose REST price says the market is open (status 200, market.open true):
 * the pairs that should push. A closed market may push nothing, which the spec leaves open.
 */
export async function livePairs(ctx: CheckContext, count: number): Promise<string[]> {
  const candidates = await streamPairs(ctx, Math.max(count * 3, 6));
  const live: string[] = [];
  for (const code of candidates) {
    if (live.length >= count) break;
    const res = await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: code } });
    const body = res.json as { status_number?: unknown; data?: { market?: { open?: unknown } } } | undefined;
    // Read loosely: the envelope's exact shape is the REST suite's rule.
    if (String(body?.status_number) === STATUS.OK && body?.data?.market?.open === true) live.push(code);
  }
  return live;
}

/** Like livePairs, but skips the check with the reason when fewer than `atLeast` (default `count`) are live. */
export async function needLivePairs(ctx: CheckContext, count: number, atLeast = count): Promise<string[]> {
  const pairs = await livePairs(ctx, count);
  if (pairs.length < atLeast)
    ctx.skip(
      `needs ${count} pair(s) with an open market (REST ${PATHS.price}: status_number ` +
        `"200", market.open true); found ${pairs.length}`,
      pairs.length === 0 ? NOTHING_TO_JUDGE.livePair : undefined,
    );
  return pairs;
}
