/** Faults of the connection allowance of a key. */
import type { Dialect } from '../dialect.ts';
import { f, type Fault } from './record.ts';
import { referenceConfig } from './support.ts';

/** Masks a fault of the allowances when the profile does not state them: the run finds them instead. */
const unstatedAllowances =
  (why: string) =>
  (d: Readonly<Dialect>): string | undefined =>
    d.keys.stated ? undefined : `allowances are not stated: ${why}`;

/** keys.secondary's count under a fault that pools it: a name no key value takes. */
const SECONDARY_COUNT = '\u0000secondary';

/** The faults of the connection allowance of a key. */
export const LIMIT_FAULTS = [
  f(
    'limit-per-ip',
    'connection-limit',
    'connections are counted per key, not per IP address',
    ['limit:connections-per-key'],
    {
      admission: {
        slot: (slot, { remoteAddress }) => ({ ...slot, countKey: `${slot.countKey}\u0000${remoteAddress}` }),
      },
    },
  ),
  f(
    'limit-off-by-one',
    'connection-limit',
    'a connection beyond the allowance is refused with 50009',
    ['limit:connections-per-key', 'status:50009'],
    { admission: { slot: (slot) => ({ ...slot, allowance: slot.allowance + 1 }) } },
    {
      // Found rather than stated, the allowance is the one the target enforces, off by one or not.
      maskedBy: unstatedAllowances('the run finds the allowance the fault enforces'),
    },
  ),
  f(
    'limit-slot-not-freed',
    'connection-limit',
    "closing a connection frees its slot (here a single-connection key's slot is never freed)",
    ['limit:connections-per-key'],
    {
      // Only a single-connection key's slot (keys.limited) is never given back.
      admission: { slot: (slot, { key }) => ((key.connections ?? 1) === 1 ? { ...slot, freed: false } : slot) },
    },
    {
      // The fault keeps only a single-connection key's slot, and the slot check closes a connection of keys.limited.
      // A primary key of one connection would leak too, and every stream check after the first needs its slot.
      maskedBy: (d) => {
        const { limited, primary } = referenceConfig(d).keys;
        if (limited?.connections !== 1)
          return (
            `keys.limited allows ${String(limited?.connections)} connections, ` +
            "and the fault leaks only a single-connection key's slot"
          );
        if (primary?.connections === 1)
          return "keys.primary allows one connection, so the fault leaks the primary key's slot too";
        if (d.keys.others === 1)
          return 'the other keys allow one connection each: the fault leaks their slots too, which later checks need';
        // Unstated, the allowance is searched for before any check: the search's own connection leaks the
        // slot, and every later refusal reads as the found allowance contradicted, which a check skips.
        return unstatedAllowances('the search for them leaks the slot before any check')(d);
      },
    },
  ),
  f(
    'limit-pooled-across-keys',
    'connection-limit',
    'connections are counted per key, not pooled (here keys.limited and keys.secondary share one ' +
      'count, each against its own allowance)',
    ['limit:connections-per-key', 'rule:limits:keys-counted-apart'],
    {
      // Only these two share a count: no other check opens keys.secondary, so the pool shows only
      // where a check puts the two keys side by side.
      admission: {
        slot: (slot, { key }) =>
          key.name === 'limited' || key.name === 'secondary' ? { ...slot, countKey: '\u0000pooled' } : slot,
      },
    },
    {
      // The pool holds keys.limited and keys.secondary; unstated, keys.secondary's allowance is unknown,
      // so the check takes a key of a role instead, which the fault leaves counted apart.
      maskedBy: unstatedAllowances('the check pairs keys.limited with a key outside the pool'),
    },
  ),
  f(
    'limit-slots-never-freed',
    'connection-limit',
    "closing a connection frees its slot (here no key's closed connection ever frees its slot)",
    ['limit:connections-per-key'],
    { admission: { slot: (slot) => ({ ...slot, freed: false }) } },
  ),
  f(
    'limit-pooled-with-primary',
    'connection-limit',
    "connections are counted per key, not pooled (here keys.primary's allowance counts keys.secondary's " +
      'connections too)',
    ['limit:connections-per-key', 'rule:limits:keys-counted-apart'],
    {
      // One-sided, so that only a check that fills keys.primary beside keys.secondary sees the pool:
      // keys.secondary's own count is its own, and no other check opens keys.secondary.
      admission: {
        slot: (slot, { key }) =>
          key.name === 'primary'
            ? { ...slot, countsWith: [SECONDARY_COUNT] }
            : key.name === 'secondary'
              ? { ...slot, countKey: SECONDARY_COUNT }
              : slot,
      },
    },
    {
      maskedBy: unstatedAllowances("keys.secondary's allowance is unknown, so no check fills it"),
    },
  ),
  f(
    'limit-refusal-holds-slot',
    'connection-limit',
    "every connection within the key's allowance is accepted (here a handshake refused with 50009 " +
      "takes a single-connection key's slot all the same, and never gives it back)",
    ['limit:connections-per-key'],
    {
      // Only a single-connection key's refusals (keys.limited) leak: a leak of keys.primary's slot
      // would leave every later stream check short, not break the one rule.
      admission: {
        slot: (slot, { key }) =>
          (key.connections ?? 1) === 1 ? { ...slot, refusalHoldsMs: Number.POSITIVE_INFINITY } : slot,
      },
    },
    {
      maskedBy: (d) => {
        const { limited, primary } = referenceConfig(d).keys;
        if (limited?.connections !== 1)
          return (
            `keys.limited allows ${String(limited?.connections)} connections, ` +
            "and the fault leaks only a single-connection key's slot"
          );
        if (primary?.connections === 1)
          return "keys.primary allows one connection, so the fault leaks the primary key's slot too";
        if (d.keys.others === 1)
          return 'the other keys allow one connection each: the fault leaks their slots too, which later checks need';
        // Unstated, the allowance is searched for before any check: the search's refusal leaks the slot.
        return unstatedAllowances('the search for them is refused, and leaks the slot, before any check')(d);
      },
    },
  ),
] as const satisfies readonly Fault[];
