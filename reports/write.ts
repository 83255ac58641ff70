/**
 * What every report writer shares, the conformance reports and the load reports alike: HTML text
 * and writing a file.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { printable } from '../src/redact.ts';

/** Text as HTML content or an attribute value; control characters from a target are made visible, never sent raw. */
export const escapeHtml = (s: string): string =>
  printable(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Writes `text` to `name` in `outDir`, making the directory first; returns the file's path. */
export async function writeReportFile(outDir: string, name: string, text: string): Promise<string> {
  await mkdir(outDir, { recursive: true });
  const file = path.join(outDir, name);
  await writeFile(file, text);
  return file;
}
