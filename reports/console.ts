/**
 * The console: live progress on a terminal (a counts line rewritten in place, a line per finished
 * check), plain lines otherwise; then failures with Received / Expected / Reproduce, the
 * observations, baseline changes and the verdict.
 */
import type { CheckResult } from '../src/check.ts';
import type { RunEvent, RunHandler } from '../src/runner.ts';
import { causesOf } from './causes.ts';
import {
  causeLines,
  coverageLine,
  explorationLines,
  failureLines,
  nothingToJudgeLine,
  ruleLine,
  uncheckedLines,
  valueText,
  verdictLine,
} from './format.ts';
import { printable } from '../src/redact.ts';

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
}

/** A check that has started and not ended, as progress shows it. */
export interface Running {
  id: string;
  startedMs: number;
  /** Its time limit: it ends by `startedMs + limitMs` at the latest. */
  limitMs: number;
}

/** Off a terminal, a progress line this often while checks are running. */
const PROGRESS_EVERY_MS = 10_000;
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

/** The closing summary of a run, as lines; `listUnchecked` adds every rule not checked in full. */
export function summaryLines(e: Extract<RunEvent, { type: 'run-end' }>, listUnchecked = false): string[] {
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
  if (listUnchecked) {
    const rules = uncheckedLines(s.coverage.rules);
    lines.push('', `Rules not checked in full (${rules.length}):`, ...rules.map((l) => `  ${l}`));
  }
  lines.push('', ruleLine(s.coverage), `Checks: ${coverageLine(s.coverage)}`);
  if (s.rateWaitMs)
    lines.push(
      '',
      `Rate limit: waited ${(s.rateWaitMs / 1000).toFixed(1)} s of the run's ` +
        `${(s.durationMs / 1000).toFixed(1)} s for the target's rate limit`,
    );
  if (starved) lines.push('', `!! ${starved}`);
  lines.push('', verdictLine(s, `${e.target.rest}${e.target.embedded ? ', embedded reference service' : ''}`));
  return lines.map(printable);
}

/** The console handler. */
export function consoleHandler(options: ConsoleOptions): RunHandler {
  const color = options.color ?? options.tty;
  const counts = { pass: 0, fail: 0, skip: 0, error: 0 };
  const running = new Map<string, Running>();
  let done = 0;
  let total = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  let statusShown = false;
  const countsText = (): string =>
    `[${done}/${total}] ${counts.pass} passed, ${counts.fail} failed, ${counts.error} errors, ${counts.skip} skipped`;
  const showStatus = (): void => {
    clearStatus();
    // One name on the status line: a line wider than the terminal wraps and is no longer redrawn in place.
    const waiting = running.size ? ` · ${waitingText([...running.values()], Date.now(), 1)}` : '';
    options.write(printable(`${countsText()}${waiting}`));
    statusShown = true;
  };
  // Off a terminal there is no line to redraw: a line now and then says what the run waits on.
  const tick = (): void => {
    if (options.tty) {
      if (statusShown) showStatus();
    } else if (running.size)
      options.write(`${printable(`[${done}/${total}] ${waitingText([...running.values()], Date.now())}`)}\n`);
  };
  const clearStatus = (): void => {
    if (statusShown) {
      options.write('\r\x1b[2K');
      statusShown = false;
    }
  };
  return {
    handle(e) {
      switch (e.type) {
        case 'run-start':
          total = e.checks.length;
          timer = setInterval(tick, options.tty ? REDRAW_MS : (options.progressEveryMs ?? PROGRESS_EVERY_MS));
          // The run's end clears it; a run that throws first must not be kept alive by it.
          timer.unref();
          options.write(
            `${printable(
              `conform: ${e.checks.length} checks ` +
                `against ${e.target.rest}${e.target.ws ? ` and ${e.target.ws}` : ''}` +
                `${e.target.embedded ? ' (embedded reference service)' : ''}`,
            )}\n`,
          );
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
          options.write(`${resultLine(e.result, color)}\n`);
          if (options.tty) showStatus();
          break;
        case 'run-end':
          if (timer) clearInterval(timer);
          clearStatus();
          options.write(`${summaryLines(e, options.listUnchecked).join('\n')}\n`);
          break;
        default:
          break;
      }
    },
  };
}
