/**
 * The written docs stay true: every relative link of README.md, CONTRIBUTING.md and docs/*.md
 * resolves, docs/errors.md is what the error classes generate, and docs/benchmarks.md is
 * written section by section by the bench scripts.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BENCHMARKS_FILE,
  describeCommand,
  renderSection,
  replaceSection,
  writeBenchmarkSection,
} from '../../load/bench/benchmarks-doc.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** The Markdown files whose links must resolve, relative to the repository. */
function markdownFiles(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('docs', f));
  return ['README.md', 'CONTRIBUTING.md', ...docs];
}

// No Markdown parser is among the dependencies, and adding one for a test is not worth its weight:
// the docs use a small, regular subset (ATX headings, inline links, fenced code), which the few
// lines below read. What they do not read (reference-style links, setext headings, HTML anchors)
// the test refuses, so a doc that starts using them makes this parser grow instead of going unchecked.

/** The text outside fenced code blocks, with inline code spans blanked out (links in code are not links). */
function prose(markdown: string): string[] {
  const lines: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const opener = /^\s*(```|~~~)/.exec(line);
    if (fence) {
      if (opener && line.trim().startsWith(fence)) fence = null;
      lines.push('');
      continue;
    }
    if (opener) {
      fence = opener[1]!;
      lines.push('');
      continue;
    }
    lines.push(line.replace(/(`+)(?:(?!\1).)+?\1/g, (code) => ' '.repeat(code.length)));
  }
  return lines;
}

/** GitHub's anchor of a heading: its text lowercased, punctuation dropped, spaces as hyphens; repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const opener = /^\s*(```|~~~)/.exec(line);
    if (fence) {
      if (opener && line.trim().startsWith(fence)) fence = null;
      continue;
    }
    if (opener) {
      fence = opener[1]!;
      continue;
    }
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/[`*]/g, '')
      .toLowerCase();
    const slug = text.replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

function linksOf(file: string): Link[] {
  const links: Link[] = [];
  prose(readFileSync(path.join(ROOT, file), 'utf8')).forEach((text, i) => {
    for (const m of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ file, line: i + 1, target: m[1]! });
    }
  });
  return links;
}

/** Why a relative link does not resolve, or null when it does. */
function brokenBecause(link: Link): string | null {
  const [pathPart, fragment] = link.target.split('#', 2) as [string, string | undefined];
  const target = pathPart === '' ? link.file : path.normalize(path.join(path.dirname(link.file), pathPart));
  const absolute = path.join(ROOT, target);
  if (!existsSync(absolute)) return `${target} does not exist`;
  if (fragment === undefined) return null;
  if (!statSync(absolute).isFile() || !target.endsWith('.md'))
    return `#${fragment} points into a file that is not Markdown`;
  const anchors = anchorsOf(readFileSync(absolute, 'utf8'));
  return anchors.has(decodeURIComponent(fragment)) ? null : `${target} has no heading #${fragment}`;
}

const isRelative = (target: string): boolean => !/^[a-z][a-z0-9+.-]*:/i.test(target);

describe('the README', () => {
  it('reads in minutes: at most 15,000 bytes, the rest in docs/ and CONTRIBUTING.md', () => {
    expect(statSync(path.join(ROOT, 'README.md')).size).toBeLessThanOrEqual(15_000);
  });
});

describe('links in the docs', () => {
  it('reads anchors as GitHub makes them', () => {
    const anchors = anchorsOf(
      '# Set-up\n## `conform init`: a profile\n### Several hosts: `--shard`, `--start-at`\n' +
        '## The stream transport: raw WebSocket or Socket.IO\n## Nightly\n## Nightly\n' +
        '```sh\n# not a heading\n```\n',
    );
    expect([...anchors]).toEqual([
      'set-up',
      'conform-init-a-profile',
      'several-hosts---shard---start-at',
      'the-stream-transport-raw-websocket-or-socketio',
      'nightly',
      'nightly-1',
    ]);
  });

  it('finds links outside code only', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'conform-links-'));
    try {
      const file = path.join(dir, 'x.md');
      writeFileSync(file, 'see [a](a.md#b) and `[not](a link)`\n```\n[nor](this.md)\n```\n![img](i.png "t")\n');
      const found = linksOf(path.relative(ROOT, file)).map((l) => l.target);
      expect(found).toEqual(['a.md#b', 'i.png']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('uses only the Markdown the link check reads: no reference-style links, no setext headings', () => {
    const offenders = markdownFiles().flatMap((file) =>
      prose(readFileSync(path.join(ROOT, file), 'utf8')).flatMap((text, i) =>
        /^\s{0,3}\[[^\]]+\]:\s*\S/.test(text) || /^\s{0,3}(=+|-{2,})\s*$/.test(text) ? [`${file}:${i + 1}`] : [],
      ),
    );
    expect(offenders).toEqual([]);
  });

  it('resolves every relative link of README.md, CONTRIBUTING.md and docs/*.md, #anchors included', () => {
    const links = markdownFiles()
      .flatMap(linksOf)
      .filter((l) => isRelative(l.target));
    expect(links.length).toBeGreaterThan(20);
    const broken = links.flatMap((l) => {
      const why = brokenBecause(l);
      return why ? [`${l.file}:${l.line} ${l.target}: ${why}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it('fails on a link to a missing file and on an anchor no heading makes', () => {
    expect(brokenBecause({ file: 'README.md', line: 1, target: 'docs/nothing-here.md' })).toMatch(/does not exist/);
    expect(brokenBecause({ file: 'README.md', line: 1, target: 'docs/checks.md#no-such-heading' })).toMatch(
      /no heading/,
    );
    expect(brokenBecause({ file: 'docs/load.md', line: 1, target: '../README.md#exit-codes' })).toBeNull();
  });
});

describe('docs/errors.md', () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'conform-errors-doc-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const check = (file?: string) =>
    run(process.execPath, ['--import', 'tsx', 'scripts/gen-errors-doc.ts', '--check', ...(file ? [file] : [])], {
      cwd: ROOT,
    });

  it('is what npm run gen:errors writes from the error classes (run it when this fails)', async () => {
    await expect(check()).resolves.toBeDefined();
  });

  it('is found out of date when a row is missing', async () => {
    const stale = path.join(tmp, 'errors.md');
    const doc = readFileSync(path.join(ROOT, 'docs/errors.md'), 'utf8');
    writeFileSync(stale, doc.replace(/^\| `CONFORM_BIND` .*\n/m, ''));
    await expect(check(stale)).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/out of date/) });
  });
});

describe('docs/benchmarks.md', () => {
  const doc = readFileSync(BENCHMARKS_FILE, 'utf8');

  it('has a section for each one a bench script writes, and no other', () => {
    const written = ['load/bench/validate.bench.ts', 'load/bench/server.ts', 'load/bench/load.bench.ts']
      .concat('load/bench/rest-bench.ts', 'load/bench/fanout-section.ts', 'scripts/bench-start.ts')
      .concat('scripts/bench-run.ts')
      .flatMap((f) => [...readFileSync(path.join(ROOT, f), 'utf8').matchAll(/\bid: '([\w-]+)'/g)].map((m) => m[1]!));
    const inDoc = [...doc.matchAll(/<!-- bench:([\w-]+) -->/g)].map((m) => m[1]!);
    expect(inDoc.sort()).toEqual(written.sort());
    for (const id of inDoc) expect(doc).toContain(`<!-- /bench:${id} -->`);
  });

  it('gives every measured section its date, machine and command', () => {
    const sections = [...doc.matchAll(/<!-- bench:([\w-]+) -->([\s\S]*?)<!-- \/bench:\1 -->/g)];
    for (const [, id, body] of sections) {
      if (/No run on record yet/.test(body!)) continue;
      expect(body, id).toMatch(/Measured \d{4}-\d{2}-\d{2} /);
      expect(body, id).toMatch(/ on [^,]+/);
      expect(body, id).toMatch(/with `[^`]*(npm run bench|npx tsx)[^`]*`/);
    }
  });

  it("replaces a script's own section and leaves the others as they were", () => {
    const section = { id: 'x', title: 'X figures', method: 'How.', body: '| a |\n|---|\n| 1 |' };
    const rendered = renderSection(section, new Date('2026-01-02T03:04:00Z'), '2 × Test CPU', 'npm run bench');
    expect(rendered).toContain('## X figures');
    expect(rendered).toContain('Measured 2026-01-02 03:04 UTC on 2 × Test CPU, with `npm run bench`.');
    const before = '# B\n\n<!-- bench:y -->\nY\n<!-- /bench:y -->\n\n<!-- bench:x -->\nold\n<!-- /bench:x -->\n';
    const after = replaceSection(before, 'x', rendered);
    expect(after).toContain('<!-- bench:y -->\nY\n<!-- /bench:y -->');
    expect(after).not.toContain('old');
    expect(after).toContain(rendered);
    expect(replaceSection('# B\n', 'x', rendered)).toBe(`# B\n\n${rendered}\n`);
  });

  it('writes the command with the sizes that were set, so it replays the run', () => {
    const command = describeCommand(['node', 'load/bench/load.bench.ts', 'cpu'], {
      npm_lifecycle_event: 'bench:load',
      BENCH_REPEAT: '1',
      REST_BENCH_RATE: '300',
      BENCH_NO_DOC: '1',
      HOME: '/root',
    });
    expect(command).toBe('BENCH_REPEAT=1 REST_BENCH_RATE=300 npm run bench:load -- cpu');
  });

  it('writes into the file it is given', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'conform-bench-doc-'));
    try {
      const file = path.join(dir, 'benchmarks.md');
      writeFileSync(file, '# B\n\n<!-- bench:x -->\nold\n<!-- /bench:x -->\n');
      const noDoc = process.env.BENCH_NO_DOC;
      delete process.env.BENCH_NO_DOC;
      try {
        writeBenchmarkSection({ id: 'x', title: 'X', method: 'How.', body: 'new figures' }, file);
      } finally {
        if (noDoc !== undefined) process.env.BENCH_NO_DOC = noDoc;
      }
      const written = readFileSync(file, 'utf8');
      expect(written).toMatch(/<!-- bench:x -->\n## X\n\nMeasured \d{4}-\d{2}-\d{2} [\d:]+ UTC on \d+ × /);
      expect(written).toContain('new figures\n<!-- /bench:x -->');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
