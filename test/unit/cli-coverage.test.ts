/**
 * --min-coverage and the profile's minCoverage through the real CLI (a child process) against the
 * reference service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startReferenceServer } from '../../reference/index.ts';
import type { Profile } from '../../src/profile.ts';
import { conform as run } from '../helpers/conform-cli.ts';

/** conform with each console line whole: the figures apart from the width they are fitted to. */
const conform = (args: string[]) => run(args, { COLUMNS: '10000' });

let dir: string;
let ref: Awaited<ReturnType<typeof startReferenceServer>>;
/** The reference's profile without pairs.stale: of the two selected must checks, rest.price.stale skips. */
let halfProfile: (extra?: Partial<Profile>) => Promise<string>;
const SELECT = ['--only', 'rest.price.stale,rest.price.unknown-pair'];

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'conform-cli-coverage-'));
  ref = await startReferenceServer();
  let n = 0;
  halfProfile = async (extra = {}) => {
    const { stale: _stale, ...pairs } = ref.profile.pairs!;
    const file = path.join(dir, `profile-${n++}.json`);
    await writeFile(file, JSON.stringify({ ...ref.profile, pairs, ...extra }));
    return file;
  };
});
afterAll(async () => {
  await ref.close();
  await rm(dir, { recursive: true, force: true });
});

describe('conform --min-coverage', () => {
  it('gates on the rule figure: every selected must check ran, yet too few stated rules were checked', async () => {
    const r = await conform([
      '--profile',
      await halfProfile({ pairs: ref.profile.pairs }),
      ...SELECT,
      '--min-coverage',
      '50',
      '--verbose',
    ]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^Checks: 2 of 2 must checks ran \(100 %\)$/m);
    expect(r.stdout).toMatch(
      new RegExp(
        /^Rules: \d+ of \d+ stated rules checked; .*; \d+ of the \d+ rules that need no operator state /.source +
          /\([\d.]+ %\), BELOW THE MINIMUM of 50 %: the run fails$/.source,
        'm',
      ),
    );
    expect(r.stdout).toMatch(/^FAIL: 2 passed, 0 failed, 0 errors, 0 skipped of 2 checks/m);
    expect(r.code).toBe(1);
  });

  it('exits 0 when the minimum is reached', async () => {
    const r = await conform(['--profile', await halfProfile(), ...SELECT, '--min-coverage', '1']);
    expect(r.stdout).toMatch(/, minimum 1 %: met$/m);
    expect(r.code).toBe(0);
  });

  it('takes the minimum from the profile, and --min-coverage overrides it', async () => {
    const file = await halfProfile({ minCoverage: 75 });
    expect((await conform(['--profile', file, ...SELECT])).code).toBe(1);
    expect((await conform(['--profile', file, ...SELECT, '--min-coverage', '1'])).code).toBe(0);
  });

  it('without a minimum a run that left rules unchecked passes as partial, the list one option away', async () => {
    const plain = await conform(['--profile', await halfProfile(), ...SELECT]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(
      new RegExp(
        /^PASS \(partial\): \d+ of \d+ stated rules checked — 1 passed, 0 failed, 0 errors, 1 skipped of 2 checks /
          .source + /.*; \d+ not checked in full: run with --list-unchecked, or see the JSON or HTML report$/.source,
        'm',
      ),
    );
    expect(plain.stdout).not.toContain('Rules not checked in full');
    const listed = await conform(['--profile', await halfProfile(), ...SELECT, '--list-unchecked']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^Rules not checked in full \(\d+\):$/m);
    expect(listed.stdout).toContain(
      '  need a profile entry: GET /v1/price: stale keeps data (rule:price:stale-keeps-data) — ' +
        'profile has no pairs.stale; unlock: pairs.stale',
    );
    expect(listed.stdout).toMatch(/^ {2}need an operator state: REST `status_number` values: 50001 \(status:50001\)/m);
  });

  it.each([
    ['101', 'a percentage from 0 to 100'],
    ['-1', 'a percentage from 0 to 100'],
    ['lots', 'a number'],
  ])('exits 2 with one line for --min-coverage %s', async (value, what) => {
    const r = await conform(['--profile', await halfProfile(), ...SELECT, '--min-coverage', value]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^conform: --min-coverage: must be ${what} \\(got .*\\)\n$`));
  });

  it('exits 2 with one line for a profile minCoverage out of range', async () => {
    const r = await conform(['--profile', await halfProfile({ minCoverage: 150 }), ...SELECT]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^conform: profile .*: \/minCoverage: must be <= 100 \(got 150\)\n$/);
  });
});
