/**
 * Every place a check can fail, with the statement of the spec it breaks: a check's own judgement
 * (its first statement, src/ownership.ts), the statements it owns in a run and so fails on
 * wherever another check meets them, and the engine's own findings, which fail the owner of
 * theirs. A reviewer reads the strictness of the whole judge here (docs/judgements.md, generated
 * by `npm run gen:judgements`). Pure: checks in, rows out.
 */
import type { Channel, Check } from './check.ts';
import { channelOf, ownRule, RuleOwners } from './ownership.ts';
import { OBSERVED_ONLY, SPEC_STATEMENTS, type SpecStatement, type StatementKey } from './statements.ts';

/** One place a check can fail. */
export interface Judgement {
  check: string;
  channel: Channel;
  /** `own`: the check's own judgement; `owner`: a violation of the statement any check meets. */
  kind: 'own' | 'owner';
  statement: StatementKey;
  /** What the check expects (its expectation), or for `owner` what brings the violation to it. */
  expects: string;
}

/** A finding of the engine, whichever check it happens in: which statements it breaks. */
export interface EngineJudgement {
  where: string;
  what: string;
  statements: readonly StatementKey[];
}

/**
 * The engine's findings: each fails the check that owns its statement in the run, and the check
 * whose exchange showed it only cites it.
 */
export const ENGINE_JUDGEMENTS: readonly EngineJudgement[] = [
  {
    where: 'src/push-inspection.ts',
    what:
      'every push frame any check receives, held to the push-frame schema (a field of the frame; a price ' +
      'value that is no decimal string; a status_number after connecting) and to the mid-price',
    statements: [
      'field:push:code',
      'field:push:ask',
      'field:push:bid',
      'field:push:last_updated',
      'field:push:sent_at',
      'rule:service:decimal-strings',
      'rule:handshake:no-status-after-connect',
      'field:push:price',
    ],
  },
  {
    where: 'src/schema-rules.ts',
    what:
      'a schema error of any message a check validates: the field of its table at the error, a price ' +
      'value that is no decimal string, a status_number after connecting, a code in a handshake refusal',
    statements: [],
  },
  {
    where: 'src/check-loans.ts',
    what:
      'a connection within its key\u2019s allowance refused with 50009 for the whole release wait: the slot of a ' +
      'closed connection was never freed (every later open of the key ends not judged)',
    statements: ['limit:connections-per-key'],
  },
  {
    where: 'suites/rest/support.ts',
    what:
      'a REST answer a check needed: a page of GET /v1/pairs that is no list of pairs, a status_number of the ' +
      'right value written as a number, the primary key refused as unauthorized',
    statements: ['status:200', 'field:envelope:status_number', 'rule:auth:header'],
  },
];

/** The statement a failing verdict may name: one of the spec's stated rules, one a service can break. */
export function failableStatement(key: string | undefined): SpecStatement | undefined {
  const st = SPEC_STATEMENTS.find((s) => s.key === key);
  return st && !OBSERVED_ONLY.has(st.key) ? st : undefined;
}

const SIDE: Record<Channel, string> = { rest: 'REST', stream: 'stream' };

/** Every place each `must` check of `checks` can fail, in registry order, its own judgement first. */
export function judgements(checks: readonly Check[]): Judgement[] {
  const owners = new RuleOwners(checks);
  const rows: Judgement[] = [];
  for (const c of checks.filter((x) => x.severity === 'must')) {
    const channel = channelOf(c);
    const own = ownRule(c);
    if (own) rows.push({ check: c.id, channel, kind: 'own', statement: own, expects: c.expectation });
    // A statement nothing can break brings no violation to its owner.
    for (const o of owners.list())
      if (o.owner === c.id && o.rule !== own && failableStatement(o.rule))
        rows.push({
          check: c.id,
          channel: o.channel,
          kind: 'owner',
          statement: o.rule,
          expects: `a violation of it that any check of the run meets on the ${SIDE[o.channel]} side`,
        });
  }
  return rows;
}
