/**
 * Redaction of API keys. Every string that reaches evidence, logs or reports passes through a
 * redactor built from the profile, so a key never lands on disk or screen.
 */
import type { Profile } from './profile.ts';

/** Shortest key (and key half) told apart from ordinary text; a shorter key is warned about. */
export const MIN_FRAGMENT = 8;

/** Turns any text into its redacted form. */
export type Redact = (text: string) => string;

/** How a redacted key reads: the profile name of the key, so a reader still knows which one was sent. */
export const redactedLabel = (name: string): string => `<key:${name}>`;

/**
 * Characters a key may run on into: URL-unreserved (RFC 3986 §2.3). A short key is redacted only
 * where none of these touches it on either side, so it is matched as a whole token: in a header
 * value, a URL path or query, a JSON string or a line of text, never inside an id or a word.
 */
const TOKEN_CHAR = '[A-Za-z0-9._~-]';

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** One form of a key and which of its sides must stand apart from the text around it. */
interface Form {
  text: string;
  label: string;
  left: boolean;
  right: boolean;
}

const pattern = (f: Form): string =>
  `${f.left ? `(?<!${TOKEN_CHAR})` : ''}${escapeRegExp(f.text)}${f.right ? `(?!${TOKEN_CHAR})` : ''}`;

/** The forms of one key that are redacted: plain, URL-encoded, JSON-escaped, and each half of a long key. */
function formsOf(value: string, label: string): Form[] {
  const forms: Form[] = [];
  // A key as long as two fragments is no word and no id: wherever it appears, even run into other
  // characters by a target that echoes it, it is the key. A shorter one counts only standing alone.
  const alone = value.length < 2 * MIN_FRAGMENT;
  for (const text of new Set([value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)]))
    forms.push({ text, label, left: alone, right: alone });
  // Either half of a long key, bounded on its outer side only: a key cut short (the start kept,
  // or the end) must not leave a usable piece behind.
  const half = Math.floor(value.length / 2);
  if (half >= MIN_FRAGMENT)
    forms.push(
      { text: value.slice(0, half), label, left: true, right: false },
      { text: value.slice(half), label, left: false, right: true },
    );
  return forms;
}

/** One pass over the text; longer forms are tried first so a key that contains another is not half-replaced. */
function replacerOf(forms: Form[]): Redact {
  if (forms.length === 0) return (text) => text;
  const sorted = [...forms].sort((a, b) => b.text.length - a.text.length);
  const labelOf = new Map<string, string>();
  for (const f of sorted) if (!labelOf.has(f.text)) labelOf.set(f.text, f.label);
  const re = new RegExp(sorted.map(pattern).join('|'), 'g');
  return (text) => text.replace(re, (m) => labelOf.get(m) ?? m);
}

/**
 * Builds a redactor for these secrets (`name → value`): each key becomes its label where it stands
 * as a whole token (a key of 16 characters or more, wherever it appears). Only text that carries
 * keys passes through it (headers, URLs, bodies, frames, what a target answered); ids, titles and
 * prose of the harness never do.
 */
export const createRedactor = (secrets: Readonly<Record<string, string>>): Redact =>
  replacerOf(Object.entries(secrets).flatMap(([name, value]) => (value ? formsOf(value, redactedLabel(name)) : [])));

/** A redactor that shows every one of these keys as `mask`, matched as `createRedactor` matches. */
export const maskKeys = (keys: Iterable<string>, mask: string): Redact =>
  replacerOf([...keys].flatMap((k) => (k ? formsOf(k, mask) : [])));

/** The names of the keys too short to be told apart from ordinary text (warned about at start). */
export function shortKeys(secrets: Readonly<Record<string, string>>): string[] {
  return Object.entries(secrets)
    .filter(([, value]) => value.length > 0 && value.length < MIN_FRAGMENT)
    .map(([name]) => name);
}

/** Every key of a profile by its name in `keys`. */
export function profileSecretMap(profile: Profile): Record<string, string> {
  const map: Record<string, string> = {};
  for (const [name, entry] of Object.entries(profile.keys))
    if (entry && typeof entry.key === 'string') map[name] = entry.key;
  return map;
}

/** The redactor of a profile: every key it carries. */
export const redactorFor = (profile: Profile): Redact => createRedactor(profileSecretMap(profile));

/** Redacts every string inside a JSON-like value (objects, arrays), keys included. */
export function redactDeep<T>(value: T, redact: Redact): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, redact)) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[redact(k)] = redactDeep(v, redact);
    return out as T;
  }
  return value;
}

// C0 controls but tab/newline/CR, DEL and C1 controls: a target's bytes must not drive a terminal.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

/** Text from a target made safe to print: control characters become U+FFFD. */
export const printable = (text: string): string => text.replace(CONTROL, '\uFFFD');

/** Text from a target as one printable line: line breaks and tabs become spaces. */
export const oneLine = (text: string): string => printable(text.replace(/\r\n|[\r\n\t]/g, ' '));
