/**
 * The `conform` command line: answers `--version`, runs the command named (bin/commands/, each
 * loaded only when asked for), and sets the exit code it returns; nothing else sets it. Only what
 * `--version` needs is imported up front; the checks, the validator and yargs load when a
 * command needs them, so the installed CLI answers `--version` in a fraction of the time a run
 * takes to start.
 */
import { readFileSync } from 'node:fs';
import { earlyRequest } from './early-args.ts';
import { moduleUrl, PACKAGE_JSON_URL } from '../src/module-url.ts';
import type { Command } from './commands/command.ts';

const pkg = JSON.parse(readFileSync(PACKAGE_JSON_URL, 'utf8')) as { version: string };
/** How long the process may outlive its run (stdout drains meanwhile). */
const LINGER_MS = 1500;
const argv = process.argv.slice(2);

/** The commands besides the main one, each a module of bin/commands/ and the name it exports. */
const COMMANDS: Record<string, { file: string; exportName: string }> = {
  serve: { file: './commands/serve.ts', exportName: 'serveCommand' },
  load: { file: './commands/load.ts', exportName: 'loadCommand' },
  spec: { file: './commands/spec.ts', exportName: 'specCommand' },
  init: { file: './commands/init.ts', exportName: 'initCommand' },
  explore: { file: './commands/explore.ts', exportName: 'exploreCommand' },
  replay: { file: './commands/explore.ts', exportName: 'replayCommand' },
};

/** Every command of COMMANDS, loaded: the completion's tree needs them all. */
async function allCommands(): Promise<Command[]> {
  const mods = await Promise.all(
    Object.values(COMMANDS).map(async ({ file, exportName }) => {
      const mod = (await import(moduleUrl(file, import.meta.url).href)) as Record<string, unknown>;
      return mod[exportName] as Command;
    }),
  );
  return mods;
}

async function main(): Promise<number> {
  const ctx = { version: pkg.version };
  if (argv[0] === 'completion' || argv[0] === '--get-yargs-completions') {
    const [{ runCompletion }, commands] = await Promise.all([import('./commands/completion.ts'), allCommands()]);
    return runCompletion(argv, commands, ctx);
  }
  const named = argv[0] === undefined ? undefined : COMMANDS[argv[0]];
  if (named) {
    const [{ runCommand }, mod] = await Promise.all([
      import('./commands/command.ts'),
      import(moduleUrl(named.file, import.meta.url).href) as Promise<Record<string, unknown>>,
    ]);
    return runCommand(mod[named.exportName] as Parameters<typeof runCommand>[0], argv, ctx);
  }
  if (earlyRequest(argv) === 'version') {
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  const { runConform } = await import('./commands/conform.ts');
  return runConform(argv, ctx);
}

const isCommand = argv[0] !== undefined && COMMANDS[argv[0]] !== undefined;
process.exitCode = await main();
// A run is over once its reports are written: a socket or timer a hostile target left open must
// not keep the process alive. Unref'd, so a clean run exits at once; `serve` and `load` own their lifetime.
if (!isCommand) setTimeout(() => process.exit(), LINGER_MS).unref();
