/**
 * The CI-native reports of a failing run: a CTRF document the reference `ctrf` package validates,
 * and GitHub annotations and a job summary, read back the way the Actions runner reads workflow
 * commands.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { validate } from 'ctrf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { CTRF_REPORT_FILE } from '../../reports/ctrf.ts';
import { commandData, commandProperty, GITHUB_SUMMARY_FILE } from '../../reports/github.ts';
import type { JsonReport } from '../../reports/json.ts';
import { conform, type Run } from '../helpers/conform-cli.ts';

interface WorkflowCommand {
  command: string;
  properties: Record<string, string>;
  data: string;
}

// The runner's unescaping (actions/runner ActionCommand.cs): `%25` last, so an escaped `%` is not read twice.
const unescapeData = (s: string): string => s.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%25/g, '%');
const unescapeProperty = (s: string): string =>
  s.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%3A/g, ':').replace(/%2C/g, ',').replace(/%25/g, '%');

/**
 * A line of output as the runner reads it: `::command key=value,key=value::data`, the command
 * info ending at the first `::` after the opening one.
 */
function parseCommand(line: string): WorkflowCommand | undefined {
  if (!line.startsWith('::')) return undefined;
  const end = line.indexOf('::', 2);
  if (end < 0) return undefined;
  const info = line.slice(2, end);
  const space = info.indexOf(' ');
  const properties: Record<string, string> = {};
  if (space >= 0)
    for (const pair of info.slice(space + 1).split(',')) {
      const eq = pair.indexOf('=');
      if (eq > 0) properties[pair.slice(0, eq)] = unescapeProperty(pair.slice(eq + 1));
    }
  return { command: space < 0 ? info : info.slice(0, space), properties, data: unescapeData(line.slice(end + 2)) };
}

const commandsOf = (stdout: string): WorkflowCommand[] =>
  stdout.split('\n').flatMap((l) => parseCommand(l.replace(/\r$/, '')) ?? []);

describe('workflow command escaping', () => {
  it('round-trips %, CR, LF, colons and commas through a property and a message', () => {
    const text = 'rest.price.mid: 50% of 1,2\r\nnext::line';
    const cmd = parseCommand(`::error title=${commandProperty(text)}::${commandData(text)}`)!;
    expect(cmd).toEqual({ command: 'error', properties: { title: text }, data: text });
    expect(commandProperty(text)).not.toMatch(/[:,\r\n]/);
  });
});

describe('a failing run reported for CI', () => {
  let server: ReferenceServer;
  let dir: string;
  let summaryFile: string;
  let inActions: Run;
  let outside: Run;
  let report: JsonReport;

  beforeAll(async () => {
    server = await startReferenceServer({ fault: 'price-not-mid' });
    dir = await mkdtemp(path.join(os.tmpdir(), 'conform-ci-reports-'));
    const profile = path.join(dir, 'profile.json');
    await writeFile(profile, JSON.stringify(server.profile));
    summaryFile = path.join(dir, 'step-summary.md');
    // A step summary file already holds what earlier steps wrote: the report appends to it.
    await writeFile(summaryFile, '# earlier step\n');
    const args = ['--profile', profile, '--only', 'rest', '--report', 'console,json,ctrf,github'];
    inActions = await conform([...args, '--out', path.join(dir, 'actions')], {
      GITHUB_ACTIONS: 'true',
      GITHUB_STEP_SUMMARY: summaryFile,
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_REPOSITORY: 'example/prices',
      GITHUB_RUN_ID: '42',
    });
    outside = await conform([...args, '--out', path.join(dir, 'local')], {
      GITHUB_ACTIONS: '',
      GITHUB_STEP_SUMMARY: '',
      GITHUB_RUN_ID: '',
    });
    report = JSON.parse(await readFile(path.join(dir, 'actions', 'conform-report.json'), 'utf8')) as JsonReport;
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('fails, with failures to report', () => {
    expect(inActions.code, inActions.stderr).toBe(1);
    expect(report.summary.fail).toBeGreaterThan(0);
  });

  it('writes a CTRF document that the ctrf package validates, its counts those of the run', async () => {
    const doc = JSON.parse(await readFile(path.join(dir, 'actions', CTRF_REPORT_FILE), 'utf8'));
    expect(validate(doc)).toEqual({ valid: true, errors: [] });
    const s = report.summary;
    expect(doc.results.summary).toMatchObject({
      tests: s.total,
      passed: s.pass,
      failed: s.fail + s.error,
      skipped: s.skip,
    });
    const failed = (doc.results.tests as { name: string; status: string; trace?: string }[]).filter(
      (t) => t.status === 'failed',
    );
    expect(failed.map((t) => t.name.split(':')[0]).sort()).toEqual(
      report.results
        .filter((r) => r.outcome === 'fail' || r.outcome === 'error')
        .map((r) => r.id)
        .sort(),
    );
    expect(failed.every((t) => t.trace?.includes('Received:') || t.trace?.startsWith('Error'))).toBe(true);
  });

  it('prints one error annotation per broken rule, titled with it, naming its owners, as the runner reads them', () => {
    const errors = commandsOf(inActions.stdout).filter((c) => c.command === 'error');
    const broken = report.summary.broken;
    const errored = report.results.filter((r) => r.outcome === 'error');
    expect(errors).toHaveLength(broken.length + errored.length);
    expect(broken.length).toBeGreaterThan(0);
    for (const [i, b] of broken.entries()) {
      const c = errors[i]!;
      expect(c.properties.title).toMatch(new RegExp(`^broken rule ${b.rule} `));
      expect(c.data.split('\n')[0]).toMatch(new RegExp(`^Breaks ${b.rule} \\(`));
      for (const id of b.failed) expect(c.data).toContain(`\n${id}: `);
    }
  });

  it("appends the job summary to $GITHUB_STEP_SUMMARY: verdict, coverage, causes, the run's artifacts", async () => {
    const summary = await readFile(summaryFile, 'utf8');
    expect(summary.startsWith('# earlier step\n## conform: FAIL\n')).toBe(true);
    expect(summary).toContain(`${report.summary.fail} failed`);
    expect(summary).toMatch(/^\*\*Rules:\*\* \d+ of \d+ stated rules checked/m);
    expect(summary).toMatch(/^\*\*Checks:\*\* \d+ of \d+ must checks ran/m);
    expect(summary).toMatch(/### Broken rules \(\d+\)/);
    for (const r of report.results.filter((x) => x.outcome === 'fail')) expect(summary).toContain(`\`${r.id}\``);
    expect(summary).toContain('https://github.com/example/prices/actions/runs/42#artifacts');
    expect(summary).toContain('`conform-ctrf.json`');
  });

  it('writes the summary to a file of the report directory outside Actions, and annotations all the same', async () => {
    expect(outside.code).toBe(1);
    const summary = await readFile(path.join(dir, 'local', GITHUB_SUMMARY_FILE), 'utf8');
    expect(summary).toMatch(/^## conform: FAIL\n/);
    expect(summary).not.toContain('actions/runs');
    expect(outside.stdout).toContain(`report: ${path.join(dir, 'local', GITHUB_SUMMARY_FILE)}`);
    expect(commandsOf(outside.stdout).filter((c) => c.command === 'error')).toHaveLength(
      report.summary.broken.length + report.summary.error,
    );
  });
});
