/** `conform load rest`: REST latency at a fixed arrival rate, or throughput with `--rate max`. */
import type { Argv, Options } from 'yargs';
import { REST_DEFAULTS } from '../../load/options.ts';
import type { Command } from './command.ts';
import {
  LOAD_EXIT_CODES,
  HISTORY_OPTIONS,
  LOAD_TARGET_OPTIONS,
  PAIR_OPTION,
  REFERENCE_OPTIONS,
  runMode,
  runOptions,
} from './load-options.ts';

/** What the requests ask for and at what rate. */
export const REQUEST_OPTIONS = {
  endpoint: { type: 'string', describe: `price or pairs (default ${REST_DEFAULTS.endpoint})` },
  rate: {
    type: 'string',
    describe:
      `requests per second at intended times, latency from the intended send ` +
      `time (open model, default ${String(REST_DEFAULTS.rate)}); max: connections ` +
      `back to back, the most the target serves (closed model)`,
  },
  arrival: {
    type: 'string',
    describe: `open model: intended times uniform (evenly spaced) or poisson (default ${REST_DEFAULTS.arrival})`,
  },
  seed: { type: 'number', describe: `seed of the Poisson arrivals (default ${REST_DEFAULTS.seed})` },
  connections: {
    type: 'number',
    describe:
      `most HTTP connections (open model) or connections sending back to ` +
      `back (max) (default ${REST_DEFAULTS.connections})`,
  },
  pipelining: {
    type: 'number',
    describe: `requests in flight on one connection at once (default ${REST_DEFAULTS.pipelining}: none pipelined)`,
  },
  workers: {
    type: 'string',
    describe:
      `worker threads the requests are spread over, for more than one core: a number or auto ` +
      `(one per core for --rate max, else one per ${REST_DEFAULTS.requestsPerThread} requests/s up to ` +
      `one per core) (default ${REST_DEFAULTS.workers}: this thread)`,
  },
} satisfies Record<string, Options>;

export const loadRestCommand: Command = {
  command: 'rest',
  describe: 'REST latency at a fixed arrival rate, or throughput with --rate max',
  builder: (y: Argv) =>
    y.options({
      ...LOAD_TARGET_OPTIONS,
      ...REQUEST_OPTIONS,
      ...PAIR_OPTION,
      ...runOptions({
        durationMs: REST_DEFAULTS.durationMs,
        warmupMs: REST_DEFAULTS.warmupMs,
        warmup: 'before the measured requests',
        thresholds: "'latency.p99<100' 'errors==0'",
      }),
      ...HISTORY_OPTIONS,
      ...REFERENCE_OPTIONS,
    }),
  examples: [
    ['conform load rest --rate 200 --duration 30s', 'price reads at 200 a second against the reference service'],
    [
      "conform load rest --target https://prices.example.com --endpoint pairs --rate 50 --threshold 'latency.p99<300'",
      'a target at 50 pair listings a second; exit 1 when p99 latency reaches 300 ms',
    ],
    ['conform load rest --target https://prices.example.com --rate max', 'the most price reads a second it serves'],
  ],
  exitCodes: LOAD_EXIT_CODES,
  run: runMode('rest'),
};
