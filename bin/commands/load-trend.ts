/** `conform load trend --history FILE`: did the newest runs regress? Change points of every metric of a history. */
import type { Argv } from 'yargs';
import { TREND_DEFAULTS } from '../../load/options.ts';
import { parseTrendArgs, runTrend } from '../../load/trend/run.ts';
import type { Command } from './command.ts';
import { answeringBadInput, reportOptions, TREND_EXIT_CODES } from './load-options.ts';

export const loadTrendCommand: Command = {
  command: 'trend',
  describe: 'judge a history of runs (--history): exit 1 when the newest runs regressed',
  builder: (y: Argv) =>
    y.options({
      history: { type: 'string', describe: 'the history CSV the runs were appended to (--history of fanout, rest)' },
      metric: {
        type: 'string',
        array: true,
        describe: 'judge only these metrics, e.g. latency.p99 (default: every metric with a bad direction)',
      },
      'min-effect': {
        type: 'string',
        describe: `smallest shift worth an alarm, e.g. 10% (default ${TREND_DEFAULTS.minEffect * 100}%)`,
      },
      'group-by': {
        type: 'string',
        describe:
          "judge one point per value of this label, the mean of its runs, e.g. night (each run's --label night=…)",
      },
      ...reportOptions('trend'),
    }),
  examples: [
    ['conform load trend --history history/rest.csv', 'did the newest runs of the history regress?'],
    [
      'conform load trend --history history/fanout.csv --metric latency.p99 --min-effect 5% --report console,html',
      'p99 alone, a shift of 5 % worth an alarm, with an HTML page of every run',
    ],
    [
      'conform load trend --history history/fanout.csv --group-by night',
      'nights of several runs, each appended with --label night=2026-11-28: each night judged by the mean of its runs',
    ],
  ],
  exitCodes: TREND_EXIT_CODES,
  run: (argv) =>
    answeringBadInput(async () => runTrend(parseTrendArgs(argv, process.env), { out: (t) => process.stdout.write(t) })),
};
