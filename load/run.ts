/**
 * The programmatic entry of the load tools: an invocation in (load/invocation.ts), the run or the
 * merge done, its reports written (load/report/index.ts), the exit code out: 0 every threshold
 * held, 1 one crossed. Bad input is thrown (LoadUsageError, ThresholdError, MergeInputError), so
 * the caller answers it with exit 2.
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { MergeInputError } from '../src/errors.ts';
import type { KeyEnvironment } from '../src/profile.ts';
import { runCalibrate } from './calibrate/run.ts';
import { runFanout } from './fanout/run.ts';
import type { LoadInvocation, MergeInvocation } from './invocation.ts';
import { mergeResults, parseResultText, type MergeInput } from './merge.ts';
import { FANOUT_DEFAULTS, REST_DEFAULTS } from './options.ts';
import { formatProgress, plannedSeconds } from './report/console.ts';
import { writeMergedReports, writeReports, type LoadReport } from './report/index.ts';
import { runRest } from './rest/run.ts';
import { startLoadTarget, type LoadTarget } from './target.ts';
import { appendHistory, historyRow, readHistory } from './trend/history.ts';
import { judgeHistory } from './trend/judge.ts';
import { formatTrendSummary } from './report/trend-console.ts';

/** Exit codes: every threshold held; a threshold crossed; bad input. */
export const LOAD_EXIT = { ok: 0, thresholdCrossed: 1, usage: 2 } as const;

export interface LoadIO {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Whether stderr is a TTY (live progress line). */
  tty: boolean;
  /** Where a profile's `keyEnv` references are read; default none. */
  env?: KeyEnvironment;
}

type ProgressLine = (p: Parameters<typeof formatProgress>[0]) => void;

/** The live progress line on stderr, against the planned length of the run. */
function progressLine(inv: LoadInvocation, io: LoadIO): ProgressLine {
  const plannedS =
    inv.mode === 'rest'
      ? plannedSeconds('rest', inv.rest, REST_DEFAULTS)
      : plannedSeconds(inv.mode, inv.fanout, FANOUT_DEFAULTS);
  return (p) => io.err(`\r\x1b[2K${formatProgress({ ...p, plannedS })}`);
}

/** Runs the measurement the invocation asks for; `run.target` holds its target once started, the caller closes it. */
async function measure(
  inv: LoadInvocation,
  io: LoadIO,
  onProgress: ProgressLine | undefined,
  run: { target?: LoadTarget },
): Promise<LoadReport> {
  if (inv.mode === 'calibrate') {
    const push = inv.target.reference.tickMs;
    return runCalibrate({
      ...inv.fanout,
      ...(push ? { pushIntervalMs: push } : {}),
      ...(onProgress ? { onProgress } : {}),
    });
  }
  // `rest` never opens a stream, so it needs no stream URL.
  const target = await startLoadTarget({ ...inv.target, needsStream: inv.mode === 'fanout' }, io.env);
  run.target = target;
  if (inv.mode === 'fanout') return runFanout(target, { ...inv.fanout, ...(onProgress ? { onProgress } : {}) });
  return runRest(target, {
    ...inv.rest,
    ...(onProgress ? { onProgress: (p) => onProgress({ phase: 'rest', ...p }) } : {}),
  });
}

/** Runs an invocation, writes its reports, and returns the exit code. */
export async function runLoad(inv: LoadInvocation, io: LoadIO): Promise<number> {
  const live = inv.progress ?? io.tty;
  const run: { target?: LoadTarget } = {};
  let report: LoadReport;
  try {
    report = await measure(inv, io, live ? progressLine(inv, io) : undefined, run);
  } finally {
    if (live) io.err('\r\x1b[2K');
    await run.target?.close();
  }
  const secrets = run.target ? run.target.keys.map((k) => k.key) : [];
  if (inv.target.key) secrets.push(inv.target.key);
  const written = await writeReports(report, inv.reports, {
    outDir: inv.outDir,
    out: io.out,
    secrets,
    github: inv.github,
  });
  for (const f of written) io.out(`wrote ${f}\n`);
  const held = report.thresholds.every((t) => t.ok);
  const steady = inv.history ? await recordRun(report, inv.history, io) : true;
  return held && steady ? LOAD_EXIT.ok : LOAD_EXIT.thresholdCrossed;
}

/**
 * Appends the run to its history (`--history`) and, with `--judge`, judges the history with it;
 * returns false when the newest segment of a metric is a regression.
 */
async function recordRun(report: LoadReport, h: NonNullable<LoadInvocation['history']>, io: LoadIO): Promise<boolean> {
  if (report.kind === 'fanout' && report.mode === 'calibrate') return true;
  await appendHistory(h.file, historyRow(report, { labels: h.labels, loadAverage: loadavg()[0] ?? null }));
  io.out(`appended to ${h.file}${report.trustworthy ? '' : ' (flagged untrustworthy: left out of every judgement)'}\n`);
  if (!h.judge) return true;
  const trend = judgeHistory(await readHistory(h.file), h.minEffect === undefined ? {} : { minEffect: h.minEffect });
  io.out(`${formatTrendSummary(trend, h.file)}\n`);
  return trend.regressions.length === 0;
}

/** Reads the results, merges them, writes the reports; returns the exit code. */
export async function runMerge(inv: MergeInvocation, io: Pick<LoadIO, 'out'>): Promise<number> {
  const inputs: MergeInput[] = [];
  for (const file of inv.files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new MergeInputError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    const data = parseResultText(text);
    if (data === undefined) throw new MergeInputError(`${file}: neither JSON nor a log with a conform-result line`);
    inputs.push({ file, data });
  }
  const report = mergeResults(inputs, inv.thresholds);
  for (const f of await writeMergedReports(report, inv.reports, { outDir: inv.outDir, out: io.out }))
    io.out(`wrote ${f}\n`);
  return report.thresholds.every((t) => t.ok) ? LOAD_EXIT.ok : LOAD_EXIT.thresholdCrossed;
}
