/**
 * A run that reads in one screen: a passing run of the whole suite is at most about 40 lines
 * (the verdict, the Rules line, the skips by reason, one line counting the observations and where
 * they are), no line wider than the width (120 off a terminal, the terminal's or COLUMNS on one);
 * a failing run groups its failures by cause; --verbose keeps the whole detail, and the JSON
 * report keeps everything. The width is fitted without losing a word, and a curl line still runs.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleWidth } from '../../bin/commands/conform.ts';
import { summaryLines } from '../../reports/console.ts';
import { REPORTS } from '../../reports/index.ts';
import type { JsonReport } from '../../reports/json.ts';
import { fitLine, fitShellLine, MAX_LINE_CHARS } from '../../reports/wrap.ts';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { conform } from '../../src/conform.ts';
import { OPTION_DEFAULTS, type ConformOptions } from '../../src/options.ts';
import type { Profile } from '../../src/profile.ts';
import type { RunEvent } from '../../src/runner.ts';
import { CHECKS } from '../../suites/index.ts';

type RunEnd = Extract<RunEvent, { type: 'run-end' }>;
interface Run {
  code: number;
  lines: string[];
  end: RunEnd;
  report: JsonReport;
}

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'conform-console-layout-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A run as the CLI makes it (the library, the report writers), the console captured at `width`. */
async function run(profile: Profile, options: Partial<ConformOptions>, width?: number): Promise<Run> {
  let text = '';
  let end: RunEnd | undefined;
  const out = path.join(dir, String(Math.random()).slice(2));
  const code = await conform(
    { ...OPTION_DEFAULTS, profile, report: ['console', 'json', 'html'], out, ...options },
    CHECKS,
    {
      out: (t) => {
        text += t;
      },
      err: (t) => {
        text += t;
      },
      tty: false,
      version: '0.0.0-test',
      reports: REPORTS,
      ...(width ? { width } : {}),
      handlers: [
        {
          handle(e) {
            if (e.type === 'run-end') end = e;
          },
        },
      ],
    },
  );
  const report = JSON.parse(await readFile(path.join(out, 'conform-report.json'), 'utf8')) as JsonReport;
  return { code, lines: text.trimEnd().split('\n'), end: end!, report };
}

const widest = (lines: readonly string[]): number => Math.max(...lines.map((l) => l.length));

describe('a passing run of the whole suite', () => {
  let server: ReferenceServer;
  let passing: Run;
  beforeAll(async () => {
    // The spec's 30 s keep-alive window, stated shorter by the profile: the keep-alive checks take seconds.
    server = await startReferenceServer({ pingTimeoutMs: 2000 });
    passing = await run(server.profile, {});
  }, 180_000);
  afterAll(() => server?.close());

  it('reads in at most 40 lines, none over 120 columns: verdict, Rules, skips by reason, observations counted', () => {
    expect(passing.code).toBe(0);
    expect(passing.end.results.length).toBeGreaterThan(100);
    expect(passing.lines.length).toBeLessThanOrEqual(40);
    expect(widest(passing.lines)).toBeLessThanOrEqual(120);
    const text = passing.lines.join('\n');
    expect(text).toMatch(/^Rules: \d+ of \d+ stated rules checked/m);
    expect(text).toMatch(/^PASS( \(partial\))?: /m);
    // No line per check: a pass is counted, not listed.
    expect(text).not.toMatch(/^PASS {2}\S/m);
    const observed = passing.report.results.reduce((n, r) => n + r.observations.length, 0);
    expect(observed).toBeGreaterThan(50);
    expect(text).toContain(`Observed: ${observed} observations of what the spec leaves open`);
    // Where to read them: the files this run wrote.
    expect(text.replace(/\n\s+/g, ' ')).toMatch(
      /read them in \S+conform-report\.json or \S+conform-report\.html, or with --verbose/,
    );
    const skipped = passing.report.results.filter((r) => r.outcome === 'skip');
    if (skipped.length) expect(text).toContain(`Skipped (${skipped.length}), by reason:`);
  });

  it('fits a narrower terminal: every line of the same run within 80 columns, no word lost', () => {
    const wide = summaryLines(passing.end, { reportFiles: ['conform-reports/conform-report.json'] });
    const narrow = wide.flatMap((l) => fitLine(l, 80));
    expect(widest(narrow)).toBeLessThanOrEqual(80);
    const words = (ls: readonly string[]): string[] => ls.join(' ').split(/\s+/).filter(Boolean);
    expect(words(narrow)).toEqual(words(wide));
  });

  it('keeps the whole detail with --verbose, and the JSON report keeps everything', () => {
    const verbose = summaryLines(passing.end, { verbose: true });
    const observed = passing.report.results.reduce((n, r) => n + r.observations.length, 0);
    const head = verbose.indexOf(`Observed behaviour (spec: not shown), ${observed}:`);
    expect(head).toBeGreaterThan(-1);
    const listed = verbose.slice(head + 1, verbose.indexOf('', head));
    expect(listed).toHaveLength(observed);
    expect(listed.every((l) => /^ {2}(rest|ws)\.\S+ .+: /.test(l))).toBe(true);
    expect(verbose.some((l) => l.startsWith('Checks: '))).toBe(true);
    expect(passing.report.results.map((r) => r.id)).toEqual(passing.end.results.map((r) => r.id));
  });
});

describe('a failing run', () => {
  let server: ReferenceServer;
  let failing: Run;
  beforeAll(async () => {
    server = await startReferenceServer({ fault: 'price-not-mid' });
    // Its owners on both channels fail on the one rule it breaks: a group of two under it.
    failing = await run(server.profile, { only: ['rest.price', 'ws.push'] });
  }, 120_000);
  afterAll(() => server?.close());

  it('groups the failures by the rule they broke: the first in full, the others named under it', () => {
    expect(failing.code).toBe(1);
    const text = failing.lines.join('\n');
    const failed = failing.report.results.filter((r) => r.outcome === 'fail').map((r) => r.id);
    expect(failed.length).toBeGreaterThanOrEqual(2);
    expect(text).toContain(`Failures (${failed.length}) and errors (0), by broken rule:`);
    const cause = failing.report.causes![0]!;
    expect(text).toContain(`  ${cause.rule} (`);
    expect(text).toMatch(new RegExp(`— failed: ${cause.failed.length} checks`));
    const [first, ...rest] = cause.failed;
    expect(text).toContain(`    FAIL ${first}: `);
    expect(text.replace(/\n {6,}/g, ' ')).toContain(`also failing on it: ${rest.join(', ')}`);
    for (const id of failed) expect(text).toMatch(new RegExp(`^FAIL {2}${id.replace(/\./g, '\\.')} `, 'm'));
    expect(widest(failing.lines)).toBeLessThanOrEqual(120);
  });

  it('breaks a long curl line between its words with a trailing backslash, so it still runs when pasted', () => {
    const block = failing.lines.slice(failing.lines.findIndex((l) => l.trim() === 'Reproduce with:') + 1);
    const start = block.findIndex((l) => l.trimStart().startsWith('curl '));
    const end = block.findIndex((l, i) => i >= start && !l.endsWith(' \\'));
    const pasted = block
      .slice(start, end + 1)
      .map((l) => l.trim().replace(/ \\$/, ''))
      .join(' ');
    const curls = failing.report.results.flatMap((r) => r.evidence.flatMap((e) => (e.kind === 'http' ? [e.curl] : [])));
    expect(curls).toContain(pasted);
  });
});

describe('fitting lines', () => {
  it('wraps at spaces with a hanging indent, and cuts a word longer than a line', () => {
    expect(fitLine('  one two three four five six seven eight nine ten eleven twelve', 40)).toEqual([
      '  one two three four five six seven',
      '    eight nine ten eleven twelve',
    ]);
    expect(fitLine('x'.repeat(90), 40).every((l) => l.length <= 40)).toBe(true);
    expect(fitLine('short', 40)).toEqual(['short']);
  });

  it('cuts a line past MAX_LINE_CHARS short, saying how much the reports hold beyond it', () => {
    const body = `  Received: HTTP 200 ${'{"pairs":[1,2,3]}'.repeat(4000)}`;
    const rows = fitLine(body, 120);
    expect(rows.every((l) => l.length <= 120)).toBe(true);
    const shown = rows.map((l) => l.trim()).join(' ');
    expect(shown.length).toBeLessThan(MAX_LINE_CHARS + 200);
    expect(shown).toMatch(new RegExp(`… \\(${body.length - MAX_LINE_CHARS} more characters: the JSON or HTML report`));
    expect(fitLine('x'.repeat(MAX_LINE_CHARS), 120).join('')).not.toContain('more characters');
  });

  it("keeps a shell command's quoted words and option arguments whole", () => {
    const curl = `curl -sS -i 'http://h/v1/price?code=A' -H 'accept: application/json' -H 'X-API-Key: <key:primary>'`;
    expect(fitShellLine(curl, 50)).toEqual([
      "curl -sS -i 'http://h/v1/price?code=A' \\",
      "    -H 'accept: application/json' \\",
      "    -H 'X-API-Key: <key:primary>'",
    ]);
    // Quotes that do not pair up are wrapped as text, never split inside a quote.
    expect(fitShellLine(`curl 'unclosed ${'a '.repeat(40)}`, 50).every((l) => l.length <= 50)).toBe(true);
  });

  it("takes the width from COLUMNS, else the terminal's, else leaves the default of 120", () => {
    expect(consoleWidth({ isTTY: true, columns: 90 }, {})).toEqual({ width: 90 });
    expect(consoleWidth({ isTTY: true, columns: 90 }, { COLUMNS: '70' })).toEqual({ width: 70 });
    expect(consoleWidth({ isTTY: false }, {})).toEqual({});
    expect(consoleWidth({ isTTY: false }, { COLUMNS: 'wide' })).toEqual({});
  });
});

describe('the docs that show the console', () => {
  const read = (file: string): string => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
  /** The fenced blocks of a doc that show a run's console (a Rules line or a verdict), their indentation removed. */
  function consoleBlocks(text: string): string[][] {
    const blocks: string[][] = [];
    let open: { indent: number; lines: string[] } | undefined;
    for (const line of text.split('\n')) {
      const fence = /^( *)```(\S*)$/.exec(line);
      if (fence && !open) open = { indent: fence[1]!.length, lines: [] };
      else if (fence && open) {
        blocks.push(open.lines);
        open = undefined;
      } else open?.lines.push(line.slice(open.indent));
    }
    return blocks.filter((lines) => lines.some((l) => /^(Rules: |PASS|FAIL)/.test(l)));
  }

  it.each(['README.md', 'docs/checks.md'])('%s shows the console as it prints, within 120 columns', (file) => {
    const blocks = consoleBlocks(read(file));
    expect(blocks.length).toBeGreaterThan(0);
    for (const lines of blocks) {
      for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(120);
      // The verdict as a run of the suite prints it: a pass that left rules unchecked is partial.
      for (const l of lines.filter((x) => /^(PASS|FAIL)\b[^ ]/.test(x) || /^(PASS|FAIL)( \(partial\))?: /.test(x)))
        expect(l).toMatch(/^(PASS \(partial\): \d+ of \d+ stated rules checked — \d+ passed|FAIL: \d+ passed)/);
    }
    expect(read(file)).not.toMatch(/`PASS: \d+ passed/);
  });
});
