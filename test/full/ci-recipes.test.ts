import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { XMLParser } from 'fast-xml-parser';
import { validate } from 'ctrf';
import { ROOT } from '../helpers/conform-cli.ts';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.ts';

// biome-ignore lint/suspicious/noExplicitAny: a parsed recipe walked by path; a wrong path fails its assertion
type Json = Record<string, any>;
const recipe = (name: string): Json => parse(readFileSync(path.join(ROOT, 'docs/ci', name), 'utf8')) as Json;
const github = recipe('github-actions.yml');
const gitlab = recipe('gitlab-ci.yml');
const ghSteps = github.jobs.conform.steps as Json[];
const glJob = gitlab.conformance as Json;

/**
 * The command lines a recipe runs. `npm ci` is not run: it installs the project's dependencies,
 * which this checkout (the project the recipe would live in) already has.
 */
const INSTALL = /^npm ci\b/;
const runnable = (lines: string[]): string[] => lines.filter((l) => !INSTALL.test(l));
const outDirOf = (lines: string[]): string => /--out (\S+)/.exec(lines.find((l) => l.startsWith('npx conform'))!)![1]!;

function sh(line: string, env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-e', '-o', 'pipefail', '-c', line],
      { cwd: ROOT, env: { ...process.env, ...env, FORCE_COLOR: '0' }, timeout: 180_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: `${stdout}${stderr}` });
      },
    );
  });
}

/**
 * Runs a recipe's lines in order, as its runner would (stopping at the first that fails); returns
 * the last exit code.
 */
async function runAll(lines: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  let last = { code: 0, out: '' };
  for (const line of lines) {
    last = await sh(line, env);
    if (last.code !== 0) break;
  }
  return last;
}

/** The JUnit file's test case count and the check ids of its failures (a case is named `id: title`). */
function junit(file: string): { tests: number; failures: string[] } {
  const doc = new XMLParser({ ignoreAttributes: false, isArray: (n) => n === 'testsuite' || n === 'testcase' }).parse(
    readFileSync(file, 'utf8'),
  ) as Json;
  const cases = (doc.testsuites.testsuite as Json[]).flatMap((s) => s.testcase as Json[]);
  return {
    tests: cases.length,
    failures: cases.filter((c) => c.failure !== undefined).map((c) => (c['@_name'] as string).split(':')[0]!),
  };
}

const dir = mkdtempSync(path.join(tmpdir(), 'conform-recipes-'));
// A short keep-alive window, which the written profile declares, keeps a whole run to seconds.
const config = path.join(dir, 'reference.json');
writeFileSync(config, JSON.stringify({ pingTimeoutMs: 2000 }));
let clean: ServeProcess;
let faulty: ServeProcess;
beforeAll(async () => {
  clean = await startServeProcess(mkdtempSync(path.join(dir, 'clean-')), ['--config', config]);
  faulty = await startServeProcess(mkdtempSync(path.join(dir, 'faulty-')), [
    '--config',
    config,
    '--fault',
    'price-not-mid',
  ]);
}, 60_000);
afterAll(async () => {
  await Promise.all([clean?.stop(), faulty?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('GitHub Actions recipe (docs/ci/github-actions.yml)', () => {
  const lines = ghSteps.filter((s) => typeof s.run === 'string').map((s) => (s.run as string).trim());
  const secretStep = ghSteps.find((s) => s.env?.CONFORM_PROFILE)!;
  const keep = ghSteps.find((s) => String(s.uses).startsWith('actions/upload-artifact'))!;
  const gate = lines.find((l) => l.startsWith('npx conform'))!;

  it('takes the profile from a secret, reports through annotations and the job summary, keeps the reports', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, written as the recipe has it
    expect(secretStep.env.CONFORM_PROFILE).toBe('${{ secrets.CONFORM_PROFILE }}');
    expect(/--report (\S+)/.exec(gate)![1]!.split(',')).toEqual(expect.arrayContaining(['github', 'ctrf']));
    // Only actions of GitHub's own: the reports need no third-party action to be published.
    expect(ghSteps.filter((s) => s.uses).map((s) => String(s.uses).split('/')[0])).toEqual([
      'actions',
      'actions',
      'actions',
    ]);
    expect(keep.if).toBe('always()');
    expect(keep.with.path).toBe(`${outDirOf(lines)}/`);
    expect(github.on.push.tags).toEqual(['v*']);
    // Every command is plain shell: the test runs them as written.
    for (const l of lines) expect(l).not.toContain('${{');
  });

  /** What a runner gives a step: its temporary directory, the step summary file, the run's address. */
  const env = (serve: ServeProcess): NodeJS.ProcessEnv => {
    const runner = mkdtempSync(path.join(dir, 'runner-'));
    writeFileSync(path.join(runner, 'summary.md'), '');
    return {
      RUNNER_TEMP: runner,
      GITHUB_ACTIONS: 'true',
      GITHUB_STEP_SUMMARY: path.join(runner, 'summary.md'),
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_REPOSITORY: 'example/prices',
      GITHUB_RUN_ID: '7',
      CONFORM_PROFILE: readFileSync(serve.profileFile, 'utf8'),
    };
  };
  const errorTitles = (out: string): string[] =>
    out
      .split('\n')
      .filter((l) => l.startsWith('::error '))
      .map((l) =>
        /^::error title=([^:]*)::/.exec(l)![1]!.replace(/%3A/g, ':').replace(/%2C/g, ',').replace(/%25/g, '%'),
      );

  it('passes the reference service: no annotation, a PASS summary, a CTRF file without failures', async () => {
    const e = env(clean);
    const r = await runAll(runnable(lines), e);
    expect(r.code, r.out).toBe(0);
    expect(errorTitles(r.out)).toEqual([]);
    // The reference's notice 50000 needs a stream probe no profile holds yet: a pass, partial.
    expect(readFileSync(e.GITHUB_STEP_SUMMARY!, 'utf8')).toMatch(/^## conform: PASS \(partial\)\n/);
    const ctrf = JSON.parse(readFileSync(path.join(ROOT, outDirOf(lines), 'conform-ctrf.json'), 'utf8')) as Json;
    expect(validate(ctrf).valid).toBe(true);
    expect(ctrf.results.summary.tests).toBeGreaterThan(50);
    expect(ctrf.results.summary.failed).toBe(0);
    expect(r.out).not.toContain(JSON.parse(readFileSync(clean.profileFile, 'utf8')).keys.primary.key);
  });

  it('fails the job against a reference with a fault, annotating the broken check and summing it up', async () => {
    const e = env(faulty);
    const r = await runAll(runnable(lines), e);
    expect(r.code).toBe(1);
    expect(errorTitles(r.out).map((t) => t.split(':')[0])).toContain('rest.price.mid');
    const summary = readFileSync(e.GITHUB_STEP_SUMMARY!, 'utf8');
    expect(summary).toMatch(/^## conform: FAIL\n/);
    expect(summary).toContain('`rest.price.mid`');
    expect(summary).toContain('https://github.com/example/prices/actions/runs/7#artifacts');
  });
});

describe('GitLab CI recipe (docs/ci/gitlab-ci.yml)', () => {
  const lines = (glJob.script as string[]).map((l) => l.trim());

  it('takes the profile from a File variable and attaches the JUnit file the gate writes, whatever the outcome', () => {
    expect(lines.find((l) => l.startsWith('npx conform'))).toContain('--profile "$CONFORM_PROFILE"');
    expect(glJob.artifacts.when).toBe('always');
    expect(glJob.artifacts.reports.junit).toBe(`${outDirOf(lines)}/conform-junit.xml`);
  });

  it('passes the reference service and writes the JUnit report it attaches', async () => {
    const r = await runAll(runnable(lines), { CONFORM_PROFILE: clean.profileFile });
    expect(r.code, r.out).toBe(0);
    const report = junit(path.join(ROOT, glJob.artifacts.reports.junit as string));
    expect(report.tests).toBeGreaterThan(50);
    expect(report.failures).toEqual([]);
  });

  it('fails the job against a reference with a fault, naming the broken check in the JUnit report', async () => {
    const r = await runAll(runnable(lines), { CONFORM_PROFILE: faulty.profileFile });
    expect(r.code).toBe(1);
    expect(junit(path.join(ROOT, glJob.artifacts.reports.junit as string)).failures).toContain('rest.price.mid');
  });
});
