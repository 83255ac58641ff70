/**
 * The profile discovery derives: the base profile with the stream, the special pairs and the
 * probes it found, as an operator would have written them (pure).
 */
import type { Profile } from '../profile.ts';
import { parsePairCode } from '../spec.ts';
import type { FoundStream } from './model.ts';
import { provokedProbes, UNKNOWN_KEY } from './probes.ts';

/** A sample of pairs across asset types: the first of each type, then the rest in order, ten at most. */
export function samplePairs(pairs: readonly string[], max = 10): string[] {
  const out: string[] = [];
  for (const p of pairs) if (!out.some((o) => parsePairCode(o)!.assetType === parsePairCode(p)!.assetType)) out.push(p);
  for (const p of pairs) if (out.length < max && !out.includes(p)) out.push(p);
  return out.slice(0, max);
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
