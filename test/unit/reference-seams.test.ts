import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FAULT_NAMES } from '../../reference/faults/index.ts';
import { FAULT_EFFECTS, faultSeams } from '../../reference/fault-effects.ts';
import { CORRECT, deviate, type Seams } from '../../reference/seams.ts';

/** The modules of the correct path: they reach every fault through a seam, never by its name. */
const CORRECT_PATH = ['admission', 'fanout', 'link', 'rest', 'service', 'session', 'stream', 'socketio', 'wire'];

/** Every seam function of a seam set, by its `group.name` (or `group` for a single seam). */
const seamFunctions = (seams: Readonly<Seams>): Map<string, unknown> =>
  new Map(
    Object.entries(seams).flatMap(([group, seam]) =>
      typeof seam === 'function'
        ? [[group, seam] as [string, unknown]]
        : Object.entries(seam as object).map(([name, f]) => [`${group}.${name}`, f] as [string, unknown]),
    ),
  );

describe('reference seams', () => {
  it('a service without a fault runs the correct seams, and each returns what it was given', () => {
    expect(faultSeams(undefined)).toBe(CORRECT);
    const given = { status: '50004', data: null };
    expect(CORRECT.envelope.answer(given as never, {} as never)).toBe(given);
    expect(CORRECT.notice(given, {} as never)).toBe(given);
    expect(CORRECT.push.variant({ resubscribed: true })).toBeUndefined();
  });

  it('every fault changes at least one seam and leaves the others correct', () => {
    const correct = seamFunctions(CORRECT);
    for (const name of FAULT_NAMES) {
      const seams = seamFunctions(faultSeams(name));
      expect([...seams.keys()], name).toEqual([...correct.keys()]);
      const changed = [...seams].filter(([seam, f]) => f !== correct.get(seam)).map(([seam]) => seam);
      expect(changed.length, `${name} changes no seam`).toBeGreaterThan(0);
      const declared = Object.entries(FAULT_EFFECTS[name]).flatMap(([group, seam]) =>
        typeof seam === 'function' ? [group] : Object.keys(seam as object).map((n) => `${group}.${n}`),
      );
      expect(changed.sort(), name).toEqual(declared.sort());
    }
  });

  it('a deviation replaces only the seams it names', () => {
    const notice = (): undefined => undefined;
    const seams = deviate({ notice, admission: { slot: (slot) => ({ ...slot, allowance: 0 }) } });
    expect(seams.notice).toBe(notice);
    expect(seams.admission.caller).toBe(CORRECT.admission.caller);
    expect(
      seams.admission.slot({ countKey: 'k', allowance: 3, freed: true, refusalHoldsMs: 0 }, {} as never).allowance,
    ).toBe(0);
    expect(seams.push).toEqual(CORRECT.push);
  });

  it('the correct path names no fault: each fault is reached only through its seams', () => {
    for (const module of CORRECT_PATH) {
      const source = readFileSync(new URL(`../../reference/${module}.ts`, import.meta.url), 'utf8');
      const named = FAULT_NAMES.filter((name) => source.includes(`'${name}'`));
      expect(named, `reference/${module}.ts`).toEqual([]);
    }
  });
});
