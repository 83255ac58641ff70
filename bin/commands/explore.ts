/**
 * `conform explore` and `conform replay FILE`: the explorer alone (ws.explore) against a profile, a
 * `--target` or the embedded reference. Each turns argv into the options of a run limited to the
 * explorer and runs it as `conform` does (runWithOptions); the library validates.
 */
import type { Argv } from 'yargs';
import { OPTION_DEFAULTS, type ConformOptions } from '../../src/options.ts';
import type { Command } from './command.ts';
import { CONFORM_EXIT_CODES, REPORT_OPTIONS, runWithOptions } from './conform.ts';
import { targetOptions } from './target-options.ts';

const TARGET = ['target', 'key', 'key-env', 'ws', 'profile', 'transport', 'event'] as const;

/** The options of a run of the explorer alone, from what yargs parsed. */
export function explorerOptions(argv: Record<string, unknown>, more: Partial<ConformOptions>): ConformOptions {
  const text = (name: string): string | undefined => (argv[name] === undefined ? undefined : String(argv[name]));
  const list = (v: unknown): string[] =>
    (Array.isArray(v) ? v : v === undefined ? [] : [v]).flatMap((x) => String(x).split(','));
  const options: ConformOptions = {
    ...OPTION_DEFAULTS,
    only: ['ws.explore'],
    target: text('target'),
    key: text('key'),
    keyEnv: text('key-env') ?? OPTION_DEFAULTS.keyEnv,
    ws: text('ws'),
    profile: text('profile'),
    transport: text('transport') as ConformOptions['transport'],
    event: text('event'),
    report: list(argv.report) as ConformOptions['report'],
    out: text('out') ?? OPTION_DEFAULTS.out,
    ...more,
  };
  for (const k of Object.keys(options) as (keyof ConformOptions)[]) if (options[k] === undefined) delete options[k];
  return options;
}

const reportOptions = { report: REPORT_OPTIONS.report, out: REPORT_OPTIONS.out };

export const exploreCommand: Command = {
  command: 'explore',
  describe:
    "Explore the stream's state space: sequences of opens, closes, subscribes, unsubscribes, pings " +
    'and idles over several connections of every key, each step held to a model of the spec',
  builder: (y: Argv) =>
    y
      .options({
        ...targetOptions(TARGET),
        budget: {
          type: 'string',
          default: '60s',
          describe: 'how long to explore (60s, 500ms, 2m); shrinking a failure takes at most as long again',
        },
        seed: {
          type: 'number',
          describe:
            'the seed the sequences are drawn from: the same seed draws the same sequences ' +
            '(default drawn and reported)',
        },
        ...reportOptions,
      })
      .strict(),
  examples: [
    ['conform explore', 'explore the embedded reference service for a minute, from a seed drawn and reported'],
    ['conform explore --profile staging.json --budget 60s --seed 7', 'explore a target for a minute from seed 7'],
    [
      'CONFORM_API_KEY=… conform explore --target https://prices.example.com --budget 2m',
      'a target found with one key, for two minutes',
    ],
  ],
  exitCodes: CONFORM_EXIT_CODES,
  run: (argv, ctx) =>
    runWithOptions(
      explorerOptions(argv, {
        explore: String(argv.budget),
        ...(argv.seed === undefined ? {} : { seed: argv.seed as number }),
      }),
      ctx,
    ),
};

export const replayCommand: Command = {
  command: 'replay <file>',
  describe: 'Run the replay file of a failure the explorer found (conform-explore-replay.json) and judge it again',
  builder: (y: Argv) =>
    y
      .positional('file', { type: 'string', describe: 'the replay file (written into --out by a failing exploration)' })
      .options({ ...targetOptions(TARGET), ...reportOptions })
      .strict(),
  examples: [
    [
      'conform replay conform-reports/conform-explore-replay.json --profile staging.json',
      'run the shrunk sequence of a failure again against the target it failed on',
    ],
    ['conform replay conform-explore-replay.json', 'the same against the embedded reference service'],
  ],
  exitCodes: CONFORM_EXIT_CODES,
  run: (argv, ctx) => runWithOptions(explorerOptions(argv, { replay: String(argv.file) }), ctx),
};
