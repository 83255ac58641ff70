/**
 * `conform load capacity fanout | rest`: argv → the search's options (pure, tested), and the
 * command's run: the target started once, the search, the reports, the exit code (0 a capacity
 * was found, 1 none can be reported: the generator was the limit, no load held, or the budget ran
 * out; bad input is thrown, exit 2).
 */
import type { GithubEnvironment } from '../../src/conform.ts';
import { LoadUsageError } from '../../src/errors.ts';
import type { KeyEnvironment } from '../../src/profile.ts';
import { list, one, parseLoadArgs, str, type LoadInvocation } from '../invocation.ts';
import type { LoadKind } from '../metrics.ts';
import { CAPACITY_DEFAULTS, MAX_CLIENTS_PER_HOST, parseDuration, parseRate, positiveInt } from '../options.ts';
import { n } from '../report/console.ts';
import { parseLoadReports, writeSideReports } from '../report/index.ts';
import { startLoadTarget } from '../target.ts';
import { parseThresholds } from '../thresholds.ts';
import { runCapacity, type CapacityOptions } from './run.ts';

export interface CapacityInvocation {
  target: LoadInvocation['target'];
  options: CapacityOptions;
  reports: string[];
  outDir: string;
  github: GithubEnvironment;
}

/** The search's own options of argv: the bounds, the steps' lengths, the budget. */
function searchArgs(argv: Record<string, unknown>, kind: LoadKind) {
  const own = kind === 'fanout' ? 'max-clients' : 'max-rate';
  const other = kind === 'fanout' ? 'max-rate' : 'max-clients';
  if (argv[other] !== undefined) throw new LoadUsageError(`--${other}: capacity ${kind} searches by --${own}`);
  if (argv[own] === undefined)
    throw new LoadUsageError(`conform load capacity ${kind}: give the highest load to try, --${own}`);
  const load = (v: unknown, option: string): number =>
    kind === 'fanout' ? positiveInt(one(v), option, MAX_CLIENTS_PER_HOST) : parseRate(str(v)!, option);
  const max = load(argv[own], `--${own}`);
  const start = argv.start === undefined ? Math.min(CAPACITY_DEFAULTS.start[kind], max) : load(argv.start, '--start');
  if (start > max) throw new LoadUsageError(`--start ${start}: above --${own} ${max}`);
  return {
    start,
    max,
    maxSteps:
      argv['max-steps'] === undefined
        ? CAPACITY_DEFAULTS.maxSteps
        : positiveInt(one(argv['max-steps']), '--max-steps', 100),
    maxTimeMs:
      argv['max-time'] === undefined
        ? CAPACITY_DEFAULTS.maxTimeMs
        : parseDuration(str(argv['max-time'])!, '--max-time'),
    resolution: CAPACITY_DEFAULTS.resolution,
  };
}

/** argv of `conform load capacity <kind>` → its invocation; throws LoadUsageError or ThresholdError. */
export function parseCapacityArgs(argv: Record<string, unknown>, env: KeyEnvironment = {}): CapacityInvocation {
  const kind = str(argv.kind) as LoadKind;
  if (kind !== 'fanout' && kind !== 'rest')
    throw new LoadUsageError(`conform load capacity ${String(kind)}: use fanout or rest`);
  const slos = list(argv.slo) ?? [];
  if (!slos.length)
    throw new LoadUsageError(`conform load capacity ${kind}: give at least one --slo, e.g. 'latency.p99<50'`);
  parseThresholds(slos, kind);
  const search = searchArgs(argv, kind);
  const stepMs =
    argv['step-duration'] === undefined
      ? CAPACITY_DEFAULTS.stepMs
      : parseDuration(str(argv['step-duration'])!, '--step-duration');
  const warmupMs =
    argv['step-warmup'] === undefined
      ? CAPACITY_DEFAULTS.warmupMs
      : parseDuration(str(argv['step-warmup'])!, '--step-warmup');
  // The mode's own options (target, pairs, clients' settings, requests) parse as a run of the mode does.
  const { report: _r, slo: _s, ...runArgv } = argv;
  const base = parseLoadArgs({ ...runArgv, mode: kind }, env);
  return {
    target: base.target,
    options: { kind, slos, search, stepMs, warmupMs, fanout: base.fanout, rest: base.rest },
    reports: parseLoadReports(list(argv.report), 'capacity'),
    outDir: base.outDir,
    github: base.github,
  };
}

const verdictOf = (s: { held: boolean }): string => (s.held ? 'held' : 'failed');

/** Runs the search, writes its reports, returns the exit code. */
export async function runCapacityCommand(
  inv: CapacityInvocation,
  io: { out(text: string): void; err(text: string): void; env?: KeyEnvironment },
): Promise<number> {
  const { kind } = inv.options;
  const target = await startLoadTarget({ ...inv.target, needsStream: kind === 'fanout' }, io.env);
  let report: Awaited<ReturnType<typeof runCapacity>>;
  try {
    report = await runCapacity(target, {
      ...inv.options,
      onStep: (s) =>
        io.err(
          `step ${s.index} (${s.phase}) at ${n(s.load, 1)}: p99 ${n(s.latencyP99Ms, 3)} ms, ` +
            `${s.generatorLimits.length ? `generator limit (${s.generatorLimits.join('; ')})` : verdictOf(s)}\n`,
        ),
    });
  } finally {
    await target.close();
  }
  const written = await writeSideReports('capacity', report, inv.reports, {
    outDir: inv.outDir,
    out: io.out,
    github: inv.github,
  });
  for (const f of written) io.out(`wrote ${f}\n`);
  return report.outcome === 'knee' || report.outcome === 'max-held' ? 0 : 1;
}
