import { afterAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openApiDocument } from '../../src/api-documents.ts';
import { coveringSeeds } from '../../reference/index.ts';
import { ROOT } from '../helpers/conform-cli.ts';
import { startServeProcess } from '../helpers/serve-process.ts';

// Schemathesis is installed by scripts/install-schemathesis.sh (called by .ci/run), pinned, into a
// virtualenv whose place the script prints. Without it the test skips and says so, unless the
// environment asks for the outside tools (CI), where a missing tool fails.
const venv = execFileSync('bash', [path.join(ROOT, 'scripts/install-schemathesis.sh'), '--path'], {
  encoding: 'utf8',
}).trim();
const ST = path.join(venv, 'bin', 'st');
const present = existsSync(ST);
if (!present && process.env.CONFORM_REQUIRE_TOOLS)
  throw new Error(`schemathesis missing at ${ST}: run scripts/install-schemathesis.sh`);

/**
 * Schemathesis's checks for server errors, status codes, content types, response schemas and
 * ignored authentication.
 */
const CHECKS =
  'not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,ignored_auth';
const dir = mkdtempSync(path.join(tmpdir(), 'conform-schemathesis-'));
const schema = path.join(dir, 'openapi.json');
writeFileSync(schema, JSON.stringify(openApiDocument('test')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function schemathesis(rest: string, key: string, examples = 200): Promise<{ code: number; out: string }> {
  const args = [
    'run',
    schema,
    '--url',
    rest,
    '-H',
    `X-API-Key: ${key}`,
    '--checks',
    CHECKS,
    '--mode',
    'all',
    '-n',
    String(examples),
    '--generation-database',
    'none',
    '--no-color',
    '--report',
    'junit',
    '--report-dir',
    dir,
  ];
  return new Promise((resolve) => {
    execFile(
      ST,
      args,
      { cwd: dir, timeout: 120_000, env: { ...process.env, SCHEMATHESIS_TELEMETRY: 'false' } },
      (err, stdout, stderr) => {
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : -1) : 0,
          out: `${stdout}${stderr}`.split(key).join('<key>'),
        });
      },
    );
  });
}

describe.skipIf(!present)(
  `Schemathesis against conform serve (${present ? ST : 'not installed: scripts/install-schemathesis.sh'})`,
  () => {
    it('finds no server error, undocumented status, wrong content type, schema violation or ignored key', async () => {
      const serve = await startServeProcess(dir);
      try {
        const r = await schemathesis(serve.rest, serve.primaryKey);
        expect(r.out).toContain('No issues found');
        expect(r.out).toMatch(/Tested: 2/);
        expect(r.code, r.out).toBe(0);
      } finally {
        await serve.stop();
      }
    }, 180_000);

    // The document describes every conforming service, not only the reference's defaults: each
    // dialect of a set that together takes every value of every open choice (HTTP status mappings,
    // ts units, pagination metadata, extra fields…) must pass too. Warnings (most generated pair
    // codes are unknown, so most price requests are refused) are not findings.
    // Concurrent: each run mostly waits on its server and on Hypothesis, one at a time would take minutes.
    it.concurrent.each(coveringSeeds())(
      'finds nothing in the reference speaking dialect %i',
      async (seed) => {
        const serve = await startServeProcess(mkdtempSync(path.join(dir, `dialect-${seed}-`)), [
          '--dialect',
          'random',
          '--seed',
          String(seed),
        ]);
        try {
          const r = await schemathesis(serve.rest, serve.primaryKey, 25);
          expect(r.code, r.out).toBe(0);
          expect(r.out).toMatch(/No issues found|\d+ warnings? in/);
        } finally {
          await serve.stop();
        }
      },
      180_000,
    );

    it('reports a response schema violation when the reference sends ts as a string', async () => {
      const serve = await startServeProcess(dir, ['--fault', 'envelope-ts-string']);
      try {
        const r = await schemathesis(serve.rest, serve.primaryKey);
        expect(r.code).not.toBe(0);
        expect(r.out).toContain('Response violates schema');
      } finally {
        await serve.stop();
      }
    }, 180_000);
  },
);
