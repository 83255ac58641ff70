/**
 * `conform load calibrate`: the generator's own floor, the fan-out measurement against a trivial
 * in-process broadcast server at the same clients and rate.
 */
import type { Argv } from 'yargs';
import { FANOUT_DEFAULTS } from '../../load/options.ts';
import type { Command } from './command.ts';
import { CLIENT_OPTIONS, LOAD_EXIT_CODES, runMode, runOptions } from './load-options.ts';

export const loadCalibrateCommand: Command = {
  command: 'calibrate',
  describe: "the generator's own floor: fan-out against a trivial in-process broadcast server",
  builder: (y: Argv) =>
    y.options({
      ...CLIENT_OPTIONS,
      ...runOptions({
        durationMs: FANOUT_DEFAULTS.durationMs,
        warmupMs: FANOUT_DEFAULTS.warmupMs,
        warmup: 'after the ramp',
        thresholds: "'latency.p99<50' 'skew.p99<20' 'lost==0' 'errors==0'",
      }),
      'push-interval': {
        type: 'string',
        describe: "the broadcast server's push interval (default 100ms, i.e. 10 Hz per pair)",
      },
    }),
  examples: [
    [
      'conform load calibrate --clients 1000',
      "the generator's own latency and skew at 1,000 clients, no target involved",
    ],
    [
      "conform load calibrate --clients 5000 --ramp-rate 2000/s --threshold 'latency.p99<20'",
      'exit 1 when this machine cannot hold 5,000 clients under 20 ms at p99',
    ],
  ],
  exitCodes: LOAD_EXIT_CODES,
  run: runMode('calibrate'),
};
