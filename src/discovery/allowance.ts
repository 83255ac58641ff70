/**
 * Observing the allowance: the run's own search for how many stream connections the key may hold,
 * done during discovery so the run borrows from its budget and does not repeat it.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Allowance } from '../check.ts';
import { ConnectionBudget } from '../connection-budget.ts';
import type { Profile } from '../profile.ts';
import { RunTiming } from '../timing/index.ts';
import { clientFor, type Tally } from './connections.ts';
import type { DiscoveryOptions, FoundStream, Observe } from './model.ts';

/** A connection budget whose allowance search ran against the stream found, and what it found. */
export interface MeasuredAllowance {
  budget: ConnectionBudget;
  /** The timing the budget was made with, holding the release time its search measured. */
  timing: RunTiming;
  allowance: Allowance;
}

/** Searches the key's allowance with a budget of the derived profile; counts its connections in the tally. */
async function searchAllowance(
  options: DiscoveryOptions,
  tally: Tally,
  stream: FoundStream,
  profile: Profile,
  signal: AbortSignal,
): Promise<{ budget: ConnectionBudget; timing: RunTiming }> {
  const timing = new RunTiming(profile);
  const b = new ConnectionBudget(profile, timing);
  const client = clientFor(options, stream, stream.event, stream.namespace);
  await b.discover(client, signal).catch(() => undefined);
  await client.closeAll().catch(() => undefined);
  const a = b.allowance(options.key);
  const opened = a.steps.filter((s) => /^connection \d+/.test(s)).length;
  tally.opened += opened;
  tally.most = Math.max(tally.most, a.connections !== undefined ? Math.min(opened, a.connections + 1) : opened);
  return { budget: b, timing };
}

/** The allowance as a baseline compares it: the number found, a lower bound, or unknown. */
function allowanceValue(allowance: Allowance): unknown {
  return allowance.source === 'found'
    ? allowance.connections
    : allowance.source === 'at-least'
      ? `at least ${allowance.connections}`
      : 'unknown';
}

/** The run's own allowance search, done now, repeated once when discovery's own closes may have counted. */
export async function measureAllowance(
  options: DiscoveryOptions,
  tally: Tally,
  stream: FoundStream,
  profile: Profile,
  observe: Observe,
): Promise<MeasuredAllowance> {
  const signal = options.signal ?? new AbortController().signal;
  const began = performance.now();
  let { budget, timing } = await searchAllowance(options, tally, stream, profile, signal);
  let allowance = budget.allowance(options.key);
  // The search measured how long the target counts a closed connection: one that discovery
  // closed within that time before the search may have been counted against it. Once every
  // slot is free again (its own closed last), the search is repeated.
  const lingers = budget.pool(options.key)?.cooldown ?? 0;
  if (allowance.source === 'found' && tally.lastKeyClose !== undefined && began - tally.lastKeyClose < lingers) {
    await sleep(lingers, undefined, { signal }).catch(() => undefined);
    ({ budget, timing } = await searchAllowance(options, tally, stream, profile, signal));
    allowance = budget.allowance(options.key);
  }
  observe('stream.allowance', allowanceValue(allowance), allowance.note);
  return { budget, timing, allowance };
}
