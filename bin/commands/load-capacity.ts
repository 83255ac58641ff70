/**
 * `conform load capacity fanout | rest`: where the service breaks. Doubles the load (clients or
 * requests per second), then bisects, each step a warm-up and a short measured window, until the
 * highest load at which every SLO held.
 */
import type { Argv, Options } from 'yargs';
import { parseCapacityArgs, runCapacityCommand } from '../../load/capacity/invocation.ts';
import { CAPACITY_DEFAULTS } from '../../load/options.ts';
import { UsageError } from '../../src/errors.ts';
import type { Command } from './command.ts';
import {
  answeringBadInput,
  CAPACITY_EXIT_CODES,
  CLIENT_OPTIONS,
  LOAD_TARGET_OPTIONS,
  PAIR_OPTION,
  REFERENCE_OPTIONS,
  reportOptions,
} from './load-options.ts';
import { REQUEST_OPTIONS } from './load-rest.ts';

/** What every capacity search takes: the SLOs, the steps, the budget. */
const SEARCH_OPTIONS = {
  slo: {
    type: 'string',
    array: true,
    describe: "held at every step below the capacity, threshold syntax, e.g. 'latency.p99<50' 'errors==0'",
  },
  start: { type: 'string', describe: 'first load to try (default 50 clients, 50 requests/s)' },
  'step-duration': {
    type: 'string',
    describe: `measured window of each step (default ${CAPACITY_DEFAULTS.stepMs / 1000}s)`,
  },
  'step-warmup': {
    type: 'string',
    describe: `warm-up before each step's window (default ${CAPACITY_DEFAULTS.warmupMs / 1000}s)`,
  },
  'max-steps': { type: 'number', describe: `steps at most (default ${CAPACITY_DEFAULTS.maxSteps})` },
  'max-time': {
    type: 'string',
    describe: `wall time at most, e.g. 10m (default ${CAPACITY_DEFAULTS.maxTimeMs / 60_000}m)`,
  },
  ...reportOptions('capacity'),
} satisfies Record<string, Options>;

const { clients: _clients, shard: _shard, 'start-at': _startAt, ...STEP_CLIENT_OPTIONS } = CLIENT_OPTIONS;
const { rate: _rate, ...STEP_REQUEST_OPTIONS } = REQUEST_OPTIONS;

const run =
  (kind: 'fanout' | 'rest') =>
  (argv: Record<string, unknown>): Promise<number> =>
    answeringBadInput(() =>
      runCapacityCommand(parseCapacityArgs({ ...argv, kind }, process.env), {
        out: (t) => process.stdout.write(t),
        err: (t) => process.stderr.write(t),
        env: process.env,
      }),
    );

const capacityFanout: Command = {
  command: 'fanout',
  describe: 'the most clients the stream serves within the SLOs',
  builder: (y: Argv) =>
    y.options({
      ...LOAD_TARGET_OPTIONS,
      'max-clients': { type: 'number', describe: 'the most clients to try' },
      ...STEP_CLIENT_OPTIONS,
      ...PAIR_OPTION,
      ...SEARCH_OPTIONS,
      ...REFERENCE_OPTIONS,
    }),
  examples: [
    [
      "conform load capacity fanout --slo 'latency.p99<100' --slo 'lost==0' --max-clients 2000",
      'the most subscribers the reference service serves within both SLOs',
    ],
    [
      'conform load capacity fanout --target https://prices.example.com --keys-from keys.txt --max-clients 5000',
      "a target's stream, its clients spread over the keys of keys.txt",
    ],
  ],
  exitCodes: CAPACITY_EXIT_CODES,
  run: run('fanout'),
};

const capacityRest: Command = {
  command: 'rest',
  describe: 'the most requests per second REST serves within the SLOs',
  builder: (y: Argv) =>
    y.options({
      ...LOAD_TARGET_OPTIONS,
      'max-rate': { type: 'string', describe: 'the highest rate to try, e.g. 2000/s' },
      ...STEP_REQUEST_OPTIONS,
      ...PAIR_OPTION,
      ...SEARCH_OPTIONS,
      ...REFERENCE_OPTIONS,
    }),
  examples: [
    [
      "conform load capacity rest --slo 'latency.p99<50' --slo 'errors==0' --max-rate 5000",
      'the most price reads a second the reference service answers within both SLOs',
    ],
    [
      "conform load capacity rest --target https://prices.example.com --endpoint pairs --slo 'latency.p99<300'",
      "a target's pair listings",
    ],
  ],
  exitCodes: CAPACITY_EXIT_CODES,
  run: run('rest'),
};

export const loadCapacityCommand: Command = {
  command: 'capacity',
  describe: 'where the service breaks: doubling then bisecting the load until an SLO fails',
  builder: (y: Argv) => y,
  examples: [
    ["conform load capacity rest --slo 'latency.p99<50' --max-rate 5000", 'where REST breaks'],
    ["conform load capacity fanout --slo 'latency.p99<100' --max-clients 2000", 'where the stream breaks'],
  ],
  exitCodes: CAPACITY_EXIT_CODES,
  run: async () => {
    throw new UsageError('conform load capacity: name the load to search, fanout or rest');
  },
  subcommands: [capacityFanout, capacityRest],
};
