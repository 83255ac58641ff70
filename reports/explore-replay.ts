/**
 * The explorer's replay file: written into the report directory whenever a run's explorer found a
 * failure, whatever the formats chosen, so that `conform replay FILE` can run it again.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { REPLAY_FILE } from '../src/explore/index.ts';
import type { RunHandler } from '../src/runner.ts';

/** Writes `conform-explore-replay.json` into `outDir` when a result carries a failure the explorer found. */
export function replayFileHandler(outDir: string, written: (file: string) => void = () => {}): RunHandler {
  return {
    async handle(e) {
      if (e.type !== 'run-end') return;
      const replay = e.results.find((r) => r.exploration?.failure)?.exploration?.failure?.replay;
      if (!replay) return;
      await mkdir(outDir, { recursive: true });
      const file = path.join(outDir, REPLAY_FILE);
      await writeFile(file, `${JSON.stringify(replay, null, 2)}\n`);
      written(file);
    },
  };
}
