/**
 * Discovery: what a run learns of a target from its REST base URL and one key, before the first
 * check. It finds the stream on the REST URL's own origin, observes what the spec leaves open
 * (timestamp units, push cadence, pagination metadata), finds the special pairs the checks need
 * (stale, inactive) and the status numbers one key can provoke, and turns it all into a derived
 * profile that the run and `conform init` use like an operator's. Planning is pure; the requests go
 * through the engine's transports, one stream connection at a time, never to another origin.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Allowance, Observation } from './check.ts';
import type { Probe, Profile } from './profile.ts';
import type { Redact } from './redact.ts';
import { ConnectionBudget } from './connection-budget.ts';
import { RequestBudget } from './request-budget.ts';
import { createRestClient } from './transports/rest-client.ts';
import type { RestClient, RestExchange } from './transports/rest.ts';
import { streamFactoryFor } from './transports/stream-factory.ts';
import { isNotice, jsonObject, type OpenResult, type StreamClient, type StreamSession } from './transports/stream.ts';
import { LIMITS, METHOD, PATHS, QUERY, STATUS, TEXT, parsePairCode, type RestStatus } from './spec.ts';
import { cadenceBand, DISCOVERY_WAITS, REST_TIMEOUT_MS, RunTiming } from './timing/index.ts';

/** Stream paths real services use, tried under the REST URL's own prefix first, then at the root. */
export const STREAM_PATHS = [
  '/v1/ws',
  '/v1/stream',
  '/v1/websocket',
  '/v1/stream/prices',
  '/ws',
  '/stream',
  '/websocket',
];
/** Socket.IO's default engine path. */
export const SOCKETIO_PATH = '/socket.io/';
/** Socket.IO namespaces and events services commonly use; the spec shows neither. */
export const SOCKETIO_NAMESPACES = ['/', '/v1', '/prices', '/stream'];
export const SOCKETIO_EVENTS = ['message', 'price', 'prices', 'data'];
/** A key no service issues: its refusal tells a stream from a path that refuses everything. */
export const UNKNOWN_KEY = { name: 'unknown', value: 'conform-discovery-unknown-key-0000' } as const;
/** A well-formed code of a pair no service lists (the asset type is a listed pair's). */
export const UNKNOWN_PAIR_BASE = 'CONFORMNOPE';
/** An endpoint the spec does not define. */
export const UNKNOWN_ENDPOINT = '/v1/conform-no-such-endpoint';

/** Most price requests spent looking for a stale pair (one at a time, paced like any request). */
export const STALE_SEARCH_MAX = 20;
/** Most subscribes spent dropping listed pairs that refuse one. */
const SUBSCRIBE_ROUNDS = 6;

/** Status numbers a stream refuses a handshake with because of the key (not the path). */
const KEY_REFUSALS: readonly string[] = [
  STATUS.UNAUTHORIZED,
  STATUS.SUSPENDED,
  STATUS.CONNECTION_LIMIT,
  STATUS.ACCESS_DENIED,
];

export interface StreamCandidate {
  url: string;
  transport: 'ws' | 'socketio';
}

/** One candidate tried, and what it answered. */
export interface CandidateOutcome extends StreamCandidate {
  stream: boolean;
  why: string;
  event?: string;
  namespace?: string;
}

export interface FoundStream {
  url: string;
  transport: 'ws' | 'socketio';
  event?: string;
  namespace?: string;
  /** Given with --ws, not looked for. */
  given: boolean;
  how: string;
}

export interface DiscoveryOptions {
  rest: string;
  key: string;
  /** The stream URL when the user gave one: then it is not looked for. */
  ws?: string;
  transport?: 'ws' | 'socketio';
  event?: string;
  namespace?: string;
  redact: Redact;
  signal?: AbortSignal;
  /** Per request or handshake, ms. */
  timeoutMs?: number;
  /** Told each line of progress as it happens (the console). */
  progress?: (line: string) => void;
  /**
   * Whether checks will stream (default true): without any, the stream is still looked for, but
   * not watched and its allowance not searched, which would open connections nothing uses.
   */
  streamChecks?: boolean;
}

export interface Discovery {
  rest: string;
  stream?: FoundStream;
  candidates: CandidateOutcome[];
  /** One line when no stream was found (a coverage gap, never a failure). */
  streamGap?: string;
  allowance?: Allowance;
  /** The budget whose allowance search ran: the run borrows from it instead of searching again. */
  budget?: ConnectionBudget;
  /** The timing the budget was made with, holding the release time its search measured. */
  timing?: RunTiming;
  /** Status numbers discovery can provoke with one key: they run as the derived profile's probes. */
  provoked: RestStatus[];
  observations: Observation[];
  profile: Profile;
  /** Stream connections opened in all, and most open at once (the allowance search's included). */
  connections: { opened: number; mostAtOnce: number };
  durationMs: number;
}

/** The prefix of a REST base URL's path (`/api` of `https://h/api/`), '' at the root. */
export function restPrefix(rest: string): string {
  return new URL(rest).pathname.replace(/\/+$/, '');
}

/**
 * The candidates in the order they are tried: raw WebSocket at each path under the REST prefix,
 * then at the root, then Socket.IO likewise; all on the REST URL's origin.
 */
export function streamCandidates(rest: string): StreamCandidate[] {
  const u = new URL(rest);
  const origin = `${u.protocol === 'https:' ? 'wss:' : 'ws:'}//${u.host}`;
  const prefix = restPrefix(rest);
  const under = (paths: readonly string[]): string[] => [
    ...new Set([...(prefix ? paths.map((p) => `${prefix}${p}`) : []), ...paths]),
  ];
  return [
    ...under(STREAM_PATHS).map((p) => ({ url: `${origin}${p}`, transport: 'ws' as const })),
    ...under([SOCKETIO_PATH]).map((p) => ({ url: `${origin}${p}`, transport: 'socketio' as const })),
  ];
}

/** Whether `url` has the REST URL's scheme family, host and port. */
export function sameOrigin(rest: string, url: string): boolean {
  const a = new URL(rest);
  const b = new URL(url);
  const scheme = (p: string): string => p.replace(/^ws/, 'http');
  return scheme(a.protocol) === scheme(b.protocol) && a.host === b.host;
}

const statusOf = (json: unknown): unknown =>
  json !== null && typeof json === 'object' ? (json as Record<string, unknown>).status_number : undefined;

/** Why a handshake refusal is or is not the stream's. */
function judgeRefusal(r: OpenResult & { ok: false }, bad: boolean): { stream: boolean; why: string } {
  if (r.status >= 300 && r.status < 400) {
    const to = r.headers.location ?? '(no Location)';
    return { stream: false, why: `redirect (HTTP ${r.status}) to ${to}, not followed` };
  }
  const sn = statusOf(r.json);
  if (sn === undefined)
    return {
      stream: false,
      why: `refused with HTTP ${r.status} and no status_number${r.json === undefined ? ' (not JSON)' : ''}`,
    };
  if (KEY_REFUSALS.includes(String(sn)))
    return { stream: true, why: `refused ${bad ? 'an unknown key' : 'the key'} with status_number ${String(sn)}` };
  return {
    stream: false,
    why: `refused with status_number ${JSON.stringify(sn)} (HTTP ${r.status}), not a key's refusal`,
  };
}

/** Sends a subscribe of `pairs` and waits for the notice that answers it. */
async function subscribe(
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
class Tally {
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

interface Listing {
  pairs: string[];
  exchange?: RestExchange;
}

/** The first page of /v1/pairs, as many as the target gives at once (falling back to its default page). */
async function listPairs(rest: RestClient): Promise<Listing> {
  for (const query of [{ [QUERY.pairs.perPage]: String(LIMITS.maxPairsPerSubscribe) }, undefined]) {
    const ex = await rest.get({ path: PATHS.pairs, query }).catch(() => undefined);
    const body = ex?.json as { status_number?: unknown; data?: unknown } | undefined;
    if (ex && String(body?.status_number) === STATUS.OK && Array.isArray(body?.data)) {
      const pairs = body.data
        .map((p) => (p !== null && typeof p === 'object' ? (p as { code?: unknown }).code : undefined))
        .filter((c): c is string => typeof c === 'string' && parsePairCode(c) !== null);
      return { pairs, exchange: ex };
    }
  }
  return { pairs: [] };
}

/** `ms` or `s` by the size of an epoch timestamp; undefined when it is neither near now. */
export function timestampUnit(value: unknown, nowMs = Date.now()): 'ms' | 's' | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  const day = 86_400_000;
  if (Math.abs(value - nowMs) < 365 * day) return 'ms';
  if (Math.abs(value * 1000 - nowMs) < 365 * day) return 's';
  return undefined;
}

/** Pagination metadata beside `data` in a /v1/pairs answer (the spec does not show any). */
export function paginationFields(json: unknown): string[] {
  if (json === null || typeof json !== 'object') return [];
  const envelope = new Set(['status_number', 'ts', 'data', 'message']);
  return Object.keys(json as object).filter((k) => !envelope.has(k));
}

/** The pair `pair not found: X` names, if the notice names one. */
function refusedPair(notice: Record<string, unknown>, pairs: readonly string[]): string | undefined {
  const message = typeof notice.message === 'string' ? notice.message : '';
  const named = message.startsWith(TEXT.pairNotFoundPrefix) ? message.slice(TEXT.pairNotFoundPrefix.length).trim() : '';
  return pairs.find((p) => p === named) ?? pairs.find((p) => message.includes(p));
}

/** Finds the stream, or says why not, trying each candidate with one connection at a time. */
async function findStream(
  options: DiscoveryOptions,
  tally: Tally,
  pair: string | undefined,
  over: () => boolean,
): Promise<{ stream?: FoundStream; candidates: CandidateOutcome[] }> {
  const candidates: CandidateOutcome[] = [];
  const tell = (c: CandidateOutcome): void => {
    candidates.push(c);
    options.progress?.(`  ${c.stream ? 'found' : 'tried'} ${options.redact(c.url)} (${c.transport}): ${c.why}`);
  };
  const given = options.ws !== undefined;
  const plan = given
    ? [{ url: options.ws!, transport: options.transport ?? 'ws' }]
    : streamCandidates(options.rest).filter((c) => !options.transport || c.transport === options.transport);
  for (const c of plan) {
    if (!given && !sameOrigin(options.rest, c.url)) continue;
    if (over()) {
      tell({ ...c, stream: false, why: `not tried: discovery has taken its ${DISCOVERY_WAITS.totalMs} ms` });
      continue;
    }
    const outcome =
      c.transport === 'ws' ? await tryWs(options, tally, c, pair) : await trySocketIo(options, tally, c, pair);
    tell(outcome);
    if (outcome.stream)
      return {
        stream: {
          url: c.url,
          transport: c.transport,
          ...(outcome.event ? { event: outcome.event } : {}),
          ...(outcome.namespace && outcome.namespace !== '/' ? { namespace: outcome.namespace } : {}),
          given,
          how: outcome.why,
        },
        candidates,
      };
  }
  return { candidates };
}

function clientFor(options: DiscoveryOptions, c: StreamCandidate, event?: string, namespace?: string): StreamClient {
  const factory = streamFactoryFor(
    c.transport === 'socketio'
      ? { transport: 'socketio', event: event ?? SOCKETIO_EVENTS[0]!, ...(namespace ? { namespace } : {}) }
      : {},
  );
  return factory({
    url: c.url,
    primaryKey: options.key,
    record: () => undefined,
    redact: options.redact,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Raw WebSocket: a bad key refused with a key's status number, or the key accepted and a subscribe answered. */
async function tryWs(
  options: DiscoveryOptions,
  tally: Tally,
  c: StreamCandidate,
  pair: string | undefined,
): Promise<CandidateOutcome> {
  const client = clientFor(options, c);
  try {
    const bad = await tally.with(
      client,
      async (r) => {
        if (!r.ok) return judgeRefusal(r, true);
        // Some services accept the upgrade and refuse the key in a notice (spec: Authentication 4).
        const notice = await r.session.next(isNotice, DISCOVERY_WAITS.noticeMs).catch(() => undefined);
        const code = notice ? jsonObject(notice)?.code : undefined;
        return String(code) === STATUS.UNAUTHORIZED
          ? { stream: true, why: `accepted an unknown key, then answered with a ${STATUS.UNAUTHORIZED} notice` }
          : undefined;
      },
      UNKNOWN_KEY.value,
    );
    // Any refusal of the unknown key decides: a key's status number is the stream's, anything else is not.
    if (bad) return { ...c, ...bad };
    const good = await tally.with(
      client,
      async (r) => {
        if (!r.ok) return judgeRefusal(r, false);
        const notice = await subscribe(r.session, pair ? [pair] : [], 'conform-discovery', DISCOVERY_WAITS.noticeMs);
        return notice && typeof notice.method === 'string'
          ? {
              stream: true,
              why: `accepted the key and answered a subscribe with a notice (code ${String(notice.code)})`,
            }
          : { stream: false, why: `accepted the key but answered no subscribe within ${DISCOVERY_WAITS.noticeMs} ms` };
      },
      options.key,
    );
    return { ...c, ...good };
  } catch (err) {
    return { ...c, stream: false, why: `no handshake: ${errorText(err)}` };
  } finally {
    await client.closeAll().catch(() => undefined);
  }
}

/**
 * Socket.IO: the Engine.IO handshake at the path; the namespace and the event that answer a
 * subscribe are looked for among common ones (the spec shows neither), one connection at a time.
 */
async function trySocketIo(
  options: DiscoveryOptions,
  tally: Tally,
  c: StreamCandidate,
  pair: string | undefined,
): Promise<CandidateOutcome> {
  const namespaces = options.namespace ? [options.namespace] : SOCKETIO_NAMESPACES;
  const events = options.event ? [options.event] : SOCKETIO_EVENTS;
  let refusedBadKey: string | undefined;
  // The unknown key first: a refusal in the HTTP phase is the stream's whatever the namespace.
  try {
    const client = clientFor(options, c, events[0], namespaces[0]);
    const first = await tally.with(
      client,
      async (r) => (r.ok ? undefined : { r, judged: judgeRefusal(r, true) }),
      UNKNOWN_KEY.value,
    );
    await client.closeAll().catch(() => undefined);
    if (first && first.r.status !== 101 && !first.judged.stream) return { ...c, ...first.judged };
    if (first?.judged.stream) refusedBadKey = first.judged.why;
  } catch (err) {
    return { ...c, stream: false, why: `no Engine.IO handshake: ${errorText(err)}` };
  }
  for (const namespace of namespaces) {
    for (const event of events) {
      const client = clientFor(options, c, event, namespace);
      try {
        const got = await tally.with(
          client,
          async (r) => {
            if (!r.ok) return { next: 'namespace' as const, why: judgeRefusal(r, false).why };
            const notice = await subscribe(
              r.session,
              pair ? [pair] : [],
              'conform-discovery',
              DISCOVERY_WAITS.socketIoNoticeMs,
            );
            return notice && typeof notice.method === 'string'
              ? { next: 'found' as const, why: '' }
              : { next: 'event' as const, why: '' };
          },
          options.key,
        );
        if (got.next === 'found')
          return {
            ...c,
            stream: true,
            event,
            namespace,
            why:
              `${refusedBadKey ? `${refusedBadKey}; ` : ''}Socket.IO namespace ${namespace}, event ` +
              `${JSON.stringify(event)} answered a subscribe with a notice`,
          };
        if (got.next === 'namespace') break;
      } catch (err) {
        return { ...c, stream: false, why: `no Socket.IO connection: ${errorText(err)}` };
      } finally {
        await client.closeAll().catch(() => undefined);
      }
    }
  }
  return {
    ...c,
    stream: false,
    why:
      `${refusedBadKey ? `${refusedBadKey}, but ` : 'Engine.IO answered, but '}no namespace of ` +
      `${namespaces.join(', ')} and no event of ${events.join(', ')} answered a subscribe` +
      (options.event ? '' : ' (give --transport socketio --event NAME --ws URL)'),
  };
}

/** What one connection with the key shows: listed pairs that refuse a subscribe, pushes, cadence, units. */
async function watchStream(
  client: StreamClient,
  tally: Tally,
  key: string,
  listed: readonly string[],
  observe: (name: string, value: unknown, note?: string) => void,
): Promise<{ refusing: string[]; moving: string[] }> {
  const refusing: string[] = [];
  const moving: string[] = [];
  await tally.with(
    client,
    async (r) => {
      if (!r.ok) {
        observe('stream.watch', `refused: HTTP ${r.status} status_number ${JSON.stringify(statusOf(r.json))}`);
        return;
      }
      const s = r.session;
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
      if (!accepted) return;
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
    },
    key,
  );
  return { refusing, moving };
}

/** Observations of /v1/pairs: asset types, the `ts` unit and any pagination metadata. */
function observeListing(listing: Listing, observe: (name: string, value: unknown, note?: string) => void): void {
  const types = [...new Set(listing.pairs.map((p) => parsePairCode(p)!.assetType))].sort();
  observe('rest.listed-pairs', listing.pairs.length, 'on the first page, as many per page as it gives');
  observe('rest.asset-types', types, 'on the first page');
  const json = listing.exchange?.json as Record<string, unknown> | undefined;
  observe('rest.ts-unit', timestampUnit(json?.ts) ?? 'unknown', 'of the envelope ts of /v1/pairs');
  const meta = paginationFields(json);
  observe('rest.pagination-metadata', meta.length > 0 ? meta : 'none', 'fields of /v1/pairs beside the envelope');
}

/** The first listed pair whose price is answered with 50102, within STALE_SEARCH_MAX requests. */
async function findStale(
  rest: RestClient,
  pairs: readonly string[],
  over: () => boolean,
): Promise<{ stale?: string; priced: string[] }> {
  const priced: string[] = [];
  for (const code of pairs.slice(0, STALE_SEARCH_MAX)) {
    if (over()) break;
    const ex = await rest.get({ path: PATHS.price, query: { [QUERY.price.code]: code } }).catch(() => undefined);
    // A target that answers nothing now will not answer the next one either.
    if (!ex) break;
    const sn = String(statusOf(ex?.json));
    if (sn === STATUS.PRICE_STALE) return { stale: code, priced };
    if (sn === STATUS.OK) priced.push(code);
  }
  return { priced };
}

/** A sample of pairs across asset types: the first of each type, then the rest in order, ten at most. */
export function samplePairs(pairs: readonly string[], max = 10): string[] {
  const out: string[] = [];
  for (const p of pairs) if (!out.some((o) => parsePairCode(o)!.assetType === parsePairCode(p)!.assetType)) out.push(p);
  for (const p of pairs) if (out.length < max && !out.includes(p)) out.push(p);
  return out.slice(0, max);
}

/** The probes of the status numbers one key provokes (pure). */
export function provokedProbes(found: { anyPair?: string; stale?: string }): Probe[] {
  const assetType = found.anyPair ? parsePairCode(found.anyPair)!.assetType : 'Crypto';
  const unknownPair = `${assetType}:ALL:${UNKNOWN_PAIR_BASE}/USD`;
  const probes: Probe[] = [
    { status: STATUS.INVALID_REQUEST, path: PATHS.price, note: 'discovered: price without a code' },
    {
      status: STATUS.UNAUTHORIZED,
      path: PATHS.pairs,
      key: UNKNOWN_KEY.name,
      note: 'discovered: a key no service issues',
    },
    { status: STATUS.NOT_FOUND, path: UNKNOWN_ENDPOINT, note: 'discovered: an endpoint the spec does not define' },
    {
      status: STATUS.PAIR_NOT_FOUND,
      path: PATHS.price,
      query: { [QUERY.price.code]: unknownPair },
      note: 'discovered: a well-formed code of no listed pair',
    },
  ];
  if (found.stale)
    probes.push({
      status: STATUS.PRICE_STALE,
      path: PATHS.price,
      query: { [QUERY.price.code]: found.stale },
      note: 'discovered: a listed pair answered 50102',
    });
  return probes;
}

/**
 * The derived profile: the base one (URLs, the key) with what discovery found. Probes and special
 * pairs the base already names are kept; a found allowance is not stated (the run measures it).
 */
export function deriveProfile(
  base: Profile,
  found: {
    stream?: FoundStream;
    sample: string[];
    stale?: string;
    inactive?: string;
    anyPair?: string;
  },
): Profile {
  const profile: Profile = structuredClone(base);
  if (found.stream) {
    profile.ws = found.stream.url;
    profile.transport = found.stream.transport;
    if (found.stream.event) profile.event = found.stream.event;
    if (found.stream.namespace) profile.namespace = found.stream.namespace;
  }
  if (!profile.keys[UNKNOWN_KEY.name]) profile.keys[UNKNOWN_KEY.name] = { key: UNKNOWN_KEY.value };
  const pairs = { ...(profile.pairs ?? {}) };
  if (found.sample.length > 0 && !pairs.sample) pairs.sample = found.sample;
  if (found.stale && !pairs.stale) pairs.stale = found.stale;
  if (found.inactive && !pairs.inactive) pairs.inactive = found.inactive;
  if (Object.keys(pairs).length > 0) profile.pairs = pairs;
  const have = new Set((profile.probes ?? []).map((p) => p.status));
  const added = provokedProbes(found).filter((p) => !have.has(p.status));
  if (added.length > 0) profile.probes = [...(profile.probes ?? []), ...added];
  return profile;
}

/** Runs discovery against the target of `options`; never throws for what the target does. */
export async function discover(options: DiscoveryOptions, base: Profile): Promise<Discovery> {
  const t0 = performance.now();
  const observations: Observation[] = [];
  const observe = (name: string, value: unknown, note?: string): void => {
    observations.push({ name: `discovery.${name}`, value, ...(note ? { note } : {}) });
  };
  const tally = new Tally(options.key);
  const rest = createRestClient({
    baseUrl: options.rest,
    primaryKey: options.key,
    record: () => undefined,
    redact: options.redact,
    timeoutMs: options.timeoutMs ?? REST_TIMEOUT_MS,
    ...(options.signal ? { signal: options.signal } : {}),
    budget: new RequestBudget(),
  });

  const listing = await listPairs(rest);
  observeListing(listing, observe);
  const over = (): boolean => performance.now() - t0 > DISCOVERY_WAITS.totalMs;
  const { stale, priced } = await findStale(rest, listing.pairs, over);
  observe('rest.stale-pair', stale ?? 'none', `looked for among the first ${STALE_SEARCH_MAX} listed pairs`);
  const anyPair = priced[0] ?? listing.pairs[0];

  options.progress?.(
    options.ws
      ? `stream: checking ${options.redact(options.ws)}`
      : `stream: looking on ${new URL(options.rest).origin}`,
  );
  const { stream, candidates } = await findStream(options, tally, anyPair, over);
  observe(
    'stream.candidates',
    candidates.map((c) => `${options.redact(c.url)} (${c.transport}): ${c.why}`),
  );
  observe('stream.url', stream ? options.redact(stream.url) : 'not found');
  let streamGap: string | undefined;
  if (!stream)
    streamGap = options.ws
      ? `stream: ${options.redact(options.ws)} is not the stream ` +
        `(${candidates[0]?.why ?? 'not tried'}): stream rules not checked`
      : `stream: none on ${new URL(options.rest).origin} (${candidates.length} candidates tried); ` +
        'a stream on another ' +
        'host or port is not looked for: give --ws URL, or the stream rules stay not checked';

  let inactive: string | undefined;
  let moving: string[] = [];
  let allowance: Allowance | undefined;
  let budget: ConnectionBudget | undefined;
  let timing: RunTiming | undefined;
  let profile = deriveProfile(base, {
    stream,
    sample: [],
    ...(stale ? { stale } : {}),
    ...(anyPair ? { anyPair } : {}),
  });
  const watch = stream !== undefined && options.streamChecks !== false;
  if (stream && watch && !over()) {
    const client = clientFor(options, stream, stream.event, stream.namespace);
    try {
      const watched = await watchStream(client, tally, options.key, listing.pairs, observe);
      moving = watched.moving;
      inactive = watched.refusing[0];
      observe(
        'stream.refusing-pairs',
        watched.refusing,
        `listed pairs a subscribe refused with ${STATUS.PAIR_NOT_FOUND}`,
      );
    } catch (err) {
      observe('stream.watch', `failed: ${errorText(err)}`);
    } finally {
      await client.closeAll().catch(() => undefined);
    }
  }
  const sample = samplePairs(
    [...moving, ...priced, ...listing.pairs].filter((p, i, a) => a.indexOf(p) === i && p !== inactive && p !== stale),
  );
  profile = deriveProfile(base, {
    stream,
    sample,
    ...(stale ? { stale } : {}),
    ...(inactive ? { inactive } : {}),
    ...(anyPair ? { anyPair } : {}),
  });
  if (stream && watch) {
    // The run's own allowance search, done now: the run borrows from this budget and does not repeat it.
    const signal = options.signal ?? new AbortController().signal;
    const search = async (): Promise<ConnectionBudget> => {
      timing = new RunTiming(profile);
      const b = new ConnectionBudget(profile, timing);
      const client = clientFor(options, stream, stream.event, stream.namespace);
      await b.discover(client, signal).catch(() => undefined);
      await client.closeAll().catch(() => undefined);
      const a = b.allowance(options.key);
      const opened = a.steps.filter((s) => /^connection \d+/.test(s)).length;
      tally.opened += opened;
      tally.most = Math.max(tally.most, a.connections !== undefined ? Math.min(opened, a.connections + 1) : opened);
      return b;
    };
    const began = performance.now();
    budget = await search();
    allowance = budget.allowance(options.key);
    // The search measured how long the target counts a closed connection: one that discovery
    // closed within that time before the search may have been counted against it. Once every
    // slot is free again (its own closed last), the search is repeated.
    const lingers = budget.pool(options.key)?.cooldown ?? 0;
    if (allowance.source === 'found' && tally.lastKeyClose !== undefined && began - tally.lastKeyClose < lingers) {
      await sleep(lingers, undefined, { signal }).catch(() => undefined);
      budget = await search();
      allowance = budget.allowance(options.key);
    }
    observe(
      'stream.allowance',
      allowance.source === 'found'
        ? allowance.connections
        : allowance.source === 'at-least'
          ? `at least ${allowance.connections}`
          : 'unknown',
      allowance.note,
    );
  }
  const provoked = (profile.probes ?? []).filter((p) => p.note?.startsWith('discovered:')).map((p) => p.status);
  if (allowance?.source === 'found') provoked.push(STATUS.CONNECTION_LIMIT);
  observe('provoked-statuses', provoked);
  return {
    rest: options.rest,
    ...(stream ? { stream } : {}),
    candidates,
    ...(streamGap ? { streamGap } : {}),
    ...(allowance ? { allowance } : {}),
    ...(budget && timing ? { budget, timing } : {}),
    provoked,
    observations,
    profile,
    connections: { opened: tally.opened, mostAtOnce: tally.most },
    durationMs: Math.round(performance.now() - t0),
  };
}

/** A discovery that did not run (the target answered nothing with the key): the profile as given. */
export function skippedDiscovery(base: Profile): Discovery {
  return {
    rest: base.rest,
    candidates: [],
    provoked: [],
    observations: [{ name: 'discovery.skipped', value: 'the target answered no request with the key' }],
    profile: base,
    connections: { opened: 0, mostAtOnce: 0 },
    durationMs: 0,
  };
}

/** The lines a user sees of a discovery (after the candidate lines printed as it went). */
export function discoveryLines(d: Discovery, redact: Redact): string[] {
  const lines: string[] = [];
  if (d.stream)
    lines.push(
      `stream: ${redact(d.stream.url)} (${d.stream.transport}` +
        `${d.stream.event ? `, event ${JSON.stringify(d.stream.event)}` : ''}` +
        `${d.stream.namespace ? `, namespace ${d.stream.namespace}` : ''})` +
        `${d.stream.given ? '' : ` — ${d.stream.how}`}`,
    );
  else if (d.streamGap) lines.push(d.streamGap);
  if (d.allowance)
    lines.push(
      `allowance: ${
        d.allowance.source === 'found' ? d.allowance.connections : (d.allowance.note ?? d.allowance.source)
      }` + ' stream connection(s) per key',
    );
  const pairs = d.profile.pairs ?? {};
  lines.push(
    `pairs: ${pairs.sample?.length ?? 0} in the sample; stale ${pairs.stale ?? 'none found'}; ` +
      `refusing a subscribe ${pairs.inactive ?? 'none found'}`,
  );
  lines.push(`provoked with one key: ${d.provoked.join(', ') || 'none'}`);
  lines.push(
    `discovery: ${d.durationMs} ms, ${d.connections.opened} stream connection(s), ` +
      `at most ${d.connections.mostAtOnce} at once`,
  );
  return lines;
}
