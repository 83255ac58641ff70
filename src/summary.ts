/**
 * What a run comes to, from its results alone: the counts, the coverage, the rules the target
 * broke (each counted once, however many checks met it), and the verdict. Pure: results in,
 * figures out.
 */
import type { CheckResult, Outcome } from './check.ts';
import { coverage, type Coverage } from './coverage.ts';
import { NetworkError } from './errors.ts';
import { ruleOf, statement, type StatementKey } from './statements.ts';

/**
 * `pass` when no check failed or errored and the coverage reached its minimum, if one was set;
 * `inconclusive` when nothing failed and every error was the network's (a connection refused or
 * reset after the retries): the run could not judge, and the target is not to blame; `fail`
 * otherwise.
 */
export type RunVerdict = 'pass' | 'fail' | 'inconclusive';

/** One rule of the spec the target broke, as every report counts it. */
export interface BrokenRule {
  /** The statement (src/statements.ts), the first of its pair when it is stated on both channels. */
  rule: StatementKey;
  /** The statement's text; absent for a key that names none (a check enforcing nothing). */
  text?: string;
  /** The statements of the rule that failed (one per channel at most). */
  statements: StatementKey[];
  /** The checks that failed on it: its owners. */
  failed: string[];
  /** Checks that met it and cited it, without failing on it. */
  alsoSeen: string[];
  /** One violation as received, for a reader who wants the values. */
  example: string;
}

/** Counts of a run. */
export interface RunSummary {
  total: number;
  pass: number;
  fail: number;
  skip: number;
  error: number;
  /** Observations recorded across every check. */
  observations: number;
  durationMs: number;
  /** How many must checks ran, the skip reasons grouped, what the target gave nothing of. */
  coverage: Coverage;
  /** The rules the target broke, each once, the most checks first. */
  broken: BrokenRule[];
  /** Of `durationMs`, the time during which requests waited on the target's rate limit (pace, Retry-After). */
  rateWaitMs?: number;
  /**
   * When checks ran past their time limits because the target's REST answers came slowly: how
   * many, how much their limits grew for those answers in all, and the run's slowest answer.
   */
  slowAnswers?: { slowestMs: number; lengthenedMs: number; checks: number };
  verdict: RunVerdict;
  /** For an inconclusive run: what kept it from a verdict (`network`). */
  inconclusive?: string[];
}

/** The rules failed checks broke, each once: their owners, and the checks that cited them. */
export function brokenRules(results: readonly CheckResult[]): BrokenRule[] {
  const byRule = new Map<string, BrokenRule>();
  for (const r of results.filter((x) => x.outcome === 'fail'))
    for (const v of r.violations) {
      if (v.rule === undefined) continue;
      const rule = ruleOf(v.rule);
      const text = statement(rule)?.statement;
      const entry = byRule.get(rule) ?? {
        rule,
        ...(text ? { text } : {}),
        statements: [],
        failed: [],
        alsoSeen: [],
        example: v.received,
      };
      if (!entry.statements.includes(v.rule)) entry.statements.push(v.rule);
      if (!entry.failed.includes(r.id)) entry.failed.push(r.id);
      byRule.set(rule, entry);
    }
  for (const r of results)
    for (const seen of r.alsoSeen ?? []) {
      const entry = seen.rule ? byRule.get(ruleOf(seen.rule)) : undefined;
      if (entry && !entry.failed.includes(r.id) && !entry.alsoSeen.includes(r.id)) entry.alsoSeen.push(r.id);
    }
  return [...byRule.values()].sort((a, b) => b.failed.length + b.alsoSeen.length - a.failed.length - a.alsoSeen.length);
}

/** Counts, coverage, broken rules and verdict of results; `minCoverage`: the rule figure's minimum (coverage.ts). */
export function summarize(results: readonly CheckResult[], durationMs: number, minCoverage?: number): RunSummary {
  const count = (o: Outcome): number => results.filter((r) => r.outcome === o).length;
  const s = {
    total: results.length,
    pass: count('pass'),
    fail: count('fail'),
    skip: count('skip'),
    error: count('error'),
  };
  const cov = coverage(results, minCoverage);
  const network = results.filter((r) => r.outcome === 'error' && r.errorCode === NetworkError.code).length;
  const onlyNetwork = s.fail === 0 && s.error > 0 && network === s.error && cov.met !== false;
  const verdict: RunVerdict = onlyNetwork
    ? 'inconclusive'
    : s.fail + s.error > 0 || cov.met === false
      ? 'fail'
      : 'pass';
  return {
    ...s,
    observations: results.reduce((n, r) => n + r.observations.length, 0),
    durationMs,
    coverage: cov,
    broken: brokenRules(results),
    verdict,
    ...(onlyNetwork ? { inconclusive: ['network'] } : {}),
  };
}
