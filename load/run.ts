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
import { loadReportNames, writeMergedReports, writeReports, type LoadReport } from './report/index.ts';
import { runRest } from './rest/run.ts';
import { startLoadTarget, type LoadTarget } from './target.ts';
import { appendHistory, historyRow } from './trend/history.ts';
import { runTrend } from './trend/run.ts';
import { LivePusher, type LiveStatus, type LiveValues } from './live/remote-write.ts';
import { flatMetrics, metricOf } from './metrics.ts';

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
  run: { target?: LoadTarget; onLiveSource?: (read: () => LiveValues) => void },
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
  const live = run.onLiveSource ? { onLiveSource: run.onLiveSource } : {};
  if (inv.mode === 'fanout')
    return runFanout(target, { ...inv.fanout, ...live, ...(onProgress ? { onProgress } : {}) });
  return runRest(target, {
    ...inv.rest,
    ...live,
    ...(onProgress ? { onProgress: (p) => onProgress({ phase: 'rest', ...p }) } : {}),
  });
}

/** The live metrics of a run: the pusher, and where the run hands it the function that reads its figures. */
function livePusher(inv: LoadInvocation): { pusher: LivePusher; source: (read: () => LiveValues) => void } {
  const kind = inv.mode === 'rest' ? 'rest' : 'fanout';
  let read: () => LiveValues = () => ({});
  const labels = { job: 'conform-load', mode: inv.mode, run: new Date().toISOString(), ...inv.live!.labels };
  const unit = (name: string): string => metricOf(kind, name)?.unit ?? '';
  const pusher = new LivePusher(inv.live!.url, labels, unit, () => read());
  return { pusher, source: (r) => (read = r) };
}

/** What the live metrics did, in one line. */
const liveLine = (s: LiveStatus): string =>
  `live metrics: ${s.pushes} pushes to ${s.url} (run=${s.run})` +
  (s.failures ? `, ${s.failures} failed (last: ${s.lastError})` : '');

/** Runs an invocation, writes its reports, and returns the exit code. */
export async function runLoad(inv: LoadInvocation, io: LoadIO): Promise<number> {
  const live = inv.progress ?? io.tty;
  const pusher = inv.live ? livePusher(inv) : undefined;
  const run: { target?: LoadTarget; onLiveSource?: (read: () => LiveValues) => void } = {
    ...(pusher ? { onLiveSource: pusher.source } : {}),
  };
  let report: LoadReport;
  try {
    pusher?.pusher.start();
    report = await measure(inv, io, live ? progressLine(inv, io) : undefined, run);
  } finally {
    if (live) io.err('\r\x1b[2K');
    await run.target?.close();
  }
  if (pusher) io.out(`${liveLine(await pusher.pusher.stop(flatMetrics(report.kind, report as never)))}\n`);
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
  const steady = inv.history ? await recordRun(report, inv, io) : true;
  return held && steady ? LOAD_EXIT.ok : LOAD_EXIT.thresholdCrossed;
}

/**
 * Appends the run to its history (`--history`) and, with `--judge`, judges the history with it,
 * writing the trend in the run's formats that a trend has; returns false when the newest segment
 * of a metric is a regression.
 */
async function recordRun(report: LoadReport, inv: LoadInvocation, io: LoadIO): Promise<boolean> {
  const h = inv.history!;
  if (report.kind === 'fanout' && report.mode === 'calibrate') return true;
  await appendHistory(h.file, historyRow(report, { labels: h.labels, loadAverage: loadavg()[0] ?? null }));
  io.out(`appended to ${h.file}${report.trustworthy ? '' : ' (flagged untrustworthy: left out of every judgement)'}\n`);
  if (!h.judge) return true;
  const reports = inv.reports.filter((r) => loadReportNames('trend').includes(r));
  const options = {
    ...(h.minEffect === undefined ? {} : { minEffect: h.minEffect }),
    ...(h.groupBy === undefined ? {} : { groupBy: h.groupBy }),
  };
  const code = await runTrend({ file: h.file, options, reports, outDir: inv.outDir, github: inv.github }, io);
  return code === LOAD_EXIT.ok;
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
