/**
 * Finding the stream among the candidates: a raw WebSocket or Socket.IO endpoint on the REST
 * URL's origin that refuses an unknown key as a stream does, or takes the key and answers a
 * subscribe. One connection at a time; a stream on another origin is never looked for.
 */
import type { OpenResult } from '../transports/stream.ts';
import { isNotice, jsonObject } from '../transports/stream.ts';
import { STATUS } from '../spec.ts';
import { SOCKETIO_EVENTS, SOCKETIO_NAMESPACES, sameOrigin, streamCandidates } from './candidates.ts';
import { clientFor, errorText, subscribe, type Tally } from './connections.ts';
import { DISCOVERY_WAITS } from '../timing/index.ts';
import type { CandidateOutcome, DiscoveryOptions, FoundStream, Observe, StreamCandidate } from './model.ts';
import { UNKNOWN_KEY } from './probes.ts';
import { statusOf } from './readings.ts';

/** Status numbers a stream refuses a handshake with because of the key (not the path). */
const KEY_REFUSALS: readonly string[] = [
  STATUS.UNAUTHORIZED,
  STATUS.SUSPENDED,
  STATUS.CONNECTION_LIMIT,
  STATUS.ACCESS_DENIED,
];

/** The stream found, if any, every candidate tried, and the line that says why none was found. */
export interface StreamSearch {
  stream?: FoundStream;
  candidates: CandidateOutcome[];
  /** One line when no stream was found (a coverage gap, never a failure). */
  streamGap?: string;
}

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

/**
 * Looks for the stream (or checks the one given with --ws), tells the progress and observes the
 * candidates; says why when there is none.
 */
export async function locateStream(
  options: DiscoveryOptions,
  tally: Tally,
  pair: string | undefined,
  over: () => boolean,
  observe: Observe,
): Promise<StreamSearch> {
  options.progress?.(
    options.ws
      ? `stream: checking ${options.redact(options.ws)}`
      : `stream: looking on ${new URL(options.rest).origin}`,
  );
  const { stream, candidates } = await findStream(options, tally, pair, over);
  observe(
    'stream.candidates',
    candidates.map((c) => `${options.redact(c.url)} (${c.transport}): ${c.why}`),
  );
  observe('stream.url', stream ? options.redact(stream.url) : 'not found');
  if (stream) return { stream, candidates };
  const streamGap = options.ws
    ? `stream: ${options.redact(options.ws)} is not the stream ` +
      `(${candidates[0]?.why ?? 'not tried'}): stream rules not checked`
    : `stream: none on ${new URL(options.rest).origin} (${candidates.length} candidates tried); ` +
      'a stream on another ' +
      'host or port is not looked for: give --ws URL, or the stream rules stay not checked';
  return { candidates, streamGap };
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
