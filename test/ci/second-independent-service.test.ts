/**
 * The CLI as a new user runs it, `conform --target URL` with one key and nothing else, against a
 * second service written from the spec alone (helpers/second-independent-service.ts). It takes on
 * purpose the choices a strict reading rejects and the spec allows: an idle sweep that closes
 * between 30 and 42 s, tz database links for zones, mids of its own (a 0.25 tick, pipettes), a
 * rate limit, a fan-out that drops unsubscribed pairs a second late, suspended listed pairs refused
 * on both sides, a 50102 without data on HTTP 503, extended hours on a NASDAQ label, codes with
 * spaces and `/` in the base, a code search that matches names, and a gateway that limits requests
 * without a key. A conforming service the harness was not shaped around must pass.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conform, type Run } from '../helpers/conform-cli.ts';
import {
  type SecondService,
  STREAM_PATH,
  startSecondIndependentService,
} from '../helpers/second-independent-service.ts';

interface Report {
  target: { ws?: string };
  results: { id: string; outcome: string; observations?: unknown }[];
}

describe('conform --target against a second independently written service', () => {
  let service: SecondService;
  let out: string;
  let run: Run;
  let report: Report;

  beforeAll(async () => {
    service = await startSecondIndependentService();
    out = await mkdtemp(path.join(os.tmpdir(), 'conform-indep2-'));
  });

  afterAll(async () => {
    await service?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  it('finds the stream under the REST prefix, runs the stream checks and passes', { timeout: 300_000 }, async () => {
    run = await conform(['--target', service.rest, '--report', 'console,json', '--out', out], {
      CONFORM_API_KEY: service.key,
    });
    const transcript = `exit ${run.code}\n${run.stdout}\n${run.stderr}`;
    expect(run.code, transcript).toBe(0);

    const found = /^stream: (\S+) \(ws\)/m.exec(run.stdout);
    expect(found, transcript).not.toBeNull();
    expect(new URL(found![1]!).pathname).toBe(STREAM_PATH);

    report = JSON.parse(await readFile(path.join(out, 'conform-report.json'), 'utf8')) as Report;
    const passes = report.results.filter((r) => r.outcome === 'pass').map((r) => r.id);
    expect(passes).toEqual(
      expect.arrayContaining([
        'ws.subscribe.notice',
        'ws.push.schema',
        'ws.ping.pong.bare',
        'ws.keepalive.timeout',
        'rest.price.schema',
      ]),
    );
    expect(passes.filter((id) => id.startsWith('ws.')).length).toBeGreaterThanOrEqual(20);
    expect(report.results.filter((r) => r.outcome === 'fail' || r.outcome === 'error')).toEqual([]);
    expect(run.stdout).toMatch(/^PASS( \(partial\))?: /m);
  });
});
