/**
 * Keys against hostile targets: a target that echoes the key back everywhere (bodies, headers,
 * status lines, handshake refusals, notices, pushes, pongs, close reasons) must not get it into
 * any output of any report format; a target that redirects to another origin must never see the
 * key arrive there (the redirect is reported, not followed).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../../src/check.ts';
import { minimalProfile, type Profile } from '../../src/profile.ts';
import { redactedLabel } from '../../src/redact.ts';
import { HOSTILE_TARGETS, type HostileDefinition } from '../helpers/hostile/targets.ts';
import { judgeHostileRuns } from '../helpers/hostile/harness.ts';
import { runCli } from '../helpers/hostile/run-cli.ts';
import { jsonReportOf } from '../helpers/hostile/judge.ts';

const byName = (name: string): HostileDefinition => HOSTILE_TARGETS.find((t) => t.name === name)!;

interface Case {
  name: string;
  def: HostileDefinition;
  keyVia: 'option' | 'env' | 'profile';
}
const CASES: Case[] = [
  { name: 'echo-key (--key)', def: byName('echo-key'), keyVia: 'option' },
  { name: 'echo-key (CONFORM_API_KEY)', def: byName('echo-key'), keyVia: 'env' },
  { name: 'echo-key (--profile, six keys)', def: byName('echo-key'), keyVia: 'profile' },
  { name: 'redirect-elsewhere', def: byName('redirect-elsewhere'), keyVia: 'option' },
];

/** A profile naming a key of every kind, so checks that send the other keys get them echoed too. */
function profileWithEveryKey(rest: string, ws: string, key: (name: string) => string): Profile {
  return {
    name: 'echo',
    rest,
    ws,
    keys: {
      primary: { key: key('primary'), connections: 3 },
      limited: { key: key('limited'), connections: 1 },
      cryptoOnly: { key: key('cryptoOnly'), assetTypes: ['Crypto'] },
      whitelisted: { key: key('whitelisted'), pairs: ['Crypto:ALL:BTC/USDT'] },
      noStream: { key: key('noStream') },
      suspended: { key: key('suspended') },
    },
  };
}

const httpEvidence = (results: CheckResult[]) => results.flatMap((r) => r.evidence).filter((e) => e.kind === 'http');

describe('keys against hostile targets', () => {
  const outcomes = judgeHostileRuns(CASES, {
    concurrency: 4,
    timeoutMs: 10 * 60_000,
    // Hex and punctuation a JSON, URL or HTML writer would each escape differently.
    makeKey: () => `hk-${randomBytes(10).toString('hex')}_+/=`,
    async run(c, target, key) {
      const reports = ['--report', 'console,json,junit,html,ctrf,github'];
      const base = ['--target', target.rest!, '--ws', target.ws!, ...reports];
      if (c.keyVia === 'option') return { run: await runCli([...base, '--key', key]) };
      if (c.keyVia === 'env') return { run: await runCli(base, { env: { CONFORM_API_KEY: key } }) };
      const profile = profileWithEveryKey(target.rest!, target.ws!, (name) => `${key}-${name}`);
      const dir = await mkdtemp(path.join(tmpdir(), 'conform-hostile-profile-'));
      try {
        const file = path.join(dir, 'profile.json');
        await writeFile(file, JSON.stringify(profile));
        return {
          run: await runCli(['--profile', file, ...reports]),
          keys: Object.values(profile.keys).map((k) => k!.key),
        };
      } finally {
        await rm(dir, { recursive: true });
      }
    },
    judging: (o) => ({
      profile: minimalProfile({ target: o.target.rest!, key: o.key, ws: o.target.ws }),
      facesHostile: () => true,
    }),
    alsoExpect: (o) =>
      expect(Object.keys(o.run.files).sort()).toEqual([
        'conform-ctrf.json',
        'conform-junit.xml',
        'conform-report.html',
        'conform-report.json',
        'conform-summary.md',
      ]),
  });

  it("the checks sending the profile's other keys had them echoed too, each echo reported under its key's name", () => {
    const o = outcomes.get('echo-key (--profile, six keys)')!;
    const sent = o.keys.filter((k) => o.target.stats.keysSeen?.has(k));
    // primary always; the others as far as the checks that use them ran against this target.
    expect(sent.length).toBeGreaterThan(1);
    // Each profile key is `${o.key}-${name}`: the name is what the redaction labels it with.
    // What came back from the target only, never what was sent: a response, a handshake's outcome,
    // a frame in, a close reason.
    const echoed = jsonReportOf(o.run)!
      .results.flatMap((r) => r.evidence)
      .map((e) => {
        if (e.kind === 'http') return JSON.stringify(e.response ?? '');
        if (e.kind === 'ws-open') return e.outcome;
        if (e.kind === 'frame') return e.direction === 'in' ? e.data : '';
        return e.kind === 'close' ? e.reason : '';
      });
    for (const k of sent)
      expect(
        echoed.some((text) => text.includes(redactedLabel(k.slice(o.key.length + 1)))),
        k.slice(o.key.length + 1),
      ).toBe(true);
  });

  it('the echo target really had the key to echo, over REST and the WebSocket handshake', () => {
    for (const name of ['echo-key (--key)', 'echo-key (CONFORM_API_KEY)', 'echo-key (--profile, six keys)']) {
      const o = outcomes.get(name)!;
      expect(o.target.stats.keysSeen?.has(o.keys[0]!)).toBe(true);
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
