/**
 * Faults that show only in a sequence of requests: each answers every single request as the spec
 * says and breaks a rule only after earlier steps (a refusal, a third subscribe, an unsubscribe, a
 * replace, a set near the limit). The scripted checks try each rule once, from a fresh connection;
 * the explorer (ws.explore) walks sequences against a model of the spec and is the one that meets
 * them. The sequence faults a scripted check meets too (a replace that drops a kept pair, an
 * unsubscribe that stops every pair, Pong! that stops once subscribed) are in session.ts and
 * keep-alive.ts.
 */
import { LIMITS, METHOD } from '../../src/spec.ts';
import type { Dialect } from '../dialect.ts';
import { TOO_MANY_PAIRS } from '../session.ts';
import { f, type Fault } from './record.ts';
import { fewerPairsThan, referenceConfig } from './support.ts';

/**
 * How long a refused handshake holds a slot under `refused-attempt-holds-slot`: longer than a
 * harness waits out a 50009 for a slot closed a moment ago (twice the stated release time and a
 * second), short enough that the state one refusal leaves clears between attempts to shrink it.
 */
const REFUSAL_HOLD_MS = 3000;
/** Stated release times from which a 50009 is waited out as long as the hold. */
const RELEASE_WITHIN_HOLD_MS = 1000;
/** Connections of one key the explorer fills in a sequence, at most (its sequences are short). */
const FILLED_IN_A_SEQUENCE = 10;

/** Keys other than primary and limited that allow several connections: the keys the slot fault holds. */
const heldKey = (key: { name: string; connections?: number }): boolean =>
  key.name !== 'primary' && key.name !== 'limited' && (key.connections ?? 1) > 1;

/**
 * Masks the slot fault where no such key can be filled in a sequence, or where a 50009 is waited out
 * longer than the hold.
 */
function noHeldKey(d: Readonly<Dialect>): string | undefined {
  if (!d.keys.stated)
    return 'allowances and slot release are not stated: a 50009 is waited out for longer than the hold';
  if (d.keys.slotReleaseMs >= RELEASE_WITHIN_HOLD_MS)
    return `slots are released ${d.keys.slotReleaseMs} ms after a close: a 50009 is waited out as long as the hold`;
  const keys = Object.entries(referenceConfig(d).keys).map(([name, k]) => ({ name, ...k }));
  const fillable = keys.filter((k) => heldKey(k) && (k.connections ?? 1) <= FILLED_IN_A_SEQUENCE);
  return fillable.length === 0
    ? `no key beside primary and limited allows 2 to ${FILLED_IN_A_SEQUENCE} connections: ` +
        'none is filled to a refusal in a sequence'
    : undefined;
}

/** The set a connection had before its last accepted request replaced it: the one before the current. */
const beforeLast = (history: readonly { pairs: readonly string[] }[]): readonly string[] | undefined =>
  history.length >= 2 ? history[history.length - 2]!.pairs : undefined;

/** The faults that show only after a sequence of requests. */
export const SEQUENCE_FAULTS = [
  f(
    'refused-attempt-holds-slot',
    'sequence',
    'a connection beyond the allowance is refused, and every connection up to it is accepted (here a refused ' +
      'handshake of a key allowing several connections holds a slot for seconds)',
    ['limit:connections-per-key'],
    { admission: { slot: (slot, { key }) => (heldKey(key) ? { ...slot, refusalHoldsMs: REFUSAL_HOLD_MS } : slot) } },
    { maskedBy: noHeldKey },
  ),
  f(
    'subscribe-third-extends',
    'sequence',
    'a new subscribe replaces the earlier set (here the third subscribe of a connection extends it)',
    ['transition:subscribed/subscribe', 'limit:subscriptions-per-connection'],
    {
      session: {
        next: (next, { current, method, history }) =>
          method === METHOD.subscribe && history.filter((h) => h.method === METHOD.subscribe).length >= 2
            ? [...new Set([...current, ...next])]
            : next,
      },
    },
  ),
  f(
    'resubscribe-after-unsubscribe-silent',
    'sequence',
    'after a successful subscribe pushes start (here a pair unsubscribed earlier on the connection is ' +
      'acknowledged again but never pushed)',
    ['transition:subscribed/subscribe', 'transition:none/subscribe'],
    {
      session: {
        next: (next, { method, history }) => {
          if (method !== METHOD.subscribe) return next;
          const dropped = new Set<string>();
          for (let i = 1; i < history.length; i++)
            if (history[i]!.method === METHOD.unsubscribe)
              for (const p of history[i - 1]!.pairs) if (!history[i]!.pairs.includes(p)) dropped.add(p);
          return next.filter((c) => !dropped.has(c));
        },
      },
    },
  ),
  f(
    'unsubscribe-restores-replaced',
    'sequence',
    'a subscribe replaces the earlier set (here an unsubscribe that empties the set brings back the set ' +
      'the last subscribe replaced)',
    ['transition:subscribed/subscribe', 'transition:subscribed/unsubscribe'],
    {
      session: {
        next: (next, { method, history }) =>
          method === METHOD.unsubscribe && next.length === 0 ? [...(beforeLast(history) ?? [])] : next,
      },
    },
  ),
  f(
    'limit-counts-earlier-pairs',
    'sequence',
    'at most 100 pairs per subscribe, each replacing the last (here the pairs of the earlier set count ' +
      'toward the limit: a subscribe is refused with 50004 when both sets together pass 100)',
    ['limit:pairs-per-connection', 'transition:subscribed/subscribe'],
    {
      session: {
        pairs: (verdict, { method, current }) =>
          method === METHOD.subscribe &&
          Array.isArray(verdict) &&
          new Set([...current, ...verdict]).size > LIMITS.maxPairsPerSubscribe
            ? { invalid: TOO_MANY_PAIRS }
            : verdict,
      },
    },
    {
      // Shown by a subscribe of the limit's pairs and then of others: a smaller catalogue has no such pair.
      maskedBy: (d) => fewerPairsThan(d, LIMITS.maxPairsPerSubscribe + 4),
    },
  ),
] as const satisfies readonly Fault[];
