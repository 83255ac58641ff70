/**
 * Bundles the k6 scripts to plain JS with esbuild (`npm run build:k6`): TypeScript stripped,
 * shared dependency-free code inlined, k6 modules left as imports. Output: load/k6/dist/*.js.
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

export const K6_SCRIPTS = ['fanout', 'rest'] as const;

/** Bundles every script into `outDir`; returns the files written. */
export async function buildK6(outDir = fileURLToPath(new URL('./dist', import.meta.url))): Promise<string[]> {
  const entryPoints = K6_SCRIPTS.map((s) => fileURLToPath(new URL(`./${s}.ts`, import.meta.url)));
  await build({
    entryPoints,
    outdir: outDir,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2020',
    external: ['k6', 'k6/*'],
    logLevel: 'warning',
  });
  return K6_SCRIPTS.map((s) => `${outDir}/${s}.js`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const f of await buildK6()) console.log(`built ${f}`);
}
