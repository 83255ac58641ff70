/**
 * --min-coverage and the profile's minCoverage through the real CLI (a child process) against the
 * reference service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startReferenceServer } from '../reference/index.ts';
import type { Profile } from '../src/profile.ts';
import { conform } from './helpers/conform-cli.ts';

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
  it('exits 1 when fewer must checks ran than the minimum, and says so on the console', async () => {
    const r = await conform(['--profile', await halfProfile(), ...SELECT, '--min-coverage', '60']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(
      'Coverage: 1 of 2 must checks ran (50 %); 1 skipped: profile has no pairs.stale ' +
        '(1: rest.price.stale); BELOW THE MINIMUM of 60 %: the run fails',
    );
    expect(r.stdout).toMatch(/^FAIL: 1 passed, 0 failed, 0 errors, 1 skipped of 2 checks/m);
    expect(r.code).toBe(1);
  });

  it('exits 0 when the minimum is reached', async () => {
    const r = await conform(['--profile', await halfProfile(), ...SELECT, '--min-coverage', '50']);
    expect(r.stdout).toContain('minimum 50 %: met');
    expect(r.code).toBe(0);
  });

  it('takes the minimum from the profile, and --min-coverage overrides it', async () => {
    const file = await halfProfile({ minCoverage: 75 });
    expect((await conform(['--profile', file, ...SELECT])).code).toBe(1);
    expect((await conform(['--profile', file, ...SELECT, '--min-coverage', '40'])).code).toBe(0);
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
