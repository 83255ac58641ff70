/**
 * The sweep: whole-suite runs against the reference service, as many at once as the machine
 * holds (test/helpers/sweep.ts), each on its own server on port 0 with the mutation suite's short
 * ping window. What runs is the tier's plan (test/helpers/mutation.ts `planSweep`): CONFORM_TIER
 * `ci` (test:ci) or `full` (test:full).
 *
 * - Clean runs: no check fails or errors, three in a row per transport.
 * - Every fault over the raw WebSocket, and every stream fault over Socket.IO: exactly its catches
 *   fail, nothing errors.
 * - Faults under dialects that leave their rule breakable: still caught, nothing failing beyond
 *   the catches (all of them in `full`; a fixed sample in `ci`, its seed printed).
 * - Dialects (the covering seeds on both transports; random ones too in `full`): the zero
 *   false-failure property, no check fails or errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failableStatement } from '../../../src/judgements.ts';
import { coveringSeeds, drawDialect } from '../../../reference/index.ts';
import {
  formatReport,
  outcomeLine,
  randomSeeds,
  reproduceCommands,
  runDialect,
  type DialectOutcome,
} from '../../helpers/dialect-runs.ts';
import {
  CLEAN_RUNS,
  cleanProblems,
  dialectDisagreementLines,
  dialectOk,
  disagreementLines,
  FAULTS,
  FULL_RANDOM_DIALECTS,
  formatDialectScore,
  formatScore,
  formatTransportScore,
  judgeRun,
  mutationChecks,
  planSweep,
  scoreArea,
  streamFaults,
  sweepSeed,
  type DialectFaultOutcome,
  type FaultOutcome,
  type PlannedRun,
  type SweepTier,
} from '../../helpers/mutation.ts';
import { sweep, sweepLine, type SweepOutcome, type SweepResult } from '../../helpers/sweep.ts';

const TIER: SweepTier = process.env.CONFORM_TIER === 'full' ? 'full' : 'ci';
const SEED = sweepSeed();
const RUNS = planSweep(TIER, SEED, TIER === 'full' ? randomSeeds(FULL_RANDOM_DIALECTS) : []);
/** A bound against a hang, not a speed goal. */
const SWEEP_BUDGET_MS = 40 * 60_000;

const faultOf = (name: string) => FAULTS.find((f) => f.name === name)!;
const keyOf = (r: PlannedRun): string => `${r.role}:${r.transport}:${r.fault ?? ''}:${r.seed ?? ''}`;

describe(`the ${TIER} sweep against the reference service`, () => {
  const done = new Map<string, SweepResult[]>();
  let outcome: SweepOutcome | undefined;
  const failingSeed = coveringSeeds()[0]!;
  let failing: Promise<DialectOutcome> | undefined;

  beforeAll(async () => {
    // A fault on top of a dialect: a run that must fail, as a false failure would. It runs here,
    // beside the sweep, while this process only waits for the sweep's processes.
    failing = runDialect(failingSeed, {}, 'ping-reply-lowercase');
    failing.catch(() => undefined);
    // Printed first: the sample of faults under dialects is replayable from this seed.
    console.log(
      `sweep ${TIER}: ${RUNS.length} suite runs; dialect sample seed ${SEED} ` +
        `(replay: CONFORM_SWEEP_SEED=${SEED} npm run test:${TIER})`,
    );
    outcome = await sweep(RUNS, (r) => {
      const k = keyOf(r.job as PlannedRun);
      done.set(k, [...(done.get(k) ?? []), r]);
    });
  }, SWEEP_BUDGET_MS);

  const runsOf = (r: PlannedRun): SweepResult[] => done.get(keyOf(r)) ?? [];
  const judged = (r: PlannedRun): FaultOutcome => {
    const [res] = runsOf(r);
    expect(res, `no run for ${keyOf(r)}`).toBeDefined();
    return judgeRun(r, res!.results, res!.durationMs);
  };

  afterAll(() => {
    if (!outcome) return;
    const faults = (transport: string): FaultOutcome[] =>
      RUNS.filter((r) => r.role === 'fault' && r.transport === transport).map(judged);
    const ws = faults('ws');
    const sio = faults('socketio');
    const underDialects: DialectFaultOutcome[] = RUNS.filter((r) => r.role === 'fault-dialect').map((r) => ({
      ...judged(r),
      seed: r.seed!,
    }));
    const lines = [
      ...disagreementLines(ws),
      ...disagreementLines(sio).map((l) => `(socketio) ${l}`),
      ...dialectDisagreementLines(underDialects).map((l) => `(dialects) ${l}`),
    ];
    // Printed into the test output: the score and the time are deliverables, not only verdicts.
    console.log(
      `${lines.length ? `disagreements:\n${lines.join('\n')}\n` : ''}${sweepLine(outcome)}\n` +
        `${formatTransportScore(sio, 'socketio')}\n${formatDialectScore(underDialects)}\n${formatScore(ws)}`,
    );
  });

  describe('clean', () => {
    it.each(['ws', 'socketio'] as const)('%s: no check fails or errors, run after run', (transport) => {
      const runs = runsOf({ transport, role: 'clean' });
      expect(runs.length).toBe(CLEAN_RUNS);
      for (const { results } of runs) {
        expect(results.length).toBe(mutationChecks().length);
        expect(cleanProblems(results)).toEqual([]);
        expect(results.filter((r) => r.outcome === 'pass').length).toBeGreaterThan(results.length / 2);
      }
    });
  });

  describe.each(['ws', 'socketio'] as const)('every fault over %s', (transport) => {
    const rows = RUNS.filter((r) => r.role === 'fault' && r.transport === transport);
    it.each(rows.map((r) => [r.fault!, scoreArea(faultOf(r.fault!)), r] as const))(
      'fault %s (%s): exactly its catches fail, nothing errors',
      (name, _area, r) => {
        const o = judged(r);
        expect(o.failing.length, `${name} is caught by no check`).toBeGreaterThan(0);
        expect(o.errors, `${name}: checks ended in error`).toEqual([]);
        expect(o.failing, `${name}: failing set differs from catches`).toEqual([...o.fault.catches].sort());
      },
    );

    it('scores every fault caught', () => {
      const all = rows.map(judged);
      expect(all.length).toBe(transport === 'ws' ? FAULTS.length : streamFaults().length);
      expect(all.every((o) => o.caught)).toBe(true);
    });

    it('names, for every violation of every failing check, a stated rule of the spec it breaks', () => {
      for (const r of rows) {
        for (const res of judged(r).results.filter((x) => x.outcome === 'fail'))
          for (const v of res.violations) {
            const st = failableStatement(v.rule);
            expect(st, `${r.fault} ${res.id}: ${v.received} names ${String(v.rule)}`).toBeDefined();
            expect(st!.statement.length).toBeGreaterThan(0);
          }
      }
    });
  });

  describe('faults under dialects', () => {
    const rows = RUNS.filter((r) => r.role === 'fault-dialect');
    it.each(rows.map((r) => [r.fault!, r.seed!, r] as const))(
      'fault %s under dialect seed %i: caught, nothing failing beyond its catches, nothing erroring',
      (_name, _seed, r) => {
        const o = { ...judged(r), seed: r.seed! };
        expect(dialectOk(o), dialectDisagreementLines([o]).join('\n')).toBe(true);
      },
    );
  });

  describe('dialects', () => {
    const rows = RUNS.filter((r) => r.role === 'dialect');
    it.each(
      rows.map((r) => [
        r.seed!,
        r.transport,
        coveringSeeds().includes(r.seed!) ? 'covering' : 'random',
        reproduceCommands(r.seed!, r.transport)[0]!,
        r,
      ]),
    )('seed %i over %s (%s): no check fails or errors (replay: %s)', (seed, transport, _kind, _replay, r) => {
      const [res] = runsOf(r as PlannedRun);
      expect(res, `no run for seed ${seed}`).toBeDefined();
      const problems = cleanProblems(res!.results);
      expect(problems, reproduceCommands(seed as number, transport as PlannedRun['transport'])[0]).toEqual([]);
      expect(res!.results.filter((x) => x.outcome === 'pass').length).toBeGreaterThan(res!.results.length / 2);
    });
  });

  it('reports a failing seed with its dialect, what failed and the commands that replay it', async () => {
    const o = await failing!;
    expect(o.problems.length).toBeGreaterThan(0);
    expect(outcomeLine(o)).toMatch(new RegExp(`^FAIL  seed ${failingSeed} `));
    const report = formatReport([o]);
    expect(report.split('\n')[0]).toBe('dialects: 1 run, 1 failing seed(s)');
    expect(report).toContain(`failing seed ${failingSeed}`);
    expect(report).toContain(JSON.stringify(drawDialect(failingSeed)));
    expect(report).toContain('ws.ping.pong.bare: fail');
    for (const c of reproduceCommands(failingSeed)) expect(report).toContain(`reproduce: ${c}`);
    expect(reproduceCommands(failingSeed)).toEqual([
      `npm run dialects -- --seed ${failingSeed}`,
      `npx conform serve --dialect random --seed ${failingSeed}`,
    ]);
  });
});
