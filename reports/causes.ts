/**
 * Failures grouped by cause. When several checks fail on the same violation (one fault of the
 * target seen through many checks), the reports lead with the cause and list the checks under it,
 * as a compiler prints the first error and the notes under it. Presentation only: no verdict
 * changes, every failure is still reported in full.
 */
import type { CheckResult, Evidence } from '../src/check.ts';

/** One cause and the checks that failed on it. */
export interface Cause {
  /** The violation with the values that vary (numbers, JSON, quoted text) shown as `…`. */
  cause: string;
  /** One violation as received, for a reader who wants the values. */
  example: string;
  /** The checks, in run order. */
  ids: string[];
}

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

const failed = (r: CheckResult): boolean => r.outcome === 'fail';

/**
 * The causes shared by at least two failed checks, most checks first. A check whose violations
 * have several causes is listed under the one that covers the most checks.
 */
export function causesOf(results: readonly CheckResult[]): Cause[] {
  const byCause = new Map<string, { example: string; ids: Set<string> }>();
  for (const r of results.filter(failed))
    for (const v of r.violations) {
      const key = causeOf(v.received);
      const entry = byCause.get(key) ?? { example: v.received, ids: new Set<string>() };
      entry.ids.add(r.id);
      byCause.set(key, entry);
    }
  const ranked = [...byCause].sort((a, b) => b[1].ids.size - a[1].ids.size);
  const placed = new Set<string>();
  const causes: Cause[] = [];
  for (const [cause, { example, ids }] of ranked) {
    const mine = [...ids].filter((id) => !placed.has(id));
    if (mine.length < 2) continue;
    for (const id of mine) placed.add(id);
    causes.push({ cause, example, ids: results.filter((r) => mine.includes(r.id)).map((r) => r.id) });
  }
  return causes;
}

/** `12 checks, 1 cause: price … is not the mid … of ask and bid (rest.price.mid, …)`, or undefined. */
export function causesHeadline(results: readonly CheckResult[], causes: readonly Cause[]): string | undefined {
  if (causes.length === 0) return undefined;
  const grouped = causes.reduce((n, c) => n + c.ids.length, 0);
  const first = causes[0]!;
  const ids = first.ids.length <= 3 ? first.ids.join(', ') : `${first.ids.slice(0, 3).join(', ')}, …`;
  const others = results.filter(failed).length - grouped;
  return (
    `${grouped} checks, ${causes.length} ${causes.length === 1 ? 'cause' : 'causes'}: ${first.cause} (${ids})` +
    `${causes.length > 1 ? `; and ${causes.length - 1} more` : ''}${others > 0 ? `; ${others} other failures` : ''}`
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
