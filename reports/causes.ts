/**
 * Failures grouped by the rule they broke. However many checks met one fault of the target, it
 * breaks one rule of the spec, which fails its owner once per channel (src/ownership.ts) while the
 * other checks cite it; the reports lead with the broken rules, the checks that failed on each and
 * those that also saw it, as a compiler prints the first error and the notes under it. Presentation
 * only: every failure is still reported in full.
 */
import type { CheckResult, Evidence } from '../src/check.ts';
import { brokenRules, type BrokenRule } from '../src/summary.ts';

/** One broken rule: the statement, the checks that failed on it and those that only met it. */
export type Cause = BrokenRule;

/**
 * The violation a received text states, with what varies from check to check left out: the last
 * `: `-separated part that reads as a sentence (the checks put where they saw it in front), values
 * as `…`.
 */
export function causeOf(received: string): string {
  const parts = received.split(': ').filter((p) => /[a-z]{3}/i.test(p.replace(/\{.*\}|"[^"]*"/g, '')));
  const statement = parts.at(-1) ?? received;
  return statement
    .replace(/\{.*\}|\[.*\]/g, '…')
    .replace(/"[^"]*"|'[^']*'/g, '…')
    .replace(/-?\d+(\.\d+)?(e[+-]?\d+)?/gi, '…')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The rules the run's failed checks broke, each once, the most checks first. */
export function causesOf(results: readonly CheckResult[]): Cause[] {
  return brokenRules(results);
}

const some = (ids: readonly string[]): string =>
  ids.length <= 3 ? ids.join(', ') : `${ids.slice(0, 3).join(', ')}, … (${ids.length})`;

/** `1 check`, `2 checks`. */
const checks = (n: number): string => `${n} ${n === 1 ? 'check' : 'checks'}`;

/** How one broken rule reads: `field:price:price (The mid-price, a decimal string.)`. */
export const causeName = (c: Cause): string => `${c.rule}${c.text ? ` (${c.text})` : ''}`;

/**
 * `1 broken rule: field:price:price (The mid-price…) — failed: rest.price.mid, ws.push.mid; also
 * seen by 12 checks`, or undefined when no check failed on a rule; errors are counted beside it.
 */
export function causesHeadline(results: readonly CheckResult[], causes: readonly Cause[]): string | undefined {
  if (causes.length === 0) return undefined;
  const first = causes[0]!;
  const errors = results.filter((r) => r.outcome === 'error').length;
  return (
    `${causes.length} broken ${causes.length === 1 ? 'rule' : 'rules'}: ${causeName(first)} — failed: ` +
    `${some(first.failed)}${first.alsoSeen.length ? `; also seen by ${checks(first.alsoSeen.length)}` : ''}` +
    `${causes.length > 1 ? `; and ${causes.length - 1} more` : ''}${errors > 0 ? `; ${errors} errors` : ''}`
  );
}

/** The text of one exchange that a violation may quote: URL (decoded), response body, frame data. */
function evidenceText(e: Evidence): string {
  switch (e.kind) {
    case 'http': {
      let url = e.request.url;
      try {
        url = decodeURIComponent(url);
      } catch {
        // a URL that is not valid percent-encoding is searched as it is
      }
      return `${url} ${e.response?.body ?? ''} ${e.error ?? ''}`;
    }
    case 'ws-open':
      return `${e.url} ${e.outcome}`;
    case 'frame':
      return e.data;
    case 'close':
      return e.reason;
    case 'note':
      return e.text;
  }
}

/** Decimal numbers a violation quotes (prices), the most specific thing an exchange is found by. */
const numbersIn = (text: string): string[] => text.match(/-?\d+\.\d+/g) ?? [];
/** Pair codes a violation quotes, for when it quotes no number. */
const pairsIn = (text: string): string[] => text.match(/[A-Za-z]+:[A-Za-z]+:[A-Za-z0-9]+\/[A-Za-z0-9]+/g) ?? [];

/**
 * What set up a stream exchange at `first`: the opening of its connection and the last frame sent
 * before it (the subscribe a push answers). An HTTP exchange sets up nothing: its curl line
 * replays it alone, and a listing before it is unrelated to it.
 */
function setupOf(evidence: readonly Evidence[], first: number): number[] {
  if (evidence[first]?.kind !== 'frame') return [];
  const before = evidence.slice(0, first);
  const open = before.findLastIndex((e) => e.kind === 'ws-open');
  const sent = before.findLastIndex((e) => e.kind === 'frame' && e.direction === 'out');
  return [open, sent].filter((i) => i >= 0);
}

/**
 * The exchanges that show the violations (those holding the prices they quote, else the pairs),
 * and for a stream the frames that set them up; every exchange when none can be told apart. The
 * rest stays in the result's evidence.
 */
export function evidenceShowing(r: CheckResult): Evidence[] {
  const texts = r.evidence.map(evidenceText);
  const received = r.violations.map((v) => v.received).join(' ');
  for (const tokens of [numbersIn(received), pairsIn(received)]) {
    if (tokens.length === 0) continue;
    const keep = new Set<number>();
    texts.forEach((t, i) => {
      if (tokens.some((token) => t.includes(token))) keep.add(i);
    });
    if (keep.size === 0) continue;
    for (const i of setupOf(r.evidence, Math.min(...keep))) keep.add(i);
    return r.evidence.filter((_, i) => keep.has(i));
  }
  return r.evidence;
}
