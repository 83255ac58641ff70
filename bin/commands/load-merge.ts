/** `conform load merge RESULT…`: one report from several hosts' results (conform load JSON, k6 JSON, logs). */
import type { Argv } from 'yargs';
import { parseMergeArgs } from '../../load/invocation.ts';
import { runMerge } from '../../load/run.ts';
import type { Command } from './command.ts';
import { answeringBadInput, LOAD_EXIT_CODES, reportOptions } from './load-options.ts';

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
  examples: [
    [
      'conform load merge host1/conform-result.json host2/conform-result.json --out merged',
      'one report of a run spread over two hosts (--shard), into merged/',
    ],
    [
      "conform load merge results/*.json --threshold 'latency.p99<250' --threshold 'lost==0'",
      'exit 1 when the merged figures cross a threshold',
    ],
  ],
  exitCodes: LOAD_EXIT_CODES,
  run: (argv) => answeringBadInput(() => runMerge(parseMergeArgs(argv), { out: (t) => process.stdout.write(t) })),
};
