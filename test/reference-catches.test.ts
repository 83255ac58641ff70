/**
 * The fault catalogue's claims, checked with the harness itself: with each fault on, every check
 * id it names in `catches` fails, and against the clean service the same checks pass. This ties
 * reference/faults.ts to the registry in suites/ (the reference never imports it; this test does).
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { conform } from '../src/conform.ts';
import { OPTION_DEFAULTS } from '../src/options.ts';
import type { CheckResult } from '../src/check.ts';
import { CHECKS } from '../suites/index.ts';
import { FAULTS, type Fault } from '../reference/faults.ts';
import { startReferenceServer } from '../reference/index.ts';

const reportDir = mkdtempSync(join(tmpdir(), 'conform-catches-'));

/** Short keep-alive window so the slow checks take seconds, not minutes. */
const WINDOW = 2000;

async function outcomes(ids: readonly string[], fault: string | undefined): Promise<Map<string, string>> {
  const results: CheckResult[] = [];
  const errors: string[] = [];
  const code = await conform({ ...OPTION_DEFAULTS, only: [...ids], report: ['json'], out: mkdtempSync(join(reportDir, 'run-')) }, CHECKS, {
    out: () => {},
    err: (t) => void errors.push(t),
    tty: false,
    version: 'test',
    startEmbedded: () => startReferenceServer({ fault, pingTimeoutMs: WINDOW }),
    handlers: [{ handle: (e) => void (e.type === 'check-end' && results.push(e.result)) }],
  });
  expect([code, errors.join('')]).toEqual([code === 2 ? 1 : code, '']);
  return new Map(results.map((r) => [r.id, r.outcome]));
}

describe('reference faults are caught by the checks they name', () => {
  it('every named check passes against the clean service', async () => {
    const ids = [...new Set(FAULTS.flatMap((f) => f.catches))];
    const seen = await outcomes(ids, undefined);
    for (const id of ids) expect([id, seen.get(id)]).toEqual([id, 'pass']);
  });

  // Faults run two at a time: most of the time is the keep-alive checks waiting out the window.
  const batches: Fault[][] = [];
  for (let i = 0; i < FAULTS.length; i += 2) batches.push(FAULTS.slice(i, i + 2));
  for (const batch of batches) {
    it(`${batch.map((f) => f.name).join(' and ')} fail exactly the checks they name`, async () => {
      const seen = await Promise.all(batch.map((f) => outcomes(f.catches, f.name)));
      batch.forEach((f, i) => {
        for (const id of f.catches) expect([f.name, id, seen[i]!.get(id)]).toEqual([f.name, id, 'fail']);
      });
    });
  }
});
