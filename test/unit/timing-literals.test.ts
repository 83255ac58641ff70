/**
 * Every wait, window and timeout of a run is written in one place, the timing module (src/timing/):
 * a duration literal anywhere else in src/ or suites/ is listed here as `file:line  text (owner)`.
 *
 * A **duration literal** is a numeric literal, other than 0 and 1 (no wait, and the unit a factor
 * starts from), that is not a factor and that belongs to a duration:
 *
 * - *not a factor*: not an operand of `*`, `/` or `%` whose other operand is something else than a
 *   number (`2 * ms` and `windowMs / 3` scale a duration; `10 * 60_000` is one);
 * - *belongs to a duration* when, walking out from the literal through the expression that holds it
 *   (operators, parentheses, ternaries, array literals, arrow-function bodies and the value-keeping
 *   calls `Math.min`, `max`, `round`, `ceil`, `floor`, `abs`), one of these comes first:
 *   - the call of a timer, whose argument it is: `setTimeout`, `setInterval`, `sleep`, `pause`,
 *     `delay`, `AbortSignal.timeout`, `closeWithin`, `waitFor…`;
 *   - a name given the value (a variable, constant, property, parameter default or assignment,
 *     `name = …` or `name: …`, or a named function that returns it) whose last word says duration:
 *     `…Ms`, `…_MS`, `…Seconds`, `timeout`, `delay`, `interval`, `wait`, `grace`, `window`, `gap`,
 *     `backoff`, `pause`, `hold`, `deadline`, `cooldown`, `ttl`;
 *   - or, in the same expression, a name that says duration that it is compared with, added to or
 *     bounded by (`gapMs > 250`, `Math.max(50, windowMs / 3)`).
 *
 * So counts and limits (`MAX_PAGES = 20`, `awaitPushes(s, p, 3, …)`, `maxPayloadBytes`), close
 * codes, indexes, an argument of any other call, and numbers in strings, templates, regular
 * expressions and comments are not durations.
 *
 * src/spec.ts is left out: it is the one home of the spec's literals, the 30 s keep-alive window
 * among them, and the timing module derives from it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { durationLiterals } from '../helpers/duration-literals.ts';

const ROOT = join(import.meta.dirname, '../..');
const SCANNED = ['src', 'suites'];
/** Where durations belong: the timing module, and the spec's own literals. */
const HOMES = ['src/timing/', 'src/spec.ts'];

const sources = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );

/** `file:line  text` of each duration literal in `text`. */
const listed = (file: string, text: string): string[] =>
  durationLiterals(text).map((d) => `${file}:${d.line}  ${d.text}  (${d.owner})`);

describe('duration literals', () => {
  it('none in src/ or suites/ outside the timing module and the spec', () => {
    const files = SCANNED.flatMap(sources).map((f) => relative(ROOT, join(ROOT, f)).replaceAll('\\', '/'));
    const outside = files.filter((f) => !HOMES.some((home) => f === home || f.startsWith(home)));
    const found = outside.flatMap((f) => listed(f, readFileSync(join(ROOT, f), 'utf8')));
    expect(found, `move each into src/timing/ under a name that says what it waits for:\n${found.join('\n')}`).toEqual(
      [],
    );
  });

  it('lists the delay of a timer and a value whose name says it is a duration', () => {
    const text = [
      'const RETRY_STEPS_MS = [100, 200];',
      'setTimeout(done, 250);',
      'await sleep(30, undefined, { signal });',
      'const opts = { timeoutMs: 10_000, graceMs: cond ? 5000 : 300 };',
      'const limit = (w: Waits): number => w.pushMs + 15_000;',
      'if (gapMs > 750) stop();',
      'const every = Math.max(50, Math.floor(windowMs / 3));',
      'function settleDelay(): number {',
      '  return 400;',
      '}',
      'const signal = AbortSignal.timeout(2000);',
    ].join('\n');
    expect(durationLiterals(text).map((d) => `${d.line}:${d.text}`)).toEqual([
      '1:100',
      '1:200',
      '2:250',
      '3:30',
      '4:10_000',
      '4:5000',
      '4:300',
      '5:15_000',
      '6:750',
      '7:50',
      '9:400',
      '11:2000',
    ]);
  });

  it('does not list counts, limits, factors, indexes, close codes, or numbers in strings and comments', () => {
    const text = [
      'const MAX_PAGES = 20;',
      'const maxPayloadBytes = 1024 * 1024;',
      'await awaitPushes(session, pair, 3, 0, ctx.waits.pushMs);',
      'const every = windowMs / 3;',
      'const wait = 2 * w.noticeMs;',
      'const second = gaps[2];',
      "session.close(1000, 'done');",
      '// waits 5000 ms',
      "const text = 'within 3000 ms';",
      `const note = \`watched \${5000} ms\`;`,
      'const re = /a{2,300}/;',
      'const half = total / 2 / 10;',
      'const noWait = 0, once = 1;',
    ].join('\n');
    expect(durationLiterals(text)).toEqual([]);
  });
});
