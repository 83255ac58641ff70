import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildK6, K6_SCRIPTS } from '../load/k6/build.ts';

/** Every module specifier a bundle imports (static and dynamic) or requires. */
function specifiers(code: string): string[] {
  const out: string[] = [];
  for (const re of [/\bimport\s+(?:[^'";]*?\sfrom\s+)?["']([^"']+)["']/g, /\bimport\(\s*["']([^"']+)["']\s*\)/g, /\brequire\(\s*["']([^"']+)["']\s*\)/g, /\bexport\s+[^'";]*?\sfrom\s+["']([^"']+)["']/g]) {
    for (const m of code.matchAll(re)) out.push(m[1]!);
  }
  return out;
}

describe('k6 scripts', () => {
  it('bundle to plain JS that imports only k6 modules', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'conform-k6-'));
    const files = await buildK6(dir);
    expect(files).toHaveLength(K6_SCRIPTS.length);
    for (const file of files) {
      const code = await readFile(file, 'utf8');
      const mods = specifiers(code);
      expect(mods.length).toBeGreaterThan(0);
      for (const m of mods) expect(m, `${file} imports ${m}`).toMatch(/^k6(\/[a-z0-9/-]+)?$/);
      expect(code).not.toMatch(/\binterface\s|: string\b|\bas const\b/);
      // Scenarios export their options and a default function, as k6 expects.
      expect(code).toMatch(/export\s*\{[^}]*\boptions\b/);
      expect(code).toMatch(/export\s*\{[^}]*\bas default\b/);
    }
  });

  it('the import scan itself catches a non-k6 import', () => {
    expect(specifiers('import x from "node:fs";\nimport { a } from "k6/http";')).toEqual(['node:fs', 'k6/http']);
  });
});
