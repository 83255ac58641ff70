/** The `conform` command: parse options, call the library, set the exit code. */
import { createRequire } from 'node:module';

const pkg = createRequire(import.meta.url)('../package.json') as { version: string };
const args = process.argv.slice(2);
if (args.includes('--version')) {
  console.log(pkg.version);
} else {
  console.log('conform: the check engine is not built yet (issue 4). Try --version.');
}
