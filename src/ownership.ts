/**
 * One rule, one verdict. Every violation breaks a statement of the spec (src/statements.ts), and
 * each statement has one owner among the run's checks on each channel, decided from the checks'
 * `enforces` alone, which lists a check's statements in the order it judges them: the check that
 * names the statement earliest in its `enforces` (its own rule, first of all), the first in the
 * registry among equals. A violation fails its owner, however many checks meet it; the others
 * cite it as "also seen" and pass or fail on their own rule. A statement no check of the run
 * enforces on that channel stays with the check that met it: nothing is lost when a run leaves the
 * owner out. Pure but for the ledger's bookkeeping: no socket here.
 */
import type { Channel, Check, CheckResult, JudgedViolation } from './check.ts';
import type { StatementKey } from './statements.ts';

/** The channel a check judges: the stream for checks tagged `ws`, REST otherwise. */
export const channelOf = (check: Pick<Check, 'tags'>): Channel => (check.tags.includes('ws') ? 'stream' : 'rest');

/** A check's own rule: the first statement it enforces, which a violation naming no statement breaks. */
export const ownRule = (check: Pick<Check, 'enforces'>): StatementKey | undefined => check.enforces[0];

/** One statement's owner on one channel. */
export interface Ownership {
  rule: StatementKey;
  channel: Channel;
  owner: string;
}

const slot = (rule: string, channel: Channel): string => `${channel} ${rule}`;

/** The owners of a run's statements, from its checks' `enforces`; only `must` checks own (observations never fail). */
export class RuleOwners {
  private readonly owners = new Map<string, Ownership>();

  /** @param checks The run's checks that run, in registry order. */
  constructor(checks: readonly Pick<Check, 'id' | 'enforces' | 'tags' | 'severity'>[]) {
    const judges = checks.filter((c) => c.severity === 'must');
    const rank = new Map<string, number>();
    for (const c of judges)
      c.enforces.forEach((rule, at) => {
        const channel = channelOf(c);
        const key = slot(rule, channel);
        // Earlier in a check's list wins; among equals, the registry's order.
        if ((rank.get(key) ?? Number.POSITIVE_INFINITY) <= at) return;
        rank.set(key, at);
        this.owners.set(key, { rule, channel, owner: c.id });
      });
  }

  /** The check that owns `rule` on `channel` in this run, or undefined when no check of the run enforces it there. */
  ownerOf(rule: StatementKey, channel: Channel): string | undefined {
    return this.owners.get(slot(rule, channel))?.owner;
  }

  /** Every statement's owners, REST first, in the order they were decided. */
  list(): Ownership[] {
    return [...this.owners.values()].sort((a, b) => (a.channel === b.channel ? 0 : a.channel === 'rest' ? -1 : 1));
  }
}

/**
 * Violations other checks met that one check keeps (a broken push met by every stream check stays
 * cheap); they never crowd out the check's own.
 */
export const MAX_ROUTED = 10;

/** Adds `v` to `into` unless it is there (same statement, text, expectation) or `into` holds enough met elsewhere. */
export function keep(into: JudgedViolation[], v: JudgedViolation): boolean {
  if (v.seenBy !== undefined && into.filter((x) => x.seenBy !== undefined).length >= MAX_ROUTED) return false;
  if (into.some((x) => x.rule === v.rule && x.received === v.received && x.expected === v.expected)) return false;
  into.push(v);
  return true;
}

/**
 * The run's ledger of violations met by checks that do not own them, each delivered to its
 * owner: while the owner runs, into its verdict; before it starts, when it starts; after it
 * ended, as an amendment of its result (`amended` is told), so that the verdict does not depend
 * on which check happened to run first.
 */
export class RuleLedger {
  private readonly running = new Map<string, (v: JudgedViolation) => void>();
  private readonly closing = new Map<string, JudgedViolation[]>();
  private readonly ended = new Map<string, CheckResult>();
  private readonly pending = new Map<string, JudgedViolation[]>();

  constructor(
    readonly owners: RuleOwners,
    private readonly amended: (result: CheckResult, was: CheckResult['outcome']) => void = () => undefined,
  ) {}

  /** A check starts: what is routed to it goes to `receive`; returns what was routed before it started. */
  open(id: string, receive: (v: JudgedViolation) => void): JudgedViolation[] {
    this.running.set(id, receive);
    const before = this.pending.get(id) ?? [];
    this.pending.delete(id);
    return before;
  }

  /** A check's body ended and its verdict is being decided: what comes now waits for its result. */
  close(id: string): void {
    this.running.delete(id);
    this.closing.set(id, this.closing.get(id) ?? []);
  }

  /** A check's result is made, not yet told: what came while it was decided joins it. */
  settle(result: CheckResult): void {
    const late = this.closing.get(result.id) ?? [];
    for (const v of late.splice(0)) failOn(result, v);
  }

  /** A check's result was told (its check-end event): what comes from now on amends it. */
  told(result: CheckResult): void {
    const late = this.closing.get(result.id) ?? [];
    this.closing.delete(result.id);
    this.ended.set(result.id, result);
    for (const v of late) this.amend(result, v);
  }

  private amend(result: CheckResult, v: JudgedViolation): void {
    const was = result.outcome;
    if (failOn(result, v)) this.amended(result, was);
  }

  /** Routes a violation to the check that owns its statement. */
  route(owner: string, v: JudgedViolation): void {
    const receive = this.running.get(owner);
    if (receive) return receive(v);
    const closing = this.closing.get(owner);
    if (closing) {
      keep(closing, v);
      return;
    }
    const result = this.ended.get(owner);
    if (result) return this.amend(result, v);
    const waiting = this.pending.get(owner) ?? [];
    keep(waiting, v);
    this.pending.set(owner, waiting);
  }

  /** The result of a check that never started (bail, stop), with what was routed to it. */
  unstarted(result: CheckResult): CheckResult {
    for (const v of this.pending.get(result.id) ?? []) failOn(result, v);
    this.pending.delete(result.id);
    return result;
  }
}

/**
 * A routed violation joins a result: a violation is a fail, whatever the check made of what it saw
 * itself. Returns whether the result changed.
 */
export function failOn(result: CheckResult, v: JudgedViolation): boolean {
  if (!keep(result.violations, v)) return false;
  if (result.outcome !== 'fail') {
    result.outcome = 'fail';
    delete result.reason;
    delete result.errorCode;
    delete result.nothingToJudge;
  }
  return true;
}
