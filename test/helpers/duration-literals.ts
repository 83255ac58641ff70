/**
 * Finds duration literals in TypeScript source, as test/unit/timing-literals.test.ts defines them (its
 * doc comment is the definition; the rules below follow it).
 *
 * The TypeScript scanner tokenises the text (TypeScript 7 ships no classic `createSourceFile`; its
 * scanner is the `typescript/unstable/ast/scanner` export): comments, strings, templates and
 * regular expressions are never mistaken for code. The scanner alone cannot tell a regular
 * expression from a division nor a template's middle from a closing brace, nor `>=` from the `>`
 * that closes type arguments; they are told apart here as a parser would, by the token before a
 * slash, by a stack of open braces, and by the character after a `>`.
 */
import { createScanner } from 'typescript/unstable/ast/scanner';
import { SyntaxKind } from 'typescript/unstable/ast';

/** One duration literal: where it is, its text, and the name or call it belongs to. */
export interface DurationLiteral {
  line: number;
  text: string;
  owner: string;
}

interface Token {
  kind: SyntaxKind;
  text: string;
  start: number;
}

const OPENERS = new Set([SyntaxKind.OpenParenToken, SyntaxKind.OpenBracketToken, SyntaxKind.OpenBraceToken]);
const CLOSERS = new Set([SyntaxKind.CloseParenToken, SyntaxKind.CloseBracketToken, SyntaxKind.CloseBraceToken]);
const FACTOR_OPERATORS = new Set([SyntaxKind.AsteriskToken, SyntaxKind.SlashToken, SyntaxKind.PercentToken]);
/** Tokens after which a slash divides (anything else starts a regular expression). */
const ENDS_OPERAND = new Set([
  SyntaxKind.Identifier,
  SyntaxKind.NumericLiteral,
  SyntaxKind.StringLiteral,
  SyntaxKind.NoSubstitutionTemplateLiteral,
  SyntaxKind.TemplateTail,
  SyntaxKind.CloseParenToken,
  SyntaxKind.CloseBracketToken,
  SyntaxKind.CloseBraceToken,
  SyntaxKind.ThisKeyword,
  SyntaxKind.PlusPlusToken,
  SyntaxKind.MinusMinusToken,
]);
/** Calls that keep the quantity of their arguments: a literal among them is a bound of the same thing. */
const KEEPS_QUANTITY = new Set(['min', 'max', 'round', 'ceil', 'floor', 'abs']);
const TIMERS = new Set(['setTimeout', 'setInterval', 'sleep', 'pause', 'delay', 'timeout', 'closeWithin']);
/** Keywords whose parentheses hold a condition, not a value. */
const CONTROL = new Set(['if', 'while', 'for', 'switch', 'catch', 'with']);
/** Tokens before which a declaration's name and type annotation start. */
const DECLARATION_ENDS = new Set([
  SyntaxKind.CommaToken,
  SyntaxKind.SemicolonToken,
  SyntaxKind.ConstKeyword,
  SyntaxKind.LetKeyword,
  SyntaxKind.VarKeyword,
]);
/** Tokens a function's return type may hold between its parameters and its body, besides keywords. */
const TYPE_TOKENS = new Set([
  SyntaxKind.Identifier,
  SyntaxKind.DotToken,
  SyntaxKind.LessThanToken,
  SyntaxKind.GreaterThanToken,
  SyntaxKind.BarToken,
  SyntaxKind.OpenBracketToken,
  SyntaxKind.CloseBracketToken,
  SyntaxKind.ColonToken,
]);
const DURATION_WORDS = new Set([
  'ms',
  'millis',
  'milliseconds',
  'seconds',
  'secs',
  'timeout',
  'timeouts',
  'delay',
  'interval',
  'wait',
  'grace',
  'window',
  'gap',
  'backoff',
  'pause',
  'hold',
  'deadline',
  'cooldown',
  'ttl',
]);

/** The words of an identifier: camelCase and SNAKE_CASE alike. */
const words = (name: string): string[] =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_$]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());

/** Whether a name says it holds a duration (its last word). */
export const namesDuration = (name: string): boolean => DURATION_WORDS.has(words(name).at(-1) ?? '');

const isTimer = (name: string): boolean => TIMERS.has(name) || /^waitFor[A-Z]/.test(name);

/** The tokens of `text`, comments left out, regular expressions and template parts told from code. */
export function tokens(text: string): Token[] {
  const scanner = createScanner(true, undefined, text);
  const out: Token[] = [];
  // One entry per open brace: whether it is a template's `${`.
  const braces: boolean[] = [];
  for (;;) {
    let kind = scanner.scan();
    if (kind === SyntaxKind.EndOfFile) return out;
    const previous = out.at(-1)?.kind;
    if (
      (kind === SyntaxKind.SlashToken || kind === SyntaxKind.SlashEqualsToken) &&
      (previous === undefined || !ENDS_OPERAND.has(previous))
    )
      kind = scanner.reScanSlashToken();
    // `>=` comes as `>` (a type argument list may close there): a comparison when `=` follows.
    else if (kind === SyntaxKind.GreaterThanToken && text[scanner.getTokenEnd()] === '=')
      kind = scanner.reScanGreaterToken();
    if (kind === SyntaxKind.TemplateHead || kind === SyntaxKind.OpenBraceToken)
      braces.push(kind === SyntaxKind.TemplateHead);
    else if (kind === SyntaxKind.CloseBraceToken) {
      if (braces.at(-1)) {
        kind = scanner.reScanTemplateToken(false);
        if (kind === SyntaxKind.TemplateTail) braces.pop();
      } else braces.pop();
    }
    out.push({ kind, text: scanner.getTokenText(), start: scanner.getTokenStart() });
  }
}

/** Index of the opener matching the closer at `i`. */
function openerOf(ts: readonly Token[], i: number): number {
  let depth = 0;
  for (let k = i; k >= 0; k--) {
    if (CLOSERS.has(ts[k]!.kind)) depth++;
    else if (OPENERS.has(ts[k]!.kind) && --depth === 0) return k;
  }
  return -1;
}

/** Index of the closer matching the opener at `i`. */
function closerOf(ts: readonly Token[], i: number): number {
  let depth = 0;
  for (let k = i; k < ts.length; k++) {
    if (OPENERS.has(ts[k]!.kind)) depth++;
    else if (CLOSERS.has(ts[k]!.kind) && --depth === 0) return k;
  }
  return ts.length;
}

const isNumber = (t: Token | undefined): boolean => t?.kind === SyntaxKind.NumericLiteral;
const isName = (t: Token | undefined): boolean =>
  t !== undefined && (t.kind === SyntaxKind.Identifier || t.kind === SyntaxKind.StringLiteral);
const nameOf = (t: Token): string => t.text.replace(/^['"]|['"]$/g, '');

/** Whether the literal at `i` scales something else (`2 * ms`, `ms / 3`). */
function isFactor(ts: readonly Token[], i: number): boolean {
  const before = ts[i - 1];
  const after = ts[i + 1];
  if (before && FACTOR_OPERATORS.has(before.kind) && !isNumber(ts[i - 2])) return true;
  return after !== undefined && FACTOR_OPERATORS.has(after.kind) && !isNumber(ts[i + 2]);
}

/** The callee name before the `(` at `open`, if it is a call (`Math.max(` → `max`). */
function calleeOf(ts: readonly Token[], open: number): string | undefined {
  let k = open - 1;
  // Type arguments: `f<T>(`.
  if (ts[k]?.kind === SyntaxKind.GreaterThanToken) {
    let depth = 0;
    for (; k >= 0; k--) {
      if (ts[k]!.kind === SyntaxKind.GreaterThanToken) depth++;
      else if (ts[k]!.kind === SyntaxKind.LessThanToken && --depth === 0) break;
    }
    k--;
  }
  const t = ts[k];
  if (t === undefined) return undefined;
  if (t.kind === SyntaxKind.Identifier || CONTROL.has(t.text)) return t.text;
  return undefined;
}

/**
 * The duration-named identifiers among the operands of the expression `from..to` (exclusive): at
 * its own level, inside parentheses that only group, and inside value-keeping calls; not inside the
 * arguments of other calls, nor indexes, nor functions.
 */
function durationOperand(ts: readonly Token[], from: number, to: number): string | undefined {
  for (let k = from + 1; k < to; k++) {
    const t = ts[k]!;
    if (t.kind === SyntaxKind.OpenParenToken) {
      const callee = calleeOf(ts, k);
      if (callee !== undefined && !KEEPS_QUANTITY.has(callee)) k = closerOf(ts, k);
      continue;
    }
    if (t.kind === SyntaxKind.OpenBracketToken || t.kind === SyntaxKind.OpenBraceToken) {
      k = closerOf(ts, k);
      continue;
    }
    if (t.kind === SyntaxKind.EqualsGreaterThanToken) return undefined;
    if (t.kind === SyntaxKind.Identifier && namesDuration(t.text)) return t.text;
  }
  return undefined;
}

/** Where the operand holding the token at `from` ends: at a comma, a semicolon or its enclosing closer. */
function endOf(ts: readonly Token[], from: number): number {
  let depth = 0;
  for (let k = from + 1; k < ts.length; k++) {
    const t = ts[k]!;
    if (OPENERS.has(t.kind)) depth++;
    else if (CLOSERS.has(t.kind)) {
      if (depth-- === 0) return k;
    } else if (depth === 0 && (t.kind === SyntaxKind.SemicolonToken || t.kind === SyntaxKind.CommaToken)) return k;
  }
  return ts.length;
}

/** Whether the `:` at `i` is a ternary's (a `?` before it at the same level). */
function isTernaryColon(ts: readonly Token[], i: number): boolean {
  let depth = 0;
  for (let k = i - 1; k >= 0; k--) {
    const t = ts[k]!;
    if (CLOSERS.has(t.kind)) depth++;
    else if (OPENERS.has(t.kind)) {
      if (depth-- === 0) return false;
    } else if (depth === 0) {
      if (t.kind === SyntaxKind.QuestionToken && ts[k + 1]?.kind !== SyntaxKind.ColonToken) return true;
      if (t.kind === SyntaxKind.CommaToken || t.kind === SyntaxKind.SemicolonToken) return false;
      if (t.kind === SyntaxKind.ColonToken && !isTernaryColon(ts, k)) return false;
    }
  }
  return false;
}

/** The name a `=` at `i` gives a value to, past a type annotation (`const x: T = …`). */
function assignee(ts: readonly Token[], i: number): string | undefined {
  let depth = 0;
  for (let k = i - 1; k >= 0; k--) {
    const t = ts[k]!;
    // A `}` ends the statement before (a type literal in the annotation is not looked into).
    if (depth === 0 && t.kind === SyntaxKind.CloseBraceToken) break;
    if (CLOSERS.has(t.kind) || t.kind === SyntaxKind.GreaterThanToken) depth++;
    else if (OPENERS.has(t.kind) || t.kind === SyntaxKind.LessThanToken) {
      if (depth-- === 0) break;
    } else if (depth === 0) {
      if (t.kind === SyntaxKind.ColonToken) {
        const name = ts[k - 1]?.kind === SyntaxKind.QuestionToken ? ts[k - 2] : ts[k - 1];
        return isName(name) ? nameOf(name!) : undefined;
      }
      if (DECLARATION_ENDS.has(t.kind) || CONTROL.has(t.text)) break;
    }
  }
  return isName(ts[i - 1]) ? nameOf(ts[i - 1]!) : undefined;
}

/** Where the arrow function whose `=>` is at `i` starts (its parameters, or its one parameter). */
function arrowStart(ts: readonly Token[], i: number): number {
  let k = i - 1;
  if (ts[k]?.kind === SyntaxKind.Identifier && ts[k - 1]?.kind !== SyntaxKind.ColonToken) return k;
  // Past a return type to the parameters' `)`.
  while (k >= 0 && ts[k]!.kind !== SyntaxKind.CloseParenToken) k--;
  const open = openerOf(ts, k);
  return ts[open - 1]?.text === 'async' ? open - 1 : open;
}

/** The name of the function whose body holds the token at `i` (for a `return`), if it is named. */
function functionName(ts: readonly Token[], i: number): { name?: string; at: number; body: number } | undefined {
  let k = i;
  for (;;) {
    // Out to the block's `{`.
    let depth = 0;
    for (k = k - 1; k >= 0; k--) {
      const t = ts[k]!;
      if (CLOSERS.has(t.kind)) depth++;
      else if (OPENERS.has(t.kind) && depth-- === 0) break;
    }
    if (k < 0 || ts[k]!.kind !== SyntaxKind.OpenBraceToken) return undefined;
    if (ts[k - 1]?.kind === SyntaxKind.EqualsGreaterThanToken) return { at: arrowStart(ts, k - 1), body: k };
    // Past a return type to the parameters' `)`.
    let p = k - 1;
    while (p >= 0 && (TYPE_TOKENS.has(ts[p]!.kind) || /^[a-z]+$/.test(ts[p]!.text))) p--;
    if (ts[p]?.kind !== SyntaxKind.CloseParenToken) continue;
    const open = openerOf(ts, p);
    const callee = calleeOf(ts, open);
    if (callee === undefined || CONTROL.has(callee)) continue;
    return { name: callee, at: open, body: k };
  }
}

/**
 * What the literal at `i` belongs to, walking out: a timer's name, a duration-named owner, or
 * undefined when it is no duration.
 */
function ownerOf(ts: readonly Token[], i: number): string | undefined {
  // The expression walked so far spans left..right.
  let left = i;
  let right = i;
  for (;;) {
    let depth = 0;
    let k = left - 1;
    let comma: number | undefined;
    for (; k >= 0; k--) {
      const t = ts[k]!;
      if (CLOSERS.has(t.kind)) depth++;
      else if (OPENERS.has(t.kind) || t.kind === SyntaxKind.TemplateHead || t.kind === SyntaxKind.TemplateMiddle) {
        if (depth-- === 0) break;
      } else if (depth === 0) {
        if (t.kind === SyntaxKind.CommaToken) comma ??= k;
        const stops =
          t.kind === SyntaxKind.SemicolonToken ||
          t.kind === SyntaxKind.EqualsToken ||
          t.kind === SyntaxKind.EqualsGreaterThanToken ||
          t.kind === SyntaxKind.ReturnKeyword ||
          t.kind === SyntaxKind.CaseKeyword ||
          (t.kind === SyntaxKind.ColonToken && !isTernaryColon(ts, k));
        if (stops) break;
      }
    }
    const stop = ts[k];
    const sibling = durationOperand(ts, comma ?? k, endOf(ts, right));
    if (stop === undefined || stop.kind === SyntaxKind.SemicolonToken || stop.kind === SyntaxKind.CaseKeyword)
      return sibling;
    switch (stop.kind) {
      case SyntaxKind.EqualsToken: {
        const name = assignee(ts, k);
        return name !== undefined && namesDuration(name) ? name : sibling;
      }
      case SyntaxKind.ColonToken: {
        const name = ts[k - 1]?.kind === SyntaxKind.QuestionToken ? ts[k - 2] : ts[k - 1];
        return isName(name) && namesDuration(nameOf(name!)) ? nameOf(name!) : sibling;
      }
      case SyntaxKind.EqualsGreaterThanToken:
        if (sibling) return sibling;
        left = arrowStart(ts, k);
        continue;
      case SyntaxKind.ReturnKeyword: {
        if (sibling) return sibling;
        const fn = functionName(ts, k);
        if (fn?.name !== undefined) return namesDuration(fn.name) ? fn.name : undefined;
        if (fn === undefined) return undefined;
        left = fn.at;
        right = closerOf(ts, fn.body);
        continue;
      }
      case SyntaxKind.OpenParenToken: {
        const callee = calleeOf(ts, k);
        if (callee !== undefined && isTimer(callee)) return callee;
        if (sibling) return sibling;
        if (callee !== undefined && !KEEPS_QUANTITY.has(callee)) return undefined;
        left = k;
        right = closerOf(ts, k);
        continue;
      }
      case SyntaxKind.OpenBracketToken: {
        if (sibling) return sibling;
        // An index (`a[2]`) is no value of its own.
        if (ENDS_OPERAND.has(ts[k - 1]?.kind ?? SyntaxKind.Unknown)) return undefined;
        left = k;
        right = closerOf(ts, k);
        continue;
      }
      default:
        // A block, an object without a name for the value, a template: no duration.
        return sibling;
    }
  }
}

/** The duration literals of one file's text, in order. */
export function durationLiterals(text: string): DurationLiteral[] {
  const ts = tokens(text);
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const lineOf = (pos: number): number => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const out: DurationLiteral[] = [];
  for (const [i, t] of ts.entries()) {
    if (t.kind !== SyntaxKind.NumericLiteral) continue;
    const value = Number(t.text.replace(/_/g, ''));
    if (value === 0 || value === 1 || isFactor(ts, i)) continue;
    const owner = ownerOf(ts, i);
    if (owner !== undefined) out.push({ line: lineOf(t.start), text: t.text, owner });
  }
  return out;
}
