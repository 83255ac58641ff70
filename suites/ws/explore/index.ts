/**
 * ws.explore: sequences of commands over several connections of every key, drawn by fast-check
 * from a seed, each step held to the executable model of the spec (src/explore/), a failure shrunk
 * to a short sequence, confirmed by running it again, and written as a replay file. Runs with
 * `--explore BUDGET`, `conform explore` or `conform replay FILE`.
 */
import type { Check, CheckContext } from '../../../src/check.ts';
import type { StatementKey } from '../../../src/statements.ts';
import { drawSequence, type Step } from '../../../src/explore/commands.ts';
import type { Exploration, ExploreFailure, ExploreSettings } from '../../../src/explore/index.ts';
import { REPLAY_FORMAT, REPLAY_VERSION, type ReplayFile } from '../../../src/explore/replay-file.ts';
import { type Numbered, shrink } from '../../../src/explore/shrink.ts';
import { keptPastFrom, mayBreakAgain } from '../../../src/explore/candidates.ts';
import { MODEL_STATEMENTS, TransitionTally } from '../../../src/explore/transitions.ts';
import { EXPLORE_BUDGET_MS, exploreTimeoutMs, shrinkBudgetMs } from '../../../src/timing/index.ts';
import { runSequence, type SequenceRun, settleKey } from './sequence.ts';
import { exploreSetup, type ExploreSetup } from './setup.ts';

/** Where a sequence stands in the run: how many sequences and steps ran before it. */
interface Progress {
  sequences: number;
  steps: number;
  tally: TransitionTally;
  /** When the last run's transcript began, on the stream clock: the report keeps its evidence. */
  lastRunAt: number;
}

/** The settings of a run that asked for nothing: the default budget, a seed drawn now and reported. */
const defaults = (): ExploreSettings => ({ budgetMs: EXPLORE_BUDGET_MS, seed: Math.floor(Math.random() * 2 ** 31) });

const observedOnce = new WeakMap<CheckContext, Set<string>>();
/** Records what the target chose where the spec says "not shown", each choice once per run. */
function observeOnce(ctx: CheckContext, o: { name: string; value: unknown; note: string }): void {
  const seen = observedOnce.get(ctx) ?? new Set<string>();
  observedOnce.set(ctx, seen);
  const id = `${o.name}\n${JSON.stringify(o.value)}`;
  if (seen.has(id)) return;
  seen.add(id);
  ctx.observe(o.name, o.value, o.note);
}

/** Runs `steps` once, counting it in `progress`. */
async function runCounted(
  ctx: CheckContext,
  setup: ExploreSetup,
  progress: Progress,
  source: Parameters<typeof runSequence>[2],
  stopAt: number,
): Promise<SequenceRun> {
  progress.lastRunAt = ctx.stream.now();
  const run = await runSequence(ctx, setup, source, stopAt);
  progress.tally.add(run.model.tally);
  return run;
}

/** Shrinks a failing sequence and builds what the reports show of it and the replay file. */
async function shrunkFailure(
  ctx: CheckContext,
  setup: ExploreSetup,
  settings: ExploreSettings,
  found: SequenceRun & { failure: NonNullable<SequenceRun['failure']> },
  where: { sequence: number; stepsBefore: number; progress: Progress },
): Promise<ExploreFailure> {
  const deadline = ctx.stream.now() + (settings.shrinkMs ?? shrinkBudgetMs(settings.budgetMs));
  const runs = new Map<readonly Numbered[], SequenceRun>();
  // A failure of an allowance leaves the key's slots as the target holds them: each attempt starts
  // once they are free again.
  const failing = found.steps.find((s) => s.n === found.failure.point.at)?.step;
  const allowanceKey = failing?.op === 'open' ? failing.key : undefined;
  const pastFrom = keptPastFrom(setup.model, found.steps, found.failure.point.at);
  // The longest attempt so far: an attempt starts only while one more of that length and the
  // confirming run still fit before the deadline.
  let longest = 0;
  const shrunk = await shrink(found.steps, found.failure.point, {
    run: async (candidate) => {
      const t0 = ctx.stream.now();
      if (allowanceKey) await settleKey(ctx, setup, allowanceKey, deadline);
      const run = await runCounted(ctx, setup, where.progress, { steps: candidate }, Number.POSITIVE_INFINITY);
      runs.set(candidate, run);
      longest = Math.max(longest, ctx.stream.now() - t0);
      return run.failure?.point;
    },
    timeLeft: () => ctx.stream.now() + 2 * longest < deadline,
    possible: mayBreakAgain(setup.model, found.failure.violation, found.steps),
    ...(allowanceKey ? { sliceOnly: true } : {}),
    ...(pastFrom === undefined ? {} : { pastFrom }),
  });
  const last = runs.get(shrunk.steps);
  const shown = last?.failure ? last : found;
  const v = shown.failure!.violation;
  const steps: Step[] = shrunk.steps.map((s) => s.step);
  // Numbered from 1 in the shrunk sequence, as the replay file holds it.
  const position = new Map(shrunk.steps.map((s, i) => [s.n, i + 1]));
  const transcript = shown.lines.flatMap((l) => {
    const n = Number(/^(\d+)\. /.exec(l)?.[1]);
    return position.has(n) ? [l.replace(/^\d+\. /, `${position.get(n)}. `)] : [];
  });
  transcript.push(
    `FAIL at step ${position.get(v.at) ?? '?'} (${v.transition}): expected ${v.expected}; received ${v.received}`,
  );
  const replay: ReplayFile = {
    format: REPLAY_FORMAT,
    version: REPLAY_VERSION,
    seed: settings.seed,
    sequence: where.sequence,
    target: { rest: ctx.profile.rest, ...(ctx.profile.ws ? { ws: ctx.profile.ws } : {}) },
    steps,
    failure: {
      step: shrunk.steps.findIndex((s) => s.n === shrunk.failure.at),
      transition: v.transition,
      rule: v.rule,
      expected: v.expected,
      received: v.received,
    },
    transcript,
  };
  return {
    sequence: where.sequence,
    stepsToCatch: where.stepsBefore + found.steps.length,
    foundSteps: found.steps.length,
    shrunkSteps: shrunk.steps.length,
    shrinkRuns: shrunk.runs,
    confirmed: shrunk.confirmed,
    transition: v.transition,
    rule: v.rule,
    expected: v.expected,
    received: v.received,
    transcript,
    replay,
  };
}

/** Explores until the budget is spent or a sequence fails (then shrinks it). */
async function explore(ctx: CheckContext, setup: ExploreSetup, settings: ExploreSettings, progress: Progress) {
  const stopAt = ctx.stream.now() + settings.budgetMs;
  const most = settings.maxSequences ?? Number.POSITIVE_INFINITY;
  for (let n = 0; ctx.stream.now() < stopAt && n < most; n++) {
    const run = await runCounted(ctx, setup, progress, { commands: drawSequence(settings.seed, n) }, stopAt);
    const stepsBefore = progress.steps;
    progress.sequences++;
    progress.steps += run.steps.length;
    ctx.note(`sequence ${n}: ${run.lines.length} steps`);
    for (const l of run.lines) ctx.note(l);
    for (const o of run.model.observed) observeOnce(ctx, o);
    if (run.failure)
      return shrunkFailure(
        ctx,
        setup,
        settings,
        { ...run, failure: run.failure },
        { sequence: n, stepsBefore, progress },
      );
  }
  return undefined;
}

/** Runs a replay file's steps once; its failure reproduced is the target's failure again. */
async function replay(ctx: CheckContext, setup: ExploreSetup, file: ReplayFile, progress: Progress) {
  const steps = file.steps.map((step, n) => ({ n, step }));
  const run = await runCounted(ctx, setup, progress, { steps }, Number.POSITIVE_INFINITY);
  progress.sequences = 1;
  progress.steps = run.steps.length;
  for (const l of run.lines) ctx.note(l);
  return run;
}

export const exploreCheck: Check = {
  id: 'ws.explore',
  enforces: MODEL_STATEMENTS,
  // Each shows only after earlier steps on the same connection or key: no scripted check meets it.
  catches: [
    'subscribe-replace-drops-kept',
    'unsubscribe-stops-all',
    'pong-stops-when-subscribed',
    'refused-attempt-holds-slot',
    'subscribe-third-extends',
    'resubscribe-after-unsubscribe-silent',
    'unsubscribe-restores-replaced',
    'limit-counts-earlier-pairs',
  ],
  clause: {
    section: 'States and transitions',
    rule: 'every sequence of opens, closes, subscribes, unsubscribes and pings follows what the spec states',
  },
  title:
    'runs sequences of opens, closes, subscribes (overlapping, unknown, refused, at and over the limit), ' +
    'unsubscribes, pings and idles over several connections of every key, drawn from a seed',
  expectation:
    "every step is answered as the spec's model allows: notices (method, message, code, id echoed), pushes " +
    'only and always for the subscribed pairs, Pong! for every ping, the allowance, the keep-alive window',
  severity: 'must',
  tags: ['ws', 'session', 'explore'],
  needs: ['ws'],
  timeoutMs: (_p, w) => exploreTimeoutMs(EXPLORE_BUDGET_MS, w),
  async run(ctx) {
    const settings = ctx.explore ?? defaults();
    ctx.extendTimeLimit?.(
      Math.max(0, exploreTimeoutMs(settings.budgetMs, ctx.waits) - exploreTimeoutMs(EXPLORE_BUDGET_MS, ctx.waits)),
    );
    const setup = await exploreSetup(ctx);
    const progress: Progress = { sequences: 0, steps: 0, tally: new TransitionTally(), lastRunAt: ctx.stream.now() };
    const base = { seed: settings.seed, budgetMs: settings.budgetMs };
    if (settings.replay) {
      const run = await replay(ctx, setup, settings.replay, progress);
      const reproduced = run.failure !== undefined;
      const e: Exploration = { mode: 'replay', ...base, ...counts(progress), reproduced };
      ctx.explored?.(e, progress.tally.judgedStatements(), progress.lastRunAt);
      // The model names the statement each failing step breaks: the verdict is that rule's.
      if (run.failure) {
        const v = run.failure.violation;
        ctx.fail({ received: v.received, expected: v.expected, rule: v.rule });
      }
      return;
    }
    ctx.note(`exploring for ${settings.budgetMs} ms from seed ${settings.seed}`);
    const failure = await explore(ctx, setup, settings, progress);
    const e: Exploration = { mode: 'explore', ...base, ...counts(progress), ...(failure ? { failure } : {}) };
    ctx.explored?.(e, progress.tally.judgedStatements(), progress.lastRunAt);
    if (failure)
      ctx.fail({
        received:
          `${failure.received} ` + `(step ${failure.replay.failure.step + 1} of a sequence of ${failure.shrunkSteps})`,
        expected: failure.expected,
        rule: failure.rule as StatementKey,
      });
    if (progress.steps === 0) ctx.skip('no sequence ran a step within the budget');
  },
};

const counts = (p: Progress) => ({ sequences: p.sequences, steps: p.steps, transitions: p.tally.list() });
