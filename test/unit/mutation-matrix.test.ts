/**
 * The traceability matrix is complete and current: every row of every table of the spec, every
 * status number and notice code of src/spec.ts and every limit has a statement with a check or a
 * stated reason (and probe); the rows are derived from the checks (src/matrix.ts and reference/faults/
 * write no check id), every statement a check enforces and every fault a check catches exists, every
 * check is traced; docs/COVERAGE.md is what scripts/gen-coverage.ts would write (test/helpers/coverage-doc.ts).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FAULTS } from '../../reference/faults/index.ts';
import { buildMatrix, faultCatches, uncovered } from '../../src/matrix.ts';
import { SPEC_STATEMENTS, SPEC_TABLES } from '../../src/statements.ts';
import { formatMatrix } from '../../reports/matrix.ts';
import { LIMITS, NOTICE_CODES, REST_STATUSES } from '../../src/spec.ts';
import { CHECKS } from '../../suites/index.ts';
import { COVERAGE_FILE, coverageMarkdown } from '../helpers/coverage-doc.ts';
import { specHeadings, specText, tableAfter, withSpec } from '../helpers/spec-doc.ts';

const strip = (cell: string): string => cell.replace(/`/g, '').trim();
const matrix = buildMatrix(CHECKS, FAULTS);
const rowsOf = (section: string): string[] =>
  matrix.rows.filter((r) => r.section === section && r.kind !== 'rule').map((r) => r.item);

/** The items of a spec table as the matrix names them: the first cell; for the transition table, state / trigger. */
function specItems(heading: string): string[] {
  const level = specText().includes(`\n### ${heading}\n`) ? '###' : '##';
  const rows = tableAfter(`${level} ${heading}\n`);
  return rows.map((r) =>
    heading.startsWith('Subscription on one') ? `${strip(r[0]!)} / ${strip(r[1]!)}` : strip(r[0]!),
  );
}

describe('the traceability matrix', () => {
  withSpec.each(SPEC_TABLES.map((t) => [t]))(
    'has one statement per row of the spec table "%s", and none that the table lacks',
    (heading) => {
      const items = specItems(heading);
      expect(items.length).toBeGreaterThan(0);
      expect([...rowsOf(heading)].sort()).toEqual([...items].sort());
    },
  );

  withSpec('covers every table of the spec that lists fields, parameters, codes, limits, transitions or events', () => {
    // Any table the spec grows must be added to SPEC_TABLES (or this list of tables it does not cover).
    const tables = specText()
      .split('\n')
      .reduce<{ heading: string; tables: string[] }>(
        (acc, line) => {
          if (/^#{2,4} /.test(line)) acc.heading = line.replace(/^#+ /, '').trim();
          else if (line.startsWith('|') && !acc.tables.includes(acc.heading)) acc.tables.push(acc.heading);
          return acc;
        },
        { heading: '', tables: [] },
      ).tables;
    expect([...tables].sort()).toEqual([...SPEC_TABLES].sort());
  });

  it('has a statement for every status number and notice code of src/spec.ts', () => {
    expect(
      matrix.rows
        .filter((r) => r.kind === 'status')
        .map((r) => r.item)
        .sort(),
    ).toEqual([...REST_STATUSES].sort());
    expect(
      matrix.rows
        .filter((r) => r.kind === 'notice')
        .map((r) => r.item)
        .sort(),
    ).toEqual([...NOTICE_CODES].sort());
  });

  it('traces every limit of src/spec.ts to a limit statement with a must check', () => {
    const rowOf: Record<keyof typeof LIMITS, string> = {
      maxPairsPerSubscribe: 'Pairs per connection',
      pingTimeoutMs: 'Ping interval',
      defaultPage: 'page default',
      defaultPerPage: 'per_page default',
    };
    for (const [limit, item] of Object.entries(rowOf)) {
      const row = matrix.rows.find((r) => r.kind === 'limit' && r.item === item);
      expect(row, `${limit} has no limit statement`).toBeDefined();
      expect(row!.statement).toContain(
        String(limit === 'pingTimeoutMs' ? LIMITS.pingTimeoutMs / 1000 : LIMITS[limit as keyof typeof LIMITS]),
      );
      expect(
        CHECKS.filter((c) => row!.checkIds.includes(c.id) && c.severity === 'must').length,
        `${limit}: no must check`,
      ).toBeGreaterThan(0);
    }
  });

  it('gives every statement a check, or why it cannot be checked from outside and the probe that would', () => {
    expect(uncovered(matrix).map((r) => r.key)).toEqual([]);
    for (const r of matrix.rows.filter((x) => x.outside)) {
      expect(r.outside!.reason.length, r.key).toBeGreaterThan(10);
      expect(r.outside!.probe.length, r.key).toBeGreaterThan(10);
    }
  });

  it('states why, for every status number or notice code that only a profile probe (or nothing) can provoke', () => {
    const probeOnly = matrix.rows.filter(
      (x) => (x.kind === 'status' || x.kind === 'notice') && x.checkIds.every((id) => id.startsWith('rest.probe.')),
    );
    // Some codes only a profile probe can provoke: the rule has rows to hold for.
    expect(probeOnly.length).toBeGreaterThan(0);
    for (const r of probeOnly)
      expect(r.outside, `${r.key} is reachable only through a probe but says not why`).toBeDefined();
  });

  it('names a must check for every status number, notice code, field, limit and transition without a reason', () => {
    for (const r of matrix.rows.filter(
      (x) => ['status', 'notice', 'field', 'limit', 'transition'].includes(x.kind) && !x.outside,
    )) {
      expect(
        CHECKS.some((c) => r.checkIds.includes(c.id) && c.severity === 'must'),
        `${r.key} has only observations`,
      ).toBe(true);
    }
  });

  it('derives its rows from the checks: every statement a check enforces exists, and every check is traced', () => {
    const keys = new Set<string>(SPEC_STATEMENTS.map((st) => st.key));
    for (const c of CHECKS) {
      expect(c.enforces.length, `${c.id} enforces no statement`).toBeGreaterThan(0);
      for (const key of c.enforces) expect(keys.has(key), `${c.id} enforces unknown ${key}`).toBe(true);
    }
    for (const r of matrix.rows)
      expect(r.checkIds).toEqual(CHECKS.filter((c) => c.enforces.includes(r.key)).map((c) => c.id));
    expect(matrix.untraced).toEqual([]);
  });

  it('is derived: no check id (nor a family prefix of ids) is written in src/matrix.ts or reference/faults/', () => {
    expect(CHECKS.every((c) => /^(rest|ws)\./.test(c.id))).toBe(true);
    // A quote (or backtick) opening something shaped like a check id, up to a closing quote or a `${`.
    const quotedId = /['"`](rest|ws)\.[a-z0-9.-]+(?=['"`]|\$\{)/g;
    const faultFiles = readdirSync(new URL('../../reference/faults/', import.meta.url)).map(
      (f) => `../../reference/faults/${f}`,
    );
    expect(faultFiles).toContain('../../reference/faults/index.ts');
    for (const file of ['../../src/matrix.ts', ...faultFiles]) {
      const text = readFileSync(new URL(file, import.meta.url), 'utf8');
      expect(text.match(quotedId) ?? [], file).toEqual([]);
      for (const c of CHECKS) for (const q of ["'", '"', '`']) expect(text, file).not.toContain(`${q}${c.id}${q}`);
    }
  });

  withSpec('keys statements uniquely and places each under a heading of the spec', () => {
    const keys = SPEC_STATEMENTS.map((r) => r.key);
    expect(new Set(keys).size).toBe(keys.length);
    const headings = specHeadings();
    for (const r of SPEC_STATEMENTS) expect(headings, r.key).toContain(r.section);
  });

  it("lists the faults that exercise a statement's checks", () => {
    const row = matrix.rows.find((r) => r.kind === 'transition' && r.item === 'subscribed / subscribe')!;
    expect(row.checkIds).toEqual(['ws.subscribe.replaces', 'ws.explore']);
    expect(row.faults).toEqual(
      FAULTS.filter((f) => faultCatches(CHECKS, f.name).some((id) => row.checkIds.includes(id))).map((f) => f.name),
    );
    expect(row.faults).toContain('subscribe-extends');
    expect(row.faults).toContain('subscribe-replace-drops-kept');
  });

  it('prints every statement, its checks and its reason in the terminal form', () => {
    const text = formatMatrix(matrix);
    for (const r of matrix.rows) expect(text).toContain(`${r.item} — ${r.statement}`);
    expect(text).toContain('outside: gRPC is an internal backend');
    expect(text).toMatch(/statements: \d+ with checks, \d+ with a reason .* 0 with neither/);
  });
});

describe('docs/COVERAGE.md', () => {
  it('is what npm run gen:coverage writes (regenerate it when checks, faults or statements change)', () => {
    expect(readFileSync(COVERAGE_FILE, 'utf8')).toBe(coverageMarkdown());
  });
});

describe('the expectations of the faults', () => {
  const names = new Set(FAULTS.map((f) => f.name));

  it('name only faults of reference/faults/, in the catches of checks of the registry', () => {
    for (const c of CHECKS)
      for (const name of c.catches ?? []) expect(names.has(name), `${c.id} catches unknown fault ${name}`).toBe(true);
  });

  it.each(FAULTS.map((f) => [f.name, f] as const))(
    '%s resolves to checks of the registry, and one of them enforces a statement it breaks',
    (name, f) => {
      const catches = faultCatches(CHECKS, name);
      expect(catches.length, `no check catches ${name}`).toBeGreaterThan(0);
      const enforcing = CHECKS.filter((c) => catches.includes(c.id) && c.enforces.some((k) => f.breaks.includes(k)));
      // One rule, one verdict: a fault fails the owners of the statements it breaks, wherever it is met.
      expect(enforcing.length, `${name} is caught only by checks of other statements`).toBeGreaterThan(0);
    },
  );
});
