/**
 * docs/benchmarks.md is written by the bench scripts, never by hand: each script replaces its own
 * section, between `<!-- bench:ID -->` and `<!-- /bench:ID -->`, with its figures and the date, the
 * machine and the command that produced them. A figure without those three cannot be compared
 * with the next run, so none is written without them. `BENCH_NO_DOC=1` leaves the file alone (a
 * trial run on a machine whose figures should not be kept).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem, type } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCHMARKS_FILE = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));

/** Environment variables that size a benchmark, so the command written beside the figures replays it. */
const SIZING = /^(BENCH_|RAMP_|REST_BENCH_)/;

export interface BenchmarkSection {
  /** Stable id of the section: the marker's name. */
  id: string;
  /** The section's heading (level 2), stable too: other pages link to it. */
  title: string;
  /** What was measured and how, one paragraph. */
  method: string;
  /** The figures, Markdown (a table, a list). */
  body: string;
}

/** The machine a figure was taken on, with the load beside it: a busy machine's figures are noise. */
export function describeMachine(): string {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const gib = (totalmem() / 2 ** 30).toFixed(1);
  const load = loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
  return (
    `${availableParallelism()} × ${cpu}, ${gib} GiB, ${type()} ${release()}, Node ${process.version}; ` +
    `load average ${load} at the end`
  );
}

/** The command that ran this process: the npm script and its arguments, with the sizing variables set. */
export function describeCommand(argv: readonly string[] = process.argv, env = process.env): string {
  const sizing = Object.entries(env)
    .filter(([name, value]) => SIZING.test(name) && name !== 'BENCH_NO_DOC' && value !== undefined)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => `${name}=${value}`);
  const args = argv.slice(2);
  const script = env.npm_lifecycle_event;
  const run = script
    ? `npm run ${script}${args.length ? ` -- ${args.join(' ')}` : ''}`
    : `npx tsx ${path.relative(process.cwd(), argv[1] ?? '')}${args.length ? ` ${args.join(' ')}` : ''}`;
  return [...sizing, run].join(' ');
}

/** The whole section, markers included. */
export function renderSection(section: BenchmarkSection, at: Date, machine: string, command: string): string {
  return [
    `<!-- bench:${section.id} -->`,
    `## ${section.title}`,
    '',
    `Measured ${at.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machine}, with \`${command}\`.`,
    '',
    section.method,
    '',
    section.body.trimEnd(),
    `<!-- /bench:${section.id} -->`,
  ].join('\n');
}

/** `doc` with the section `id` replaced by `rendered`, or `rendered` appended when it has none. */
export function replaceSection(doc: string, id: string, rendered: string): string {
  const start = `<!-- bench:${id} -->`;
  const end = `<!-- /bench:${id} -->`;
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  if (from === -1 || to < from) return `${doc.trimEnd()}\n\n${rendered}\n`;
  return doc.slice(0, from) + rendered + doc.slice(to + end.length);
}

/** Writes the section into docs/benchmarks.md (unless BENCH_NO_DOC=1) and says so. */
export function writeBenchmarkSection(section: BenchmarkSection, file = BENCHMARKS_FILE): void {
  if (process.env.BENCH_NO_DOC === '1') return;
  const rendered = renderSection(section, new Date(), describeMachine(), describeCommand());
  writeFileSync(file, replaceSection(readFileSync(file, 'utf8'), section.id, rendered));
  console.log(`wrote section "${section.title}" of ${path.relative(process.cwd(), file)}`);
}

/** A Markdown table from a header row and rows of cells. */
export function table(header: readonly string[], rows: readonly (readonly (string | number | null)[])[]): string {
  const line = (cells: readonly (string | number | null)[]): string =>
    `| ${cells.map((c) => (c === null ? '—' : String(c))).join(' | ')} |`;
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}
