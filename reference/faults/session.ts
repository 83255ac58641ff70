/** Faults of the stream session: subscribe and unsubscribe, the pairs pushed, and the notices. */
import { ASSET_TYPE, LIMITS, METHOD, STATUS, TEXT } from '../../src/spec.ts';
import type { Dialect } from '../dialect.ts';
import { PriceBook } from '../prices.ts';
import type { PairsVerdict } from '../seams.ts';
import { TOO_MANY_PAIRS, isObj } from '../session.ts';
import { f, type Fault } from './record.ts';
import { without, referenceConfig, fewerPairsThan } from './support.ts';

/** `params.pairs` when it is an array of strings. */
const stringPairs = (params: unknown): string[] | undefined =>
  isObj(params) && Array.isArray(params.pairs) && params.pairs.every((c) => typeof c === 'string')
    ? (params.pairs as string[])
    : undefined;

const isInvalid = (verdict: PairsVerdict): boolean => !Array.isArray(verdict);

/**
 * Masks a rule that needs `n` pairs that take a subscribe: listed pairs that refuse one (every fifth
 * active pair) are left out once seen, which may leave fewer than the rule needs.
 */
function fewerSubscribableThan(d: Readonly<Dialect>, n: number): string | undefined {
  if (!d.stream.suspendedListed) return undefined;
  const size = referenceConfig(d).pairs.filter((p) => (p.state ?? 'active') === 'active').length;
  const open = size - Math.ceil((size - 1) / 5);
  return open < n
    ? `about ${open} of ${size} active pairs take a subscribe, fewer than the ${n} the rule needs`
    : undefined;
}

/**
 * Masks a stop judged after a pair has shown two pushes within the stop checks' wait: pushes only
 * on change, a second or more apart (or from pairs that change seconds apart), may not show them.
 */
function rarePushes(d: Readonly<Dialect>): string | undefined {
  if (d.stream.pushes === 'every-tick') return undefined;
  if (d.stream.tickMs >= 1000)
    return (
      `pushes come only on change, at most every ${d.stream.tickMs} ms: a pair ` +
      `may not push twice within the stop checks' wait`
    );
  if (d.stream.stillPairs)
    return (
      'pushes come only on change and some pairs never move: a pair ' +
      "may not push twice within the stop checks' wait"
    );
  return d.stream.quietPairs
    ? 'pushes come only on change and some pairs change seconds apart: a pair ' +
        "may not push twice within the stop checks' wait"
    : undefined;
}

/** The faults of the stream session: subscribe and unsubscribe, the pairs pushed, and the notices. */
export const SESSION_FAULTS = [
  // Subscribe / unsubscribe
  f(
    'subscribe-extends',
    'subscription',
    'a new subscribe replaces the earlier set',
    ['transition:subscribed/subscribe', 'limit:subscriptions-per-connection'],
    {
      session: {
        next: (next, { current, method }) => (method === METHOD.subscribe ? [...new Set([...current, ...next])] : next),
      },
    },
    { maskedBy: rarePushes },
  ),
  f(
    'subscribe-accepts-101',
    'subscription',
    'at most 100 pairs; 101 gives 50004',
    ['limit:pairs-per-connection', 'parameter:subscribe:params.pairs'],
    {
      session: {
        pairs: (verdict, { params }) => {
          const pairs = stringPairs(params);
          return isInvalid(verdict) && pairs?.length === LIMITS.maxPairsPerSubscribe + 1
            ? [...new Set(pairs)]
            : verdict;
        },
      },
    },
    {
      // The pair limit is broken by a subscribe of 101 pairs: a smaller catalogue has none.
      maskedBy: (d) =>
        fewerPairsThan(d, LIMITS.maxPairsPerSubscribe + 1) ?? fewerSubscribableThan(d, LIMITS.maxPairsPerSubscribe + 1),
    },
  ),
  f(
    'subscribe-limit-99',
    'subscription',
    'exactly 100 pairs are accepted',
    ['limit:pairs-per-connection'],
    {
      session: {
        pairs: (verdict, { params }) =>
          !isInvalid(verdict) && stringPairs(params)?.length === LIMITS.maxPairsPerSubscribe
            ? { invalid: TOO_MANY_PAIRS }
            : verdict,
      },
    },
    {
      // The refused 100th pair shows only in a subscribe of 100 pairs: a smaller catalogue has none.
      maskedBy: (d) =>
        fewerPairsThan(d, LIMITS.maxPairsPerSubscribe) ?? fewerSubscribableThan(d, LIMITS.maxPairsPerSubscribe),
    },
  ),
  f(
    'subscribe-empty-internal-error',
    'subscription',
    'an empty pairs list is refused with 50004 or acknowledged (here a 50000 error notice)',
    ['parameter:subscribe:params.pairs', 'notice:50004'],
    {
      notice: (n, { cause }) =>
        cause === 'empty-pairs' ? { ...n, method: METHOD.error, message: 'internal error', code: STATUS.INTERNAL } : n,
    },
  ),
  f(
    'subscribe-missing-params-accepted',
    'subscription',
    'a subscribe without params is an invalid request (50004)',
    ['parameter:subscribe:params', 'notice:50004'],
    {
      session: {
        pairs: (verdict, { params, method }) => (method === METHOD.subscribe && params === undefined ? [] : verdict),
      },
    },
  ),
  f(
    'subscribe-pairs-string-accepted',
    'subscription',
    'params.pairs that is not an array is an invalid request (50004)',
    ['parameter:subscribe:params.pairs', 'notice:50004'],
    {
      session: {
        pairs: (verdict, { params, method }) =>
          method === METHOD.subscribe && isObj(params) && typeof params.pairs === 'string' ? [params.pairs] : verdict,
      },
    },
  ),
  f(
    'subscribe-inactive-accepted',
    'subscription',
    'an inactive pair gives 50104',
    ['transition:attempt/subscribe', 'notice:50104'],
    {
      session: { subscribable: (entry, { code, svc }) => entry ?? svc.book.pairs.get(code) },
    },
  ),
  f(
    'subscribe-unknown-message',
    'subscription',
    'unknown pair message is "pair not found: <code>"',
    ['rule:subscribe:unknown-pair-message'],
    {
      notice: (n, { code, request }) =>
        request === METHOD.subscribe && code === STATUS.PAIR_NOT_FOUND ? { ...n, message: 'unknown pair' } : n,
    },
  ),
  f(
    'subscribe-unknown-among-known-dropped',
    'subscription',
    'a subscribe listing an unknown pair among known ones is an error notice 50104, ' +
      'never a success (here the unknown pair is dropped)',
    ['transition:attempt/subscribe', 'rule:subscribe:unknown-pair-message'],
    {
      // Unknown pairs listed beside known ones are dropped instead of refused.
      session: {
        select: (codes, { method, svc }) =>
          method === METHOD.subscribe && codes.some((c) => svc.livePair(c))
            ? codes.filter((c) => svc.livePair(c))
            : codes,
      },
    },
  ),
  f(
    'unsubscribe-keeps-pushing',
    'subscription',
    'after unsubscribe pushes for the listed pairs stop',
    ['transition:subscribed/unsubscribe'],
    {
      session: { next: (next, { current, method }) => (method === METHOD.unsubscribe ? [...current] : next) },
    },
    { maskedBy: rarePushes },
  ),
  f(
    'unsubscribe-first-pair-only',
    'subscription',
    'an unsubscribe stops every listed pair (here only the first)',
    ['transition:subscribed/unsubscribe'],
    {
      session: { select: (codes, { method }) => (method === METHOD.unsubscribe ? codes.slice(0, 1) : codes) },
    },
  ),
  f(
    'push-first-pair-only',
    'subscription',
    'every pair of a subscription is pushed (here only the first listed)',
    ['transition:none/subscribe', 'event:push'],
    { push: { pairs: (codes) => codes.slice(0, 1) } },
  ),
  f(
    'push-unsubscribed-pair',
    'subscription',
    'only subscribed pairs are pushed',
    ['field:push:code'],
    {
      push: {
        pairs: (codes, { svc }) => {
          const extra = [...svc.book.pairs.values()].find((e) => PriceBook.priced(e) && !codes.includes(e.code));
          return extra ? [...codes, extra.code] : codes;
        },
      },
    },
    { maskedBy: rarePushes },
  ),
  f(
    'push-never-starts',
    'subscription',
    'after a successful subscribe pushes start without further requests',
    ['rule:subscribe:pushes-without-requests'],
    { push: { pairs: () => [] } },
  ),
  // Notices
  f(
    'notice-code-number',
    'notice',
    'notice code is a string',
    ['field:notice:code'],
    { notice: (n) => ({ ...n, code: Number(n.code) }) },
    {
      widenedBy: (d) =>
        d.stream.unauthorized === 'after-connect'
          ? 'refused after the upgrade, a missing or invalid key is answered with a 50005 notice, ' +
            'whose code the fault makes a number'
          : undefined,
    },
  ),
  f('notice-id-not-echoed', 'notice', 'the client id is echoed in the reply', ['field:notice:id'], {
    notice: (n) => without(n, 'id'),
  }),
  f(
    'notice-subscribe-message-lowercase',
    'notice',
    'subscribe success message is "Success"',
    ['field:notice:message'],
    {
      notice: (n, { code }) =>
        n.method === METHOD.subscribe && code === STATUS.OK
          ? { ...n, message: TEXT.subscribeSuccess.toLowerCase() }
          : n,
    },
  ),
  f(
    'unsubscribe-message-capitalized',
    'notice',
    'unsubscribe success message is "success"',
    ['rule:unsubscribe:success-reply', 'field:notice:message'],
    {
      notice: (n, { code }) =>
        n.method === METHOD.unsubscribe && code === STATUS.OK ? { ...n, message: TEXT.subscribeSuccess } : n,
    },
  ),
  f(
    'notice-status-number',
    'notice',
    'post-connect frames never carry status_number',
    ['rule:handshake:no-status-after-connect'],
    { notice: (n, { code }) => ({ ...n, status_number: code }) },
    {
      widenedBy: (d) =>
        d.stream.unauthorized === 'after-connect'
          ? 'refused after the upgrade, a missing or invalid key is answered with a 50005 notice, ' +
            'which the fault gives a status_number'
          : undefined,
    },
  ),
  f(
    'notice-malformed-json-ignored',
    'notice',
    'a malformed message gets a 50004 notice',
    ['event:notice-error', 'notice:50004'],
    { notice: (n, { cause }) => (cause === 'malformed-json' ? undefined : n) },
  ),
  f(
    'notice-denied-shape',
    'notice',
    'every error notice echoes the id and has data null (here 50010 and 50109 drop the id and fill data)',
    ['field:notice:id', 'field:notice:data'],
    {
      // 50010 and 50109 drop the id and fill data.
      notice: (n, { code }) =>
        code === STATUS.ACCESS_DENIED || code === STATUS.ASSET_TYPE_DENIED
          ? { ...without(n, 'id'), data: { reason: n.message } }
          : n,
    },
  ),
  f(
    'notice-unknown-method-ignored',
    'notice',
    'an unknown method gets a 50004 notice',
    ['parameter:subscribe:method', 'notice:50004'],
    { notice: (n, { cause }) => (cause === 'unknown-method' ? undefined : n) },
  ),
  // Requests without id, malformed messages
  f(
    'request-without-id-refused',
    'subscription',
    'id is optional: a subscribe or unsubscribe without id is served (here refused with 50004)',
    ['parameter:subscribe:id', 'rule:requests:id-optional'],
    {
      session: {
        request: (verdict, { msg }) =>
          msg.id === undefined && (msg.method === METHOD.subscribe || msg.method === METHOD.unsubscribe)
            ? { invalid: 'invalid request: id is required' }
            : verdict,
      },
    },
  ),
  f(
    'unsubscribe-invalid-pairs-accepted',
    'subscription',
    'an unsubscribe without params, with pairs not an array or with pairs that are not strings ' +
      'gets 50004 (here a success that stops nothing)',
    ['rule:unsubscribe:request-fields', 'notice:50004'],
    {
      session: {
        pairs: (verdict, { params, method }) =>
          method === METHOD.unsubscribe && isInvalid(verdict) && !stringPairs(params) ? [] : verdict,
      },
    },
  ),
  f(
    'subscribe-params-without-pairs-accepted',
    'subscription',
    'a subscribe whose params holds no pairs gets 50004 (here params {} subscribes to nothing)',
    ['parameter:subscribe:params.pairs', 'notice:50004'],
    {
      session: {
        pairs: (verdict, { params, method }) =>
          method === METHOD.subscribe && isObj(params) && !('pairs' in params) ? [] : verdict,
      },
    },
  ),
  f(
    'notice-not-object-ignored',
    'notice',
    'a message that is not a JSON object (an array, a string) gets a 50004 notice (here none)',
    ['rule:connection:messages-are-objects', 'notice:50004'],
    { notice: (n, { cause }) => (cause === 'not-an-object' ? undefined : n) },
  ),
  f(
    'notice-missing-method-ignored',
    'notice',
    'an object without method gets a 50004 notice (here none)',
    ['rule:connection:messages-are-objects', 'notice:50004'],
    { notice: (n, { cause }) => (cause === 'missing-method' ? undefined : n) },
  ),
  f(
    'stream-refuses-equity',
    'subscription',
    '50104 only for a pair that does not exist, is inactive or is suspended (here every Equity pair is ' +
      'refused on the stream while REST prices it as active)',
    ['notice:50104', 'transition:none/subscribe'],
    {
      session: {
        subscribable: (entry) => (entry?.assetType === ASSET_TYPE.equity ? undefined : entry),
      },
    },
  ),
  f(
    'subscribe-replace-drops-kept',
    'subscription',
    'a new subscribe subscribes to exactly the newly listed pairs (here the pairs it keeps from the ' +
      'earlier set are dropped: [A, B] then [B, C] pushes only C)',
    ['transition:subscribed/subscribe'],
    {
      session: {
        next: (next, { current, method }) =>
          method === METHOD.subscribe ? next.filter((c) => !current.includes(c)) : next,
      },
    },
    { maskedBy: rarePushes },
  ),
  f(
    'unsubscribe-stops-all',
    'subscription',
    'unsubscribe stops the pushes of the listed pairs (here of every pair)',
    ['transition:subscribed/unsubscribe'],
    { session: { next: (next, { method }) => (method === METHOD.unsubscribe ? [] : next) } },
    { maskedBy: rarePushes },
  ),
] as const satisfies readonly Fault[];
