/**
 * The mutation driver: the reference service's faults are the harness's own test. For every fault,
 * the whole suite runs against the reference service with that fault on; a fault is caught
 * when at least one check fails, and exact when the failing checks are the fault's catches (the
 * checks that name it in their `catches`) and no check errored. Here, in one place: one run
 * (`runSuite`), the judging, the dialects that mask or widen a fault and why, the scores, and
 * the plan of each tier's sweep. `npm run mutation` (scripts/mutation.ts) and the sweep
 * (test/ci/sweeps/suite-runs.test.ts) both use it; test/helpers/sweep.ts runs the runs.
 */
import { coveringSeeds, drawDialect, startReferenceServer, type Dialect } from '../../reference/index.ts';
import { REST_PAIR_DENIALS } from '../../src/spec.ts';
import { mulberry32 } from '../../src/random.ts';
import type { SweepJob } from './sweep.ts';
import { FAULT_AREAS, FAULTS as REFERENCE_FAULTS, type Fault, type ScoreArea } from '../../reference/faults/index.ts';
import { withCatches } from '../../src/matrix.ts';
import { RUN_DEFAULTS, runChecks, selectChecks } from '../../src/runner.ts';
import { streamFactoryFor } from '../../src/transports/stream-factory.ts';
import type { Check, CheckResult } from '../../src/check.ts';
import { CHECKS } from '../../suites/index.ts';
import type { ExploreSettings } from '../../src/explore/index.ts';

/**
 * A fault's record (reference/faults/) as the driver reads it, with the checks that must fail
 * when it is on.
 */
export type FaultEntry = Pick<Fault, 'name' | 'area' | 'rule' | 'maskedBy' | 'widenedBy'> & {
  readonly catches: readonly string[];
  /** Checks that may also fail under a dialect that widens the fault (their `catchesUnderDialects` name it). */
  readonly widenedCatches?: readonly string[];
};

/** The reference's faults, each with its catches (and those a dialect may widen them by) gathered from the registry. */
export const FAULTS: readonly FaultEntry[] = withCatches(REFERENCE_FAULTS, CHECKS).map((f) => ({
  ...f,
  widenedCatches: CHECKS.filter((c) => c.catchesUnderDialects?.includes(f.name)).map((c) => c.id),
}));

/** Settings of a mutation run; each default is in MUTATION_DEFAULTS. */
export interface MutationSettings {
  /** Keep-alive window of every server (ms); declared in its profile, so checks wait this long. */
  pingTimeoutMs: number;
  /** Slack after the window before a close counts as late (profile timing.pingGraceMs). */
  pingGraceMs: number;
  /** Push interval of every server (ms) that runs no dialect (a dialect sets its own). */
  tickMs: number;
  /** Checks in flight at once within one suite run. */
  checkConcurrency: number;
  /** Per-check timeout (ms) unless the check sets its own. */
  checkTimeoutMs: number;
  /** Stream transport of the reference server and the checks' sessions. */
  transport: 'ws' | 'socketio';
  /** The conforming dialect the server speaks around the fault; default the reference's own. */
  dialect?: Dialect;
  /**
   * Leave out of the profile what the reference states of its timing (push interval, first push,
   * reply, slot release): the run then waits as for a target that states nothing.
   */
  unstatedTiming?: boolean;
  /** The explorer's budget and seed, when the run includes ws.explore. */
  explore?: ExploreSettings;
}

/** Event name of the Socket.IO runs (the spec does not show one). */
export const SOCKETIO_EVENT = 'price';

/**
 * Defaults: a 2 s window with 2 s grace keeps keep-alive checks near 5 s and still far above the
 * ticks and timer noise of a loaded 2-core machine; within a run, checks go at the CLI's
 * concurrency (more gains no time on two cores and makes connection-limit measurements see more
 * closes by other checks). How many runs go at once is the sweep's (test/helpers/sweep.ts).
 */
export const MUTATION_DEFAULTS: Readonly<MutationSettings> = Object.freeze({
  pingTimeoutMs: 2000,
  pingGraceMs: 2000,
  tickMs: 50,
  checkConcurrency: RUN_DEFAULTS.concurrency,
  checkTimeoutMs: 20_000,
  transport: 'ws',
});

/** The checks a mutation run executes: the default suite (disruptive checks are left out, as in a plain run). */
export const mutationChecks = (registry: readonly Check[] = CHECKS): Check[] => selectChecks(registry);

/**
 * The explorer in a sweep's runs: one fixed seed and a fixed number of its sequences, so that the
 * same faults are caught on a loaded machine as on an idle one (the budget only bounds a hang), and
 * no shrinking (a sweep asks whether a fault is caught, not for its shortest replay).
 */
export const MUTATION_EXPLORE: Readonly<ExploreSettings> = Object.freeze({
  budgetMs: 120_000,
  // A seed whose sequences met every sequence fault in a sweep of seeds 1 to 20 (npm run explore-sweep).
  seed: 20,
  maxSequences: 12,
  shrinkMs: 0,
});

/** The explorer's check (ws.explore), run on a server of its own beside the scripted suite. */
const EXPLORER = CHECKS.find((c) => c.id === 'ws.explore')!;

/** Whether a fault's catches name the explorer: its runs then run the explorer too. */
export const explorerCatches = (fault: string | undefined): boolean =>
  fault !== undefined && (FAULTS.find((f) => f.name === fault)?.catches.includes(EXPLORER.id) ?? false);

/**
 * One suite run against a reference server (clean when `fault` is undefined). The explorer runs on
 * a second server with the same fault, after the scripted checks, when `settings.explore` asks for
 * it or the fault's catches name it: its frozen keys and its sequences then touch no scripted check.
 */
export async function runSuite(
  fault: string | undefined,
  settings: Partial<MutationSettings> = {},
  checks: readonly Check[] = mutationChecks(),
): Promise<CheckResult[]> {
  const explore = settings.explore ?? (explorerCatches(fault) ? MUTATION_EXPLORE : undefined);
  const scripted = checks.length ? await runOnServer(fault, settings, checks) : [];
  if (!explore || checks.some((c) => c.id === EXPLORER.id)) return scripted;
  return [...scripted, ...(await runOnServer(fault, { ...settings, explore }, [EXPLORER]))];
}

/** One run of `checks` against a reference server of its own. */
async function runOnServer(
  fault: string | undefined,
  settings: Partial<MutationSettings>,
  checks: readonly Check[],
): Promise<CheckResult[]> {
  const s = { ...MUTATION_DEFAULTS, ...settings };
  // transport/event are additive options of startReferenceServer; a server that ignores
  // them would run the checks over the raw WebSocket, so the profile is checked below.
  const options: Parameters<typeof startReferenceServer>[0] & { transport?: string; event?: string } = {
    // A dialect brings its own push cadence; only the ping window is shortened under it.
    pingTimeoutMs: s.pingTimeoutMs,
    ...(s.dialect ? { dialect: s.dialect } : { tickMs: s.tickMs }),
    ...(fault === undefined ? {} : { fault }),
    ...(s.transport === 'socketio' ? { transport: 'socketio', event: SOCKETIO_EVENT } : {}),
  };
  const server = await startReferenceServer(options);
  try {
    if ((server.profile.transport ?? 'ws') !== s.transport)
      throw new Error(
        `the reference service did not start a ${s.transport} stream (its profile ` +
          `says ${server.profile.transport ?? 'ws'})`,
      );
    // The profile declares the short window; the grace is ours, since the spec shows none.
    const stated = s.unstatedTiming ? {} : server.profile.timing;
    const profile = {
      ...server.profile,
      timing: { ...stated, pingTimeoutMs: s.pingTimeoutMs, pingGraceMs: s.pingGraceMs },
    };
    const { results } = await runChecks({
      profile,
      checks,
      createStream: streamFactoryFor(profile),
      settings: {
        concurrency: s.checkConcurrency,
        timeoutMs: s.checkTimeoutMs,
        ...(s.explore ? { explore: s.explore } : {}),
      },
    });
    return results;
  } finally {
    await server.close();
  }
}

/** What one fault did to the suite. */
export interface FaultOutcome {
  fault: FaultEntry;
  /** Ids that ended in `fail`, sorted. */
  failing: string[];
  /** Ids that ended in `error`, with the reason. */
  errors: { id: string; reason: string }[];
  /** Ids of `catches` that did not fail. */
  missed: string[];
  /** Failing ids that `catches` does not name. */
  extra: string[];
  /** At least one check failed. */
  caught: boolean;
  /** The failing set equals `catches` and nothing errored. */
  exact: boolean;
  durationMs: number;
  results: CheckResult[];
}

/** Compares a run's results with what the fault's entry promises. */
export function judgeFault(fault: FaultEntry, results: readonly CheckResult[], durationMs = 0): FaultOutcome {
  const failing = results
    .filter((r) => r.outcome === 'fail')
    .map((r) => r.id)
    .sort();
  const errors = results
    .filter((r) => r.outcome === 'error')
    .map((r) => ({ id: r.id, reason: `${r.errorCode ?? ''} ${r.reason ?? ''}`.trim() }));
  const missed = fault.catches.filter((id) => !failing.includes(id));
  // One rule, one verdict (src/ownership.ts): a check that met the fault's broken frames without
  // owning the rule cites them and does not fail, so every failure outside the catches is extra.
  const extra = failing.filter((id) => !fault.catches.includes(id));
  return {
    fault,
    failing,
    errors,
    missed,
    extra,
    caught: failing.length > 0,
    exact: missed.length === 0 && extra.length === 0 && errors.length === 0,
    durationMs,
    results: [...results],
  };
}

// ---------------------------------------------------------------------------------------------
// Faults under dialects: a fault must be caught whatever legitimate choices surround it.

/** Dialects each fault runs under besides the default one. */
export const DIALECTS_PER_FAULT = 2;

/**
 * Whether a widened catch is in effect under `d`: the probe of a pair denial is the one a dialect
 * that answers every refused pair with that denial sends a refused pair to; the probes of the other
 * denials ask for what they always ask for.
 */
function probesThisDialect(id: string, d: Dialect): boolean {
  const denial = REST_PAIR_DENIALS.find((s) => id === `rest.probe.${s}`);
  return denial === undefined || denial === d.rest.denial;
}

/**
 * A fault as judged under a dialect: its catches, and its widened catches when its record's
 * `widenedBy` gives a reason under that dialect (legitimate choices that carry the broken frame
 * where more checks look).
 */
export function underDialect<F extends FaultEntry>(fault: F, d: Dialect): F {
  const more = (fault.widenedBy?.(d) === undefined ? [] : (fault.widenedCatches ?? [])).filter(
    (id) => !fault.catches.includes(id) && probesThisDialect(id, d),
  );
  return more.length ? { ...fault, catches: [...fault.catches, ...more] } : fault;
}

/**
 * The seeds a fault runs under: the first DIALECTS_PER_FAULT of `pool` (rotated by the fault's
 * index, so faults spread over it) that do not mask it (its record's `maskedBy`: under such a
 * dialect the fault's rule cannot be broken or cannot be seen).
 */
export function dialectSeedsFor(
  fault: FaultEntry,
  index: number,
  seeds: readonly number[],
  draw: (seed: number) => Dialect,
): number[] {
  const out: number[] = [];
  for (let i = 0; i < seeds.length && out.length < DIALECTS_PER_FAULT; i++) {
    const seed = seeds[(index + i) % seeds.length]!;
    if (!fault.maskedBy?.(draw(seed))) out.push(seed);
  }
  return out;
}

/** A fault's outcome under one dialect. */
export interface DialectFaultOutcome extends FaultOutcome {
  seed: number;
}

/**
 * A fault under a dialect passes when it is caught, nothing errors and nothing fails beyond its
 * catches (an extra failure is a false failure under that dialect). A catch that does not fail is
 * allowed: the dialect may leave that one check nothing to see (a catalogue too small for 101 pairs).
 */
export const dialectOk = (o: FaultOutcome): boolean => o.caught && o.errors.length === 0 && o.extra.length === 0;

/** The score of the faults under dialects, one line. */
export function formatDialectScore(outcomes: readonly DialectFaultOutcome[]): string {
  const faults = new Set(outcomes.map((o) => o.fault.name)).size;
  return (
    `mutation score (dialects): ${outcomes.filter((o) => o.caught).length}/${outcomes.length} fault runs ` +
    `caught (${faults} faults × up to ${DIALECTS_PER_FAULT} dialects), ${outcomes.filter(dialectOk).length}` +
    ` with no error and no failure beyond the catches, ${outcomes.filter((o) => o.exact).length} exact`
  );
}

/**
 * One line per fault run under a dialect that is not ok: what failed beyond the catches, what
 * errored, or that nothing failed.
 */
export function dialectDisagreementLines(outcomes: readonly DialectFaultOutcome[]): string[] {
  return outcomes
    .filter((o) => !dialectOk(o))
    .map((o) => {
      const parts = [
        `${o.fault.name} under dialect seed ${o.seed}: ${o.caught ? `failing [${list(o.failing)}]` : 'NOT CAUGHT'}`,
      ];
      if (o.extra.length) parts.push(`extra [${o.extra.map((id) => `${id}: ${firstWhy(o, id)}`).join('; ')}]`);
      if (o.errors.length) parts.push(`errors [${o.errors.map((e) => `${e.id}: ${e.reason}`).join('; ')}]`);
      return parts.join('; ');
    });
}

const firstWhy = (o: FaultOutcome, id: string): string => {
  const r = o.results.find((x) => x.id === id);
  const v = r?.violations[0];
  return (v ? `${v.received} / expected ${v.expected}` : `${r?.outcome ?? 'absent'} ${r?.reason ?? ''}`)
    .replace(/\s+/g, ' ')
    .slice(0, 200);
};

/** Faults that a stream check must catch: the ones worth repeating over another stream transport. */
export const streamFaults = (faults: readonly FaultEntry[] = FAULTS): FaultEntry[] =>
  faults.filter((f) => f.catches.some((id) => id.startsWith('ws.')));

/** Areas of the score breakdown, in print order: as the fault areas (reference/faults/) first name them. */
export const SCORE_AREAS: readonly ScoreArea[] = [...new Set(Object.values(FAULT_AREAS))];

/** Score area of a fault. */
export const scoreArea = (fault: Pick<FaultEntry, 'area'>): ScoreArea => FAULT_AREAS[fault.area];

const list = (ids: readonly string[]): string => (ids.length ? ids.join(', ') : '-');

/** One line per fault that is not exact: what it promised and what failed. */
export function disagreementLines(outcomes: readonly FaultOutcome[]): string[] {
  return outcomes
    .filter((o) => !o.exact)
    .map((o) => {
      const parts = [`${o.fault.name}: expected [${list(o.fault.catches)}], failing [${list(o.failing)}]`];
      if (o.missed.length) parts.push(`missed [${list(o.missed)}]`);
      if (o.extra.length) parts.push(`extra [${list(o.extra)}]`);
      if (o.errors.length) parts.push(`errors [${o.errors.map((e) => `${e.id}: ${e.reason}`).join('; ')}]`);
      return parts.join('; ');
    });
}

/** For each fault that is not exact, why each extra or missed check ended as it did (first violation or reason). */
export function explainLines(outcomes: readonly FaultOutcome[]): string[] {
  const out: string[] = [];
  for (const o of outcomes.filter((x) => !x.exact)) {
    out.push(`${o.fault.name} (${o.fault.rule}): expected [${list(o.fault.catches)}]`);
    for (const id of [...o.extra, ...o.missed, ...o.errors.map((e) => e.id)]) {
      const r = o.results.find((x) => x.id === id);
      const v = r?.violations[0];
      const why = v ? `${v.received} / expected ${v.expected}` : `${r?.errorCode ?? ''} ${r?.reason ?? ''}`.trim();
      const kind = o.extra.includes(id) ? 'extra' : o.missed.includes(id) ? 'missed' : 'error';
      out.push(`  ${kind} ${id} (${r?.outcome ?? 'absent'}): ${why.replace(/\s+/g, ' ').slice(0, 300)}`);
    }
  }
  return out;
}

/** The disagreements as Markdown (for `--markdown FILE`): one section per fault that is not exact. */
export function disagreementMarkdown(outcomes: readonly FaultOutcome[]): string {
  const out: string[] = [];
  for (const o of outcomes.filter((x) => !x.exact)) {
    out.push(
      `### ${o.fault.name}`,
      '',
      `- rule: ${o.fault.rule}`,
      `- expected (catches): ${list(o.fault.catches)}`,
      `- actually failing: ${list(o.failing)}`,
    );
    if (o.missed.length) out.push(`- missed: ${list(o.missed)}`);
    if (o.extra.length) out.push(`- extra: ${list(o.extra)}`);
    for (const e of o.errors) out.push(`- error: ${e.id}: ${e.reason}`);
    for (const id of [...o.extra, ...o.missed]) {
      const r = o.results.find((x) => x.id === id);
      const v = r?.violations[0];
      const why = v ? `${v.received} / expected ${v.expected}` : `${r?.outcome ?? 'absent'} ${r?.reason ?? ''}`;
      out.push(`  - ${id}: ${why.replace(/\s+/g, ' ').slice(0, 240)}`);
    }
    out.push('');
  }
  return out.join('\n');
}

/**
 * The score: one line per area (caught and exact out of its faults), then
 * `mutation score: CAUGHT/TOTAL faults caught` as the last line.
 */
export function formatScore(outcomes: readonly FaultOutcome[]): string {
  const areas = SCORE_AREAS;
  const w = Math.max(...areas.map((a) => a.length));
  const lines = [
    "mutation score by area (caught: >= 1 check fails; exact: the failing checks are the fault's catches, no error):",
  ];
  for (const area of areas) {
    const of = outcomes.filter((o) => scoreArea(o.fault) === area);
    lines.push(
      `  ${area.padEnd(w)}  ${String(of.filter((o) => o.caught).length).padStart(3)}` +
        `/${String(of.length).padEnd(3)} ` +
        `caught  ${String(of.filter((o) => o.exact).length).padStart(3)}/${of.length} exact`,
    );
  }
  const caught = outcomes.filter((o) => o.caught).length;
  const exact = outcomes.filter((o) => o.exact).length;
  lines.push(`exact: ${exact}/${outcomes.length} faults fail exactly their catches with no error`);
  lines.push(`mutation score: ${caught}/${outcomes.length} faults caught`);
  return lines.join('\n');
}

/** The score of the stream faults over a second transport, one line (printed above the main score). */
export function formatTransportScore(outcomes: readonly FaultOutcome[], transport: string): string {
  return (
    `mutation score (${transport}): ${outcomes.filter((o) => o.caught).length}/${outcomes.length} ` +
    `stream faults caught, ${outcomes.filter((o) => o.exact).length} exact`
  );
}

/** Failing and erroring checks of a clean run, one line each (empty when clean). */
export function cleanProblems(results: readonly CheckResult[]): string[] {
  return results
    .filter((r) => r.outcome === 'fail' || r.outcome === 'error')
    .map(
      (r) =>
        `${r.id}: ${r.outcome}${r.reason ? ` (${r.errorCode ?? ''} ${r.reason})` : ''}` +
        `${r.violations.map((v) => ` ${v.received} / expected ${v.expected}`).join(';')}`,
    );
}

// ---------------------------------------------------------------------------------------------
// The sweeps: which suite runs each tier makes. One list, read by the tests and the scripts.

/** `test:ci` checks every fault once; `test:full` checks every fault under every dialect it is run under. */
export type SweepTier = 'ci' | 'full';

/** The role of a run in a sweep, for the tests that judge it. */
export type SweepRole = 'clean' | 'fault' | 'fault-dialect' | 'dialect';

/** A run of a sweep and why it is there. */
export type PlannedRun = SweepJob & { role: SweepRole };

/** Clean runs in a row per transport: a clean pass must not be a fluke of timing. */
export const CLEAN_RUNS = 3;
/** Fault runs under dialects that `test:ci` draws, anew for every commit. */
export const CI_DIALECT_SAMPLE = 24;
/** Random dialects `test:full` runs beside the covering ones, on each transport. */
export const FULL_RANDOM_DIALECTS = 3;

/**
 * A fault's run judged: under a dialect, by its catches as that dialect widens them
 * (`underDialect`).
 */
export function judgeRun(run: SweepJob, results: readonly CheckResult[], durationMs = 0): FaultOutcome {
  const fault = FAULTS.find((f) => f.name === run.fault)!;
  const judged = run.seed === undefined ? fault : underDialect(fault, drawDialect(run.seed));
  return judgeFault(judged, results, durationMs);
}

/**
 * The runs on the default dialect: every fault over the raw WebSocket, the faults a stream check
 * catches again over Socket.IO, and the clean service CLEAN_RUNS times on each transport.
 */
export function defaultDialectRuns(faults: readonly FaultEntry[] = FAULTS): PlannedRun[] {
  return [
    ...faults.map((f) => ({ fault: f.name, transport: 'ws' as const, role: 'fault' as const })),
    ...streamFaults(faults).map((f) => ({ fault: f.name, transport: 'socketio' as const, role: 'fault' as const })),
    ...(['ws', 'socketio'] as const).flatMap((transport) =>
      Array.from({ length: CLEAN_RUNS }, () => ({ transport, role: 'clean' as const })),
    ),
  ];
}

/** Every fault under each of its dialects (DIALECTS_PER_FAULT that do not mask it). */
export function faultDialectRuns(faults: readonly FaultEntry[] = FAULTS): PlannedRun[] {
  const seeds = coveringSeeds();
  return faults.flatMap((fault) =>
    dialectSeedsFor(
      fault,
      FAULTS.findIndex((f) => f.name === fault.name),
      seeds,
      drawDialect,
    ).map((seed) => ({ fault: fault.name, transport: 'ws' as const, seed, role: 'fault-dialect' as const })),
  );
}

/** `n` of `items`, drawn without repeats by a PRNG seeded with `seed` (so a sample can be replayed). */
export function sample<T>(items: readonly T[], n: number, seed: number): T[] {
  const random = mulberry32(seed);
  const rest = [...items];
  const out: T[] = [];
  while (out.length < n && rest.length > 0) out.push(rest.splice(Math.floor(random() * rest.length), 1)[0]!);
  return out;
}

/**
 * The runs of a tier. Both: clean runs and every fault over the raw WebSocket, the faults a stream
 * check catches again over Socket.IO, and the covering dialect seeds (every value of every option)
 * clean over both transports. `ci` adds CI_DIALECT_SAMPLE fault runs under dialects drawn with
 * `sampleSeed`; `full` adds every fault under each of its dialects and `randomDialects` clean.
 */
export function planSweep(tier: SweepTier, sampleSeed: number, randomDialects: readonly number[] = []): PlannedRun[] {
  const transports = ['ws', 'socketio'] as const;
  const covering = coveringSeeds();
  const underDialects = faultDialectRuns();
  // The runs under dialects first: they take the longest (a minute or more, where a default run
  // takes seconds), and a sweep that starts them last waits for its slowest run at the end.
  return [
    ...(tier === 'ci' ? sample(underDialects, CI_DIALECT_SAMPLE, sampleSeed) : underDialects),
    ...transports.flatMap((transport) => covering.map((seed) => ({ transport, seed, role: 'dialect' as const }))),
    ...(tier === 'full'
      ? randomDialects.map((seed, i) => ({ transport: transports[i % 2]!, seed, role: 'dialect' as const }))
      : []),
    ...defaultDialectRuns(),
  ];
}

/** The sample `test:ci` runs when no seed is given. */
export const CI_SAMPLE_SEED = 1;

/**
 * The seed of `test:ci`'s dialect sample: CONFORM_SWEEP_SEED when set (to replay or explore), else
 * CI_SAMPLE_SEED. A fixed sample keeps the gate reproducible: a commit that changes no check and no
 * fault cannot turn it red; `test:full` (nightly) runs every fault under each of its dialects.
 */
export function sweepSeed(env = process.env.CONFORM_SWEEP_SEED): number {
  return env !== undefined && /^\d+$/.test(env) ? Number(env) : CI_SAMPLE_SEED;
}
