/**
 * The dialect driver's own logic (test/helpers/dialect-runs.ts): its arguments, the covering seeds
 * (every value of every option of DIALECT_SPACE at least once), and how a failing seed is told
 * apart. The runs against dialects themselves are the sweep (test/ci/sweeps/suite-runs.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { coveringSeeds, drawDialect, DIALECT_SPACE } from '../../reference/index.ts';
import { overAllowance, parseDialectArgs } from '../helpers/dialect-runs.ts';

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
});
