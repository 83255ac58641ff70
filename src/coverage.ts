/**
 * Honest coverage of a run. First the spec's stated rules (src/statements.ts): each is checked (a
 * check enforcing it ran and decided, pass or fail), partly checked (the check said `ctx.partly`),
 * or not checked, with why and what would make it checkable; rules reachable only through a state
 * the target's operator stages are counted apart. Then the checks: how many `must` checks ran,
 * the skip reasons grouped, and whether the target gave the harness anything to judge at all.
 * Every report states these figures, and a minimum of the rule figure turns low coverage into a
 * failed verdict. Pure: results in, figures out.
 */
import type { CheckResult, Evidence } from './check.ts';
import { OBSERVED_ONLY, SPEC_STATEMENTS, type SpecStatement } from './statements.ts';

/**
 * What a target can leave the harness without: checks that skip for one of these say so
 * (`ctx.skip(reason, NOTHING_TO_JUDGE.…)`), and reports show it prominently.
 */
export const NOTHING_TO_JUDGE = {
  pricedPair: 'no priced pair',
  livePair: 'no live pair',
  /** What the check needed came back breaking another check's rule (that check fails on it). */
  brokenAnswer: 'an answer that breaks a rule another check judges',
  /** The target never freed a slot of the key the check needed (ws.limits.connections.slot-freed fails on it). */
  connection: 'no connection: the target keeps the slots of closed connections',
} as const;

/** Skipped must checks that share one reason. */
export interface SkipGroup {
  reason: string;
  ids: string[];
}

/**
 * Why a rule was not checked: the profile lacks another `key`, the `stream` or another `profile`
 * entry; it needs an `operator` state; its checks `errored`, passed with nothing judged
 * (`vacuous`), or `skipped` for another reason; or `no-check` of the run enforces it.
 */
export type UncheckedKind = 'key' | 'stream' | 'profile' | 'operator' | 'errored' | 'vacuous' | 'skipped' | 'no-check';

/** One stated rule of the spec and what the run made of it. */
export interface RuleStatus {
  /** The statement's key (src/statements.ts). */
  key: string;
  /** `Section: item`, as the matrix names it. */
  name: string;
  state: 'checked' | 'partly' | 'unchecked';
  /** The run's checks that enforce it. */
  checks: string[];
  /** For an unchecked rule: the kind of why. */
  kind?: UncheckedKind;
  /** What kept it from being checked (or, partly, what was left unjudged), one line. */
  reason?: string;
  /** What would make it checkable: the key, profile entry, probe or state to add. */
  unlock?: string;
  /** In a few words, what it needs: the keys, the profile entries, the operator state. */
  need?: string;
}

/** The rule figure of a run; counts are of statements. */
export interface RuleCoverage {
  /** Stated rules of the spec. */
  total: number;
  /** Rules checked, partly checked ones included. */
  checked: number;
  /** Of `checked`, those checked only in part. */
  partly: number;
  /** The rules not checked, by kind (what a user can add first); each with what they need counted. */
  unchecked: { kind: UncheckedKind; count: number; what: { label: string; count: number }[] }[];
  /** Rules that need no operator-staged state: what the minimum is judged on. */
  gateTotal: number;
  /** Of those, the checked ones (partly checked included). */
  gateChecked: number;
  /** gateChecked / gateTotal in percent, rounded down to one decimal (100 when gateTotal is 0). */
  percent: number;
  /** Every rule, in the matrix's order. */
  rules: RuleStatus[];
}

export interface Coverage {
  /** The spec's stated rules the run checked. */
  rules: RuleCoverage;
  /** Must checks selected for the run. */
  mustTotal: number;
  /** Must checks that ran to a verdict (pass, fail or error). */
  mustRan: number;
  mustSkipped: number;
  /** mustRan / mustTotal in percent, rounded down to one decimal (100 when no must check was selected). */
  mustPercent: number;
  /** The skipped must checks by reason, the largest group first. */
  skipped: SkipGroup[];
  /** What the target gave nothing of, with the checks (any severity) that skipped for it. */
  nothingToJudge: { what: string; ids: string[] }[];
  /**
   * The minimum percentage of the rules that need no operator state (`--min-coverage`, profile
   * `minCoverage`), when one was asked for.
   */
  minimum?: number;
  /** Whether the run reached `minimum`; absent without one. */
  met?: boolean;
}

/** Rounded down to one decimal; 100 of nothing. */
const percentOf = (part: number, whole: number): number => (whole === 0 ? 100 : Math.floor((part * 1000) / whole) / 10);

/**
 * Whether a transcript holds an answer of the target: a response, a frame received, a handshake's
 * outcome, a close by the server. A pass without one judged nothing of the target.
 */
const answered = (e: Evidence): boolean =>
  (e.kind === 'http' && e.response !== undefined) ||
  (e.kind === 'frame' && e.direction === 'in') ||
  e.kind === 'ws-open' ||
  (e.kind === 'close' && e.by === 'server');

/** Whether a result decided its rules: it passed on an answer of the target, or it failed. */
export const decided = (r: CheckResult): boolean =>
  r.outcome === 'fail' || (r.outcome === 'pass' && r.evidence.some(answered));

/** The kinds in the order reports list them: what a user can add first, then what went wrong. */
const LABEL_OF_KIND: Record<UncheckedKind, string> = {
  key: 'need another key',
  stream: 'need the stream',
  profile: 'need a profile entry',
  operator: 'need an operator state',
  skipped: 'skipped',
  'no-check': 'have no check in this run',
  errored: 'errored',
  vacuous: 'passed with nothing judged',
};
const KIND_ORDER = Object.keys(LABEL_OF_KIND);
/** How a group of unchecked rules reads: `10 need another key`. */
export const uncheckedLabel = (kind: UncheckedKind): string => LABEL_OF_KIND[kind];

/** Whether a result said it did not judge `key` at all this run. */
const leftOut = (r: CheckResult, key: string): boolean => r.unjudged?.statements.includes(key as never) ?? false;

/**
 * What the run made of one statement, from the results of the `must` checks that enforce it: an
 * observation never credits a rule a service can break (only one that states nothing to break, which
 * observing is all a run can do of), and neither does a check that said it did not judge it.
 */
function ruleStatus(st: SpecStatement, results: readonly CheckResult[]): RuleStatus {
  const enforcing = results.filter((r) => r.enforces?.includes(st.key));
  const base = { key: st.key, name: `${st.section}: ${st.item}`, checks: enforcing.map((r) => r.id) };
  const mine = OBSERVED_ONLY.has(st.key) ? enforcing : enforcing.filter((r) => r.severity === 'must');
  const judged = mine.filter((r) => decided(r) && !leftOut(r, st.key));
  const isPartly = (r: CheckResult): boolean =>
    r.partly !== undefined && (r.partly.statements === undefined || r.partly.statements.includes(st.key));
  if (judged.some((r) => !isPartly(r))) return { ...base, state: 'checked' };
  const part = judged.find(isPartly);
  const missing = [...new Set(mine.flatMap((r) => r.missing ?? []))].sort();
  if (part)
    // What the skipped checks of the rule lack would judge the rest of it.
    return {
      ...base,
      state: 'partly',
      reason: `${part.id}: ${part.partly!.reason}`,
      ...(missing.length ? { unlock: missing.join(' and ') } : {}),
    };
  const unchecked = (kind: UncheckedKind, reason: string, unlock?: string, need?: string): RuleStatus => ({
    ...base,
    state: 'unchecked',
    kind,
    reason,
    ...(unlock ? { unlock } : {}),
    ...(need ? { need } : {}),
  });
  if (st.operatorState)
    return unchecked(
      'operator',
      `reached only through ${st.operatorState}`,
      st.outside?.probe ?? st.operatorState,
      st.operatorState,
    );
  if (missing.includes('ws'))
    return unchecked('stream', 'the profile has no ws URL', 'the stream URL (--ws, or ws in the profile)', 'ws');
  const keys = missing.filter((m) => m.startsWith('keys.'));
  if (keys.length) return unchecked('key', `profile has no ${keys.join(', ')}`, keys.join(' and '), keys.join(' and '));
  if (missing.length)
    return unchecked('profile', `profile has no ${missing.join(', ')}`, missing.join(' and '), missing.join(' and '));
  const errored = mine.find((r) => r.outcome === 'error');
  if (errored) return unchecked('errored', `${errored.id}: ${errored.errorCode ?? 'error'}`);
  const unprovoked = mine.find((r) => leftOut(r, st.key));
  if (unprovoked) return unchecked('skipped', `${unprovoked.id}: ${unprovoked.unjudged!.reason}`, st.outside?.probe);
  const vacuous = mine.find((r) => r.outcome === 'pass');
  if (vacuous) return unchecked('vacuous', `${vacuous.id} passed without an answer of the target to judge`);
  const skipped = mine.find((r) => r.outcome === 'skip');
  if (skipped) return unchecked('skipped', `${skipped.id}: ${skipped.reason ?? 'skipped'}`, st.outside?.probe);
  return st.outside
    ? unchecked('no-check', st.outside.reason, st.outside.probe)
    : unchecked('no-check', 'no check of this run enforces it');
}

/** The groups of unchecked rules: by kind, in KIND_ORDER, each with what they need counted. */
function uncheckedGroups(rules: readonly RuleStatus[]): RuleCoverage['unchecked'] {
  const byKind = grouped(rules.flatMap((r) => (r.kind ? [{ key: r.kind, id: r.need ?? '' }] : [])));
  return byKind
    .map(({ key, ids }) => ({
      kind: key,
      count: ids.length,
      what: grouped(ids.map((label) => ({ key: label, id: label }))).map((g) => ({
        label: g.key,
        count: g.ids.length,
      })),
    }))
    .sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind));
}

/** The rule figure of a run's results against the spec's statements. */
export function ruleCoverage(
  results: readonly CheckResult[],
  statements: readonly SpecStatement[] = SPEC_STATEMENTS,
): RuleCoverage {
  const rules = statements.map((st) => ruleStatus(st, results));
  const counted = (rs: readonly RuleStatus[]): number => rs.filter((r) => r.state !== 'unchecked').length;
  const gate = rules.filter((_, i) => !statements[i]!.operatorState);
  return {
    total: rules.length,
    checked: counted(rules),
    partly: rules.filter((r) => r.state === 'partly').length,
    unchecked: uncheckedGroups(rules),
    gateTotal: gate.length,
    gateChecked: counted(gate),
    percent: percentOf(counted(gate), gate.length),
    rules,
  };
}

function grouped<T extends string>(items: readonly { key: T; id: string }[]): { key: T; ids: string[] }[] {
  const groups = new Map<T, string[]>();
  for (const { key, id } of items) groups.set(key, [...(groups.get(key) ?? []), id]);
  return [...groups].map(([key, ids]) => ({ key, ids })).sort((a, b) => b.ids.length - a.ids.length);
}

/**
 * The coverage of a run's results, judged against `minimum` (a percentage of the rules that need
 * no operator state) when given.
 */
export function coverage(
  results: readonly CheckResult[],
  minimum?: number,
  statements: readonly SpecStatement[] = SPEC_STATEMENTS,
): Coverage {
  const must = results.filter((r) => r.severity === 'must');
  const skipped = must.filter((r) => r.outcome === 'skip');
  const mustRan = must.length - skipped.length;
  const rules = ruleCoverage(results, statements);
  const c: Coverage = {
    rules,
    mustTotal: must.length,
    mustRan,
    mustSkipped: skipped.length,
    mustPercent: percentOf(mustRan, must.length),
    skipped: grouped(skipped.map((r) => ({ key: r.reason ?? 'no reason given', id: r.id }))).map((g) => ({
      reason: g.key,
      ids: g.ids,
    })),
    nothingToJudge: grouped(
      results.flatMap((r) => (r.outcome === 'skip' && r.nothingToJudge ? [{ key: r.nothingToJudge, id: r.id }] : [])),
    ).map((g) => ({ what: g.key, ids: g.ids })),
  };
  if (minimum !== undefined) {
    c.minimum = minimum;
    // Compared exactly, not on the rounded percentage.
    c.met = rules.gateTotal === 0 || rules.gateChecked * 100 >= minimum * rules.gateTotal;
  }
  return c;
}
