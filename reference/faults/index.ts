/**
 * Named faults of the reference service, one record each, in one file per area of the mutation
 * score (rest-envelope.ts, auth.ts, pagination.ts, price.ts, handshake.ts, limits.ts, session.ts,
 * keep-alive.ts, push.ts, sequence.ts). A record holds the fault's name, the area of the spec it breaks, the
 * rule in the spec's words, the statements of the traceability matrix it breaks, its effect
 * (transformations at the seams of seams.ts, so the correct path names no fault), and the dialects
 * that mask it or widen what it shows, each with the reason (record.ts). Everything that reads a
 * fault reads its record through this file: the service (fault-effects.ts), `conform serve
 * --fault`, the matrix, the mutation driver (test/helpers/mutation.ts). Which checks must report a
 * fault is not written here: each check names the faults it catches (`Check.catches` in suites/,
 * typed by `FaultName` through src/fault-name.ts).
 *
 * A new fault is one `f(name, area, rule, breaks, effect, dialects?)` call at the end of its area's
 * list, its name at the end of FAULT_ORDER below, and the fault's name in the `catches` of each
 * check that must fail under it (and, with `widenedBy`, in the `catchesUnderDialects` of each check
 * it is widened to); the whole recipe is docs/ARCHITECTURE.md, "A fault of the reference".
 */
import { UnknownFaultError } from '../../src/errors.ts';
import { AUTH_FAULTS } from './auth.ts';
import { HANDSHAKE_FAULTS } from './handshake.ts';
import { KEEPALIVE_FAULTS } from './keep-alive.ts';
import { LIMIT_FAULTS } from './limits.ts';
import { PAGINATION_FAULTS } from './pagination.ts';
import { PRICE_FAULTS } from './price.ts';
import { PUSH_FAULTS } from './push.ts';
import type { Fault } from './record.ts';
import { REST_ENVELOPE_FAULTS } from './rest-envelope.ts';
import { SESSION_FAULTS } from './session.ts';
import { SEQUENCE_FAULTS } from './sequence.ts';

export { FAULT_AREAS, type Fault, type FaultArea, type FaultDialects, type ScoreArea } from './record.ts';

/** Every record, area by area. */
const RECORDS = [
  ...REST_ENVELOPE_FAULTS,
  ...AUTH_FAULTS,
  ...PAGINATION_FAULTS,
  ...PRICE_FAULTS,
  ...HANDSHAKE_FAULTS,
  ...LIMIT_FAULTS,
  ...SESSION_FAULTS,
  ...KEEPALIVE_FAULTS,
  ...PUSH_FAULTS,
  ...SEQUENCE_FAULTS,
] as const;

export type FaultName = (typeof RECORDS)[number]['name'];

/**
 * The order of FAULTS: the order the faults were added in, which is not the order of the areas.
 * The mutation sweep goes by index (its per-commit sample, the dialects each fault runs under) and
 * the listings print in this order, so a new fault goes at the end and no name moves.
 */
const FAULT_ORDER = [
  'envelope-status-number-integer',
  'envelope-ts-string',
  'envelope-error-data-filled',
  'envelope-error-message-missing',
  'auth-header-case-sensitive',
  'auth-canonical-header-refused',
  'auth-missing-key-accepted',
  'auth-http-403',
  'auth-suspended-served',
  'pairs-default-per-page-20',
  'pairs-page-alone-per-page-20',
  'pairs-error-envelope',
  'pairs-pages-overlap',
  'pairs-per-page-ignored',
  'pairs-invalid-page-internal-error',
  'pairs-invalid-per-page-internal-error',
  'pairs-type-filter-ignored',
  'pairs-code-search-ignored',
  'pairs-record-name-missing',
  'pairs-base-mismatch',
  'price-ask-number',
  'price-not-mid',
  'price-bid-above-ask',
  'price-deep-pair-inverted',
  'market-crypto-timezone',
  'market-timezone-missing',
  'market-timezone-invalid',
  'market-crypto-regular-session',
  'market-open-inverted',
  'stale-http-503',
  'stale-data-null',
  'unknown-pair-status-50008',
  'missing-code-200',
  'unknown-endpoint-50004',
  'probe-status-swapped',
  'probe-restricted-as-suspended',
  'entitlement-asset-type-ignored',
  'entitlement-pairs-list-unfiltered',
  'entitlement-whitelist-subscribe',
  'entitlement-asset-type-partial',
  'entitlement-whitelist-price-ignored',
  'handshake-body-code',
  'handshake-no-stream-accepted',
  'handshake-missing-key-accepted',
  'handshake-header-case-sensitive',
  'limit-per-ip',
  'limit-off-by-one',
  'limit-slot-not-freed',
  'subscribe-extends',
  'subscribe-accepts-101',
  'subscribe-limit-99',
  'subscribe-empty-internal-error',
  'subscribe-missing-params-accepted',
  'subscribe-pairs-string-accepted',
  'subscribe-inactive-accepted',
  'subscribe-unknown-message',
  'subscribe-unknown-among-known-dropped',
  'unsubscribe-keeps-pushing',
  'unsubscribe-first-pair-only',
  'push-first-pair-only',
  'push-unsubscribed-pair',
  'push-never-starts',
  'notice-code-number',
  'notice-id-not-echoed',
  'notice-subscribe-message-lowercase',
  'unsubscribe-message-capitalized',
  'notice-status-number',
  'notice-malformed-json-ignored',
  'notice-denied-shape',
  'notice-unknown-method-ignored',
  'ping-reply-json',
  'ping-reply-lowercase',
  'keepalive-never',
  'keepalive-early',
  'keepalive-ping-not-reset',
  'push-missing-bid',
  'push-price-number',
  'push-changed-missing-bid',
  'market-crypto-deep-session',
  'market-timezone-alias',
  'market-extended-hours-non-us',
  'request-without-id-refused',
  'auth-notice-status-number',
  'limit-pooled-across-keys',
  'unsubscribe-invalid-pairs-accepted',
  'subscribe-params-without-pairs-accepted',
  'notice-not-object-ignored',
  'notice-missing-method-ignored',
  'price-late-type-inverted',
  'limit-slots-never-freed',
  'limit-pooled-with-primary',
  'push-after-ping',
  'stream-refuses-equity',
  'subscribe-replace-drops-kept',
  'unsubscribe-stops-all',
  'entitlement-whitelist-unlisted',
  'pairs-type-ignores-code',
  'pong-stops-when-subscribed',
  'limit-refusal-holds-slot',
  'refused-attempt-holds-slot',
  'subscribe-third-extends',
  'resubscribe-after-unsubscribe-silent',
  'unsubscribe-restores-replaced',
  'limit-counts-earlier-pairs',
] as const satisfies readonly FaultName[];

/**
 * The records in `order`. It compiles only while `order` names every fault: a record left out of
 * FAULT_ORDER makes the call a type error saying `unordered` is missing, with the fault's name.
 * Two records with one name throw.
 */
function inOrder<const O extends readonly FaultName[]>(
  order: O & ([Exclude<FaultName, O[number]>] extends [never] ? unknown : { unordered: Exclude<FaultName, O[number]> }),
): Fault<FaultName>[] {
  const byName = new Map<string, Fault<FaultName>>(RECORDS.map((x) => [x.name, x]));
  if (byName.size !== RECORDS.length) throw new Error('two fault records share a name');
  return order.map((name) => byName.get(name)!);
}

export const FAULTS: readonly Fault<FaultName>[] = inOrder(FAULT_ORDER);
export const FAULT_NAMES: readonly FaultName[] = FAULTS.map((x) => x.name);

/** Returns the fault named `name`, or throws UnknownFaultError. */
export function findFault(name: string): Fault {
  const fault = FAULTS.find((x) => x.name === name);
  if (!fault)
    throw new UnknownFaultError(`--fault: unknown fault ${JSON.stringify(name)}; run conform serve --list-faults`);
  return fault;
}

/** One line per fault, for `conform serve --list-faults`; `caughtBy` gives the checks that catch a fault. */
export function formatFaults(caughtBy: (fault: string) => readonly string[]): string {
  const width = Math.max(...FAULTS.map((x) => x.name.length));
  return FAULTS.map(
    (x) => `${x.name.padEnd(width)}  [${x.area}] breaks: ${x.rule}; caught by ${caughtBy(x.name).join(', ')}`,
  ).join('\n');
}
