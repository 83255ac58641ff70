/**
 * Where this code runs from: the TypeScript sources (a clone, through tsx) or the compiled
 * JavaScript of the published package (dist/, same tree). Modules that name a sibling file at
 * run time (worker entries, sub-commands, a child process) go through here so both forms work.
 */

/** True when running the compiled JavaScript under dist/. */
export const RUNS_COMPILED = import.meta.url.endsWith('.js');

/** The URL of a module given by its source name (`./client-worker.ts`), relative to `from` (an import.meta.url). */
export function moduleUrl(relative: string, from: string): URL {
  const url = new URL(relative, from);
  if (RUNS_COMPILED) url.pathname = url.pathname.replace(/\.ts$/, '.js');
  return url;
}

/** The package's package.json: one level up from src/, two from dist/src/. */
export const PACKAGE_JSON_URL = new URL(RUNS_COMPILED ? '../../package.json' : '../package.json', import.meta.url);
