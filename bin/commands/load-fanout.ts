/** `conform load fanout`: WebSocket fan-out latency, skew and loss against a target or the embedded reference. */
import type { Argv } from 'yargs';
import { FANOUT_DEFAULTS } from '../../load/options.ts';
import type { Command } from './command.ts';
import {
  CLIENT_OPTIONS,
  HISTORY_OPTIONS,
  LOAD_TARGET_OPTIONS,
  PAIR_OPTION,
  REFERENCE_OPTIONS,
  runMode,
  runOptions,
} from './load-options.ts';

export const loadFanoutCommand: Command = {
  command: 'fanout',
  describe: 'WebSocket fan-out latency, skew and loss',
  builder: (y: Argv) =>
    y.options({
      ...LOAD_TARGET_OPTIONS,
      ...CLIENT_OPTIONS,
      ...PAIR_OPTION,
      ...runOptions({
        durationMs: FANOUT_DEFAULTS.durationMs,
        warmupMs: FANOUT_DEFAULTS.warmupMs,
        warmup: 'after the ramp',
        thresholds: "'latency.p99<50' 'skew.p99<20' 'lost==0' 'errors==0'",
      }),
      ...HISTORY_OPTIONS,
      ...REFERENCE_OPTIONS,
    }),
  run: runMode('fanout'),
};
