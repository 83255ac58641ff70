#!/usr/bin/env node
// Two ways to start, chosen by what is beside this file:
// - a clone of the repository has the TypeScript sources here, and they run through tsx, so a
//   developer or a test always runs the code as it is now and never a stale build;
// - the installed package ships no sources (package.json `files`), only the JavaScript that
//   `npm run build` compiled into dist/ when the package was packed: it starts without compiling.
import { existsSync } from 'node:fs';

const source = new URL('./cli.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/bin/cli.js');
}
