/**
 * The zero-false-failure property: the whole default catalogue passes (no fail, no error) against
 * every dialect of the reference service. The covering seeds take every value of every option of
 * DIALECT_SPACE at least once; a few random seeds go beside them, named in the test title so that a
 * failure reads as the command that replays it. The covering seeds run over the raw WebSocket and
 * over Socket.IO. Every run gets its own server on port 0 with the
 * mutation suite's short ping window; all runs share one bounded pool inside one hook.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { coveringSeeds, drawDialect, DIALECT_SPACE } from '../reference/index.ts';
import {
  DIALECT_DEFAULTS,
  formatReport,
  outcomeLine,
  overAllowance,
  parseDialectArgs,
  randomSeeds,
  reproduceCommands,
  runDialect,
  type DialectOutcome,
} from '../scripts/dialects.ts';
import { pool, type MutationSettings } from '../scripts/mutation.ts';

type Transport = MutationSettings['transport'];
const TRANSPORTS: readonly Transport[] = ['ws', 'socketio'];

/** Random seeds run beside the covering ones on every test run. */
const RANDOM_RUNS = 2;
/**
 * Generous: the covering seeds over two transports, three at a time, with cadences up to 3 s and
 * slots freed up to 3 s late.
 */
const SUITE_BUDGET_MS = 1_800_000;

describe('npm run dialects arguments', () => {
  it('runs the covering seeds when given nothing', () => {
    expect(parseDialectArgs([], () => [1, 2, 3])).toEqual({ source: 'covering', seeds: [1, 2, 3], transport: 'ws' });
  });

  it('draws N distinct random seeds for --runs N', () => {
    const { source, seeds } = parseDialectArgs(['--runs', '50']);
    expect(source).toBe('random');
    expect(new Set(seeds).size).toBe(50);
    for (const s of seeds) expect(Number.isInteger(s) && s >= 1).toBe(true);
  });

  it('replays the seeds given with --seed, over Socket.IO with --socketio, at --concurrency', () => {
    expect(parseDialectArgs(['--seed', '17, 42', '--socketio', '--concurrency', '2'])).toEqual({
      source: 'given',
      seeds: [17, 42],
      transport: 'socketio',
      concurrency: 2,
    });
  });

  it.each([
    [['--runs', '0'], '--runs: "0" is not a positive integer'],
    [['--runs', 'ten'], '--runs: "ten" is not a positive integer'],
    [['--seed', '1.5'], '--seed: "1.5" is not a positive integer'],
    [['--runs', '3', '--seed', '4'], '--runs and --seed: give one of them'],
  ])('refuses %j with one line', (argv, message) => {
    expect(() => parseDialectArgs(argv)).toThrow(message);
  });

  it('refuses an unknown option', () => expect(() => parseDialectArgs(['--rounds', '3'])).toThrow(/rounds/));
});

describe('the covering seeds', () => {
  it('take every value of every option of the dialect space', () => {
    const drawn = coveringSeeds().map((s) => drawDialect(s) as unknown as Record<string, Record<string, unknown>>);
    for (const [group, options] of Object.entries(DIALECT_SPACE)) {
      for (const [name, space] of Object.entries(options as Record<string, { values: readonly unknown[] }>)) {
        for (const v of space.values)
          expect(
            drawn.some((d) => JSON.stringify(d[group]![name]) === JSON.stringify(v)),
            `${group}.${name}=${JSON.stringify(v)}`,
          ).toBe(true);
      }
    }
  });
});

describe('a failing seed', () => {
  it('is told apart when it fails only on 50009 refusals of connections conform opened', () => {
    const refused =
      'ws.ping.pong.bare: fail handshake refused: HTTP 429 { "message": "Connection limit exceeded", ' +
      '"status_number": "50009" } / expected a valid key with stream access is accepted';
    expect(overAllowance(refused)).toBe(true);
    expect(overAllowance('ws.ping.pong.bare: fail text frame "pong!" / expected the text frame "Pong!"')).toBe(false);
  });

  // A whole catalogue under a dialect: a bound against a hang (it shares two cores with the mutation suite).
  it('is reported with its dialect, what failed and the commands that replay it', async () => {
    const seed = coveringSeeds()[0]!;
    // A fault on top of a dialect: a run that must fail, as a false failure would.
    const outcome = await runDialect(seed, {}, 'ping-reply-lowercase');
    expect(outcome.problems.length).toBeGreaterThan(0);
    expect(outcomeLine(outcome)).toMatch(new RegExp(`^FAIL  seed ${seed} `));
    const report = formatReport([outcome]);
    expect(report.split('\n')[0]).toBe('dialects: 1 run, 1 failing seed(s)');
    expect(report).toContain(`failing seed ${seed}`);
    expect(report).toContain(JSON.stringify(drawDialect(seed)));
    expect(report).toContain('ws.ping.pong.bare: fail');
    for (const c of reproduceCommands(seed)) expect(report).toContain(`reproduce: ${c}`);
    expect(reproduceCommands(seed)).toEqual([
      `npm run dialects -- --seed ${seed}`,
      `npx conform serve --dialect random --seed ${seed}`,
    ]);
  }, 180_000);
});

describe('the whole catalogue against dialects of the reference service', () => {
  const covering = coveringSeeds();
  // Over both transports: the Socket.IO options (event, namespace, payload, refusals) only show over Socket.IO.
  const runs: { seed: number; transport: Transport; covering: boolean }[] = [
    ...TRANSPORTS.flatMap((transport) => covering.map((seed) => ({ seed, transport, covering: true }))),
    ...randomSeeds(RANDOM_RUNS)
      .filter((s) => !covering.includes(s))
      .map((seed, i) => ({ seed, transport: TRANSPORTS[i % TRANSPORTS.length]!, covering: false })),
  ];
  const outcomes = new Map<string, DialectOutcome>();
  const key = (seed: number, transport: Transport): string => `${transport}:${seed}`;

  beforeAll(async () => {
    await pool(runs, DIALECT_DEFAULTS.dialectConcurrency, async ({ seed, transport }) => {
      outcomes.set(key(seed, transport), await runDialect(seed, { transport }));
    });
    // Printed into the test output: the figure is a deliverable, not only a verdict.
    for (const t of TRANSPORTS)
      console.log(
        `over ${t}:\n${formatReport(
          runs
            .filter((r) => r.transport === t)
            .map((r) => outcomes.get(key(r.seed, t))!)
            .filter(Boolean),
          t,
        )}`,
      );
  }, SUITE_BUDGET_MS);

  it.each(runs.filter((r) => r.covering).map((r) => [r.seed, r.transport]))(
    'covering seed %i over %s: no check fails or errors',
    (seed, transport) => {
      const o = outcomes.get(key(seed, transport));
      expect(o, `no outcome for seed ${seed}`).toBeDefined();
      expect(o!.problems, reproduceCommands(seed, transport)[0]).toEqual([]);
      expect(o!.counts.pass).toBeGreaterThan(o!.results.length / 2);
    },
  );

  it.each(runs.filter((r) => !r.covering).map((r) => [r.seed, r.transport, reproduceCommands(r.seed, r.transport)[0]]))(
    'random seed %i over %s: no check fails or errors (replay: %s)',
    (seed, transport) => {
      const o = outcomes.get(key(seed, transport));
      expect(o, `no outcome for seed ${seed}`).toBeDefined();
      expect(o!.problems, reproduceCommands(seed, transport)[0]).toEqual([]);
    },
  );
});
