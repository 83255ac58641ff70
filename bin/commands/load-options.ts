/**
 * What the load modes share: the declarations of the options several of them take (the target,
 * the embedded reference, the fan-out clients, what a run is held to and writes), and the handler
 * of a run, which turns argv into the library's invocation (load/invocation.ts) and runs it
 * (load/run.ts). Each mode's file takes the groups it has, so its `--help` lists only its own.
 */
import type { Options } from 'yargs';
import { isBadInput } from '../../src/errors.ts';
import { PATHS } from '../../src/spec.ts';
import { type LoadRunMode, parseLoadArgs } from '../../load/invocation.ts';
import { FANOUT_DEFAULTS, TREND_DEFAULTS } from '../../load/options.ts';
import { defaultLoadReports, loadReportHelp } from '../../load/report/index.ts';
import { LOAD_EXIT, runLoad } from '../../load/run.ts';
import type { ExitCodes } from './command.ts';
import { targetOptions } from './target-options.ts';

/** The exit codes of every load mode (`LOAD_EXIT` of load/run.ts), as their `--help` says them. */
export const LOAD_EXIT_CODES = {
  [LOAD_EXIT.ok]: 'every threshold held (or none was set)',
  [LOAD_EXIT.thresholdCrossed]: 'a threshold was crossed; with --judge, the newest runs of the history regressed',
  [LOAD_EXIT.usage]:
    'bad options or input, a target that does not answer, or not one client got in: one line on stderr',
} satisfies ExitCodes;

/** What `conform load trend`'s exit codes mean. */
export const TREND_EXIT_CODES = {
  [LOAD_EXIT.ok]: 'no metric of the newest runs regressed',
  [LOAD_EXIT.thresholdCrossed]: 'the newest runs regressed on a metric (its shift, interval and p-value are printed)',
  [LOAD_EXIT.usage]: 'bad options, or a history that cannot be read: one line on stderr naming the line',
} satisfies ExitCodes;

/** What `conform load capacity`'s exit codes mean. */
export const CAPACITY_EXIT_CODES = {
  [LOAD_EXIT.ok]: 'a capacity was found: the highest load at which every SLO held',
  [LOAD_EXIT.thresholdCrossed]:
    'no capacity can be reported: no load held, the generator was the limit, or the budget ran out',
  [LOAD_EXIT.usage]: 'bad options, or a target that does not answer: one line on stderr',
} satisfies ExitCodes;

/** The target options of a load run, and the keys its clients spread over. */
export const LOAD_TARGET_OPTIONS = {
  ...targetOptions(['target', 'key', 'key-env', 'ws', 'profile', 'ca'], {
    target: {
      describe:
        'REST base URL of the target; without --target or --profile the ' +
        'reference service is started in its own process',
    },
  }),
  'keys-from': {
    type: 'string',
    describe: 'file of keys to spread clients over: JSON [{ key, connections }] or KEY[,CONNECTIONS] lines',
  },
} satisfies Record<string, Options>;

/** How the reference service started for a run behaves. */
export const REFERENCE_OPTIONS = {
  'push-interval': {
    type: 'string',
    describe: "embedded reference: the server's push interval (default 100ms, i.e. 10 Hz per pair)",
  },
  'move-probability': {
    type: 'number',
    describe: 'embedded reference: chance per push that a price moves (default 0.5)',
  },
  'service-rate': {
    type: 'string',
    describe:
      'embedded reference: REST requests it answers per second, one at a time, e.g. 400/s ' +
      '(a capacity known in advance; default unlimited)',
  },
} satisfies Record<string, Options>;

/** The pairs to use instead of those picked from the target's list. */
export const PAIR_OPTION = {
  pair: { type: 'string', array: true, describe: 'pair codes to use instead (repeat or comma-separate)' },
} satisfies Record<string, Options>;

/** The fan-out clients: how many, how fast they connect, what they watch (`fanout`, `calibrate`). */
export const CLIENT_OPTIONS = {
  clients: { type: 'number', describe: `WebSocket clients (default ${FANOUT_DEFAULTS.clients})` },
  pairs: {
    type: 'number',
    describe: `pairs per client, picked from ${PATHS.pairs} (default ${FANOUT_DEFAULTS.pairs})`,
  },
  'ramp-rate': {
    type: 'string',
    describe: `new connections per second, open model, e.g. 3000/s (default ${FANOUT_DEFAULTS.rampRate}/s)`,
  },
  workers: { type: 'string', describe: 'worker threads for the clients: auto (one per core) or a number' },
  'subscribe-after-ramp': {
    type: 'boolean',
    describe: 'connect every client first, then subscribe them all: the ramp is measured without traffic',
  },
  'validate-per-second': {
    type: 'number',
    describe:
      `push frames validated per second per worker; 0 = off ` +
      `(default ${FANOUT_DEFAULTS.validatePerSecond}: every frame at lower rates)`,
  },
  'loss-window': {
    type: 'string',
    describe:
      `a subscribed client that has not received an update this long after the first ` +
      `did has lost it (default ${FANOUT_DEFAULTS.updateWindowMs}ms)`,
  },
  shard: {
    type: 'string',
    describe:
      "this host's share i/n of a run spread over n hosts (--clients is " +
      "the whole run's; keys assigned over the whole run)",
  },
  'start-at': {
    type: 'string',
    describe:
      "wall-clock start of the whole run's ramp on every host (ISO date or " +
      "epoch ms); the measured window is the shared schedule's",
  },
} satisfies Record<string, Options>;

/** What a fanout or rest run keeps from night to night, and how it is judged against it. */
export const HISTORY_OPTIONS = {
  history: {
    type: 'string',
    describe:
      'append the run to this history CSV (every metric, the time, the target, labels, trustworthy, ' +
      'the load average); Apache Otava reads it as it is',
  },
  label: {
    type: 'string',
    array: true,
    describe: 'NAME=VALUE recorded with the run in the history and on its live metrics, e.g. version=1.4.2',
  },
  'remote-write': {
    type: 'string',
    describe:
      'push live metrics every second with Prometheus remote write to this URL, e.g. ' +
      'http://127.0.0.1:9090/api/v1/write (Prometheus with --web.enable-remote-write-receiver, Mimir, Grafana Cloud)',
  },
  judge: {
    type: 'boolean',
    describe: 'after appending, judge the history as conform load trend does: exit 1 when the newest runs regressed',
  },
  'group-by': {
    type: 'string',
    describe: 'with --judge: judge one point per value of this label, the mean of its runs, e.g. night',
  },
  'min-effect': {
    type: 'string',
    describe: `with --judge: smallest shift worth an alarm, e.g. 10% (default ${TREND_DEFAULTS.minEffect * 100}%)`,
  },
} satisfies Record<string, Options>;

/** What every run has: how long it measures, what it is held to and what it writes. */
export function runOptions(o: { durationMs: number; warmupMs: number; warmup: string; thresholds: string }) {
  return {
    duration: {
      type: 'string',
      describe: `measured phase, e.g. 20s (default ${o.durationMs / 1000}s)`,
    },
    warmup: {
      type: 'string',
      describe: `settling time excluded from the figures, ${o.warmup} (default ${o.warmupMs / 1000}s)`,
    },
    threshold: { type: 'string', array: true, describe: `gate the exit code, e.g. ${o.thresholds}` },
    ...reportOptions('run'),
    progress: { type: 'boolean', describe: 'live progress line on stderr (default: when stderr is a TTY)' },
  } satisfies Record<string, Options>;
}

/** `--report` and `--out` of a run or of merge, the names and the default from the registry of load reports. */
export function reportOptions(side: 'run' | 'merge' | 'trend' | 'capacity') {
  return {
    report: {
      type: 'string',
      array: true,
      default: defaultLoadReports(side),
      describe: `report formats: ${loadReportHelp(side)}`,
    },
    out: { type: 'string', default: FANOUT_DEFAULTS.outDir, describe: 'report folder' },
  } satisfies Record<string, Options>;
}

/**
 * Runs `fn`, answering bad input as every load mode does: its message on one line and exit 2.
 * Anything else is the harness's own failure, for the command runner to report.
 */
export async function answeringBadInput(fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (err) {
    if (!isBadInput(err)) throw err;
    process.stderr.write(`conform: ${err.message}\n`);
    return LOAD_EXIT.usage;
  }
}

/** The handler of a run: argv and the environment → the invocation → the run; returns the exit code. */
export const runMode =
  (mode: LoadRunMode) =>
  (argv: Record<string, unknown>): Promise<number> =>
    answeringBadInput(() =>
      runLoad(parseLoadArgs({ ...argv, mode }, process.env), {
        out: (t) => process.stdout.write(t),
        err: (t) => process.stderr.write(t),
        tty: process.stderr.isTTY === true,
        env: process.env,
      }),
    );
