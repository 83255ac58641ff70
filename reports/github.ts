/**
 * GitHub Actions: an `::error` workflow command per broken rule (an annotation on the run, titled
 * with the rule, naming the checks that failed on it) and per errored check, and a Markdown job
 * summary: the verdict, the rule coverage, the broken rules with their checks, and where the
 * reports are. The summary goes to
 * `$GITHUB_STEP_SUMMARY` inside Actions and to `conform-summary.md` in the report directory
 * outside it.
 *
 * Workflow commands (docs.github.com, "Workflow commands for GitHub Actions"):
 * `::error title=T::MESSAGE` on a line of its own; in the message `%`, CR and LF are written
 * `%25`, `%0D`, `%0A`; in a property `:` and `,` too (`%3A`, `%2C`), since they end a property.
 */
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CheckResult } from '../src/check.ts';
import type { GithubEnvironment } from '../src/conform.ts';
import type { RunEvent, RunHandler } from '../src/runner.ts';
import { type Cause, causeName, causesOf } from './causes.ts';
import {
  causeLines,
  coverageLine,
  explorationLines,
  failureLines,
  nothingToJudgeLine,
  ruleLine,
  ruleText,
  truncate,
  verdictWord,
} from './format.ts';

export const GITHUB_SUMMARY_FILE = 'conform-summary.md';

/** Reads what the report needs from the environment of a GitHub Actions step. */
export function githubEnvironment(env: Readonly<Record<string, string | undefined>>): GithubEnvironment {
  const out: GithubEnvironment = {};
  if (env.GITHUB_STEP_SUMMARY) out.stepSummary = env.GITHUB_STEP_SUMMARY;
  if (env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY && env.GITHUB_RUN_ID)
    out.runUrl = `${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}`;
  return out;
}

/** A workflow command's message. */
export const commandData = (text: string): string =>
  text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

/** A workflow command's property value. */
export const commandProperty = (text: string): string => commandData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');

/** Lines of evidence an annotation carries; the rest is in the reports. */
const ANNOTATION_EVIDENCE = 8;

/** The `::error` annotation of an errored check. */
export function annotation(r: CheckResult): string {
  const title = `${r.id}: ${r.title}`;
  return `::error title=${commandProperty(title)}::${commandData(failureLines(r, ANNOTATION_EVIDENCE).join('\n'))}`;
}

/** The `::error` annotation of a broken rule: its statement, then each check that failed on it. */
export function ruleAnnotation(c: Cause, results: readonly CheckResult[]): string {
  const lines = [`Breaks ${ruleText(c.rule)}`];
  for (const id of c.failed) {
    const r = results.find((x) => x.id === id);
    if (!r) continue;
    lines.push('', `${r.id}: ${r.title}`, ...failureLines(r, ANNOTATION_EVIDENCE));
  }
  if (c.alsoSeen.length) lines.push('', `Also seen by ${c.alsoSeen.join(', ')}`);
  return `::error title=${commandProperty(`broken rule ${causeName(c)}`)}::${commandData(lines.join('\n'))}`;
}

/** Every annotation of a run: one per broken rule, one per errored check. */
export function annotations(results: readonly CheckResult[]): string[] {
  return [
    ...causesOf(results).map((c) => ruleAnnotation(c, results)),
    ...results.filter((r) => r.outcome === 'error').map(annotation),
  ];
}

/** Text for a Markdown table cell: one line, no pipe or tag to break the table. */
const cell = (text: string, limit = 200): string =>
  truncate(text.replace(/\s+/g, ' '), limit)
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/`/g, "'");

/** The Markdown job summary of a finished run; `reports` are the file names written beside it. */
export function githubSummary(
  e: Extract<RunEvent, { type: 'run-end' }>,
  reports: readonly string[],
  env: GithubEnvironment,
): string {
  const s = e.summary;
  const failed = e.results.filter((r) => r.outcome === 'fail' || r.outcome === 'error');
  const lines = [
    `## conform: ${verdictWord(s)}`,
    '',
    `${s.fail} failed, ${s.error} errors, ${s.pass} passed, ${s.skip} skipped of ${s.total} checks in ` +
      `${(s.durationMs / 1000).toFixed(1)} s against \`${cell(e.target.rest)}\``,
    '',
    `**${cell(ruleLine(s.coverage), 2000).replace(/^Rules:/, 'Rules:**')}`,
    '',
    `**Checks:** ${cell(coverageLine(s.coverage), 2000)}`,
  ];
  const starved = nothingToJudgeLine(s.coverage);
  if (starved) lines.push('', `**Nothing to judge:** ${cell(starved, 1000)}`);
  const causes = causesOf(e.results);
  const head = causeLines(e.results, causes);
  if (head.length) lines.push('', `### ${cell(head[0]!, 1000)}`);
  if (causes.length) {
    // One row per rule broken, its owners beside it and the checks that met it: one cause to look at.
    lines.push('', `### Broken rules (${causes.length})`, '');
    lines.push('| Rule (spec) | Failed | Also seen by | First received |', '|---|---|---|---|');
    for (const c of causes)
      lines.push(
        `| ${cell(causeName(c))} | ${c.failed.map((id) => `\`${id}\``).join(', ')} | ` +
          `${c.alsoSeen.length} checks | ${cell(c.example)} |`,
      );
  }
  const errored = failed.filter((r) => r.outcome === 'error');
  if (errored.length) {
    lines.push('', `### Errors (${errored.length})`, '');
    for (const r of errored) lines.push(`- \`${r.id}\`: ${cell(`${r.errorCode ?? ''} ${r.reason ?? ''}`)}`);
  }
  for (const r of e.results.filter((x) => x.exploration))
    lines.push('', `### Exploration (\`${r.id}\`)`, '', '```', ...explorationLines(r), '```');
  if (reports.length || env.runUrl) {
    lines.push('', '### Reports', '');
    if (env.runUrl) lines.push(`The run's artifacts: ${env.runUrl}#artifacts`, '');
    for (const f of reports) lines.push(`- \`${cell(f)}\``);
  }
  return `${lines.join('\n')}\n`;
}

/** Writes the annotations through `write` and the summary when the run ends. */
export function githubHandler(options: {
  outDir: string;
  write: (text: string) => void;
  env: GithubEnvironment;
  /** File names of the other reports of the run, for the summary. */
  reports: readonly string[];
  written?: (file: string) => void;
}): RunHandler {
  return {
    async handle(e) {
      if (e.type !== 'run-end') return;
      for (const line of annotations(e.results)) options.write(`${line}\n`);
      const summary = githubSummary(e, options.reports, options.env);
      if (options.env.stepSummary) {
        await appendFile(options.env.stepSummary, summary);
        return;
      }
      await mkdir(options.outDir, { recursive: true });
      const file = path.join(options.outDir, GITHUB_SUMMARY_FILE);
      await writeFile(file, summary);
      options.written?.(file);
    },
  };
}
