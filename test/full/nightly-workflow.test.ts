import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readHistory } from '../../load/trend/history.ts';
import { BIN, ROOT } from '../helpers/conform-cli.ts';
import { startServeProcess } from '../helpers/serve-process.ts';

// biome-ignore lint/suspicious/noExplicitAny: a parsed workflow walked by path; a wrong path fails its assertion
type Json = Record<string, any>;
const workflow = parse(readFileSync(path.join(ROOT, '.github/workflows/nightly-load.yml'), 'utf8')) as Json;
const job = workflow.jobs.load as Json;

/** What the runner would know on one night: secrets, inputs, the run, the steps' outcomes so far. */
interface Night {
  secrets: Record<string, string>;
  inputs: Record<string, string>;
  github: Record<string, string>;
  outcomes: Record<string, string>;
}

/** The value of a path of the expression context (`secrets.X`, `github.event.inputs.X`, `steps.X.outcome`). */
function lookup(p: string, n: Night): string | undefined {
  const [head, ...rest] = p.split('.');
  if (head === 'secrets') return n.secrets[rest[0]!] ?? '';
  if (head === 'github' && rest[0] === 'event' && rest[1] === 'inputs') return n.inputs[rest[2]!];
  if (head === 'github') return n.github[rest[0]!];
  if (head === 'steps' && rest[1] === 'outcome') return n.outcomes[rest[0]!] ?? '';
  throw new Error(`the test does not know the expression context ${p}`);
}

/** The expressions the workflow uses: paths, string literals, `||`, `==`, `!=` and `always()`. */
function evaluate(expr: string, n: Night): string | boolean {
  const value = (t: string): string | boolean | undefined => {
    const s = t.trim();
    if (s === 'always()') return true;
    if (/^'.*'$/.test(s)) return s.slice(1, -1);
    return lookup(s, n);
  };
  const or = expr.split('||').map((part) => {
    const cmp = /^(.*?)(==|!=)(.*)$/.exec(part);
    if (!cmp) return value(part);
    const equal = value(cmp[1]!) === value(cmp[3]!);
    return cmp[2] === '==' ? equal : !equal;
  });
  return or.find((v) => v !== undefined && v !== '' && v !== false) ?? or.at(-1) ?? '';
}

const substitute = (text: string, n: Night): string =>
  text.replace(/\$\{\{(.*?)\}\}/g, (_, e: string) => String(evaluate(e, n)));

function sh(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  return new Promise((resolve) =>
    execFile('bash', ['-e', '-c', script], { cwd, env, timeout: 300_000, maxBuffer: 1 << 24 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: `${stdout}${stderr}` }),
    ),
  );
}

/**
 * Runs the job's steps as written, in `work` (a checkout whose `npx conform` is this project's):
 * `run` steps in bash with the job's and the step's env, `$GITHUB_ENV` and `$GITHUB_STEP_SUMMARY`
 * as the runner keeps them; the cache steps against `cache` (restore the newest entry of a prefix,
 * save under a new key); checkout, setup-node and `npm ci` have nothing to do here (the project is
 * installed), the artifact upload copies its paths aside. Returns the steps' outcomes and the summary.
 */
async function runNight(n: Night, work: string, cache: string): Promise<{ summary: string; logs: string[] }> {
  const runnerTemp = mkdtempSync(path.join(tmpdir(), 'runner-temp-'));
  const files = { env: path.join(runnerTemp, 'github-env'), summary: path.join(runnerTemp, 'step-summary.md') };
  writeFileSync(files.env, '');
  writeFileSync(files.summary, '');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    npm_config_offline: 'true',
    RUNNER_TEMP: runnerTemp,
    GITHUB_ENV: files.env,
    GITHUB_STEP_SUMMARY: files.summary,
  };
  for (const [k, v] of Object.entries(job.env as Record<string, string>)) env[k] = substitute(v, n);
  const logs: string[] = [];
  let failed = false;
  for (const step of job.steps as Json[]) {
    const condition = step.if === undefined ? !failed : evaluate(String(step.if), n) === true;
    if (!condition) continue;
    const uses = step.uses as string | undefined;
    const withs = Object.fromEntries(
      Object.entries((step.with ?? {}) as Record<string, string>).map(([k, v]) => [k, substitute(String(v), n)]),
    );
    let code = 0;
    if (uses?.startsWith('actions/cache/restore@')) {
      const entries = readdirSorted(cache).filter((k) => k === withs.key || k.startsWith(withs['restore-keys']!));
      if (entries.length) cpSync(path.join(cache, entries.at(-1)!), path.join(work, withs.path!), { recursive: true });
    } else if (uses?.startsWith('actions/cache/save@')) {
      if (existsSync(path.join(work, withs.path!)))
        cpSync(path.join(work, withs.path!), path.join(cache, withs.key!), { recursive: true });
    } else if (uses?.startsWith('actions/upload-artifact@')) {
      for (const p of withs.path!.split('\n').filter(Boolean))
        if (existsSync(path.join(work, p)))
          cpSync(path.join(work, p), path.join(runnerTemp, 'artifact', p), { recursive: true });
    } else if (uses) {
      // actions/checkout, actions/setup-node: this checkout, this Node.
    } else if (!/^npm ci\b/.test(step.run)) {
      const stepEnv: NodeJS.ProcessEnv = { ...env };
      for (const [k, v] of Object.entries((step.env ?? {}) as Record<string, string>)) stepEnv[k] = substitute(v, n);
      for (const line of readFileSync(files.env, 'utf8').split('\n').filter(Boolean)) {
        const at = line.indexOf('=');
        stepEnv[line.slice(0, at)] = line.slice(at + 1);
      }
      const r = await sh(substitute(String(step.run), n), work, stepEnv);
      code = r.code;
      logs.push(`${step.name ?? step.run}: exit ${code}\n${r.out}`);
    }
    if (step.id) n.outcomes[step.id] = code === 0 ? 'success' : 'failure';
    if (code !== 0 && !step['continue-on-error']) failed = true;
  }
  return { summary: readFileSync(files.summary, 'utf8'), logs };
}

const readdirSorted = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).sort() : []);

const dir = mkdtempSync(path.join(tmpdir(), 'conform-nightly-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the nightly load workflow', () => {
  it('runs as written two nights in a row against conform serve, carrying the history between them', {
    timeout: 600_000,
  }, async () => {
    const serve = await startServeProcess(dir);
    try {
      const profile = JSON.parse(readFileSync(serve.profileFile, 'utf8')) as Json;
      // A checkout of a project that installed conform: `npx conform` is this one, nothing fetched.
      const work = path.join(dir, 'work');
      mkdirSync(path.join(work, 'node_modules', '.bin'), { recursive: true });
      symlinkSync(BIN, path.join(work, 'node_modules', '.bin', 'conform'));
      writeFileSync(path.join(work, 'package.json'), '{ "name": "nightly", "private": true }\n');
      const cache = path.join(dir, 'cache');
      mkdirSync(cache);
      const secrets = {
        CONFORM_TARGET: serve.rest,
        CONFORM_WS: profile.ws as string,
        CONFORM_API_KEY: serve.primaryKey,
      };
      // Five clients: within the primary key's allowance, so no keys file is needed. Two runs of
      // each a night, judged as one point each.
      const inputs = { clients: '5', duration: '3s', 'fanout-runs': '2', 'rest-duration': '3s', 'rest-runs': '2' };
      const nights = [];
      for (const run of [1, 2]) {
        rmSync(path.join(work, 'load-history'), { recursive: true, force: true });
        rmSync(path.join(work, 'conform-reports'), { recursive: true, force: true });
        const n: Night = {
          secrets,
          inputs,
          github: { sha: 'c0ffee', run_number: String(run), run_id: String(9000 + run) },
          outcomes: {},
        };
        const night = await runNight(n, work, cache);
        nights.push({ n, ...night });
        const h = await readHistory(path.join(work, 'load-history', 'fanout.csv'));
        expect(
          h.rows.map((r) => r.labels.run),
          night.logs.join('\n'),
        ).toEqual(run === 1 ? ['1', '1'] : ['1', '1', '2', '2']);
      }
      for (const { n, logs } of nights)
        expect(n.outcomes, logs.join('\n')).toEqual({ fanout: 'success', rest: 'success', trend: 'success' });
      const second = nights[1]!;
      expect(second.summary).toMatch(/## conform load trend: no regression\n\n4 runs in `load-history\/fanout\.csv`/);
      expect(second.summary).toMatch(/4 runs in `load-history\/rest\.csv`/);
      expect(second.logs.join('\n')).toContain('each point the mean of the trusted runs with the same run label');
      expect((await readHistory(path.join(cache, 'load-history-9002', 'rest.csv'))).rows).toHaveLength(4);
      expect(existsSync(path.join(work, 'conform-reports', 'load-trend-fanout.html'))).toBe(true);
      expect(existsSync(path.join(work, 'conform-reports', 'fanout-2', 'load-fanout.html'))).toBe(true);
    } finally {
      await serve.stop();
    }
  });
});
