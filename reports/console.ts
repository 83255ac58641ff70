/**
 * The console: live progress on a terminal (a counts line rewritten in place), plain lines
 * otherwise. By default a run reads in one screen: each failure as it happens, then the failures
 * grouped by cause, the skips by reason, one line counting the observations, the rule figure and
 * the verdict. `verbose` keeps every detail: a line per finished check, every failure in full,
 * every observation, the checks' figure. Every line fits the width (the terminal's, else 120).
 */
import type { CheckResult } from '../src/check.ts';
import type { RunSummary, RunVerdict } from '../src/summary.ts';
import type { RunEvent, RunHandler } from '../src/runner.ts';
import { causeName, causesOf, evidenceShowing } from './causes.ts';
import {
  causeLines,
  clauseText,
  coverageLine,
  explorationLines,
  failureLines,
  nothingToJudgeLine,
  reproduceLines,
  ruleLine,
  truncate,
  uncheckedLines,
  valueText,
  verdictLine,
} from './format.ts';
import { printable } from '../src/redact.ts';
import { DEFAULT_WIDTH, fitLines } from './wrap.ts';

export interface ConsoleOptions {
  write: (text: string) => void;
  /** Live progress (rewrites a status line) when true. */
  tty: boolean;
  /** ANSI colours; default follows `tty`. */
  color?: boolean;
  /** Off a terminal, how often a line says which checks the run is waiting on; default 10 s. */
  progressEveryMs?: number;
  /** After the summary, every stated rule not checked in full (`--list-unchecked`). */
  listUnchecked?: boolean;
  /** A line per finished check and the whole summary (`--verbose`); default: the run in one screen. */
  verbose?: boolean;
  /** Columns a line takes at most: the terminal's; default 120. */
  width?: number;
  /** The files the run's other reports write, where the full detail is to be read. */
  reportFiles?: readonly string[];
}

/** A check that has started and not ended, as progress shows it. */
export interface Running {
  id: string;
  startedMs: number;
  /** Its time limit: it ends by `startedMs + limitMs` at the latest. */
  limitMs: number;
}

/** Off a terminal, a progress line this often while checks are running; without --verbose, less often. */
const PROGRESS_EVERY_MS = 10_000;
const BRIEF_PROGRESS_EVERY_MS = 30_000;
/** On a terminal, the status line's time left is redrawn this often. */
const REDRAW_MS = 1000;
/** Checks named in a progress line; the rest are counted. */
const NAMED = 3;

/**
 * `waiting on ws.keepalive.timeout, … (at most ~24 s left)`: the checks still running, the one with
 * the longest time to go first, and that time (their time limit: a check ends by then at the latest).
 */
export function waitingText(running: readonly Running[], nowMs: number, named = NAMED): string {
  const left = (r: Running): number => Math.max(0, r.startedMs + r.limitMs - nowMs);
  const byLeft = [...running].sort((a, b) => left(b) - left(a));
  const ids = byLeft.slice(0, named).map((r) => r.id);
  const more = byLeft.length > named ? ` and ${byLeft.length - named} more` : '';
  const seconds = Math.ceil(left(byLeft[0]!) / 1000);
  return `waiting on ${ids.join(', ')}${more} (at most ~${seconds} s left)`;
}

const LABEL = { pass: 'PASS', fail: 'FAIL', skip: 'SKIP', error: 'ERROR' } as const;
const COLOUR = { pass: 32, fail: 31, skip: 90, error: 35 } as const;

/** One line for a finished check. */
export function resultLine(r: CheckResult, color = false): string {
  const label = LABEL[r.outcome].padEnd(5);
  const shown = color ? `\x1b[${COLOUR[r.outcome]}m${label}\x1b[0m` : label;
  const tail =
    r.outcome === 'skip' || r.outcome === 'error'
      ? `  (${r.errorCode ? `${r.errorCode}: ` : ''}${r.reason ?? ''})`
      : r.outcome === 'fail'
        ? `  ${r.violations[0]?.received ?? ''}`
        : '';
  return `${shown} ${printable(`${r.id}  ${r.durationMs} ms${tail}`)}`;
}

type RunEnd = Extract<RunEvent, { type: 'run-end' }>;

/** How the summary is laid out: in one screen, or (`verbose`) every detail; what else it lists. */
export interface SummaryOptions {
  listUnchecked?: boolean;
  verbose?: boolean;
  /** The files of the run's other reports, named as where the detail is. */
  reportFiles?: readonly string[];
  color?: boolean;
}

/**
 * The closing summary of a run, as lines (not yet fitted to a width): in one screen by default,
 * every detail with `verbose`; `listUnchecked` adds every rule not checked in full.
 */
export function summaryLines(e: RunEnd, options: SummaryOptions = {}): string[] {
  const lines = options.verbose ? detailLines(e) : briefLines(e, options.reportFiles ?? []);
  const all = [...lines, ...closingLines(e, options)].map(printable);
  // The verdict closes the summary; its word is coloured once its text is known to be printable.
  if (options.color) all[all.length - 1] = colouredVerdict(all.at(-1)!, e.summary.verdict);
  return all;
}

/** Lines of a failure's evidence the one-screen summary shows; the rest are in the reports and --verbose. */
const BRIEF_EVIDENCE = 8;
/** Skip reasons the one-screen summary lists before it counts the rest. */
const BRIEF_REASONS = 12;

/**
 * The run in one screen: failures grouped by cause (the first of a cause in full, the others
 * named), errors by code, skips by reason, one line counting the observations and where they are.
 */
function briefLines(e: RunEnd, reportFiles: readonly string[]): string[] {
  const lines = [...failureGroupLines(e.results), ...skipGroupLines(e.results)];
  const observed = e.results.reduce((n, r) => n + r.observations.length, 0);
  if (observed > 0) {
    const where = reportFiles.filter((f) => /\.(json|html)$/.test(f) && !f.endsWith('ctrf.json'));
    lines.push(
      '',
      `Observed: ${observed} observations of what the spec leaves open (never failures); read them ` +
        `${where.length ? `in ${where.join(' or ')}, ` : 'in the JSON or HTML report (--report json,html), '}` +
        'or with --verbose',
    );
  }
  // What the explorer ran is its result, pass or fail: its seed replays it (a failure shows it in its block).
  for (const r of e.results.filter((x) => x.exploration && x.outcome !== 'fail'))
    lines.push('', `${r.id}:`, ...explorationLines(r).map((l) => `  ${l}`));
  return lines;
}

/** Violations of one failure the one-screen summary shows. */
const BRIEF_VIOLATIONS = 3;
const MORE = '--verbose, or the JSON or HTML report';

/**
 * A failure in short: the first violations Received, the Expected they share said once, the
 * first lines of the reproduction; what is left out is counted, and the reports hold it all.
 */
function briefFailureLines(r: CheckResult): string[] {
  const lines: string[] = [];
  if (r.outcome === 'error') lines.push(`Error ${r.errorCode ?? ''}: ${r.reason ?? ''}`.replace(/ +:/, ':'));
  const expectedText = (expected: string): string => `Expected (spec: ${clauseText(r)}): ${expected}`;
  const shared = new Set(r.violations.map((v) => v.expected)).size === 1;
  const shown = r.violations.slice(0, BRIEF_VIOLATIONS);
  for (const v of shown) lines.push(`Received: ${v.received}`, ...(shared ? [] : [expectedText(v.expected)]));
  if (r.violations.length > shown.length)
    lines.push(`… ${r.violations.length - shown.length} more violations: ${MORE}`);
  if (shared) lines.push(expectedText(r.violations[0]!.expected));
  const repro = reproduceLines(evidenceShowing(r));
  if (repro.length) {
    lines.push('Reproduce with:', ...repro.slice(0, BRIEF_EVIDENCE).map((l) => `  ${l}`));
    if (repro.length > BRIEF_EVIDENCE) lines.push(`  … ${repro.length - BRIEF_EVIDENCE} more lines: ${MORE}`);
  }
  return lines;
}

/** One failure as the one-screen summary shows it: its title, then in short what was wrong and how to see it. */
const failureBlock = (r: CheckResult, indent: string): string[] => [
  `${indent}${LABEL[r.outcome]} ${r.id}: ${r.title}`,
  ...briefFailureLines(r).map((l) => `${indent}  ${l}`),
  // The explorer's shrunk sequence and how to replay it are its failure's reproduction.
  ...explorationLines(r).map((l) => `${indent}  ${l}`),
];

/** The failures grouped by the rule they broke, then the failures no rule names, then the errors by code. */
function failureGroupLines(results: readonly CheckResult[]): string[] {
  const failed = results.filter((r) => r.outcome === 'fail');
  const errored = results.filter((r) => r.outcome === 'error');
  if (failed.length + errored.length === 0) return [];
  const causes = causesOf(results);
  const lines = ['', `Failures (${failed.length}) and errors (${errored.length}), by broken rule:`];
  for (const c of causes) {
    const [first, ...rest] = c.failed.flatMap((id) => failed.filter((r) => r.id === id));
    if (!first) continue;
    const seen = c.alsoSeen.length
      ? `; also seen by ${c.alsoSeen.length} ${c.alsoSeen.length === 1 ? 'check' : 'checks'}`
      : '';
    lines.push(
      '',
      `  ${causeName(c)} — failed: ${c.failed.length} ${c.failed.length === 1 ? 'check' : 'checks'}${seen}`,
    );
    lines.push(...failureBlock(first, '    '));
    if (rest.length) lines.push(`    also failing on it: ${rest.map((r) => r.id).join(', ')}`);
  }
  const grouped = new Set(causes.flatMap((c) => c.failed));
  for (const r of failed.filter((x) => !grouped.has(x.id))) lines.push('', ...failureBlock(r, '  '));
  const byCode = groupBy(errored, (r) => r.errorCode ?? 'error');
  for (const [code, rs] of byCode) {
    lines.push('', ...failureBlock(rs[0]!, '  '));
    if (rs.length > 1)
      lines.push(
        `    also ${code}: ${rs
          .slice(1)
          .map((r) => r.id)
          .join(', ')}`,
      );
  }
  return lines;
}

/** The skipped checks grouped by reason (codes in a reason left out, so one probe per status is one group). */
function skipGroupLines(results: readonly CheckResult[]): string[] {
  const skipped = results.filter((r) => r.outcome === 'skip');
  if (skipped.length === 0) return [];
  const masked = (r: CheckResult): string => (r.reason ?? 'skipped').replace(/\b\d{3,}\b/g, '…');
  // Reasons that differ only in a code (a probe per status) are one group; a reason alone keeps its code.
  const kinds = groupBy(skipped, masked);
  const groups = [
    ...groupBy(skipped, (r) =>
      new Set(kinds.get(masked(r))!.map((x) => x.reason)).size > 1 ? masked(r) : (r.reason ?? 'skipped'),
    ),
  ].sort((a, b) => b[1].length - a[1].length);
  const lines = ['', `Skipped (${skipped.length}), by reason:`];
  for (const [reason, rs] of groups.slice(0, BRIEF_REASONS))
    lines.push(`  ${reason} — ${rs.length}: ${someIds(rs.map((r) => r.id))}`);
  if (groups.length > BRIEF_REASONS)
    lines.push(`  … ${groups.length - BRIEF_REASONS} more reasons: --verbose, or the JSON or HTML report`);
  return lines;
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

/** Ids as a short list: the first three, then how many more. */
const someIds = (ids: readonly string[]): string =>
  ids.length <= 3 ? ids.join(', ') : `${ids.slice(0, 3).join(', ')} and ${ids.length - 3} more`;

/** Today's whole detail: the causes, every failure in full, every observation. */
function detailLines(e: RunEnd): string[] {
  const lines: string[] = [];
  const failed = e.results.filter((r) => r.outcome === 'fail' || r.outcome === 'error');
  const causes = causeLines(e.results, causesOf(e.results));
  if (causes.length) lines.push('', ...causes);
  if (failed.length) {
    lines.push('', `Failures and errors (${failed.length}):`);
    for (const r of failed) {
      lines.push('', `${LABEL[r.outcome]} ${r.id}: ${r.title}`);
      for (const l of failureLines(r)) lines.push(`  ${l}`);
    }
  }
  const observed = e.results.flatMap((r) =>
    r.observations.map((o) => `  ${r.id} ${o.name}: ${valueText(o.value, 120)}${o.note ? ` (${o.note})` : ''}`),
  );
  if (observed.length) lines.push('', `Observed behaviour (spec: not shown), ${observed.length}:`, ...observed);
  for (const r of e.results.filter((x) => x.exploration && !failed.includes(x)))
    lines.push('', `${r.id}:`, ...explorationLines(r).map((l) => `  ${l}`));
  return lines;
}

/** The baseline's changes, the unchecked rules when asked, the figures and the verdict: in both layouts. */
function closingLines(e: RunEnd, options: SummaryOptions = {}): string[] {
  const lines: string[] = [];
  if (e.changes) {
    lines.push(
      '',
      e.changes.length ? `Changes against the baseline (${e.changes.length}):` : 'No changes against the baseline.',
    );
    for (const c of e.changes)
      lines.push(
        `  ${c.id} ${c.kind}${c.name ? ` ${c.name}` : ''}: ${valueText(c.before, 80)} -> ${valueText(c.after, 80)}`,
      );
  }
  const s = e.summary;
  const starved = nothingToJudgeLine(s.coverage);
  if (options.listUnchecked) {
    const rules = uncheckedLines(s.coverage.rules);
    lines.push('', `Rules not checked in full (${rules.length}):`, ...rules.map((l) => `  ${l}`));
  }
  lines.push('', ruleLine(s.coverage));
  if (options.verbose) lines.push(`Checks: ${coverageLine(s.coverage)}`);
  if (s.rateWaitMs)
    lines.push(
      '',
      `Rate limit: waited ${(s.rateWaitMs / 1000).toFixed(1)} s of the run's ` +
        `${(s.durationMs / 1000).toFixed(1)} s for the target's rate limit`,
    );
  if (s.slowAnswers) lines.push('', slowAnswersLine(s.slowAnswers));
  if (starved) lines.push('', `!! ${starved}`);
  lines.push('', verdictLine(s, `${e.target.rest}${e.target.embedded ? ', embedded reference service' : ''}`));
  return lines;
}

/** How much longer checks were given because the target's REST answers came slowly. */
function slowAnswersLine(slow: NonNullable<RunSummary['slowAnswers']>): string {
  const checks =
    slow.checks === 1 ? '1 check ran past its time limit' : `${slow.checks} checks ran past their time limits`;
  return (
    `REST answers: the slowest took ${(slow.slowestMs / 1000).toFixed(1)} s; ${checks}, lengthened by ` +
    `${(slow.lengthenedMs / 1000).toFixed(1)} s in all to wait for slow answers`
  );
}

/** The verdict line with its word in colour: green for a pass, yellow for a partial one, red for a failure. */
function colouredVerdict(line: string, verdict: RunVerdict): string {
  const word = /^(PASS \(partial\)|PASS|FAIL|INCONCLUSIVE)/.exec(line)?.[1];
  if (!word) return line;
  const colour = verdict === 'fail' ? COLOUR.fail : word === 'PASS' ? COLOUR.pass : 33;
  return `\x1b[${colour}m${word}\x1b[0m${line.slice(word.length)}`;
}

/** The run's first line: how many checks, against what. */
const startLine = (n: number, t: { rest: string; ws?: string; embedded?: boolean }): string =>
  printable(
    `conform: ${n} checks against ${t.rest}${t.ws ? ` and ${t.ws}` : ''}` +
      `${t.embedded ? ' (embedded reference service)' : ''}`,
  );

/** The console handler. */
export function consoleHandler(options: ConsoleOptions): RunHandler {
  const color = options.color ?? options.tty;
  const width = options.width ?? DEFAULT_WIDTH;
  const counts = { pass: 0, fail: 0, skip: 0, error: 0 };
  const running = new Map<string, Running>();
  let done = 0;
  let total = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  let statusShown = false;
  /** Writes lines, each fitted to the width. */
  const writeLines = (lines: readonly string[]): void =>
    options.write(`${fitLines(lines, width, !options.verbose).join('\n')}\n`);
  const countsText = (): string =>
    `[${done}/${total}] ${counts.pass} passed, ${counts.fail} failed, ${counts.error} errors, ${counts.skip} skipped`;
  const showStatus = (): void => {
    clearStatus();
    // One name on the status line, cut to the width: a line wider than the terminal wraps and is no
    // longer redrawn in place.
    const waiting = running.size ? ` · ${waitingText([...running.values()], Date.now(), 1)}` : '';
    options.write(truncate(printable(`${countsText()}${waiting}`), width - 1));
    statusShown = true;
  };
  // Off a terminal there is no line to redraw: a line now and then says what the run waits on.
  const tick = (): void => {
    if (options.tty) {
      if (statusShown) showStatus();
    } else if (running.size)
      writeLines([printable(`[${done}/${total}] ${waitingText([...running.values()], Date.now())}`)]);
  };
  const clearStatus = (): void => {
    if (statusShown) {
      options.write('\r\x1b[2K');
      statusShown = false;
    }
  };
  const everyMs = options.tty
    ? REDRAW_MS
    : (options.progressEveryMs ?? (options.verbose ? PROGRESS_EVERY_MS : BRIEF_PROGRESS_EVERY_MS));
  return {
    handle(e) {
      switch (e.type) {
        case 'run-start':
          total = e.checks.length;
          timer = setInterval(tick, everyMs);
          // The run's end clears it; a run that throws first must not be kept alive by it.
          timer.unref();
          writeLines([startLine(e.checks.length, e.target)]);
          break;
        case 'check-start':
          running.set(e.check.id, { id: e.check.id, startedMs: Date.now(), limitMs: e.limitMs });
          break;
        case 'check-end':
          counts[e.result.outcome]++;
          running.delete(e.result.id);
          done = e.done;
          total = e.total;
          clearStatus();
          // Without --verbose only a failure or an error is a line of its own, as it happens.
          if (options.verbose || e.result.outcome === 'fail' || e.result.outcome === 'error')
            writeLines([resultLine(e.result, color)]);
          if (options.tty) showStatus();
          break;
        case 'check-amend':
          counts[e.was]--;
          counts.fail++;
          clearStatus();
          writeLines([`${resultLine(e.result, color)}  (after its end: another check met it)`]);
          if (options.tty) showStatus();
          break;
        case 'run-end':
          if (timer) clearInterval(timer);
          clearStatus();
          writeLines(
            summaryLines(e, {
              listUnchecked: options.listUnchecked,
              verbose: options.verbose,
              reportFiles: options.reportFiles,
              color,
            }),
          );
          break;
        default:
          break;
      }
    },
  };
}
