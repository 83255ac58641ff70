/**
 * The mutation driver's own logic (test/helpers/mutation.ts): how a fault's run is judged, which
 * dialects each fault runs under, what the fault list promises, and which runs each tier plans.
 * The runs themselves are the sweep (test/ci/sweeps/suite-runs.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../../src/check.ts';
import { CHECKS } from '../../suites/index.ts';
import { coveringSeeds, drawDialect, DEFAULT_DIALECT } from '../../reference/index.ts';
import {
  DIALECTS_PER_FAULT,
  FAULTS,
  SCORE_AREAS,
  scoreArea,
  dialectOk,
  dialectSeedsFor,
  disagreementLines,
  formatScore,
  judgeFault,
  mutationChecks,
  streamFaults,
  underDialect,
  CI_DIALECT_SAMPLE,
  CLEAN_RUNS,
  faultDialectRuns,
  planSweep,
  sweepSeed,
  CI_SAMPLE_SEED,
  type PlannedRun,
} from '../helpers/mutation.ts';
import { sweepCapacity } from '../helpers/sweep.ts';

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
  const fault = { name: 'f', area: 'auth' as const, rule: 'r', catches: ['a', 'b'] };

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
    const outcomes = [
      judgeFault(fault, [result('a', 'fail'), result('b', 'fail')]),
      judgeFault({ ...fault, name: 'g', area: 'push' }, [result('a', 'pass')]),
    ];
    const lines = formatScore(outcomes).split('\n');
    expect(lines.at(-1)).toBe('mutation score: 1/2 faults caught');
    for (const area of SCORE_AREAS) expect(lines.some((l) => l.trimStart().startsWith(area))).toBe(true);
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
        expect(f.maskedBy?.(drawDialect(seed))).toBeUndefined();
      }
    },
  );

  it('widens a fault only by registry checks, and only under a dialect that carries its broken frame further', () => {
    const ids = new Set(CHECKS.map((c) => c.id));
    for (const widened of FAULTS.filter((x) => x.widenedBy)) {
      expect(widened.widenedCatches?.length, widened.name).toBeGreaterThan(0);
      for (const id of widened.widenedCatches!) expect(ids.has(id), id).toBe(true);
      expect(
        coveringSeeds().some((seed) => underDialect(widened, drawDialect(seed)) !== widened),
        widened.name,
      ).toBe(true);
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

  it('calls a fault under a dialect ok when caught, nothing extra, no error, even if a catch saw nothing', () => {
    const fault = { name: 'f', area: 'auth' as const, rule: 'r', catches: ['a', 'b'] };
    expect(dialectOk(judgeFault(fault, [result('a', 'fail'), result('b', 'skip')]))).toBe(true);
    expect(dialectOk(judgeFault(fault, [result('a', 'fail'), result('c', 'fail')]))).toBe(false);
    expect(dialectOk(judgeFault(fault, [result('a', 'fail'), result('c', 'error')]))).toBe(false);
    expect(dialectOk(judgeFault(fault, [result('a', 'pass'), result('b', 'skip')]))).toBe(false);
  });
});

describe('the fault list', () => {
  const ids = new Set(CHECKS.map((c) => c.id));
  // The explorer is not in the default suite: the sweep runs it beside it for the faults that name it.
  const selected = new Set([...mutationChecks(), ...CHECKS.filter((c) => c.tags.includes('explore'))].map((c) => c.id));

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
    '%s names only must checks of the default suite, and a known area',
    (_name, f) => {
      expect(f.catches.length).toBeGreaterThan(0);
      for (const id of f.catches) {
        expect(ids.has(id), `${id} is not in the registry`).toBe(true);
        expect(selected.has(id), `${id} is not run by default`).toBe(true);
        expect(CHECKS.find((c) => c.id === id)?.severity, `${id} is an observation, which never fails`).toBe('must');
      }
      expect(SCORE_AREAS).toContain(scoreArea(f));
    },
  );
});

describe('the sweeps', () => {
  const key = (r: PlannedRun): string => `${r.role} ${r.transport} ${r.fault ?? '-'} ${r.seed ?? '-'}`;

  it('test:ci runs every fault once, the stream faults over Socket.IO, the covering dialects twice', () => {
    const ci = planSweep('ci', 7);
    const faults = ci.filter((r) => r.role === 'fault');
    expect(faults.filter((r) => r.transport === 'ws').map((r) => r.fault)).toEqual(FAULTS.map((f) => f.name));
    expect(faults.filter((r) => r.transport === 'socketio').map((r) => r.fault)).toEqual(
      streamFaults().map((f) => f.name),
    );
    for (const transport of ['ws', 'socketio'] as const)
      expect(ci.filter((r) => r.role === 'dialect' && r.transport === transport).map((r) => r.seed)).toEqual(
        coveringSeeds(),
      );
    expect(ci.filter((r) => r.role === 'clean').length).toBe(2 * CLEAN_RUNS);
  });

  it('test:ci samples faults under dialects by its seed: the same seed the same sample, another seed another', () => {
    const sampled = (seed: number): string[] =>
      planSweep('ci', seed)
        .filter((r) => r.role === 'fault-dialect')
        .map(key);
    expect(sampled(7)).toHaveLength(CI_DIALECT_SAMPLE);
    expect(new Set(sampled(7)).size).toBe(CI_DIALECT_SAMPLE);
    expect(sampled(7)).toEqual(sampled(7));
    expect(sampled(8)).not.toEqual(sampled(7));
    const all = new Set(faultDialectRuns().map(key));
    for (const k of sampled(7)) expect(all.has(k), k).toBe(true);
  });

  it('test:full runs every fault under each of its dialects, and the random dialects it is given', () => {
    const full = planSweep('full', 7, [101, 202]);
    expect(full.filter((r) => r.role === 'fault-dialect').map(key)).toEqual(faultDialectRuns().map(key));
    expect(full.filter((r) => r.role === 'dialect' && !coveringSeeds().includes(r.seed!)).map((r) => r.seed)).toEqual([
      101, 202,
    ]);
  });

  it('takes the sample seed from CONFORM_SWEEP_SEED, else the fixed one', () => {
    expect(sweepSeed('42')).toBe(42);
    expect(sweepSeed(undefined)).toBe(CI_SAMPLE_SEED);
    expect(sweepSeed('not a seed')).toBe(CI_SAMPLE_SEED);
  });

  it('sizes the sweep from the cores and the free memory, or CONFORM_SWEEP_CONCURRENCY', () => {
    const gib = 1024 ** 3;
    expect(sweepCapacity(2, 20 * gib, undefined)).toEqual({ processes: 2, perProcess: 12 });
    // Little memory: fewer runs than the cores would carry.
    expect(sweepCapacity(2, 1 * gib, undefined)).toEqual({ processes: 2, perProcess: 2 });
    expect(sweepCapacity(8, 0, undefined)).toEqual({ processes: 1, perProcess: 1 });
    expect(sweepCapacity(2, 20 * gib, '3')).toEqual({ processes: 2, perProcess: 2 });
  });
});
