import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { colorWanted } from '../../src/options.ts';
import { ROOT } from '../helpers/conform-cli.ts';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}
function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
  timeout = 180_000,
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env, timeout, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  license: string;
  private?: boolean;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  bin: Record<string, string>;
  engines: Record<string, string>;
};
const dir = mkdtempSync(path.join(tmpdir(), 'conform-package-'));
const app = path.join(dir, 'app');
let files: string[] = [];
let tarballName = '';
/** Environment without colour settings inherited from the test runner. */
const plainEnv = (): NodeJS.ProcessEnv => {
  const e = { ...process.env };
  delete e.FORCE_COLOR;
  delete e.NO_COLOR;
  return e;
};

beforeAll(async () => {
  // `npm pack` runs `prepack`, which compiles dist/ from the sources as they are now.
  const packed = await run('npm', ['pack', '--json', '--pack-destination', dir], ROOT);
  expect(packed.code, packed.stderr).toBe(0);
  const info = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
  files = info[0].files.map((f) => f.path);
  tarballName = info[0].filename;
  // The README's way until the name is published: the tarball kept in the project (vendor/), a
  // devDependency on it, `npm ci` in CI.
  mkdirSync(path.join(app, 'vendor'), { recursive: true });
  copyFileSync(path.join(dir, tarballName), path.join(app, 'vendor', tarballName));
  const spec = `file:vendor/${tarballName}`;
  // An install with --offline needs the registry's metadata of every dependency, which `npm ci`
  // never caches (it fetches tarballs by the lock's URLs). So the project gets the lock an
  // `npm install -D` would write: this project's own lock without its development entries, the
  // same tree a user resolves today, installed from the npm cache alone.
  const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>;
  };
  const packages: Record<string, unknown> = {
    '': { name: 'consumer', devDependencies: { [pkg.name]: spec } },
    [`node_modules/${pkg.name}`]: {
      version: pkg.version,
      resolved: spec,
      dev: true,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  for (const [name, entry] of Object.entries(lock.packages))
    if (name.startsWith('node_modules/') && !entry.dev) packages[name] = { ...entry, dev: true };
  writeFileSync(
    path.join(app, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, devDependencies: { [pkg.name]: spec } }),
  );
  writeFileSync(
    path.join(app, 'package-lock.json'),
    JSON.stringify({ name: 'consumer', lockfileVersion: 3, requires: true, packages }),
  );
  const installed = await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], app);
  expect(installed.code, installed.stderr).toBe(0);
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const conform = (args: string[], env: NodeJS.ProcessEnv = plainEnv()): Promise<Run> =>
  run('npx', ['--no-install', 'conform', ...args], app, env);

describe('the packed package', () => {
  it('holds the compiled CLI and API with declarations, the schemas, the README; no tests, fixtures or sources', () => {
    expect(files).toContain('bin/conform.js');
    expect(files).toContain('dist/bin/cli.js');
    expect(files).toContain('dist/load/fanout/worker-boot.mjs');
    expect(files).toContain('schemas/profile.schema.json');
    expect(
      files.filter((f) => !/^(dist\/|schemas\/|bin\/conform\.js$|README\.md$|LICENSE$|package\.json$)/.test(f)),
    ).toEqual([]);
    // Declarations (.d.ts) are the API's types; a TypeScript source is not shipped.
    expect(files.filter((f) => (f.endsWith('.ts') && !f.endsWith('.d.ts')) || f.includes('test'))).toEqual([]);
  });

  it('is publishable: a name of its own, not private, built on pack, MIT with its LICENSE in the tarball', () => {
    expect(pkg.name).toBe('conform-harness');
    expect(pkg.private).toBeUndefined();
    expect(pkg.scripts.prepack).toBe('npm run build');
    expect(pkg.scripts.prepare).toBeUndefined();
    expect(tarballName).toBe(`conform-harness-${pkg.version}.tgz`);
    expect(files).toContain('LICENSE');
    expect(pkg.license).toBe('MIT');
    expect(readFileSync(path.join(app, 'node_modules', pkg.name, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
  });

  it('depends at run time only on packages its compiled JavaScript imports', () => {
    const dist = path.join(app, 'node_modules', pkg.name, 'dist');
    const text = (readdirSync(dist, { recursive: true }) as string[])
      .filter((f) => /\.(m?js)$/.test(f))
      .map((f) => readFileSync(path.join(dist, f), 'utf8'))
      .join('\n');
    for (const dep of Object.keys(pkg.dependencies))
      expect(text, dep).toMatch(new RegExp(`(from |import\\()'${dep.replace('.', '\\.')}(/[^']*)?'`));
  });

  it('installs into an empty project as a devDependency on its tarball, without tsx', () => {
    expect(existsSync(path.join(app, 'node_modules', pkg.name, 'dist/bin/cli.js'))).toBe(true);
    expect(existsSync(path.join(app, 'node_modules/.bin/conform'))).toBe(true);
    expect(existsSync(path.join(app, 'node_modules/tsx'))).toBe(false);
  });

  it('prints its version from the compiled JavaScript', async () => {
    const r = await conform(['--version']);
    expect(r).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  });

  it('checks the embedded reference service with npx conform and writes its reports', async () => {
    const r = await conform(['--only', 'rest', '--report', 'console,json,html', '--out', 'reports']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^PASS \(partial\): \d+ of \d+ stated rules checked — \d+ passed, 0 failed, 0 errors/m);
    expect(r.stdout).not.toContain('\x1b[');
    const report = JSON.parse(readFileSync(path.join(app, 'reports/conform-report.json'), 'utf8')) as {
      summary: { verdict: string };
    };
    expect(report.summary.verdict).toBe('pass');
  });

  it('runs the fan-out load tool with its worker threads and the reference in its own process', async () => {
    const r = await conform([
      'load',
      'fanout',
      '--clients',
      '4',
      '--pairs',
      '2',
      '--duration',
      '2s',
      '--workers',
      '1',
      '--report',
      'console',
    ]);
    expect(r.stdout).toMatch(/connected 4\/4/);
    expect(r.stdout).toMatch(/validation errors 0 of [1-9]/);
  });

  it('prints the OpenAPI document', async () => {
    const r = await conform(['spec', '--openapi']);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { openapi: string }).openapi).toBe('3.1.0');
  });

  it('colours the console report with FORCE_COLOR and not with NO_COLOR', async () => {
    const forced = await conform(['--only', 'rest.pairs.schema'], { ...plainEnv(), FORCE_COLOR: '1' });
    // The verdict's word: yellow for a pass that left rules unchecked (green for a full one).
    expect(forced.stdout).toContain('\x1b[33mPASS (partial)\x1b[0m: ');
    const none = await conform(['--only', 'rest.pairs.schema'], { ...plainEnv(), NO_COLOR: '1' });
    expect(none.code).toBe(0);
    expect(none.stdout).not.toContain('\x1b[');
  });
});

describe('the programmatic API of the installed package', () => {
  /** Runs a file of the consumer project with node; its stdout is one JSON line. */
  const node = (file: string) => run(process.execPath, [file], app, plainEnv());

  it('declares its entry with types in exports, and ships the declarations', () => {
    const installed = JSON.parse(readFileSync(path.join(app, 'node_modules', pkg.name, 'package.json'), 'utf8')) as {
      exports: Record<string, { types: string; default: string } | string>;
    };
    expect(installed.exports['.']).toEqual({ types: './dist/api/index.d.ts', default: './dist/api/index.js' });
    expect(files).toContain('dist/api/index.d.ts');
    expect(files).toContain('dist/api/index.js');
  });

  it('runs from plain ESM: the reference service, the checks against its profile, the JSON report', async () => {
    writeFileSync(
      path.join(app, 'esm.mjs'),
      [
        "import { readFileSync } from 'node:fs';",
        "import { runConformance, startReferenceServer } from 'conform-harness';",
        'const server = await startReferenceServer();',
        'let report;',
        'try {',
        '  report = await runConformance({',
        "    profile: server.profile, only: ['rest.pairs'], reports: ['json'], out: 'api-reports',",
        '  });',
        '} finally {',
        '  await server.close();',
        '}',
        "const file = JSON.parse(readFileSync('api-reports/conform-report.json', 'utf8'));",
        'const embedded = await runConformance({ only: ["rest.pairs.schema"] });',
        'let thrown;',
        "try { await runConformance({ target: 'prices.example.com', key: 'k' }); } catch (err) { thrown = err; }",
        'console.log(JSON.stringify({',
        '  schema: report.schema, verdict: report.summary.verdict, checks: report.results.length,',
        '  sameAsFile: JSON.stringify({ ...report, startedAt: 0, finishedAt: 0 })',
        '    === JSON.stringify({ ...file, startedAt: 0, finishedAt: 0 }),',
        '  embedded: embedded.target.embedded, embeddedIds: embedded.results.map((r) => r.id),',
        '  error: { code: thrown?.code, message: thrown?.message },',
        '}));',
      ].join('\n'),
    );
    const r = await node('esm.mjs');
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({
      schema: 'conform-report',
      verdict: 'pass',
      sameAsFile: true,
      embedded: true,
      embeddedIds: ['rest.pairs.schema'],
      error: { code: 'CONFORM_USAGE', message: '--target: "prices.example.com" is not a URL' },
    });
    expect(out.checks).toBeGreaterThan(3);
  });

  it('type-checks from TypeScript under tsc --strict, its types exact enough to reject a wrong option', async () => {
    writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          noEmit: true,
          skipLibCheck: false,
          // The consumer's own @types/node; nothing else of this project's development types.
          types: ['node'],
          typeRoots: [path.join(ROOT, 'node_modules/@types')],
        },
        include: ['typed.ts'],
      }),
    );
    writeFileSync(
      path.join(app, 'package.json'),
      JSON.stringify({ ...JSON.parse(readFileSync(path.join(app, 'package.json'), 'utf8')), type: 'module' }),
    );
    writeFileSync(
      path.join(app, 'typed.ts'),
      [
        "import { ConformError, runConformance, startReferenceServer, type ConformanceReport } from 'conform-harness';",
        'const server = await startReferenceServer({ port: 0 });',
        "const report: ConformanceReport = await runConformance({ profile: server.profile, only: ['rest.pairs'] });",
        "const verdict: 'pass' | 'fail' = report.summary.verdict;",
        "const outcomes: ('pass' | 'fail' | 'skip' | 'error')[] = report.results.map((r) => r.outcome);",
        '// @ts-expect-error concurrency is a number',
        "await runConformance({ concurrency: 'many' });",
        'const isError = (e: unknown): e is ConformError => e instanceof ConformError;',
        'console.log(verdict, outcomes.length, isError(new Error()));',
        'await server.close();',
      ].join('\n'),
    );
    const tsc = await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'], app);
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.code).toBe(0);
    // The same file with the expectation removed fails: the types are not `any`.
    const typed = readFileSync(path.join(app, 'typed.ts'), 'utf8');
    writeFileSync(path.join(app, 'typed.ts'), typed.replace('// @ts-expect-error concurrency is a number\n', ''));
    const wrong = await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'], app);
    expect(wrong.stdout).toMatch(/typed\.ts.*Type 'string' is not assignable to type 'number'/);
  });
});

describe('colour choice', () => {
  it('follows the terminal when neither variable is set', () => {
    expect(colorWanted({}, true)).toBe(true);
    expect(colorWanted({}, false)).toBe(false);
  });
  it('turns colour off for a non-empty NO_COLOR, and ignores an empty one', () => {
    expect(colorWanted({ NO_COLOR: '1' }, true)).toBe(false);
    expect(colorWanted({ NO_COLOR: '' }, true)).toBe(true);
  });
  it('lets FORCE_COLOR decide over NO_COLOR and the terminal: 0 and false off, anything else on', () => {
    expect(colorWanted({ FORCE_COLOR: '1', NO_COLOR: '1' }, false)).toBe(true);
    expect(colorWanted({ FORCE_COLOR: '', NO_COLOR: '1' }, false)).toBe(true);
    expect(colorWanted({ FORCE_COLOR: '0' }, true)).toBe(false);
    expect(colorWanted({ FORCE_COLOR: 'false' }, true)).toBe(false);
  });
});
