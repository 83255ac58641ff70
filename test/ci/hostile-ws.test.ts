/**
 * The CLI against every WebSocket-level hostile target, paired with the reference service for
 * REST (so the run reaches the stream checks): every `ws` check ends fail, error or skip within
 * its timeout with a one-line reason, exit 1, no stack trace, bounded memory (maxPayload), under
 * two minutes, and no key in any output.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { minimalProfile } from '../../src/profile.ts';
import { HOSTILE_TARGETS } from '../helpers/hostile/targets.ts';
import { judgeHostileRuns } from '../helpers/hostile/harness.ts';
import { runCli } from '../helpers/hostile/run-cli.ts';
import { jsonReportOf } from '../helpers/hostile/judge.ts';

const TARGETS = HOSTILE_TARGETS.filter((t) => t.layer === 'ws');

let reference: ReferenceServer;
// Started before the runs, which are registered after it.
beforeAll(async () => {
  reference = await startReferenceServer();
});
afterAll(async () => {
  await reference?.close();
});

describe('the CLI against a hostile WebSocket', () => {
  const outcomes = judgeHostileRuns(
    TARGETS.map((def) => ({ name: def.name, def })),
    {
      concurrency: 6,
      timeoutMs: 15 * 60_000,
      // The reference's own key: its REST half must answer.
      makeKey: () => reference.profile.keys.primary.key,
      run: async (_c, target, key) => ({
        run: await runCli([
          '--target',
          reference.restUrl,
          '--ws',
          target.ws!,
          '--key',
          key,
          '--report',
          'console,json,junit,html',
        ]),
      }),
      judging: (o) => ({
        profile: minimalProfile({ target: reference.restUrl, key: o.key, ws: o.target.ws }),
        facesHostile: (r) => r.tags.includes('ws'),
      }),
    },
  );

  it('refuses the 20 MB frame by its announced size (maxPayload) and says so', () => {
    // ws drains a failed connection's socket, so bytes read say nothing here; peak RSS (above) does.
    const report = jsonReportOf(outcomes.get('ws-frame-20mb')!.run)!;
    const notes = report.results
      .flatMap((r) => r.evidence)
      .filter((e) => e.kind === 'note')
      .map((e) => e.text);
    expect(notes.some((t) => /max payload|maxPayload|1009/i.test(t))).toBe(true);
  });
});
