/**
 * What a run of the CLI against a hostile target must look like (docs/checks.md: When the target misbehaves). The
 * judge returns every problem it finds as one line, so a failing test shows all of them at once.
 */
import { waitsFor } from '../../../src/timing/index.ts';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { CheckResult } from '../../../src/check.ts';
import type { Profile } from '../../../src/profile.ts';
import { RUN_DEFAULTS } from '../../../src/runner.ts';
import { CHECKS } from '../../../suites/index.ts';
import { CRASH_SIGNS, keyLeaks, type CliRun } from './run-cli.ts';
import type { HostileDefinition } from './targets.ts';

/**
 * A bound against a hang, not a speed goal: the circuit breaker and the per-check timeouts end a
 * run against a silent or stalling target within a minute or two on an idle machine; waiting out
 * every check's timeout in turn would take far longer than this. Generous, because the hostile
 * files run beside others on two loaded cores.
 */
export const RUN_LIMIT_MS = 240_000;
/**
 * Peak resident memory of one run; a harness that buffered a 50 MB body or a 20 MB frame, or every
 * frame of a flood, would pass it. The checks that watch pushes run in lanes of their own beside
 * the others, so more checks hold a body of up to the 1 MiB limit at once: 408 MiB was measured
 * against bodies just under that limit.
 */
export const MEMORY_LIMIT_MIB = 480;
/**
 * Writing the reports; a process alive longer after its run ended holds a forgotten handle (a
 * socket or a keep-alive timer, which would hold it 30 s and more). Seconds of slack for a loaded machine.
 */
const LINGER_LIMIT_MS = 15_000;
/** Slack on a check's own timeout for the runner's bookkeeping and a loaded 2-core machine. */
const TIMEOUT_SLACK_MS = 5_000;

export interface JudgeOptions {
  /** Every key the run was given; none may appear in any output. */
  keys: readonly string[];
  /** The profile the CLI built (for checks whose timeout depends on it). */
  profile: Profile;
  /** Which results talked to the hostile part of the target: a `must` check among them may not pass. */
  facesHostile: (r: CheckResult) => boolean;
}

/** A check's own timeout as the runner computes it. */
function timeoutOf(id: string, profile: Profile): number {
  const check = CHECKS.find((c) => c.id === id || id.startsWith(`${c.id}.`));
  const t = typeof check?.timeoutMs === 'function' ? check.timeoutMs(profile, waitsFor(profile)) : check?.timeoutMs;
  return t && t > 0 ? t : RUN_DEFAULTS.timeoutMs;
}

/** Characters XML 1.0 does not allow anywhere in a document (section 2.2). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const XML_ILLEGAL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;
/** C0 controls (but tab, newline, carriage return), DEL and C1 controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONSOLE_CONTROL = /[\u0000-\u0008\u000b-\u000c\u000e-\u001f\u007f-\u009f]/;

const oneLine = (s: unknown): boolean => typeof s === 'string' && s.trim().length > 0 && !s.includes('\n');

/** The JSON report of a run, if it wrote one. */
export function jsonReportOf(
  run: CliRun,
): { results: CheckResult[]; summary: Record<string, unknown>; finishedAt: string } | undefined {
  const text = run.files['conform-report.json'];
  if (text === undefined) return undefined;
  return JSON.parse(text) as { results: CheckResult[]; summary: Record<string, unknown>; finishedAt: string };
}

/** Every way the run falls short of what is required of it; empty when it behaved. */
export function judge(def: HostileDefinition, run: CliRun, opts: JudgeOptions): string[] {
  const problems: string[] = [];
  if (run.exitCode === null) problems.push(`hung: killed after ${run.durationMs} ms (${run.signal})`);
  else if (run.exitCode !== def.exit[0]) problems.push(`exit ${run.exitCode}, expected ${def.exit.join(' or ')}`);
  if (run.durationMs >= RUN_LIMIT_MS) problems.push(`took ${run.durationMs} ms, limit ${RUN_LIMIT_MS} ms`);
  const memoryLimit = def.memoryLimitMiB ?? MEMORY_LIMIT_MIB;
  if (run.peakRssMiB !== undefined && run.peakRssMiB >= memoryLimit)
    problems.push(`peak RSS ${run.peakRssMiB} MiB, limit ${memoryLimit} MiB`);
  const consoleText = `${run.stdout}\n${run.stderr}`;
  for (const sign of CRASH_SIGNS) {
    const m = sign.exec(consoleText);
    if (m) problems.push(`console shows ${sign}: ${JSON.stringify(m[0].trim().slice(0, 160))}`);
  }
  // Not a TTY and NO_COLOR: any control character came from the target (a terminal would obey an ESC sequence).
  const control = CONSOLE_CONTROL.exec(consoleText);
  if (control)
    problems.push(
      `console carries control character U+${control[0].charCodeAt(0).toString(16).padStart(4, '0')} from the target`,
    );
  for (const key of opts.keys) problems.push(...keyLeaks(run, key).map((l) => `key leaked: ${l}`));

  if (run.exitCode === 2) {
    const lines = run.stderr.split('\n').filter((l) => l.trim());
    if (lines.length !== 1)
      problems.push(
        `exit 2 should print one line on stderr, got ${lines.length}: ${JSON.stringify(run.stderr.slice(0, 300))}`,
      );
    else if (def.noAnswer && !def.noAnswer.test(lines[0]!.trim()))
      problems.push(`exit 2 line does not say why as expected (${String(def.noAnswer)}): ${JSON.stringify(lines[0])}`);
    return problems;
  }
  if (run.exitCode !== 1) return problems;

  let report: ReturnType<typeof jsonReportOf>;
  try {
    report = jsonReportOf(run);
    if (!report) problems.push('no conform-report.json written');
  } catch (err) {
    problems.push(`conform-report.json does not parse: ${(err as Error).message}`);
  }
  const junit = run.files['conform-junit.xml'];
  if (junit === undefined) problems.push('no conform-junit.xml written');
  else {
    const valid = XMLValidator.validate(junit);
    const illegal = XML_ILLEGAL.exec(junit);
    if (illegal)
      problems.push(
        `conform-junit.xml carries U+${illegal[0].charCodeAt(0).toString(16).padStart(4, '0')}, which XML 1.0 forbids`,
      );
    if (valid !== true) problems.push(`conform-junit.xml is not well-formed XML: ${valid.err.msg}`);
    else {
      const xml = new XMLParser({ ignoreAttributes: false }).parse(junit) as Record<string, unknown>;
      if (!xml.testsuites && !xml.testsuite) problems.push('conform-junit.xml has no testsuite');
    }
  }
  const html = run.files['conform-report.html'];
  if (html === undefined) problems.push('no conform-report.html written');
  else {
    if (!/<\/html>\s*$/i.test(html)) problems.push('conform-report.html is not a whole document');
    const c = XML_ILLEGAL.exec(html);
    if (c)
      problems.push(
        `conform-report.html carries control character ` +
          `U+${c[0].charCodeAt(0).toString(16).padStart(4, '0')} from the target`,
      );
  }
  if (!report) return problems;

  const finishedAt = Date.parse(report.finishedAt);
  if (Number.isFinite(finishedAt) && run.exitedAt - finishedAt > LINGER_LIMIT_MS)
    problems.push(
      `the process lived ${Math.round((run.exitedAt - finishedAt) / 1000)} s after ` +
        `its run had ended (open handles kept it alive)`,
    );
  const multiLine: string[] = [];
  for (const r of report.results) {
    const where = `${r.id} (${r.outcome})`;
    if (r.outcome === 'fail') {
      if (r.violations.length === 0) problems.push(`${where}: fail without a violation`);
      for (const v of r.violations)
        if (!oneLine(v.received) || !oneLine(v.expected))
          multiLine.push(`${r.id}: ${JSON.stringify(v.received).slice(0, 100)}`);
    } else if (r.outcome === 'error' || r.outcome === 'skip') {
      if (!oneLine(r.reason)) problems.push(`${where}: reason is not one line: ${JSON.stringify(r.reason)}`);
    } else if (r.outcome !== 'pass') problems.push(`${where}: unknown outcome`);
    const limit = timeoutOf(r.id, opts.profile) + TIMEOUT_SLACK_MS;
    // Waiting for a connection slot another check holds does not count against a check's timeout,
    // and slow REST answers lengthen it.
    const ran = r.durationMs - (r.slotWaitMs ?? 0) - (r.slowAnswerMs ?? 0);
    if (ran > limit)
      problems.push(
        `${where}: ran ${ran} ms (${r.slotWaitMs ?? 0} ms more waiting for a connection slot, ` +
          `${r.slowAnswerMs ?? 0} ms more for slow REST answers), past its timeout + slack (${limit} ms)`,
      );
    // A pass that cited what it met (alsoSeen) judged its own rule and left the broken one to its
    // owner, which failed on it: one rule, one verdict.
    if (
      r.outcome === 'pass' &&
      r.severity === 'must' &&
      !r.alsoSeen?.length &&
      opts.facesHostile(r) &&
      !def.mayPass?.[r.id] &&
      !def.mayPass?.['*']
    )
      problems.push(`${where}: a must check passed against a broken target`);
  }
  if (multiLine.length > 0)
    problems.push(`${multiLine.length} violations are not one line (received/expected), e.g. ${multiLine[0]}`);
  return problems;
}

/** One line per run for the test output: how long, how much memory, which verdicts. */
export function runLine(name: string, run: CliRun): string {
  let counts = '';
  try {
    const s = jsonReportOf(run)?.summary;
    if (s) counts = ` pass ${s.pass} fail ${s.fail} error ${s.error} skip ${s.skip}`;
  } catch {
    /* judged elsewhere */
  }
  const rss = run.peakRssMiB === undefined ? '' : ` peak RSS ${run.peakRssMiB} MiB`;
  return (
    `[hostile] ${name.padEnd(22)} ${(run.durationMs / 1000).toFixed(1).padStart(6)} ` +
    `s  exit ${run.exitCode}${rss}${counts}`
  );
}
