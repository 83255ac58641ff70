/**
 * The mutation suite: for every fault of the reference service the whole catalogue runs
 * against a server with that fault on, and exactly the checks the fault's entry names must fail,
 * none may error; the clean service passes three runs in a row. Every run gets its own server on
 * port 0 with a short ping window its profile declares; all runs share one bounded pool inside one
 * hook, so this file holds a single vitest worker while the other files use the other. The faults a
 * stream check must catch run again over Socket.IO, and so do the clean runs. Every fault
 * runs again under two non-default dialects that leave its rule breakable: it must still be caught,
 * with nothing failing beyond its catches.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult } from '../src/check.ts';
import { CHECKS } from '../suites/index.ts';
import { coveringSeeds, drawDialect, DEFAULT_DIALECT } from '../reference/index.ts';
import {
  AREA_OF,
  DIALECTS_PER_FAULT,
  FAULTS,
  MASKED_BY,
  MUTATION_DEFAULTS,
  SCORE_AREAS,
  cleanProblems,
  dialectDisagreementLines,
  dialectOk,
  dialectSeedsFor,
  disagreementLines,
  formatDialectScore,
  formatScore,
  formatTransportScore,
  judgeFault,
  mutationChecks,
  pool,
  runCatalogue,
  scoreArea,
  streamFaults,
  type DialectFaultOutcome,
  type FaultEntry,
  type FaultOutcome,
  type MutationSettings,
  underDialect,
  WIDENED_BY,
} from '../scripts/mutation.ts';
import { PUSH_EXPECTED } from '../src/push-inspection.ts';

const CLEAN_RUNS = 3;
/**
 * Generous: the pool (faults over two transports and under two dialects each) runs about 285
 * catalogues, some with pushes seconds apart; the other test files share the two cores. A budget
 * against a hang, not a speed goal (CI allows 90 minutes).
 */
const SUITE_BUDGET_MS = 3_600_000;
type Transport = MutationSettings['transport'];
const TRANSPORTS: readonly Transport[] = ['ws', 'socketio'];

const result = (id: string, outcome: CheckResult['outcome']): CheckResult => ({
  id,
  title: id,
  expectation: '',
  clause: { section: 's', rule: 'r' },
  severity: 'must',
  tags: [],
  outcome,
  violations: [],
  observations: [],
  evidence: [],
  durationMs: 0,
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

  it('holds a check failing only through the push inspection not against exactness; other violations are extra', () => {
    const inspected = {
      ...result('c', 'fail'),
      violations: [{ received: 'push {…}: /bid: missing', expected: PUSH_EXPECTED.schema }],
    };
    const mixed = {
      ...result('d', 'fail'),
      violations: [
        { received: 'push {…}: bid 2 > price 1', expected: PUSH_EXPECTED.quote },
        { received: 'no notice', expected: 'a notice' },
      ],
    };
    const o = judgeFault(fault, [result('a', 'fail'), result('b', 'fail'), inspected, mixed]);
    expect(o).toMatchObject({ exact: false, incidental: ['c'], extra: ['d'] });
    expect(judgeFault(fault, [result('a', 'fail'), result('b', 'fail'), inspected])).toMatchObject({
      exact: true,
      incidental: ['c'],
      extra: [],
    });
  });

  it('does not call a fault exact when a check errors, and not caught when nothing fails', () => {
    const o = judgeFault({ ...fault, catches: [] }, [result('a', 'error'), result('b', 'pass')]);
    expect(o).toMatchObject({ caught: false, exact: false, errors: [{ id: 'a', reason: '' }] });
  });

  it('ends the score with the caught line, above it one line per area', () => {
    const outcomes = [
      judgeFault(fault, [result('a', 'fail'), result('b', 'fail')]),
      judgeFault({ ...fault, name: 'g', area: 'push' }, [result('a', 'pass')]),
    ];
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

describe('dialects of a fault', () => {
  const seeds = coveringSeeds();
  it.each(FAULTS.map((f, i) => [f.name, f, i] as const))(
    '%s runs under two distinct non-default dialects that do not mask it',
    (_name, f, i) => {
      const chosen = dialectSeedsFor(f, i, seeds, drawDialect);
      expect(chosen.length).toBe(DIALECTS_PER_FAULT);
      expect(new Set(chosen).size).toBe(chosen.length);
      for (const seed of chosen) {
        expect(JSON.stringify(drawDialect(seed))).not.toBe(JSON.stringify({ ...DEFAULT_DIALECT, seed }));
        expect(MASKED_BY[f.name]?.(drawDialect(seed))).toBeUndefined();
      }
    },
  );

  it('widens a fault only by registry checks, and only under a dialect that carries its broken frame further', () => {
    const ids = new Set(CHECKS.map((c) => c.id));
    for (const [name, widen] of Object.entries(WIDENED_BY)) {
      const f = FAULTS.find((x) => x.name === name);
      expect(f, name).toBeDefined();
      for (const seed of coveringSeeds()) for (const id of widen(drawDialect(seed))) expect(ids.has(id), id).toBe(true);
    }
    const f = FAULTS.find((x) => x.name === 'notice-code-number')!;
    expect(underDialect(f, DEFAULT_DIALECT)).toBe(f);
    const afterConnect = {
      ...DEFAULT_DIALECT,
      stream: { ...DEFAULT_DIALECT.stream, unauthorized: 'after-connect' as const },
    };
    expect(underDialect(f, afterConnect).catches).toEqual(
      expect.arrayContaining([...f.catches, 'ws.handshake.missing-key']),
    );
  });

  it('names only faults that exist in MASKED_BY', () => {
    for (const name of Object.keys(MASKED_BY))
      expect(
        FAULTS.some((f) => f.name === name),
        name,
      ).toBe(true);
  });

  it('calls a fault under a dialect ok when caught, nothing extra, no error, even if a catch saw nothing', () => {
    const fault = { name: 'f', area: 'auth', rule: 'r', catches: ['a', 'b'] };
    expect(dialectOk(judgeFault(fault, [result('a', 'fail'), result('b', 'skip')]))).toBe(true);
    expect(dialectOk(judgeFault(fault, [result('a', 'fail'), result('c', 'fail')]))).toBe(false);
    expect(dialectOk(judgeFault(fault, [result('a', 'fail'), result('c', 'error')]))).toBe(false);
    expect(dialectOk(judgeFault(fault, [result('a', 'pass'), result('b', 'skip')]))).toBe(false);
  });
});

describe('the fault list', () => {
  const ids = new Set(CHECKS.map((c) => c.id));
  const selected = new Set(mutationChecks().map((c) => c.id));

  it('has at least 30 faults with unique names', () => {
    expect(FAULTS.length).toBeGreaterThanOrEqual(30);
    expect(new Set(FAULTS.map((f) => f.name)).size).toBe(FAULTS.length);
  });

  it('repeats over Socket.IO exactly the faults that name a stream check', () => {
    const stream = streamFaults().map((f) => f.name);
    expect(stream.length).toBeGreaterThan(0);
    expect(stream).toEqual(
      FAULTS.filter((f) => f.catches.some((id) => CHECKS.find((c) => c.id === id)?.tags.includes('ws'))).map(
        (f) => f.name,
      ),
    );
  });

  it.each(FAULTS.map((f) => [f.name, f] as const))(
    '%s names only must checks of the default catalogue, and a known area',
    (_name, f) => {
      expect(f.catches.length).toBeGreaterThan(0);
      for (const id of f.catches) {
        expect(ids.has(id), `${id} is not in the registry`).toBe(true);
        expect(selected.has(id), `${id} is not run by default`).toBe(true);
        expect(CHECKS.find((c) => c.id === id)?.severity, `${id} is an observation, which never fails`).toBe('must');
      }
      expect(Object.keys(AREA_OF)).toContain(f.area);
    },
  );
});

describe('the whole catalogue against the reference service', () => {
  const outcomes: Record<Transport, Map<string, FaultOutcome>> = { ws: new Map(), socketio: new Map() };
  const clean: Record<Transport, CheckResult[][]> = { ws: [], socketio: [] };
  const underDialects = new Map<string, DialectFaultOutcome[]>();
  const faultsOver = (t: Transport): FaultEntry[] => (t === 'ws' ? [...FAULTS] : streamFaults());
  let elapsedMs = 0;

  beforeAll(async () => {
    const t0 = performance.now();
    const seeds = coveringSeeds();
    const jobs: { fault: FaultEntry; transport: Transport; seed?: number }[] = [
      ...TRANSPORTS.flatMap((transport) => faultsOver(transport).map((fault) => ({ fault, transport }))),
      ...FAULTS.flatMap((fault, i) =>
        dialectSeedsFor(fault, i, seeds, drawDialect).map((seed) => ({ fault, transport: 'ws' as const, seed })),
      ),
    ];
    // The clean runs go one after another (in a row), one chain per transport, beside the faults.
    await Promise.all([
      ...TRANSPORTS.map(async (transport) => {
        for (let i = 0; i < CLEAN_RUNS; i++) clean[transport].push(await runCatalogue(undefined, { transport }));
      }),
      pool(jobs, MUTATION_DEFAULTS.faultConcurrency - TRANSPORTS.length, async ({ fault, transport, seed }) => {
        const started = performance.now();
        const dialect = seed === undefined ? undefined : drawDialect(seed);
        const results = await runCatalogue(fault.name, { transport, ...(dialect ? { dialect } : {}) });
        const judged = dialect ? underDialect(fault, dialect) : fault;
        const outcome = judgeFault(judged, results, Math.round(performance.now() - started));
        if (seed === undefined) outcomes[transport].set(fault.name, outcome);
        else underDialects.set(fault.name, [...(underDialects.get(fault.name) ?? []), { ...outcome, seed }]);
      }),
    ]);
    elapsedMs = performance.now() - t0;
  }, SUITE_BUDGET_MS);

  afterAll(() => {
    const ws = FAULTS.map((f) => outcomes.ws.get(f.name)).filter((o): o is FaultOutcome => o !== undefined);
    const sio = streamFaults()
      .map((f) => outcomes.socketio.get(f.name))
      .filter((o): o is FaultOutcome => o !== undefined);
    if (ws.length === 0) return;
    const dialectRuns = [...underDialects.values()].flat();
    const lines = [
      ...disagreementLines(ws),
      ...disagreementLines(sio).map((l) => `(socketio) ${l}`),
      ...dialectDisagreementLines(dialectRuns).map((l) => `(dialects) ${l}`),
    ];
    // Printed into the test output: the score is a deliverable, not only a verdict.
    console.log(
      `${lines.length ? `disagreements:\n${lines.join('\n')}\n` : ''}${FAULTS.length} ` +
        `faults (+ ${sio.length} over socketio, + ${dialectRuns.length} runs under dialects) ` +
        `and ${CLEAN_RUNS} clean runs per transport in ${(elapsedMs / 1000).toFixed(1)} s\n` +
        `${formatTransportScore(sio, 'socketio')}\n${formatDialectScore(dialectRuns)}\n${formatScore(ws)}`,
    );
  });

  describe('under dialects', () => {
    it.each(FAULTS.map((f) => [f.name, scoreArea(f)] as const))(
      'fault %s (%s): caught under each of its dialects, nothing failing beyond its catches, nothing erroring',
      (name) => {
        const runs = underDialects.get(name) ?? [];
        expect(runs.length, `${name} ran under ${runs.length} dialects`).toBe(DIALECTS_PER_FAULT);
        for (const o of runs) expect(dialectOk(o), dialectDisagreementLines([o]).join('\n')).toBe(true);
      },
    );
  });

  describe.each(TRANSPORTS.map((t) => [t]))('over %s', (transport) => {
    it.each(Array.from({ length: CLEAN_RUNS }, (_, i) => [i + 1]))('clean run %i: no check fails or errors', (n) => {
      const results = clean[transport][n - 1]!;
      expect(results.length).toBe(mutationChecks().length);
      expect(cleanProblems(results)).toEqual([]);
      expect(results.filter((r) => r.outcome === 'pass').length).toBeGreaterThan(results.length / 2);
    });

    it.each(faultsOver(transport).map((f) => [f.name, scoreArea(f)] as const))(
      'fault %s (%s): exactly its catches fail, nothing errors',
      (name) => {
        const o = outcomes[transport].get(name);
        expect(o, `no outcome for ${name}`).toBeDefined();
        expect(o!.failing.length, `${name} is caught by no check`).toBeGreaterThan(0);
        expect(o!.errors, `${name}: checks ended in error`).toEqual([]);
        // A check failing only through the push inspection saw the fault's own broken pushes: not extra.
        expect(
          o!.failing.filter((id) => !o!.incidental.includes(id)),
          `${name}: failing set differs from catches`,
        ).toEqual([...o!.fault.catches].sort());
      },
    );

    it('scores every fault caught', () => {
      const all = faultsOver(transport).map((f) => outcomes[transport].get(f.name)!);
      expect(all.every((o) => o?.caught)).toBe(true);
      if (transport === 'ws')
        expect(formatScore(all).split('\n').at(-1)).toBe(
          `mutation score: ${FAULTS.length}/${FAULTS.length} faults caught`,
        );
      else
        expect(formatTransportScore(all, transport)).toMatch(
          /^mutation score \(socketio\): (\d+)\/\1 stream faults caught/,
        );
    });
  });
});
