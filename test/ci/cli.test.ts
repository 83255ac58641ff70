/** The CLI as a user runs it: a child process against the reference service on loopback. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import { startReferenceServer } from '../../reference/index.ts';
import type { Profile } from '../../src/profile.ts';
import { profileSecrets } from '../../src/profile.ts';
import { deadPort } from '../helpers/engine.ts';
import { conform, type Run } from '../helpers/conform-cli.ts';

let dir: string;
let clean: Awaited<ReturnType<typeof startReferenceServer>>;
let faulty: Awaited<ReturnType<typeof startReferenceServer>>;
const secrets: string[] = [];
const outputs: string[] = [];
/** Keeps every output of every run for the final grep for keys. */
const keep = (r: Run): Run => {
  outputs.push(r.stdout, r.stderr);
  return r;
};
const profileFile = async (name: string, p: Profile): Promise<string> => {
  const f = path.join(dir, name);
  await writeFile(f, JSON.stringify(p));
  return f;
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'conform-cli-'));
  clean = await startReferenceServer();
  faulty = await startReferenceServer({ fault: 'price-bid-above-ask' });
  secrets.push(...profileSecrets(clean.profile), ...profileSecrets(faulty.profile));
});
afterAll(async () => {
  await Promise.all([clean.close(), faulty.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('conform CLI', () => {
  it('prints the checks with --list and exits 0', async () => {
    const r = keep(await conform(['--list']));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^rest\.price\.mid\s+must\s+rest,price\s+Price record/m);
    expect(r.stdout).toMatch(/^rest\.observe\.ts-unit\s+observe/m);
    expect(r.stdout).toMatch(/^rest\.rate-limit\s/m);
  });

  it('prints the traceability matrix with --list --matrix', async () => {
    const r = keep(await conform(['--list', '--matrix']));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('rest.price.mid');
    expect(r.stdout).toContain('price-bid-above-ask');
  });

  it('exits 0 against the clean reference and writes every report format', async () => {
    const out = path.join(dir, 'clean');
    const r = keep(
      await conform([
        '--profile',
        await profileFile('clean.json', clean.profile),
        '--only',
        'rest',
        '--report',
        'console,json,junit,html',
        '--out',
        out,
      ]),
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^PASS \(partial\): \d+ of \d+ stated rules checked — \d+ passed, 0 failed, 0 errors/m);
    const report = JSON.parse(await readFile(path.join(out, 'conform-report.json'), 'utf8'));
    expect(report.summary.verdict).toBe('pass');
    expect(XMLValidator.validate(await readFile(path.join(out, 'conform-junit.xml'), 'utf8'))).toBe(true);
    expect(await readFile(path.join(out, 'conform-report.html'), 'utf8')).toContain('Observed behaviour');
    for (const f of await readdir(out)) outputs.push(await readFile(path.join(out, f), 'utf8'));
  });

  it('exits 1 against a fault, naming the check with Received, Expected and a curl line', async () => {
    const out = path.join(dir, 'faulty');
    const r = keep(
      await conform(
        [
          '--profile',
          await profileFile('faulty.json', faulty.profile),
          '--only',
          'rest.price',
          '--report',
          'console,json,junit,html',
          '--out',
          out,
          // Each line whole: the content apart from the width it is fitted to (test/unit/console-layout.test.ts).
        ],
        { COLUMNS: '10000' },
      ),
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL {2}rest\.price\.mid/m);
    expect(r.stdout).toMatch(
      /Received: GET \/v1\/price\?code=Crypto:ALL:BTC\/USD: (bid \S+ > price|price \S+ > ask) \S+/,
    );
    expect(r.stdout).toMatch(/Expected \(spec: Price record .*\): bid <= price <= ask/);
    expect(r.stdout).toMatch(
      /curl -sS -i '.*\/v1\/price\?code=Crypto%3AALL%3ABTC%2FUSD' .*-H 'X-API-Key: <key:primary>'/,
    );
    expect(XMLValidator.validate(await readFile(path.join(out, 'conform-junit.xml'), 'utf8'))).toBe(true);
    for (const f of await readdir(out)) outputs.push(await readFile(path.join(out, f), 'utf8'));
  });

  it('reruns failed and errored checks (--rerun-failed), lists changes to --baseline (--fail-on-change)', async () => {
    type Past = { results: { id: string; outcome: string }[] };
    const readReport = async (sub: string): Promise<Past> =>
      JSON.parse(await readFile(path.join(dir, sub, 'conform-report.json'), 'utf8'));
    const ranIds = async (sub: string): Promise<string[]> => (await readReport(sub)).results.map((x) => x.id).sort();

    const rerun = keep(
      await conform([
        '--profile',
        path.join(dir, 'faulty.json'),
        '--rerun-failed',
        path.join(dir, 'faulty', 'conform-report.json'),
        '--report',
        'json',
        '--out',
        path.join(dir, 'rerun'),
      ]),
    );
    expect(rerun.code).toBe(1);
    const faultyFailed = (await readReport('faulty')).results
      .filter((x) => x.outcome === 'fail')
      .map((x) => x.id)
      .sort();
    expect(faultyFailed).toContain('rest.price.mid');
    expect(await ranIds('rerun')).toEqual(faultyFailed);

    // A past report with a few failures and an error scattered among many passes, siblings of
    // each failed id passing: the rerun runs those ids and no neighbour sharing their prefix.
    const past = await readReport('clean');
    const passed = past.results.filter((x) => x.outcome === 'pass').map((x) => x.id);
    expect(passed.length).toBeGreaterThan(20);
    const picked = [passed[1]!, passed[Math.floor(passed.length / 2)]!, passed[passed.length - 2]!];
    const marked = {
      ...past,
      results: past.results.map((x) =>
        picked.includes(x.id) ? { ...x, outcome: x.id === picked[2] ? 'error' : 'fail' } : x,
      ),
    };
    const markedFile = path.join(dir, 'marked-report.json');
    await writeFile(markedFile, JSON.stringify(marked));
    const some = keep(
      await conform([
        '--profile',
        path.join(dir, 'clean.json'),
        '--rerun-failed',
        markedFile,
        '--report',
        'json',
        '--out',
        path.join(dir, 'rerun-some'),
      ]),
    );
    expect(some.code).toBe(0);
    expect(await ranIds('rerun-some')).toEqual([...picked].sort());

    const nothing = keep(
      await conform([
        '--profile',
        path.join(dir, 'clean.json'),
        '--rerun-failed',
        path.join(dir, 'clean', 'conform-report.json'),
      ]),
    );
    expect(nothing.code).toBe(0);
    expect(nothing.stdout).toMatch(/lists no failed or errored check of this suite: nothing to rerun/);

    const same = keep(
      await conform([
        '--profile',
        path.join(dir, 'clean.json'),
        '--only',
        'rest.pairs,rest.observe',
        '--baseline',
        path.join(dir, 'clean', 'conform-report.json'),
        '--fail-on-change',
      ]),
    );
    expect(same.stdout).toContain('No changes against the baseline.');
    expect(same.code).toBe(0);
    const changed = keep(
      await conform([
        '--profile',
        path.join(dir, 'faulty.json'),
        '--only',
        'rest.price.mid',
        '--baseline',
        path.join(dir, 'clean', 'conform-report.json'),
        '--fail-on-change',
      ]),
    );
    expect(changed.stdout).toMatch(/Changes against the baseline \(1\):\n\s+rest\.price\.mid verdict: pass -> fail/);
    expect(changed.code).toBe(1);
  });

  it('takes the key of --target from --key-env and never prints it', async () => {
    const r = keep(
      await conform(
        [
          '--target',
          clean.restUrl,
          '--key-env',
          'MY_PRICE_KEY',
          '--only',
          'rest.auth,rest.pairs.defaults',
          '--verbose',
        ],
        { MY_PRICE_KEY: clean.profile.keys.primary.key, COLUMNS: '10000' },
      ),
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/PASS {2}rest\.auth\.header-case\.lower/);
    // A --target run has no profile: its skips say what it lacks in its own words.
    expect(r.stdout).toMatch(
      new RegExp(
        /SKIP {2}rest\.auth\.suspended .*\(needs keys\.suspended: a --target run has one key; /.source +
          /conform init writes a profile to name more\)/.source,
      ),
    );
    expect(r.stdout).not.toContain('profile has no');
  });

  it('checks the embedded reference service when given neither --target nor --profile', async () => {
    const r = keep(await conform(['--only', 'rest.envelope,rest.price.mid']));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/embedded reference service/);
  });

  const usage: [string, () => Promise<string[]>, RegExp][] = [
    ['an unknown option', async () => ['--frobnicate'], /^conform: unknown option: --frobnicate$/],
    [
      'a malformed URL',
      async () => ['--target', 'not a url', '--key', 'k'],
      /^conform: --target: "not a url" is not a URL$/,
    ],
    [
      'a target without a key',
      async () => ['--target', 'http://127.0.0.1:9'],
      /^conform: --target needs a key: pass --key KEY or set CONFORM_API_KEY$/,
    ],
    [
      'an unreadable profile',
      async () => ['--profile', path.join(dir, 'missing.json')],
      /^conform: cannot read profile .*missing\.json: ENOENT$/,
    ],
    [
      'an invalid profile',
      async () => [
        '--profile',
        await profileFile('bad.json', { rest: 'ftp://x', keys: { primary: { key: 'k' } } } as Profile),
      ],
      /^conform: profile .*bad\.json: \/rest: must match pattern/,
    ],
    [
      'a port with nothing listening',
      async () => ['--target', await deadPort(), '--key', 'key-of-a-dead-port'],
      /^conform: target http:\/\/127\.0\.0\.1:\d+ unreachable: ECONNREFUSED$/,
    ],
    [
      'an --only that matches no check',
      async () => ['--only', 'rest.nothing-here'],
      /^conform: --only\/--skip: no check id, prefix or tag matches "rest.nothing-here"/,
    ],
    ['a bad report format', async () => ['--report', 'pdf'], /^conform: --report: unknown format "pdf"/],
    [
      'an --out that cannot be created',
      async () => ['--report', 'json', '--out', path.join(await profileFile('a-file', {} as Profile), 'sub')],
      /^conform: --out: cannot create .*a-file\/sub \(ENOTDIR\)$/,
    ],
    [
      'a --baseline that is not a report',
      async () => ['--baseline', path.join(dir, 'clean.json')],
      /^conform: --baseline: .*clean\.json is not a conform JSON report/,
    ],
  ];
  for (const [what, args, line] of usage) {
    it(`exits 2 with one line naming the problem for ${what}`, async () => {
      const r = keep(await conform(await args()));
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr.trimEnd()).toMatch(line);
    });
  }

  it('never prints or writes a key in any of the runs above', () => {
    expect(outputs.length).toBeGreaterThan(20);
    expect(secrets.length).toBeGreaterThan(5);
    for (const text of outputs)
      for (const key of secrets) expect(text.includes(key), `key ${key.slice(0, 4)}… leaked`).toBe(false);
  });
});
