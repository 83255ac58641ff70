/**
 * Redaction of API keys. Every string that reaches evidence, logs or reports passes through a
 * redactor built from the profile, so a key never lands on disk or screen.
 */
import type { Profile } from './profile.ts';

/** Shortest key half that is redacted on its own (shorter pieces would hit ordinary words). */
export const MIN_FRAGMENT = 8;

/** Turns any text into its redacted form. */
export type Redact = (text: string) => string;

/** How a redacted key reads: the profile name of the key, so a reader still knows which one was sent. */
export const redactedLabel = (name: string): string => `<key:${name}>`;

/**
 * Builds a redactor for these secrets (`name → value`). Longer values are replaced first so a key
 * that contains another is not half-replaced; URL-encoded forms are covered too.
 */
export function createRedactor(secrets: Readonly<Record<string, string>>): Redact {
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(secrets)) {
    if (!value) continue;
    pairs.push([value, redactedLabel(name)]);
    const encoded = encodeURIComponent(value);
    if (encoded !== value) pairs.push([encoded, redactedLabel(name)]);
    const json = JSON.stringify(value).slice(1, -1);
    if (json !== value) pairs.push([json, redactedLabel(name)]);
    // Either half of a long key: text cut short elsewhere must not leave a usable piece behind.
    const half = Math.floor(value.length / 2);
    if (half >= MIN_FRAGMENT)
      pairs.push([value.slice(0, half), redactedLabel(name)], [value.slice(half), redactedLabel(name)]);
  }
  pairs.sort((a, b) => b[0].length - a[0].length);
  if (pairs.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const [value, label] of pairs) if (out.includes(value)) out = out.split(value).join(label);
    return out;
  };
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
