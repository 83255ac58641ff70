/**
 * What discovery sends that no service knows, and the probes of the status numbers one key can
 * provoke with it (pure).
 */
import type { Allowance } from '../check.ts';
import type { Probe, Profile } from '../profile.ts';
import { PATHS, QUERY, STATUS, parsePairCode, type RestStatus } from '../spec.ts';

/** A key no service issues: its refusal tells a stream from a path that refuses everything. */
export const UNKNOWN_KEY = { name: 'unknown', value: 'conform-discovery-unknown-key-0000' } as const;
/** A well-formed code of a pair no service lists (the asset type is a listed pair's). */
export const UNKNOWN_PAIR_BASE = 'CONFORMNOPE';
/** An endpoint the spec does not define. */
export const UNKNOWN_ENDPOINT = '/v1/conform-no-such-endpoint';

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
 * The status numbers discovery provoked: those of the derived profile's discovered probes, and the
 * connection limit when the allowance search reached it.
 */
export function provokedStatuses(profile: Profile, allowance: Allowance | undefined): RestStatus[] {
  const provoked = (profile.probes ?? []).filter((p) => p.note?.startsWith('discovered:')).map((p) => p.status);
  if (allowance?.source === 'found') provoked.push(STATUS.CONNECTION_LIMIT);
  return provoked;
}
