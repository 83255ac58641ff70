/**
 * The CLI against every WebSocket-level hostile target, paired with the reference service for
 * REST (so the run reaches the stream checks): every `ws` check ends fail, error or skip within
 * its timeout with a one-line reason, exit 1, no stack trace, bounded memory (maxPayload), under
 * two minutes, and no key in any output. Runs several targets at once: most of a run is waiting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../reference/index.ts';
import { minimalProfile } from '../src/profile.ts';
import { HOSTILE_TARGETS, type HostileDefinition, type HostileTarget } from './hostile/targets.ts';
import { pool, runCli, type CliRun } from './hostile/run-cli.ts';
import { jsonReportOf, judge, runLine } from './hostile/judge.ts';

const TARGETS = HOSTILE_TARGETS.filter((t) => t.layer === 'ws');

interface Outcome {
  def: HostileDefinition;
  target: HostileTarget;
  run: CliRun;
}
const outcomes = new Map<string, Outcome>();
let reference: ReferenceServer;
let key: string;

beforeAll(async () => {
  reference = await startReferenceServer();
  key = reference.profile.keys.primary.key;
  await pool(TARGETS, 6, async (def) => {
    const target = await def.start();
    try {
      const run = await runCli([
        '--target',
        reference.restUrl,
        '--ws',
        target.ws!,
        '--key',
        key,
        '--report',
        'console,json,junit,html',
      ]);
      console.log(runLine(def.name, run));
      outcomes.set(def.name, { def, target, run });
    } finally {
      await target.close();
    }
  });
}, 15 * 60_000);
afterAll(async () => {
  await reference?.close();
});

describe('the CLI against a hostile WebSocket', () => {
  for (const def of TARGETS) {
    it(`ends against ${def.name} (${def.breaks}): verdicts, exit ${def.exit.join('/')}, no stack trace, no key`, () => {
      const o = outcomes.get(def.name)!;
      const profile = minimalProfile({ target: reference.restUrl, key, ws: o.target.ws });
      expect(judge(def, o.run, { keys: [key], profile, facesHostile: (r) => r.tags.includes('ws') })).toEqual([]);
    });
  }

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
