import { describe, expect, it } from 'vitest';
import { CHECKS } from '../../suites/index.ts';
import { restChecks } from '../../suites/rest/index.ts';
import { TAGS } from '../../src/check.ts';
import { specHeadings, withSpec } from '../helpers/spec-doc.ts';

describe('the registry', () => {
  it('holds every REST check once, and every id is unique', () => {
    const ids = CHECKS.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of restChecks) expect(ids).toContain(c.id);
  });

  withSpec("names a heading of the spec as every check's clause section", () => {
    const headings = new Set(specHeadings());
    const unresolved = CHECKS.filter((c) => !headings.has(c.clause.section)).map((c) => `${c.id}: ${c.clause.section}`);
    expect(unresolved).toEqual([]);
  });

  it('gives every check a dotted id, a rule, a title, an expectation and known tags', () => {
    for (const c of CHECKS) {
      expect(c.id).toMatch(/^(rest|ws)\.[a-z0-9-]+(\.[a-z0-9-]+)*$/);
      expect(c.clause.rule.length).toBeGreaterThan(3);
      expect(c.title.length).toBeGreaterThan(3);
      expect(c.expectation.length).toBeGreaterThan(3);
      for (const t of c.tags) expect(TAGS).toContain(t);
    }
  });

  it('marks the planned REST observations observe and everything else of REST must', () => {
    for (const c of restChecks) expect(c.severity).toBe(c.id.startsWith('rest.observe.') ? 'observe' : 'must');
  });
});
