/**
 * `conform load <fanout|rest|calibrate|merge>`: the load tools, one yargs sub-command per mode
 * (each in its own file, so each mode's `--help` lists only its own options). Exit codes: 0 every
 * threshold held, 1 one crossed, 2 usage error.
 */
import type { Argv } from 'yargs';
import { UsageError } from '../../src/errors.ts';
import { LOAD_MODES } from '../../load/invocation.ts';
import type { Command } from './command.ts';
import { loadCalibrateCommand } from './load-calibrate.ts';
import { loadCapacityCommand } from './load-capacity.ts';
import { loadFanoutCommand } from './load-fanout.ts';
import { loadMergeCommand } from './load-merge.ts';
import { LOAD_EXIT_CODES } from './load-options.ts';
import { loadRestCommand } from './load-rest.ts';
import { loadTrendCommand } from './load-trend.ts';

/**
 * What is left when no mode matched: `conform load` alone, or an unknown mode. yargs then names
 * what is missing, or what was given and the modes there are; this handler never runs.
 */
const noMode: Command = {
  command: '$0 <mode>',
  describe: false,
  builder: (y: Argv) => y.positional('mode', { choices: LOAD_MODES, describe: 'the load tool to run' }),
  examples: [],
  exitCodes: LOAD_EXIT_CODES,
  run: async (argv) => {
    throw new UsageError(`conform load ${String(argv.mode)}: unknown mode; use ${LOAD_MODES.join(', ')}`);
  },
};

export const loadCommand: Command = {
  command: 'load',
  describe:
    'load tools: fan-out latency, skew and loss; REST throughput; generator ' +
    "calibration; merging several hosts' results; the trend of a history; the capacity",
  builder: (y: Argv) => y,
  examples: [
    [
      'conform load fanout --clients 1000 --duration 60s',
      'stream fan-out at 1,000 clients, against the reference service',
    ],
    ['conform load rest --target https://prices.example.com --rate 200', 'REST latency at 200 requests a second'],
    ['conform load calibrate --clients 1000', "the generator's own floor on this machine, to read the others by"],
  ],
  exitCodes: LOAD_EXIT_CODES,
  run: noMode.run,
  subcommands: [
    loadFanoutCommand,
    loadRestCommand,
    loadCalibrateCommand,
    loadMergeCommand,
    loadTrendCommand,
    loadCapacityCommand,
    noMode,
  ],
};
