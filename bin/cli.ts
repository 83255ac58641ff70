/**
 * The `conform` command: parse options, call the library, set the exit code. Only what `--version`
 * needs is imported up front; the catalogue, the validator and yargs load when a run needs them,
 * so the installed CLI answers `--version` in a fraction of the time a run takes to start.
 */
import { readFileSync } from 'node:fs';
import { earlyRequest } from './early-args.ts';
import { moduleUrl, PACKAGE_JSON_URL } from '../src/module-url.ts';

const pkg = JSON.parse(readFileSync(PACKAGE_JSON_URL, 'utf8')) as { version: string };
/** How long the process may outlive its run (stdout drains meanwhile). */
const LINGER_MS = 1500;
const argv = process.argv.slice(2);

/** Sub-commands, each a yargs command module loaded only when asked for. */
const SUBCOMMANDS: Record<string, { file: string; exportName: string }> = {
  serve: { file: './serve-command.ts', exportName: 'serveCommand' },
  load: { file: '../load/cli-command.ts', exportName: 'loadCommand' },
  spec: { file: '../src/spec-command.ts', exportName: 'specCommand' },
  init: { file: './init-command.ts', exportName: 'initCommand' },
};

async function runSubcommand(name: string): Promise<number> {
  const [{ default: yargs }, { EXIT, problemLine }, { isBadInput, UsageError }, { yargsMessage }] = await Promise.all([
    import('yargs'),
    import('../src/conform.ts'),
    import('../src/errors.ts'),
    import('./parse-args.ts'),
  ]);
  const sub = SUBCOMMANDS[name]!;
  const mod = (await import(moduleUrl(sub.file, import.meta.url).href)) as Record<string, unknown>;
  // A command that needs the package version is exported as a factory of it.
  const exported = mod[sub.exportName];
  const command = typeof exported === 'function' ? (exported as (v: string) => unknown)(pkg.version) : exported;
  try {
    // fail() must throw: yargs runs the handler anyway when it returns.
    await yargs(argv)
      .scriptName('conform')
      .command(command as never)
      .help()
      .version(false)
      .strict()
      .fail((msg, err) => {
        throw err ?? new UsageError(yargsMessage(msg));
      })
      .parseAsync();
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    // Bad input is named in one line; anything else is the harness's own failure and says so.
    process.stderr.write(`${problemLine(err)}${isBadInput(err) ? '' : ' (internal error)'}\n`);
    return EXIT.usage;
  }
}

async function main(): Promise<number> {
  if (argv[0] && SUBCOMMANDS[argv[0]]) return runSubcommand(argv[0]);
  if (earlyRequest(argv) === 'version') {
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  const [{ helpText, parseArgs }, { conform, EXIT }, { colorWanted }, { CHECKS }, { githubEnvironment, REPORTS }] =
    await Promise.all([
      import('./parse-args.ts'),
      import('../src/conform.ts'),
      import('../src/options.ts'),
      import('../suites/index.ts'),
      import('../reports/index.ts'),
    ]);
  const parsed = parseArgs(argv);
  switch (parsed.kind) {
    case 'help':
      process.stdout.write(`${await helpText()}\n`);
      return EXIT.ok;
    case 'version':
      process.stdout.write(`${pkg.version}\n`);
      return EXIT.ok;
    case 'error':
      process.stderr.write(`conform: ${parsed.message}\n`);
      return EXIT.usage;
    default:
      break;
  }
  const options = parsed.options;
  // The environment is read here only: the key stays out of argv, shell history and ps.
  if (options.target !== undefined && options.key === undefined) {
    const fromEnv = process.env[options.keyEnv];
    if (fromEnv) options.key = fromEnv;
  }
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  return conform(options, CHECKS, {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    tty: process.stdout.isTTY === true,
    color: colorWanted(process.env, process.stdout.isTTY === true),
    version: pkg.version,
    reports: REPORTS,
    github: githubEnvironment(process.env),
    signal: stop.signal,
    env: process.env,
    faults: (await import('../reference/faults/index.ts')).FAULTS,
    async startEmbedded({ transport, event }) {
      const { startReferenceServer } = await import('../reference/index.ts');
      return startReferenceServer(
        transport === 'socketio' ? ({ transport, event } as Parameters<typeof startReferenceServer>[0]) : {},
      );
    },
  });
}

const isSubcommand = argv[0] !== undefined && SUBCOMMANDS[argv[0]] !== undefined;
process.exitCode = await main();
// A run is over once its reports are written: a socket or timer a hostile target left open must
// not keep the process alive. Unref'd, so a clean run exits at once; `serve` and `load` own their lifetime.
if (!isSubcommand) setTimeout(() => process.exit(), LINGER_MS).unref();
