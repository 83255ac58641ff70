/**
 * The run's per-key connection budget (src/connection-budget.ts, key-pool.ts, allowance-search.ts,
 * check-loans.ts): the queue itself, the search for an allowance the profile leaves out, and the
 * 50009 a slot not yet freed causes. Real reference servers on loopback, port 0. The whole
 * suite against a one-connection key is a sweep (test/ci/sweeps/one-connection.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../reference/index.ts';
import type { Check } from '../../src/check.ts';
import { CheckSkipped } from '../../src/context.ts';
import { ConnectionBudget } from '../../src/connection-budget.ts';
import { DISCOVERY_CAP } from '../../src/allowance-search.ts';
import type { CheckLoans } from '../../src/check-loans.ts';
import { KeyPool } from '../../src/key-pool.ts';
import { runChecks } from '../../src/runner.ts';
import { budgetServers, withTiming } from '../helpers/budget-servers.ts';
import { createStreamClient } from '../../src/transports/ws-session.ts';
import type { StreamClient } from '../../src/transports/stream.ts';
import type { Profile } from '../../src/profile.ts';
import { RunTiming } from '../../src/timing/index.ts';

const clients: StreamClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.closeAll()));
});
const serve = budgetServers();

function rawClient(s: ReferenceServer): StreamClient {
  const c = createStreamClient({ url: s.wsUrl, primaryKey: s.profile.keys.primary.key, record: () => undefined });
  clients.push(c);
  return c;
}

/** A budget for `profile`, with the run's timing the runner would hand it. */
const budgetFor = (profile: Profile): ConnectionBudget => new ConnectionBudget(profile, new RunTiming(profile));

/** One check's view of `budget`, with its notes collected. */
function loansOf(budget: ConnectionBudget, s: ReferenceServer, notes: string[] = []): CheckLoans {
  return budget.forCheck({
    primaryKey: s.profile.keys.primary.key,
    signal: new AbortController().signal,
    note: (t) => notes.push(t),
    skip: (reason) => {
      throw new CheckSkipped(reason);
    },
  });
}

const settled = async <T>(p: Promise<T>): Promise<'pending' | T> =>
  Promise.race([p, new Promise<'pending'>((r) => setImmediate(() => r('pending')))]);

describe('a key pool', () => {
  const allowance = (lent: number) => ({ lent, connections: lent, source: 'profile' as const, steps: [] });

  it('lends a one-connection key to one borrower at a time, in the order they asked', async () => {
    const pool = new KeyPool('primary', allowance(1));
    const signal = new AbortController().signal;
    await pool.take(1, signal);
    const order: string[] = [];
    const second = pool.take(1, signal).then(() => order.push('second'));
    const third = pool.take(1, signal).then(() => order.push('third'));
    expect(await settled(second)).toBe('pending');
    pool.give(1, true);
    await second;
    expect(await settled(third)).toBe('pending');
    pool.give(1, true);
    await third;
    expect(order).toEqual(['second', 'third']);
  });

  it("lends nothing while frozen, counts the holder's closes apart from the others'", async () => {
    const pool = new KeyPool('limited', allowance(2));
    const signal = new AbortController().signal;
    await pool.take(1, signal);
    const lease = (await pool.freeze(signal)) as Awaited<ReturnType<KeyPool['freeze']>> & {
      count: number;
      own: number;
    };
    expect(lease.heldByOthers()).toBe(1);
    const blocked = pool.take(1, signal);
    expect(await settled(blocked)).toBe('pending');
    // The holder's extra connection beyond the allowance is allowed, and known to be beyond.
    expect(pool.overdraw()).toBe(true);
    lease.count++;
    expect(pool.overdraw()).toBe(false);
    pool.give(1, false);
    pool.give(1, true);
    expect(lease.closedSince()).toBe(1);
    lease.release();
    await blocked;
  });

  it('keeps a released slot back for the release time it learned', async () => {
    const pool = new KeyPool('primary', allowance(1), 200);
    const signal = new AbortController().signal;
    await pool.take(1, signal);
    pool.give(1, true);
    const started = performance.now();
    await pool.take(1, signal);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('gives up a wait for a slot when the check is aborted', async () => {
    const pool = new KeyPool('primary', allowance(1));
    await pool.take(1, new AbortController().signal);
    const abort = new AbortController();
    const waiting = pool.take(1, abort.signal);
    abort.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'CONFORM_ABORTED' });
  });
});

describe('the search for an allowance the profile leaves out', () => {
  it("finds a primary key's allowance of 3 and the time the target takes to free a slot", async () => {
    const s = await serve({ primary: 3, stated: false, slotReleaseMs: 600 });
    expect(s.profile.keys.primary.connections).toBeUndefined();
    const budget = budgetFor(s.profile);
    await budget.discover(rawClient(s), new AbortController().signal);
    const found = budget.allowance(s.profile.keys.primary.key);
    expect(found).toMatchObject({ lent: 3, connections: 3, source: 'found' });
    expect(found.steps.slice(0, 4)).toEqual([
      'connection 1: accepted',
      'connection 2: accepted',
      'connection 3: accepted',
      'connection 4: refused, HTTP 429, status_number "50009"',
    ]);
    const freed = Number(/free again after (\d+) ms/.exec(found.steps[4] ?? '')?.[1]);
    expect(freed).toBeGreaterThanOrEqual(550);
    expect(budget.pool(s.profile.keys.primary.key)!.cooldown).toBeGreaterThanOrEqual(freed);
  });

  it(`stops at ${DISCOVERY_CAP} connections and lends that many when none is refused`, async () => {
    const s = await serve({ primary: 50, stated: false });
    const budget = budgetFor(s.profile);
    await budget.discover(rawClient(s), new AbortController().signal);
    const found = budget.allowance(s.profile.keys.primary.key);
    expect(found).toMatchObject({ lent: DISCOVERY_CAP, source: 'at-least' });
    // The search of keys.limited (not stated either) is refused at its allowance; the primary's never is.
    expect(found.steps.filter((step) => step.includes('refused'))).toEqual([]);
    expect(s.stats.refused[50009] ?? 0).toBe(1);
  });

  it('does not look for an allowance the profile states', async () => {
    const s = await serve({ primary: 2, stated: true });
    const budget = budgetFor(s.profile);
    await budget.discover(rawClient(s), new AbortController().signal);
    expect(budget.allowance(s.profile.keys.primary.key)).toMatchObject({ lent: 2, source: 'profile' });
    expect(s.stats.ticks >= 0 && s.stats.clients).toBe(0);
    expect(s.stats.refused[50009] ?? 0).toBe(0);
  });
});

describe('opening through the budget', () => {
  it('waits out a 50009 from a slot not yet freed, then lends that slot only after the time it took', async () => {
    const s = await serve({ primary: 1, stated: true, slotReleaseMs: 800 });
    // The release time unstated: the budget has only the refusals to learn it from.
    const { slotReleaseMs: _stated, ...timing } = s.profile.timing ?? {};
    const budget = budgetFor({ ...s.profile, timing });
    const notes: string[] = [];
    const client = loansOf(budget, s, notes).stream(rawClient(s));
    const first = await client.open();
    if (!first.ok) throw new Error('first connection refused');
    await first.session.close();
    const second = await client.open();
    expect(second.ok).toBe(true);
    expect(notes.some((n) => n.startsWith("refused with 50009 while within the key's allowance"))).toBe(true);
    const refusedBefore = s.stats.refused[50009];
    if (second.ok) await second.session.close();
    const third = await client.open();
    expect(third.ok).toBe(true);
    // The learned release time kept the third open back until the slot was free: no refusal this time.
    expect(s.stats.refused[50009]).toBe(refusedBefore);
  });

  it('holds a closed slot back for the release time the profile states, so the target refuses nothing', async () => {
    const s = await serve({ primary: 1, stated: true, slotReleaseMs: 800 });
    expect(s.profile.timing?.slotReleaseMs).toBe(800);
    const notes: string[] = [];
    const client = loansOf(budgetFor(s.profile), s, notes).stream(rawClient(s));
    for (let i = 0; i < 3; i++) {
      const r = await client.open();
      if (!r.ok) throw new Error(`connection ${i + 1} refused`);
      await r.session.close();
    }
    expect(s.stats.refused[50009] ?? 0).toBe(0);
    expect(notes.filter((n) => n.startsWith('refused with 50009'))).toEqual([]);
  });

  it('skips a check wanting two connections at once of a one-connection key, not waiting for itself', async () => {
    const s = await serve({ primary: 1, stated: true });
    const loans = loansOf(budgetFor(s.profile), s);
    const client = loans.stream(rawClient(s));
    expect((await client.open()).ok).toBe(true);
    await expect(client.open()).rejects.toThrow(
      'needs 2 connections of keys.primary at once; the profile states an allowance of 1',
    );
    await expect(loans.borrow(2)).rejects.toThrow(CheckSkipped);
  });

  it('lends two connections at once to a check that borrows them, and a waiting check gets them after', async () => {
    const s = await serve({ primary: 2, stated: true });
    const budget = budgetFor(s.profile);
    const a = loansOf(budget, s);
    const b = loansOf(budget, s);
    const loan = await a.borrow(2);
    const streamA = a.stream(rawClient(s));
    const both = await Promise.all([streamA.open(), streamA.open()]);
    expect(both.every((r) => r.ok)).toBe(true);
    const waiting = b.stream(rawClient(s)).open();
    expect(await settled(waiting)).toBe('pending');
    await streamA.closeAll();
    loan.release();
    expect((await waiting).ok).toBe(true);
    expect(s.stats.refused[50009] ?? 0).toBe(0);
  });
});

describe('the runner and the budget', () => {
  it('does not count the time a check waits for a slot against its time limit', async () => {
    const s = await serve({ primary: 1, stated: true });
    const holds = (id: string): Check => ({
      id,
      clause: { section: 'Limits', rule: 'test' },
      enforces: [],
      title: id,
      expectation: 'open',
      severity: 'must',
      tags: ['ws'],
      needs: ['ws'],
      timeoutMs: 2500,
      async run(ctx) {
        const r = await ctx.stream.open();
        if (!r.ok) ctx.fail({ received: 'refused', expected: 'accepted' });
        await new Promise((resolve) => setTimeout(resolve, 800));
      },
    });
    // The last of five waits at least 4 × 800 ms for the connection: over its 2.5 s limit, were the wait counted.
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const { results } = await runChecks({
      profile: withTiming(s.profile),
      checks: ids.map(holds),
      settings: { concurrency: 5 },
    });
    expect(results.map((r) => `${r.id} ${r.outcome} ${r.reason ?? ''}`)).toEqual(ids.map((id) => `${id} pass `));
    expect(Math.max(...results.map((r) => r.durationMs))).toBeGreaterThan(3200);
    expect(s.stats.refused[50009] ?? 0).toBe(0);
  });
});
