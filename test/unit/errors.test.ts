/** The error classes (src/errors.ts): one class per stable code, written once; docs/errors.md lists those. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ConformError,
  CRASH_CODE,
  ERROR_CLASSES,
  ERROR_CODES,
  errorCode,
  isBadInput,
  NetworkError,
  TimeoutError,
  UsageError,
} from '../../src/errors.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const instanceOf = (C: (typeof ERROR_CLASSES)[number]): ConformError =>
  new (C as unknown as new (message: string) => ConformError)('something went wrong');

/** The rows of docs/errors.md's tables: code and class name (null for the crash code's row). */
function docRows(): { code: string; className: string | null }[] {
  const doc = readFileSync(path.join(ROOT, 'docs/errors.md'), 'utf8');
  return [...doc.matchAll(/^\| `([A-Z0-9_]+)` \| (?:`(\w+)`|\(anything else\)) \|/gm)].map((m) => ({
    code: m[1]!,
    className: m[2] ?? null,
  }));
}

/** Product source files (what ships or runs the product), relative to the repository. */
function productFiles(): string[] {
  return ['bin', 'src', 'suites', 'reference', 'load', 'reports', 'scripts'].flatMap((dir) =>
    readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(ts|mjs|js|sh)$/.test(f) && !f.split(path.sep).includes('dist'))
      .map((f) => path.join(dir, f)),
  );
}

describe('error classes', () => {
  it('gives every class a code of its own, none of them the crash code', () => {
    const codes = ERROR_CLASSES.map((C) => C.code);
    expect(new Set(codes).size).toBe(codes.length);
    expect(codes).not.toContain(CRASH_CODE);
    for (const code of ERROR_CODES) expect(code).toMatch(/^CONFORM_[A-Z0-9_]+$/);
  });

  it('makes every error a ConformError named after its class, whose code errorCode() returns', () => {
    for (const C of ERROR_CLASSES) {
      const err = instanceOf(C);
      expect(err).toBeInstanceOf(ConformError);
      expect(err).toBeInstanceOf(Error);
      expect(err.name).toBe(C.name);
      expect(err.code).toBe(C.code);
      expect(errorCode(err)).toBe(C.code);
      expect(err.message).toContain('something went wrong');
    }
  });

  it('maps a foreign Error, one with a CONFORM_ code of its own, and a thrown non-Error to the crash code', () => {
    expect(errorCode(new Error('boom'))).toBe(CRASH_CODE);
    expect(errorCode(new TypeError('x is undefined'))).toBe(CRASH_CODE);
    expect(errorCode(Object.assign(new Error('look-alike'), { code: TimeoutError.code }))).toBe(CRASH_CODE);
    expect(errorCode('a string')).toBe(CRASH_CODE);
    expect(errorCode(undefined)).toBe(CRASH_CODE);
  });

  it('tells bad input, which the CLI answers with one line, from the errors of a check and from crashes', () => {
    expect(isBadInput(new UsageError('--timeout: must be a positive integer'))).toBe(true);
    expect(isBadInput(new TimeoutError('no answer within 15000 ms'))).toBe(false);
    expect(isBadInput(new NetworkError('ECONNRESET', 'ECONNRESET'))).toBe(false);
    expect(isBadInput(Object.assign(new Error('look-alike'), { code: UsageError.code }))).toBe(false);
    const bad = ERROR_CLASSES.filter((C) => C.badInput).map((C) => C.code);
    expect(bad).toEqual(expect.arrayContaining(['CONFORM_USAGE', 'CONFORM_PROFILE', 'CONFORM_LOAD_USAGE']));
    expect(bad).not.toContain(TimeoutError.code);
  });

  it("lists in docs/errors.md exactly the error classes' codes, each with its class", () => {
    const rows = docRows();
    expect(rows.map((r) => r.code).sort()).toEqual([...ERROR_CODES].sort());
    for (const C of ERROR_CLASSES) expect(rows.find((r) => r.code === C.code)?.className).toBe(C.name);
    expect(rows.find((r) => r.code === CRASH_CODE)?.className).toBeNull();
  });

  it('writes each code once: no product file outside src/errors.ts spells one in quotes', () => {
    const quoted = new RegExp(`['"\`](${ERROR_CODES.join('|')})['"\`]`);
    const offenders = productFiles()
      .filter((f) => f !== path.join('src', 'errors.ts'))
      .filter((f) => quoted.test(readFileSync(path.join(ROOT, f), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
