/** `conform load fanout`: WebSocket fan-out latency, skew and loss against a target or the embedded reference. */
import type { Argv } from 'yargs';
import { FANOUT_DEFAULTS } from '../../load/options.ts';
import type { Command } from './command.ts';
import {
  CLIENT_OPTIONS,
  LOAD_EXIT_CODES,
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
  examples: [
    ['conform load fanout', '100 clients against the reference service, started in its own process'],
    [
      'conform load fanout --target https://prices.example.com --ws wss://prices.example.com/v1/ws ' +
        "--clients 1000 --ramp-rate 500/s --threshold 'latency.p99<250'",
      'a target, with the key from CONFORM_API_KEY; exit 1 when p99 latency reaches 250 ms',
    ],
    [
      'conform load fanout --target https://prices.example.com --keys-from keys.txt --clients 20000 ' +
        '--shard 1/4 --start-at 2026-12-01T02:00:00Z',
      "this host's quarter of a run over four hosts, the keys spread over its clients",
    ],
  ],
  exitCodes: LOAD_EXIT_CODES,
  run: runMode('fanout'),
};
