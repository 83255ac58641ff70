/**
 * Keys against hostile targets: a target that echoes the key back everywhere (bodies, headers,
 * status lines, handshake refusals, notices, pushes, pongs, close reasons) must not get it into
 * any output of any report format; a target that redirects to another origin must never see the
 * key arrive there (the redirect is reported, not followed).
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult } from '../src/check.ts';
import { minimalProfile } from '../src/profile.ts';
import { redactedLabel } from '../src/redact.ts';
import { HOSTILE_TARGETS, type HostileDefinition, type HostileTarget } from './hostile/targets.ts';
import { pool, runCli, type CliRun } from './hostile/run-cli.ts';
import { MEMORY_LIMIT_MIB, jsonReportOf, judge, runLine } from './hostile/judge.ts';

const byName = (name: string): HostileDefinition => HOSTILE_TARGETS.find((t) => t.name === name)!;

interface Case { name: string; def: HostileDefinition; keyVia: 'option' | 'env' }
const CASES: Case[] = [
  { name: 'echo-key (--key)', def: byName('echo-key'), keyVia: 'option' },
  { name: 'echo-key (CONFORM_API_KEY)', def: byName('echo-key'), keyVia: 'env' },
  { name: 'redirect-elsewhere', def: byName('redirect-elsewhere'), keyVia: 'option' },
];

interface Outcome { target: HostileTarget; key: string; run: CliRun }
const outcomes = new Map<string, Outcome>();

beforeAll(async () => {
  await pool(CASES, 3, async (c) => {
    const target = await c.def.start();
    // Hex and punctuation a JSON, URL or HTML writer would each escape differently.
    const key = `hk-${randomBytes(10).toString('hex')}_+/=`;
    try {
      const base = ['--target', target.rest!, '--ws', target.ws!, '--report', 'console,json,junit,html'];
      const run = c.keyVia === 'option'
        ? await runCli([...base, '--key', key])
        : await runCli(base, { env: { CONFORM_API_KEY: key } });
      console.log(runLine(c.name, run));
      outcomes.set(c.name, { target, key, run });
    } finally {
      await target.close();
    }
  });
}, 10 * 60_000);

const httpEvidence = (results: CheckResult[]) => results.flatMap((r) => r.evidence).filter((e) => e.kind === 'http');

describe('keys against hostile targets', () => {
  for (const c of CASES) {
    it(`ends against ${c.name} with verdicts, exit ${c.def.exit.join('/')}, no stack trace and no key in any output`, () => {
      const o = outcomes.get(c.name)!;
      const profile = minimalProfile({ target: o.target.rest!, key: o.key, ws: o.target.ws });
      expect(judge(c.def, o.run, { keys: [o.key], profile, facesHostile: () => true })).toEqual([]);
      if (o.run.peakRssMiB !== undefined) expect(o.run.peakRssMiB).toBeLessThan(MEMORY_LIMIT_MIB);
      expect(Object.keys(o.run.files).sort()).toEqual(['conform-junit.xml', 'conform-report.html', 'conform-report.json']);
    });
  }

  it('the echo target really had the key to echo, over REST and the WebSocket handshake', () => {
    for (const name of ['echo-key (--key)', 'echo-key (CONFORM_API_KEY)']) {
      const o = outcomes.get(name)!;
      expect(o.target.stats.keysSeen?.has(o.key)).toBe(true);
      // The echoed bodies reached the report, redacted: evidence exists where the key was.
      const report = jsonReportOf(o.run)!;
      expect(httpEvidence(report.results).some((e) => e.response?.body.includes(redactedLabel('primary')))).toBe(true);
    }
  });

  it('no request reaches the other origin of a redirect, and the redirect is reported', () => {
    const o = outcomes.get('redirect-elsewhere')!;
    const arrivals = o.target.stats.otherOrigin!;
    expect(arrivals.filter((a) => JSON.stringify(a).includes(o.key))).toEqual([]);
    expect(arrivals).toEqual([]);
    const report = jsonReportOf(o.run)!;
    expect(httpEvidence(report.results).some((e) => e.response?.status === 307)).toBe(true);
  });
});
