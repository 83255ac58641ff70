/**
 * The console: live progress on a terminal (a counts line rewritten in place, a line per finished
 * check), plain lines otherwise; then failures with Received / Expected / Reproduce, the
 * observations, baseline changes and the verdict.
 */
import type { CheckResult } from '../src/check.ts';
import type { RunEvent, RunHandler } from '../src/runner.ts';
import { causesOf } from './causes.ts';
import { causeLines, coverageLine, failureLines, nothingToJudgeLine, valueText } from './format.ts';
import { printable } from '../src/redact.ts';

export interface ConsoleOptions {
  write: (text: string) => void;
  /** Live progress (rewrites a status line) when true. */
  tty: boolean;
  /** ANSI colours; default follows `tty`. */
  color?: boolean;
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

/** The closing summary of a run, as lines. */
export function summaryLines(e: Extract<RunEvent, { type: 'run-end' }>): string[] {
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
  lines.push('', `Coverage: ${coverageLine(s.coverage)}`);
  if (starved) lines.push('', `!! ${starved}`);
  lines.push(
    '',
    `${s.verdict === 'pass' ? 'PASS' : 'FAIL'}: ${s.pass} passed, ${s.fail} failed, ${s.error} ` +
      `errors, ${s.skip} skipped of ${s.total} checks in ${(s.durationMs / 1000).toFixed(1)} s ` +
      `(target ${e.target.rest}${e.target.embedded ? ', embedded reference service' : ''})`,
  );
  return lines.map(printable);
}

/** The console handler. */
export function consoleHandler(options: ConsoleOptions): RunHandler {
  const color = options.color ?? options.tty;
  const counts = { pass: 0, fail: 0, skip: 0, error: 0 };
  let statusShown = false;
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
          options.write(
            `${printable(
              `conform: ${e.checks.length} checks ` +
                `against ${e.target.rest}${e.target.ws ? ` and ${e.target.ws}` : ''}` +
                `${e.target.embedded ? ' (embedded reference service)' : ''}`,
            )}\n`,
          );
          break;
        case 'check-end':
          counts[e.result.outcome]++;
          clearStatus();
          options.write(`${resultLine(e.result, color)}\n`);
          if (options.tty) {
            options.write(
              `[${e.done}/${e.total}] ${counts.pass} passed, ${counts.fail} ` +
                `failed, ${counts.error} errors, ${counts.skip} skipped`,
            );
            statusShown = true;
          }
          break;
        case 'run-end':
          clearStatus();
          options.write(`${summaryLines(e).join('\n')}\n`);
          break;
        default:
          break;
      }
    },
  };
}
