/**
 * deploy/k8s/fanout-job.yaml and the Dockerfile without a cluster: the manifest against
 * Kubernetes' published schemas (kubernetes-models), the Dockerfile through dockerfile-utils'
 * linter, and the Job's container command run N times as separate processes, each as its pod
 * would run it, against one reference service on loopback; their logs merge to the unsharded run.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { Job } from 'kubernetes-models/batch/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { FanoutReport } from '../../load/fanout/run.ts';
import { mergeResults, parseResultText } from '../../load/merge.ts';
import { distributionOf } from '../../load/metrics.ts';
import { startReferenceProcess, type LoadTarget } from '../../load/target.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MANIFEST = join(ROOT, 'deploy/k8s/fanout-job.yaml');

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: unknown };
}
interface Container {
  image: string;
  command: string[];
  args: string[];
  env: EnvVar[];
  envFrom?: unknown[];
  resources: { requests: Record<string, string>; limits?: Record<string, string> };
}
interface JobDoc {
  apiVersion: string;
  kind: string;
  spec: {
    completionMode: string;
    completions: number;
    parallelism: number;
    template: { spec: { containers: Container[]; volumes?: unknown[] } };
  };
}

const manifest = (): JobDoc => parseYaml(readFileSync(MANIFEST, 'utf8')) as JobDoc;
const containerOf = (doc: JobDoc): Container => doc.spec.template.spec.containers[0]!;
const envValue = (c: Container, name: string): string | undefined => c.env.find((e) => e.name === name)?.value;

/**
 * Kubernetes' expansion of `$(VAR)` in env values, command and args: a defined variable is
 * replaced, `$$` stands for `$`, anything else (such as the shell's `$((…))`) is left as written.
 */
function kubeExpand(text: string, vars: Readonly<Record<string, string>>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (m, name: string | undefined) =>
    m === '$$' ? '$' : name !== undefined && name in vars ? vars[name]! : m,
  );
}

/** The environment the kubelet gives the container: its env list in order, Secrets resolved. */
function podEnv(
  c: Container,
  secrets: Readonly<Record<string, Readonly<Record<string, string>>>>,
  downward: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = { ...downward };
  for (const e of c.env) {
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) {
      const v = secrets[ref.name]?.[ref.key];
      if (v === undefined) throw new Error(`secret ${ref.name}/${ref.key} is not defined`);
      out[e.name] = v;
    } else out[e.name] = kubeExpand(e.value ?? '', out);
  }
  return out;
}

describe('the fan-out Job manifest', () => {
  it("validates against Kubernetes' published schema of batch/v1 Job", () => {
    const doc = manifest();
    expect(doc).toMatchObject({ apiVersion: 'batch/v1', kind: 'Job' });
    expect(() => new Job(doc as never).validate()).not.toThrow();
  });

  it('fails the schema on a wrong type or an unknown completion mode', () => {
    const wrongType = manifest();
    (wrongType.spec as { parallelism: unknown }).parallelism = '4';
    expect(() => new Job(wrongType as never).validate()).toThrow(/parallelism must be integer/);
    const wrongMode = manifest();
    wrongMode.spec.completionMode = 'Indexd';
    expect(() => new Job(wrongMode as never).validate()).toThrow(/completionMode/);
    const wrongQuantity = manifest();
    containerOf(wrongQuantity).resources.requests.memory = 'lots';
    expect(() => new Job(wrongQuantity as never).validate()).toThrow(/quantity/);
  });

  it('runs N indexed pods at once, one shard each, N stated once for Kubernetes and once for conform', () => {
    const doc = manifest();
    const c = containerOf(doc);
    expect(doc.spec.completionMode).toBe('Indexed');
    expect(doc.spec.parallelism).toBe(doc.spec.completions);
    expect(Number(envValue(c, 'SHARDS'))).toBe(doc.spec.completions);
    const script = c.args.join(' ');
    expect(script).toMatch(/^exec conform load fanout /);
    expect(script).toContain('--shard "$((JOB_COMPLETION_INDEX + 1))/$SHARDS"');
    expect(script).toContain('--start-at "$START_AT"');
    expect(script).toMatch(/--report result\b/);
  });

  it('takes the key from a Secret through the environment, never from args or a ConfigMap', () => {
    const doc = manifest();
    const c = containerOf(doc);
    const key = c.env.find((e) => e.name === 'CONFORM_API_KEY');
    expect(key?.value).toBeUndefined();
    expect(key?.valueFrom?.secretKeyRef).toEqual({ name: 'conform-load-key', key: 'api-key' });
    const text = readFileSync(MANIFEST, 'utf8');
    expect(text).not.toMatch(/configMap/i);
    expect([...c.command, ...c.args].join(' ')).not.toMatch(/--key\b|--keys-from|API_KEY/);
    expect(c.envFrom).toBeUndefined();
    expect(doc.spec.template.spec.volumes).toBeUndefined();
  });

  it('requests memory and CPU for its shard, and bounds memory', () => {
    const c = containerOf(manifest());
    expect(c.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
    expect(c.resources.limits?.memory).toBeTruthy();
  });
});

describe('the Dockerfile', () => {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

  it("passes dockerfile-utils' linter, which finds the problems of a broken one", () => {
    expect(lintDockerfile(text).map((d) => `${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
    const broken = lintDockerfile('FROM node:20-slim\nEXPOSE http\nUSER\n');
    expect(broken.map((d) => d.message)).toEqual(
      expect.arrayContaining([expect.stringMatching(/containerPort/), expect.stringMatching(/no arguments/)]),
    );
  });

  it('installs the npm pack tarball on node:24-slim without dev dependencies, as a non-root user, with no key', () => {
    const from = [...text.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]);
    expect(from).toEqual(['node:24-slim', 'node:24-slim']);
    expect(text).toMatch(/^RUN npm pack\b/m);
    expect(text).toMatch(/npm install --global --omit=dev [^\n]*conform\.tgz/);
    const users = [...text.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1]);
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
    expect(text).not.toMatch(/^(ENV|ARG)\s+\S*(KEY|SECRET|TOKEN)/im);
  });
});

/** Runs the container's command as its pod would; resolves with the exit code and the log. */
function runPod(
  c: Container,
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [cmd, ...rest] = [...c.command, ...c.args].map((a) => kubeExpand(a, env));
  return new Promise((resolve, reject) => {
    const child = spawn(cmd!, rest, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b));
    child.stderr.on('data', (b: Buffer) => (stderr += b));
    // A bound on each pod: the schedule below ends well inside it.
    const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the Job run as N pods on one machine', () => {
  let target: LoadTarget;
  beforeAll(async () => {
    target = await startReferenceProcess({});
    // The image runs compiled JavaScript; a clone compiles its sources on first use. Compile once
    // here, so the pods' start-up is not four cold compiles at once.
    execFileSync(process.execPath, [join(ROOT, 'bin/conform.js'), 'load', 'fanout', '--help'], {
      stdio: 'ignore',
      timeout: 60_000,
    });
  }, 90_000);
  afterAll(async () => {
    await target?.close();
  });

  it("merges the pods' logs to the clients, window frames and histogram counts of the unsharded run", async () => {
    const N = 3;
    const CLIENTS = 30;
    const PAIRS = 2;
    const c = containerOf(manifest());
    // Where the image has `conform` on PATH (npm install --global), this clone's bin/conform.js.
    const bin = await mkdtemp(join(tmpdir(), 'conform-job-bin-'));
    await symlink(join(ROOT, 'bin/conform.js'), join(bin, 'conform'));
    const cwd = await mkdtemp(join(tmpdir(), 'conform-job-pod-'));
    // As in the runbook, the common start lies beyond the slowest pod's start-up: four processes
    // compiling the sources at once on a small, busy machine can take 20 s.
    const startAt = new Date(Date.now() + 30_000).toISOString();
    // The manifest's env as written, with this machine's target and a small, short run.
    const local: Record<string, string> = {
      CONFORM_TARGET: target.rest,
      CONFORM_WS: target.ws,
      CLIENTS: String(CLIENTS),
      PAIRS: String(PAIRS),
      DURATION: '2s',
      RAMP_RATE: '50/s',
      WARMUP: '2s',
      WORKERS: '1',
      START_AT: startAt,
    };
    for (const name of Object.keys(local)) expect(envValue(c, name), name).toBeDefined();
    const pod = { ...c, env: c.env.map((e) => (e.name in local ? { name: e.name, value: local[e.name] } : e)) };
    const secrets = { 'conform-load-key': { 'api-key': target.keys[0]!.key } };
    const base = { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: process.env.HOME ?? cwd };
    const envOf = (shards: number, index: number): Record<string, string> => {
      const shardsPod = {
        ...pod,
        env: pod.env.map((e) => (e.name === 'SHARDS' ? { name: e.name, value: `${shards}` } : e)),
      };
      return podEnv(shardsPod, secrets, { ...base, JOB_COMPLETION_INDEX: String(index) });
    };
    // The unsharded run is the same command as a Job of one pod.
    const runs = await Promise.all([
      runPod(pod, envOf(1, 0), cwd),
      ...Array.from({ length: N }, (_, i) => runPod(pod, envOf(N, i), cwd)),
    ]);
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    for (const r of runs) expect(r.stdout + r.stderr).not.toContain(target.keys[0]!.key);
    const [whole, ...shards] = runs.map((r) => parseResultText(r.stdout) as FanoutReport);
    expect(shards.map((s) => s.shard)).toEqual([
      { index: 1, count: 3, clients: 10 },
      { index: 2, count: 3, clients: 10 },
      { index: 3, count: 3, clients: 10 },
    ]);
    for (const r of [whole!, ...shards]) expect(r.observations.join('\n')).not.toMatch(/shared window opened/);
    const merged = mergeResults(shards.map((s, i) => ({ file: `pod-${i}.log`, data: s })));
    expect(merged.observations.join('\n')).not.toMatch(/missing|more than once|different shard counts/);
    const count = (name: string): number => merged.distributions[name]!.count;
    const dist = (name: string): number | undefined => distributionOf('fanout', whole!, name)?.count;
    // Every frame is timed once: as a latency, or as one still below zero after the clock correction
    // (the reference stamps sent_at as it writes, so a frame can read as received a fraction of a
    // millisecond before it was sent; which frames do differs from run to run).
    const figures = {
      merged: {
        clients: merged.totals.clients,
        connected: merged.totals.connected,
        windowFrames: merged.totals.frames,
        latency: count('latency') + shards.reduce((n, sh) => n + (sh.latencyBelowZeroAfterCorrection ?? 0), 0),
        connect: count('connect'),
        subscribe: count('subscribe'),
        firstFrame: count('first_frame'),
        connectTime: count('connect_time'),
      },
      unsharded: {
        clients: whole!.clients,
        connected: whole!.connected,
        windowFrames: whole!.window!.frames,
        latency: whole!.latencyMs.count + (whole!.latencyBelowZeroAfterCorrection ?? 0),
        connect: dist('connect'),
        subscribe: dist('subscribe'),
        firstFrame: dist('first_frame'),
        connectTime: dist('connect_time'),
      },
    };
    console.log(`Job of ${N} pods against one: ${JSON.stringify(figures)}`);
    expect(figures.merged).toEqual(figures.unsharded);
    expect(figures.unsharded.clients).toBe(CLIENTS);
    expect(figures.unsharded.connected).toBe(CLIENTS);
    expect(figures.unsharded.connectTime).toBe(CLIENTS);
    // Every client got every push of every pair sent inside the window, each timed once.
    expect(figures.unsharded.windowFrames).toBeGreaterThan(0);
    expect(figures.unsharded.windowFrames % (CLIENTS * PAIRS)).toBe(0);
    expect(figures.unsharded.latency).toBe(figures.unsharded.windowFrames);
  }, 150_000);
});
