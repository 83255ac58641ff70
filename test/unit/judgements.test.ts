/**
 * The judge is auditable: every place a check can fail names a stated rule of the spec, each
 * statement has one owner per channel in a run, and docs/judgements.md lists them as the
 * generator writes them.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ENGINE_JUDGEMENTS, failableStatement, judgements } from '../../src/judgements.ts';
import { RuleOwners } from '../../src/ownership.ts';
import { selectChecks } from '../../src/runner.ts';
import { CHECKS } from '../../suites/index.ts';
import { JUDGEMENTS_FILE, judgementsDoc } from '../helpers/judgements-doc.ts';

describe('judgements', () => {
  const run = selectChecks(CHECKS);

  it('names for every place a must check can fail a statement the spec states and a check can see', () => {
    const rows = judgements(run);
    expect(rows.length).toBeGreaterThan(run.filter((c) => c.severity === 'must').length);
    for (const j of rows) expect(failableStatement(j.statement), `${j.check} ${j.statement}`).toBeDefined();
    for (const e of ENGINE_JUDGEMENTS)
      for (const key of e.statements) expect(failableStatement(key), `${e.where} ${key}`).toBeDefined();
  });

  it('gives each statement one owner per channel, the check that names it earliest', () => {
    const owners = new RuleOwners(run);
    const seen = new Set<string>();
    for (const o of owners.list()) {
      expect(seen.has(`${o.channel} ${o.rule}`)).toBe(false);
      seen.add(`${o.channel} ${o.rule}`);
    }
    expect(owners.ownerOf('field:price:price', 'rest')).toBe('rest.price.mid');
    expect(owners.ownerOf('field:push:price', 'stream')).toBe('ws.push.mid');
    expect(owners.ownerOf('limit:connections-per-key', 'stream')).toBe('ws.limits.connections.slot-freed');
    // An observation owns nothing: it never fails.
    expect(owners.ownerOf('rule:price:client-checks-status', 'rest')).toBeUndefined();
  });

  it('docs/judgements.md is what npm run gen:judgements writes', async () => {
    expect(await readFile(JUDGEMENTS_FILE, 'utf8')).toBe(judgementsDoc());
  });
});
