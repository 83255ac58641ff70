/** `conform load merge RESULT…`: one report from several hosts' results (conform load JSON, k6 JSON, logs). */
import type { Argv } from 'yargs';
import { parseMergeArgs } from '../../load/invocation.ts';
import { runMerge } from '../../load/run.ts';
import type { Command } from './command.ts';
import { answeringBadInput, reportOptions } from './load-options.ts';

export const loadMergeCommand: Command = {
  command: 'merge [results..]',
  describe: "one report from several hosts' results",
  builder: (y: Argv) =>
    y
      .positional('results', {
        type: 'string',
        array: true,
        describe: 'result files (conform load JSON or k6 JSON from load/k6)',
      })
      .options({
        threshold: {
          type: 'string',
          array: true,
          describe: "gate the exit code on the merged figures, e.g. 'latency.p99<50' 'lost==0'",
        },
        ...reportOptions('merge'),
      }),
  run: (argv) => answeringBadInput(() => runMerge(parseMergeArgs(argv), { out: (t) => process.stdout.write(t) })),
};
