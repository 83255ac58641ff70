import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { buildK6, K6_SCRIPTS } from '../../load/k6/build.ts';
import { startBroadcastServer } from '../../load/calibrate/broadcast-server.ts';
import { mergeResults, parseResultText } from '../../load/merge.ts';
import { startReferenceProcess, type LoadTarget } from '../../load/target.ts';
import { k6Binary, k6Unavailable, K6_ENV, runK6 } from '../../load/k6/run-k6.ts';

/** Every module specifier a bundle imports (static and dynamic) or requires. */
function specifiers(code: string): string[] {
  const out: string[] = [];
  for (const re of [
    /\bimport\s+(?:[^'";]*?\sfrom\s+)?["']([^"']+)["']/g,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire\(\s*["']([^"']+)["']\s*\)/g,
    /\bexport\s+[^'";]*?\sfrom\s+["']([^"']+)["']/g,
  ]) {
    for (const m of code.matchAll(re)) out.push(m[1]!);
  }
  return out;
}

const PAIRS = 'Crypto:ALL:BTC/USD,Crypto:ALL:ETH/USD';
/** The reference's keys (reference/config.ts): allowances 8 and 10, and one that allows a single connection. */
const PRIMARY = 'ref-primary-3f9c2a';
const SECONDARY = 'ref-secondary-e2a4c9';
const LIMITED = 'ref-limited-8d21e7';

// k6 is AGPL-3.0: the project never fetches or builds it. The tests that need a real k6 run only
// when CONFORM_K6 names one the user installed, and otherwise skip with this one line.
const noK6 = k6Unavailable();
if (noK6) console.log(`skipped: the tests on a real k6 (${noK6})`);

let dist = '';
let target: LoadTarget;
let work = '';

beforeAll(async () => {
  dist = await mkdtemp(join(tmpdir(), 'conform-k6-dist-'));
  await buildK6(dist);
});

type Result = Record<string, unknown> & { histograms: Record<string, { counts: [number, number][] }> };
const readResult = async (name: string): Promise<Result> =>
  JSON.parse(await readFile(join(work, `${name}.json`), 'utf8')) as Result;

/** Runs the fan-out script briefly; `extra` adds -e settings and k6 flags. */
function fanout(name: string, env: Record<string, string>, e: Record<string, string>, flags: string[] = []) {
  const args = ['run', '--quiet', ...flags];
  const settings = {
    TARGET_WS: target.ws,
    TARGET_REST: target.rest,
    PAIRS,
    CLIENTS: '12',
    CONNECTIONS_PER_VU: '5',
    RAMP_RATE: '50',
    DURATION: '2',
    WARMUP: '0.5',
    REPORT_NAME: name,
    ...e,
  };
  for (const [k, v] of Object.entries(settings)) args.push('-e', `${k}=${v}`);
  return runK6([...args, join(dist, 'fanout.js')], { cwd: work, env });
}

describe('k6 scripts', () => {
  it('bundle to plain JS that imports only k6 modules and nothing of Node', async () => {
    for (const script of K6_SCRIPTS) {
      const code = await readFile(join(dist, `${script}.js`), 'utf8');
      const mods = specifiers(code);
      expect(mods.length).toBeGreaterThan(0);
      for (const m of mods) expect(m, `${script}.js imports ${m}`).toMatch(/^k6(\/[a-z0-9/-]+)?$/);
      expect(code).not.toMatch(/\binterface\s|: string\b|\bas const\b/);
      // Node's clocks (load/mono-clock.ts) must stay out: k6 has no `process`.
      expect(code).not.toMatch(/\bprocess\.|\bperformance\./);
      expect(code).toMatch(/export\s*\{[^}]*\boptions\b/);
      expect(code).toMatch(/export\s*\{[^}]*\bas default\b/);
      expect(code).toMatch(/export\s*\{[^}]*\bhandleSummary\b/);
    }
  });

  it('the import scan itself catches a non-k6 import', () => {
    expect(specifiers('import x from "node:fs";\nimport { a } from "k6/http";')).toEqual(['node:fs', 'k6/http']);
  });
});

describe.skipIf(noK6 !== null)('on a real k6 (CONFORM_K6)', () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'conform-k6-run-'));
    target = await startReferenceProcess({});
  });
  afterAll(async () => {
    await target?.close();
  });

  describe('the k6 fan-out script on a real k6 against the reference', () => {
    it('spreads 12 clients over 2 keys by allowance, counts every push in the window, writes 3 reports', async () => {
      // Pings every 300 ms: none may be sent once a socket is closing (k6 would log an InvalidStateError).
      const run = await fanout(
        'spread',
        { API_KEYS: `${PRIMARY},8\n${SECONDARY},10` },
        { THRESHOLDS: 'latency.p99<1000,errors==0,refused==0', PING_INTERVAL_MS: '300' },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).not.toMatch(/level=error|InvalidStateError/);
      const r = await readResult('spread');
      expect(r).toMatchObject({
        kind: 'fanout',
        generator: 'k6',
        clients: 12,
        connected: 12,
        subscribed: 12,
        errors: 0,
        refusals: {},
        disconnects: 0,
      });
      // The VUs' own lag depends on what else the machine runs; nothing else may make the run untrustworthy.
      const reasons = r.reasons as string[];
      expect(r.trustworthy).toBe(reasons.length === 0);
      for (const reason of reasons) expect(reason).toMatch(/^VU event-loop delay p99 \d+ ms > \d+ ms$/);
      expect(r.checks).toEqual({ passes: 36, fails: 0 });
      // Every client receives every push of both pairs sent inside the window.
      const frames = r.framesReceived as number;
      expect(frames).toBeGreaterThan(0);
      expect(frames % (12 * 2)).toBe(0);
      // The latency buckets hold one count per counted frame.
      expect(r.histograms.latency!.counts.reduce((n, [, c]) => n + c, 0)).toBe(frames);
      // One machine, one clock: the REST round trips and the frames bound the offset around zero.
      expect(r.clock).toMatchObject({ status: 'same-clock', offsetMs: 0, tsUnit: 'ms', reason: null });
      expect((r.clock as { samples: number }).samples).toBeGreaterThan(0);
      expect((r.thresholds as { expr: string; ok: boolean }[]).map((t) => [t.expr, t.ok])).toEqual([
        ['latency.p99<1000', true],
        ['errors==0', true],
        ['refused==0', true],
      ]);
      expect(run.stdout).toContain('k6 load fanout');
      const files = await readdir(work);
      for (const f of ['spread.json', 'spread.html', 'spread.junit.xml']) expect(files).toContain(f);
      expect(await readFile(join(work, 'spread.junit.xml'), 'utf8')).toMatch(/<testsuite [^>]*tests="5" failures="0"/);
      for (const f of files.filter((x) => x.startsWith('spread'))) {
        const text = await readFile(join(work, f), 'utf8');
        expect(text).not.toContain(PRIMARY);
        expect(text).not.toContain(SECONDARY);
      }
    });

    it('counts a refused handshake by HTTP status and status_number; the checks threshold fails the run', async () => {
      // The file claims three connections for a key the reference allows one: the second client is refused.
      const run = await fanout('refused', { API_KEYS: `${LIMITED},3` }, { CLIENTS: '2', CONNECTIONS_PER_VU: '2' });
      expect(run.code).toBe(99); // k6: thresholds crossed
      const r = await readResult('refused');
      expect(r).toMatchObject({ clients: 2, connected: 1, refusals: { 50009: 1 }, refusalsHttp: { '4xx': 1 } });
      expect((r.checks as { fails: number }).fails).toBeGreaterThan(0);
      expect(r.k6Thresholds).toContainEqual({ metric: 'checks', expr: 'rate==1', ok: false });
    });

    it("marks a run untrustworthy when its VUs fall behind (event-loop delay over conform's limit)", async () => {
      // Test hook: 12 ms of busy work per frame, against 2 pairs × 10 Hz per client: the VU is never idle.
      const run = await fanout(
        'slow',
        { API_KEY: PRIMARY },
        { CLIENTS: '4', CONNECTIONS_PER_VU: '4', DURATION: '1', BURN_MS_PER_FRAME: '12' },
      );
      const r = await readResult('slow');
      expect(r.trustworthy).toBe(false);
      expect((r.reasons as string[]).join('\n')).toMatch(/VU event-loop delay p99 [\d.]+ ms > 20 ms/);
      expect(run.stdout).toContain('verdict: UNTRUSTWORTHY');
    });

    it('counts an error notice in errors, so errors==0 fails', async () => {
      // Without TARGET_REST nothing bounds the target's clock: latency is unknown, said so.
      const run = await fanout(
        'notice',
        { API_KEY: PRIMARY },
        { CLIENTS: '1', PAIRS: 'Crypto:ALL:NOPE/USD', THRESHOLDS: 'errors==0', TARGET_REST: '' },
      );
      expect(run.code).toBe(99);
      expect(run.stdout).toContain('latency unknown: no REST reply carried a numeric `ts`');
      const r = await readResult('notice');
      expect(r.clock).toMatchObject({ status: 'unknown', offsetMs: null, samples: 0 });
      expect(r.histograms.latency).toBeUndefined();
      expect(r).toMatchObject({ connected: 1, subscribed: 0, noticeErrors: { 50104: 1 } });
      expect(r.errors).toBeGreaterThanOrEqual(1);
      expect(r.thresholds).toContainEqual(expect.objectContaining({ expr: 'errors==0', ok: false }));
    });

    for (const offsetMs of [5000, -5000]) {
      it(`reads 30 ms from a clock 5 s ${offsetMs > 0 ? 'ahead' : 'behind'}, corrected by load/clock.ts`, async () => {
        // Stamps sent_at and REST ts on a clock offsetMs off ours and delivers every frame 30 ms later.
        const server = await startBroadcastServer({
          tickMs: 100,
          clockOffsetMs: offsetMs,
          plan: () => ({ delayMs: 30 }),
        });
        try {
          const name = `skew${offsetMs}`;
          const run = await fanout(
            name,
            { API_KEY: server.target.keys[0]!.key },
            {
              TARGET_WS: server.target.ws,
              TARGET_REST: server.target.rest,
              PAIRS: 'Crypto:ALL:TST/USD',
              CLIENTS: '2',
              CONNECTIONS_PER_VU: '2',
              THRESHOLDS: 'latency.p50<1000',
            },
          );
          expect(run.code, run.stderr).toBe(0);
          const r = await readResult(name);
          const c = r.clock as { status: string; offsetMs: number; boundMs: number };
          expect(c.status).toBe('corrected');
          expect(Math.abs(c.offsetMs - offsetMs)).toBeLessThanOrEqual(c.boundMs);
          const sorted = [...server.delivered].sort((a, b) => a - b);
          const truth = sorted[Math.floor(sorted.length / 2)]!;
          expect(truth).toBeGreaterThanOrEqual(30);
          const p50 = (r.latencyMs as { p50: number }).p50;
          console.log(
            `k6, clock ${offsetMs} ms: offset ${c.offsetMs} ± ${c.boundMs} ms, latency ` +
              `p50 ${p50} ms, server delivery p50 ${truth.toFixed(3)} ms`,
          );
          // A frame cannot arrive before the server sent it (ms stamps: one more ms of resolution).
          expect(p50).toBeGreaterThanOrEqual(truth - c.boundMs - 1);
          // Uncorrected, p50 would read about 5 s or below zero; k6's VU reads the frame on its own
          // event loop, which on a shared machine adds its delay to the receipt.
          expect(p50).toBeLessThan(truth + c.boundMs + 100);
          expect(run.stdout).toContain(`clock: the target's clock is ${c.offsetMs} ms from ours`);
        } finally {
          await server.close();
        }
      });
    }

    it('two execution segments on one schedule merge to the clients and frames of one process', async () => {
      const startAt = String(Date.now() + 4000);
      const env = { API_KEY: target.keys[0]!.key };
      const seq = '--execution-segment-sequence=0,1/2,1';
      const runs = await Promise.all([
        // A longer warm-up: on a busy machine every client must be subscribed before the window opens.
        fanout('whole', env, { START_AT: startAt, WARMUP: '2' }),
        fanout('seg-a', env, { START_AT: startAt, WARMUP: '2' }, ['--execution-segment=0:1/2', seq]),
        fanout('seg-b', env, { START_AT: startAt, WARMUP: '2' }, ['--execution-segment=1/2:1', seq]),
      ]);
      for (const run of runs) expect(run.code, run.stderr).toBe(0);
      const [whole, a, b] = await Promise.all(['whole', 'seg-a', 'seg-b'].map(readResult));
      expect(a!.segment).toBe('0:1/2');
      expect((a!.clients as number) + (b!.clients as number)).toBe(12);
      const merged = mergeResults([
        { file: 'seg-a', data: a },
        { file: 'seg-b', data: b },
      ]);
      expect(merged.totals.clients).toBe(whole!.clients);
      expect(merged.totals.connected).toBe(12);
      expect(merged.totals.frames).toBe(whole!.framesReceived);
      expect(merged.totals.frames).toBeGreaterThan(0);
      expect(merged.distributions.latency!.count).toBe(merged.totals.frames);
    });
  });

  describe('the k6 REST script on a real k6 against the reference', () => {
    it('records every request in the latency buckets and the status_number counts', async () => {
      const args = ['run', '--quiet'];
      for (const [k, v] of Object.entries({
        TARGET_REST: target.rest,
        PAIRS,
        RATE: '20',
        DURATION: '2',
        THRESHOLDS: 'errors==0,rate_limited==0',
        REPORT_NAME: 'rest',
      }))
        args.push('-e', `${k}=${v}`);
      const run = await runK6([...args, join(dist, 'rest.js')], { cwd: work, env: { API_KEY: target.keys[0]!.key } });
      expect(run.code, run.stderr).toBe(0);
      const r = await readResult('rest');
      const requests = r.requests as number;
      expect(requests).toBeGreaterThanOrEqual(30);
      expect(r).toMatchObject({ kind: 'rest', errors: 0, statusNumbers: { 200: requests } });
      expect(r.histograms.latency!.counts.reduce((n, [, c]) => n + c, 0)).toBe(requests);
    });
  });

  describe('load/k6/testrun.yaml as k6-operator runs it, on a real k6', () => {
    const file = fileURLToPath(new URL('../../load/k6/testrun.yaml', import.meta.url));

    it("runs the initializer's k6 archive and k6 inspect without the key; a runner reads it at run time", async () => {
      const doc = parseYaml(await readFile(file, 'utf8')) as {
        spec: { parallelism: number; arguments: string; runner: { env: { name: string; value: string }[] } };
      };
      const k6 = k6Binary();
      const dir = await mkdtemp(join(tmpdir(), 'conform-k6-operator-'));
      const script = join(dist, 'fanout.js');
      // The initializer's command line, as grafana/k6-operator builds it, in an environment with no key.
      const init =
        `${k6} archive ${script} -O ${dir}/fanout.js.archived.tar ${doc.spec.arguments} ` +
        `2> ${dir}/k6logs && ${k6} inspect --execution-requirements ${dir}/fanout.js.archived.tar ` +
        `2> ${dir}/k6logs ; ! cat ${dir}/k6logs | grep 'level=error'`;
      const out = execFileSync('sh', ['-c', init], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...K6_ENV },
        encoding: 'utf8',
      });
      const inspect = JSON.parse(out.slice(out.indexOf('{'))) as { maxVUs: number; totalDuration: string };
      expect(inspect.maxVUs).toBe(40_000 / 50);
      expect(await readdir(dir)).toEqual(['fanout.js.archived.tar', 'k6logs']);
      const metadata = execFileSync('tar', ['-xOf', `${dir}/fanout.js.archived.tar`, 'metadata.json'], {
        encoding: 'utf8',
      });
      expect(metadata).not.toMatch(/API_KEY|ref-/);
      // One runner: the same arguments split on spaces, its segment, the key and thresholds from its env.
      // The target and sizes are overridden for this machine (a later -e wins).
      const local = [
        '-e',
        `TARGET_WS=${target.ws}`,
        '-e',
        `TARGET_REST=${target.rest}`,
        '-e',
        'CLIENTS=4',
        '-e',
        'CONNECTIONS_PER_VU=2',
        '-e',
        'RAMP_RATE=50',
        '-e',
        'DURATION=1',
        '-e',
        'WARMUP=0.5',
      ];
      const runner = await runK6(
        [
          'run',
          '--quiet',
          '--execution-segment=0:1/2',
          '--execution-segment-sequence=0,1/2,1',
          ...doc.spec.arguments.split(' '),
          ...local,
          script,
        ],
        {
          cwd: dir,
          env: {
            API_KEYS: `${target.keys[0]!.key},20000`,
            THRESHOLDS: doc.spec.runner.env.find((e) => e.name === 'THRESHOLDS')!.value,
          },
        },
      );
      expect(runner.code, runner.stderr).toBe(0);
      const result = parseResultText(runner.stdout) as Record<string, unknown>;
      expect(result).toMatchObject({ kind: 'fanout', generator: 'k6', segment: '0:1/2', clients: 2, connected: 2 });
      expect((result.thresholds as { expr: string }[]).map((t) => t.expr)).toEqual([
        'latency.p99<50',
        'errors==0',
        'refused==0',
      ]);
      expect(runner.stdout).not.toContain(target.keys[0]!.key);
    });
  });
});

describe('load/k6/testrun.yaml as k6-operator runs it', () => {
  const file = fileURLToPath(new URL('../../load/k6/testrun.yaml', import.meta.url));

  it('gives the runners (split on spaces) and the initializer (sh -c) the same arguments, and no key', async () => {
    const doc = parseYaml(await readFile(file, 'utf8')) as {
      kind: string;
      spec: {
        parallelism: number;
        arguments: string;
        script: { configMap: { file: string } };
        runner: { env: { name: string; value: string }[]; envFrom: { secretRef: { name: string } }[] };
      };
    };
    expect(doc.kind).toBe('TestRun');
    expect(doc.spec.parallelism).toBeGreaterThan(1);
    expect(doc.spec.script.configMap.file).toBe('fanout.js');
    expect(doc.spec.runner.envFrom[0]!.secretRef.name).toBeTruthy();
    expect(doc.spec.arguments).not.toMatch(/API_KEY/);
    const shell = execFileSync('sh', ['-c', `printf '%s\\n' ${doc.spec.arguments}`], { encoding: 'utf8' })
      .trimEnd()
      .split('\n');
    expect(shell).toEqual(doc.spec.arguments.split(' '));
    expect(doc.spec.runner.env.find((e) => e.name === 'THRESHOLDS')?.value).toMatch(/</);
  });
});
