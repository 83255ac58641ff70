/**
 * Discovery: what a run learns of a target from its REST base URL and one key, before the first
 * check. It finds the stream on the REST URL's own origin, observes what the spec leaves open
 * (timestamp units, push cadence, pagination metadata), finds the special pairs the checks need
 * (stale, inactive) and the status numbers one key can provoke, and turns it all into a derived
 * profile that the run and `conform init` use like an operator's. Planning is pure; the requests go
 * through the engine's transports, one stream connection at a time, never to another origin.
 *
 * One file per kind of step: where the stream may be (`candidates.ts`), finding it
 * (`find-stream.ts`), the connections it opens (`connections.ts`), what REST shows
 * (`rest-findings.ts`), watching the stream (`watch.ts`), the allowance (`allowance.ts`), the
 * probes (`probes.ts`), the derived profile (`derived-profile.ts`) and the console lines
 * (`console-lines.ts`); this file runs them in order.
 */
import { performance } from 'node:perf_hooks';
import type { Observation } from '../check.ts';
import type { Profile } from '../profile.ts';
import { RequestBudget } from '../request-budget.ts';
import { createRestClient } from '../transports/rest-client.ts';
import type { RestClient } from '../transports/rest.ts';
import { measureAllowance, type MeasuredAllowance } from './allowance.ts';
import { Tally } from './connections.ts';
import { deriveProfile, samplePairs } from './derived-profile.ts';
import { locateStream } from './find-stream.ts';
import { DISCOVERY_WAITS, REST_TIMEOUT_MS } from '../timing/index.ts';
import type { Discovery, DiscoveryOptions, Observe } from './model.ts';
import { provokedStatuses } from './probes.ts';
import { learnFromRest, type RestFindings } from './rest-findings.ts';
import { watchFound } from './watch.ts';

export { streamCandidates } from './candidates.ts';
export { discoveryLines } from './console-lines.ts';
export { deriveProfile } from './derived-profile.ts';
export type { CandidateOutcome, Discovery, DiscoveryOptions, FoundStream, StreamCandidate } from './model.ts';

/** Discovery's observations, each named under `discovery.`, and the function that records one. */
function observer(): { observations: Observation[]; observe: Observe } {
  const observations: Observation[] = [];
  const observe = (name: string, value: unknown, note?: string): void => {
    observations.push({ name: `discovery.${name}`, value, ...(note ? { note } : {}) });
  };
  return { observations, observe };
}

/** The REST client discovery sends with: the key, no evidence kept, paced by a request budget of its own. */
function discoveryRestClient(options: DiscoveryOptions): RestClient {
  return createRestClient({
    baseUrl: options.rest,
    primaryKey: options.key,
    ...(options.ca ? { ca: options.ca } : {}),
    record: () => undefined,
    redact: options.redact,
    timeoutMs: options.timeoutMs ?? REST_TIMEOUT_MS,
    ...(options.signal ? { signal: options.signal } : {}),
    budget: new RequestBudget(),
  });
}

/**
 * The pairs of the derived profile's sample: those that moved on the stream, then the priced, then
 * the listed ones, never the inactive or the stale pair.
 */
function samplesOf(rest: RestFindings, moving: readonly string[], inactive: string | undefined): string[] {
  return samplePairs(
    [...moving, ...rest.priced, ...rest.listing.pairs].filter(
      (p, i, a) => a.indexOf(p) === i && p !== inactive && p !== rest.stale,
    ),
  );
}

/** Runs discovery against the target of `options`; never throws for what the target does. */
export async function discover(options: DiscoveryOptions, base: Profile): Promise<Discovery> {
  const t0 = performance.now();
  const { observations, observe } = observer();
  const over = (): boolean => performance.now() - t0 > DISCOVERY_WAITS.totalMs;
  const tally = new Tally(options.key);
  const rest = await learnFromRest(discoveryRestClient(options), observe, over);
  const { stale, anyPair } = rest;
  const { stream, candidates, streamGap } = await locateStream(options, tally, anyPair, over, observe);
  const watch = stream !== undefined && options.streamChecks !== false;
  const { moving, inactive } =
    stream && watch && !over()
      ? await watchFound(options, tally, stream, rest.listing.pairs, observe)
      : { moving: [], inactive: undefined };
  const profile = deriveProfile(base, {
    stream,
    sample: samplesOf(rest, moving, inactive),
    ...(stale ? { stale } : {}),
    ...(inactive ? { inactive } : {}),
    ...(anyPair ? { anyPair } : {}),
  });
  // The run's own allowance search, done now: the run borrows from this budget and does not repeat it.
  const measured: Partial<MeasuredAllowance> =
    stream && watch ? await measureAllowance(options, tally, stream, profile, observe) : {};
  const { allowance, budget, timing } = measured;
  const provoked = provokedStatuses(profile, allowance);
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
