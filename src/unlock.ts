/**
 * What would unlock the rules a profile leaves unchecked: each check that cannot run under the
 * profile, grouped by what it lacks (a profile field, or a probe of a status no request of one key
 * provokes), with the spec statements no runnable check enforces. Pure: derived from the checks'
 * `needs` and `enforces` and the matrix, never from a hand-kept list.
 */
import type { Check } from './check.ts';
import { SPEC_STATEMENTS } from './matrix.ts';
import type { Profile } from './profile.ts';
import { profileHas } from './runner.ts';
import { REST_STATUS, type RestStatus } from './spec.ts';

/** The probe checks' id prefix: one check per status, each needing a probe of its status. */
const PROBE_PREFIX = 'rest.probe.';

export interface Unlock {
  /** What the profile lacks: `keys.cryptoOnly`, or `a probe of status 50001 (API maintenance.)`. */
  needs: string;
  /** Checks it would let run. */
  checks: string[];
  /** Statements of the matrix only these checks enforce. */
  rules: string[];
}

/** Why a check cannot run under `profile`, or undefined when it can. */
export function lacking(check: Check, profile: Profile): string | undefined {
  const probe = check.id.startsWith(PROBE_PREFIX);
  // A probe check needs a probe of its own status, which says more than "probes".
  const missing = check.needs.filter((n) => !(probe && n === 'probes') && !profileHas(profile, n));
  if (missing.length > 0) return missing.join(' + ');
  if (probe) {
    const status = check.id.slice(PROBE_PREFIX.length) as RestStatus;
    if (!(profile.probes ?? []).some((p) => p.status === status))
      return `a probe of status ${status} (${REST_STATUS[status] ?? 'unknown'})`;
  }
  return undefined;
}

/** The unlocks of `checks` under `profile`, the ones unlocking most rules first. */
export function unlocks(checks: readonly Check[], profile: Profile): Unlock[] {
  const runnable = checks.filter((c) => lacking(c, profile) === undefined);
  const enforced = new Set(runnable.flatMap((c) => c.enforces as readonly string[]));
  const known = new Set(SPEC_STATEMENTS.map((s) => s.key as string));
  const groups = new Map<string, Check[]>();
  for (const c of checks) {
    const why = lacking(c, profile);
    if (why !== undefined) groups.set(why, [...(groups.get(why) ?? []), c]);
  }
  return [...groups.entries()]
    .map(([needs, cs]) => ({
      needs,
      checks: cs.map((c) => c.id),
      rules: [
        ...new Set(
          cs.flatMap((c) => (c.enforces as readonly string[]).filter((k) => known.has(k) && !enforced.has(k))),
        ),
      ],
    }))
    .sort((a, b) => b.rules.length - a.rules.length || a.needs.localeCompare(b.needs));
}

/** Items of a list shown in a line before the rest is counted. */
const SHOWN = 4;
const some = (items: readonly string[]): string =>
  items.length > SHOWN ? `${items.slice(0, SHOWN).join(', ')}, … ${items.length - SHOWN} more` : items.join(', ');

/**
 * One line per unlock of a rule: `keys.cryptoOnly → 3 rules: a, b, c (x, y)`, long lists cut short.
 * What would only run more checks of rules already checked (a second key for the per-key count)
 * unlocks no rule: it is one closing line, never a `→ 0 rules` among the unlocks.
 */
export function unlockLines(list: readonly Unlock[]): string[] {
  const more = list.filter((u) => u.rules.length === 0);
  return [
    ...list
      .filter((u) => u.rules.length > 0)
      .map(
        (u) =>
          `  ${u.needs} → ${u.rules.length} rule${u.rules.length === 1 ? '' : 's'}: ${some(u.rules)} ` +
          `(${some(u.checks)})`,
      ),
    ...(more.length
      ? [`  and more checks of rules already checked: ${more.map((u) => `${u.needs} (${some(u.checks)})`).join('; ')}`]
      : []),
  ];
}
