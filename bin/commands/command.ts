/**
 * What every command of the CLI is: its yargs definition and a handler that returns the exit
 * code. Handlers never set `process.exitCode`: bin/cli.ts does, with the code `runCommand` returns.
 */
import yargs, { type Argv, type CommandModule } from 'yargs';
import { EXIT, problemLine } from '../../src/conform.ts';
import { isBadInput, UsageError } from '../../src/errors.ts';
import { fitLine, fitShellLine } from '../../reports/wrap.ts';

/** What the CLI knows before any command runs. */
export interface CommandContext {
  /** The package's version (`conform spec` writes it into the documents). */
  version: string;
}

/** One invocation shown under Examples in `--help`: the command line, and what it does. */
export type Example = readonly [command: string, what: string];

/** What each exit code of a command means, as its `--help` says. */
export type ExitCodes = Readonly<Partial<Record<0 | 1 | 2 | 3, string>>>;

/** Columns of `--help`: the terminal's, at most 100; 100 off a terminal. */
export const helpWidth = (): number => Math.min(100, process.stdout.columns || 100);

/**
 * The end of a command's `--help`: its examples, each command line over what it does, then what
 * each exit code means. Laid out here rather than by yargs' two columns, where a long command
 * line breaks mid-argument.
 */
export function helpEpilogue(examples: readonly Example[], codes: ExitCodes, width = helpWidth()): string {
  const wrapped = (text: string, indent: string): string[] => fitLine(`${indent}${text}`, width);
  return [
    ...(examples.length ? ['Examples:'] : []),
    ...examples.flatMap(([command, what]) => [...fitShellLine(`  ${command}`, width), ...wrapped(what, '      ')]),
    ...(examples.length ? [''] : []),
    'Exit codes:',
    ...Object.entries(codes).flatMap(([code, what]) => wrapped(`${code}  ${what}`, '  ')),
  ].join('\n');
}

/** One command: `conform <command>`, or a mode under one (`conform load fanout`). */
export interface Command {
  /** The yargs command string: the name, then its positionals (`merge [results..]`). */
  command: string;
  /** What `--help` says of it; false leaves it out of the list of commands. */
  describe: string | false;
  /** Declares the command's options; each mode lists only its own in `--help`. */
  builder(y: Argv): Argv;
  /** Two to four real invocations, shown under Examples in `--help` (a test parses each). */
  examples: readonly Example[];
  /** What its exit codes mean, shown at the end of `--help`. */
  exitCodes: ExitCodes;
  /** Runs the command with what yargs parsed; returns the exit code. */
  run(argv: Record<string, unknown>, ctx: CommandContext): Promise<number>;
  /** Commands under this one, each with its own options and help. */
  subcommands?: readonly Command[];
}

/** yargs writes some messages over several lines (`Invalid values:` then the argument); one line keeps them whole. */
export const yargsMessage = (msg: string): string =>
  msg
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ');

/** The command as yargs takes it, its sub-commands registered under it; `done` is told the exit code. */
export function yargsModule(c: Command, ctx: CommandContext, done: (code: number) => void): CommandModule {
  return {
    command: c.command,
    describe: c.describe,
    builder: (y: Argv) => {
      let built = c.builder(y);
      // A hidden command (a mode's fallback) runs its builder under its parent's help: it adds nothing to it.
      if (c.describe !== false) built = built.epilogue(helpEpilogue(c.examples, c.exitCodes)).wrap(helpWidth());
      for (const sub of c.subcommands ?? []) built = built.command(yargsModule(sub, ctx, done));
      return built;
    },
    handler: async (argv) => done(await c.run(argv as Record<string, unknown>, ctx)),
  };
}

/**
 * Parses `argv` (without node and the script) as `conform <command> …` and runs the command;
 * returns its exit code. Bad input is named in one line; anything else thrown is the harness's own
 * failure and says so. `--help` prints the command's help and exits.
 */
export async function runCommand(command: Command, argv: readonly string[], ctx: CommandContext): Promise<number> {
  let code: number = EXIT.ok;
  try {
    // fail() must throw: yargs runs the handler anyway when it returns.
    await yargs([...argv])
      .scriptName('conform')
      .command(yargsModule(command, ctx, (c) => (code = c)))
      .help()
      .version(false)
      .strict()
      .fail((msg, err) => {
        throw err ?? new UsageError(yargsMessage(msg));
      })
      .parseAsync();
    return code;
  } catch (err) {
    process.stderr.write(`${problemLine(err)}${isBadInput(err) ? '' : ' (internal error)'}\n`);
    return EXIT.usage;
  }
}
