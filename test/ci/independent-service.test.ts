/**
 * The CLI as a new user runs it, `conform --target URL` with one key in the environment and no
 * `--ws` and no profile, against a service written from the spec alone (helpers/independent-service.ts)
 * whose open choices were made without looking at the reference: the stream on a path the harness
 * must find by itself, timestamps in seconds, a `meta` block, a refused per_page above 50, pushes
 * only for the pairs that moved. A conforming service the harness was not shaped around must pass.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conform, type Run } from '../helpers/conform-cli.ts';
import { type IndependentService, STREAM_PATH, startIndependentService } from '../helpers/independent-service.ts';

interface RuleCoverage {
  key: string;
  state: 'checked' | 'partly' | 'unchecked';
  kind?: string;
}
interface Report {
  target: { ws?: string };
  results: { id: string; outcome: string }[];
  summary: { coverage: { rules: { rules: RuleCoverage[] } } };
}

/** The rules one key can reach: those that need neither another key nor an operator state. */
const NEEDS_MORE_THAN_ONE_KEY = new Set(['key', 'operator']);

describe('conform --target against an independently written service', () => {
  let service: IndependentService;
  let out: string;
  let run: Run;
  let report: Report;

  beforeAll(async () => {
    service = await startIndependentService();
    out = await mkdtemp(path.join(os.tmpdir(), 'conform-indep-'));
  });

  afterAll(async () => {
    await service?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  it('finds the stream by itself, runs the stream checks and passes', { timeout: 180_000 }, async () => {
    run = await conform(['--target', service.rest, '--report', 'console,json', '--out', out], {
      CONFORM_API_KEY: service.key,
      // Each console line whole: the Rules line is read below as one line.
      COLUMNS: '10000',
    });
    const transcript = `exit ${run.code}\n${run.stdout}\n${run.stderr}`;
    expect(run.code, transcript).toBe(0);

    const found = /^stream: (\S+) \(ws\)/m.exec(run.stdout);
    expect(found, transcript).not.toBeNull();
    const streamUrl = new URL(found![1]!);
    expect(streamUrl.pathname).toBe(STREAM_PATH);
    expect(streamUrl.port).toBe(String(service.port));

    report = JSON.parse(await readFile(path.join(out, 'conform-report.json'), 'utf8')) as Report;
    expect(report.target.ws).toBe(streamUrl.href);
    const streamPasses = report.results.filter((r) => r.id.startsWith('ws.') && r.outcome === 'pass').map((r) => r.id);
    // The core of the stream: a subscribe answered, pushes that match the schema, a ping answered.
    expect(streamPasses).toEqual(
      expect.arrayContaining(['ws.subscribe.notice', 'ws.push.schema', 'ws.ping.pong.bare']),
    );
    expect(streamPasses.length).toBeGreaterThanOrEqual(20);
    expect(report.results.filter((r) => r.outcome === 'fail' || r.outcome === 'error')).toEqual([]);

    const rulesLine = /^Rules: .*\(([0-9.]+) %\)$/m.exec(run.stdout);
    expect(rulesLine, transcript).not.toBeNull();
    expect(Number(rulesLine![1])).toBeGreaterThanOrEqual(85);

    const reachable = report.summary.coverage.rules.rules.filter((r) => !NEEDS_MORE_THAN_ONE_KEY.has(r.kind ?? ''));
    const checked = reachable.filter((r) => r.state === 'checked');
    const unchecked = reachable.filter((r) => r.state !== 'checked').map((r) => r.key);
    expect(checked.length / reachable.length, `not checked: ${unchecked.join(', ')}`).toBeGreaterThanOrEqual(0.85);

    expect(run.stdout).toMatch(/^PASS( \(partial\))?: /m);
  });
});
