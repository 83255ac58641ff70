/**
 * The mutation suite (issue 6): for every fault of the reference service the whole catalogue runs
 * against a server with that fault on, and exactly the checks the fault's entry names must fail,
 * none may error; the clean service passes three runs in a row. Every run gets its own server on
 * port 0 with a short ping window its profile declares; all runs share one bounded pool inside one
 * hook, so this file holds a single vitest worker while the other files use the other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAULTS } from '../reference/faults.ts';
import type { CheckResult } from '../src/check.ts';
import { CHECKS } from '../suites/index.ts';
import {
  AREA_OF, MUTATION_DEFAULTS, SCORE_AREAS, cleanProblems, disagreementLines, formatScore, judgeFault, mutationChecks, pool, runCatalogue, runFaults, scoreArea,
  type FaultOutcome,
} from '../scripts/mutation.ts';

const CLEAN_RUNS = 3;
/** Generous: the pool usually finishes in ~80 s on two idle cores; the other test files share them. */
const SUITE_BUDGET_MS = 290_000;

const result = (id: string, outcome: CheckResult['outcome']): CheckResult => ({
  id, title: id, expectation: '', clause: { section: 's', rule: 'r' }, severity: 'must', tags: [], outcome, violations: [], observations: [], evidence: [], durationMs: 0,
});

describe('mutation judging', () => {
  const fault = { name: 'f', area: 'auth', rule: 'r', catches: ['a', 'b'] };

  it('calls a fault exact when exactly its catches fail and nothing errors', () => {
    const o = judgeFault(fault, [result('a', 'fail'), result('b', 'fail'), result('c', 'pass'), result('d', 'skip')]);
    expect(o).toMatchObject({ caught: true, exact: true, missed: [], extra: [], errors: [] });
  });

  it('names the missed and the extra checks of a fault that is caught but not exact', () => {
    const o = judgeFault(fault, [result('a', 'fail'), result('b', 'pass'), result('c', 'fail')]);
    expect(o).toMatchObject({ caught: true, exact: false, missed: ['b'], extra: ['c'] });
    expect(disagreementLines([o])).toEqual(['f: expected [a, b], failing [a, c]; missed [b]; extra [c]']);
  });

  it('does not call a fault exact when a check errors, and not caught when nothing fails', () => {
    const o = judgeFault({ ...fault, catches: [] }, [result('a', 'error'), result('b', 'pass')]);
    expect(o).toMatchObject({ caught: false, exact: false, errors: [{ id: 'a', reason: '' }] });
  });

  it('ends the score with the caught line, above it one line per area', () => {
    const outcomes = [judgeFault(fault, [result('a', 'fail'), result('b', 'fail')]), judgeFault({ ...fault, name: 'g', area: 'push' }, [result('a', 'pass')])];
    const lines = formatScore(outcomes).split('\n');
    expect(lines.at(-1)).toBe('mutation score: 1/2 faults caught');
    for (const area of SCORE_AREAS) expect(lines.some((l) => l.trimStart().startsWith(area))).toBe(true);
  });

  it('runs a bounded pool in input order', async () => {
    let inFlight = 0;
    let peak = 0;
    const out = await pool([5, 1, 3, 2], 2, async (n) => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((r) => setTimeout(r, n));
      inFlight--;
      return n * 10;
    });
    expect(out).toEqual([50, 10, 30, 20]);
    expect(peak).toBe(2);
  });
});

describe('the fault list', () => {
  const ids = new Set(CHECKS.map((c) => c.id));
  const selected = new Set(mutationChecks().map((c) => c.id));

  it('has at least 30 faults with unique names', () => {
    expect(FAULTS.length).toBeGreaterThanOrEqual(30);
    expect(new Set(FAULTS.map((f) => f.name)).size).toBe(FAULTS.length);
  });

  it.each(FAULTS.map((f) => [f.name, f] as const))('%s names only must checks of the default catalogue, and a known area', (_name, f) => {
    expect(f.catches.length).toBeGreaterThan(0);
    for (const id of f.catches) {
      expect(ids.has(id), `${id} is not in the registry`).toBe(true);
      expect(selected.has(id), `${id} is not run by default`).toBe(true);
      expect(CHECKS.find((c) => c.id === id)?.severity, `${id} is an observation, which never fails`).toBe('must');
    }
    expect(Object.keys(AREA_OF)).toContain(f.area);
  });
});

describe('the whole catalogue against the reference service', () => {
  const outcomes = new Map<string, FaultOutcome>();
  const clean: CheckResult[][] = [];
  let elapsedMs = 0;

  beforeAll(async () => {
    const t0 = performance.now();
    // The clean runs go one after another (in a row) as one task of the pool, beside the faults.
    await Promise.all([
      (async () => { for (let i = 0; i < CLEAN_RUNS; i++) clean.push(await runCatalogue(undefined)); })(),
      runFaults(FAULTS, { faultConcurrency: MUTATION_DEFAULTS.faultConcurrency - 1 }, (o) => outcomes.set(o.fault.name, o)),
    ]);
    elapsedMs = performance.now() - t0;
  }, SUITE_BUDGET_MS);

  afterAll(() => {
    const all = FAULTS.map((f) => outcomes.get(f.name)).filter((o): o is FaultOutcome => o !== undefined);
    if (all.length === 0) return;
    const lines = disagreementLines(all);
    // Printed into the test output: the score is a deliverable, not only a verdict.
    console.log(`${lines.length ? `disagreements:\n${lines.join('\n')}\n` : ''}${FAULTS.length} faults and ${CLEAN_RUNS} clean runs in ${(elapsedMs / 1000).toFixed(1)} s\n${formatScore(all)}`);
  });

  it.each(Array.from({ length: CLEAN_RUNS }, (_, i) => [i + 1]))('clean run %i: no check fails or errors', (n) => {
    const results = clean[n - 1]!;
    expect(results.length).toBe(mutationChecks().length);
    expect(cleanProblems(results)).toEqual([]);
    expect(results.filter((r) => r.outcome === 'pass').length).toBeGreaterThan(results.length / 2);
  });

  it.each(FAULTS.map((f) => [f.name, scoreArea(f)] as const))('fault %s (%s): exactly its catches fail, nothing errors', (name) => {
    const o = outcomes.get(name);
    expect(o, `no outcome for ${name}`).toBeDefined();
    expect(o!.failing.length, `${name} is caught by no check`).toBeGreaterThan(0);
    expect(o!.errors, `${name}: checks ended in error`).toEqual([]);
    expect(o!.failing, `${name}: failing set differs from catches`).toEqual([...o!.fault.catches].sort());
  });

  it('scores every fault caught', () => {
    const all = FAULTS.map((f) => outcomes.get(f.name)!);
    expect(formatScore(all).split('\n').at(-1)).toBe(`mutation score: ${FAULTS.length}/${FAULTS.length} faults caught`);
  });
});
