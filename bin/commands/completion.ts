/**
 * `conform completion`: the shell completion script of yargs' own completion command, and the
 * completions that script asks for (`conform --get-yargs-completions conform load f`), computed over
 * one yargs tree of every command, load mode and option, so a completion offers exactly what the
 * command takes.
 */
import yargs from 'yargs';
import { type Command, type CommandContext, type Example, type ExitCodes, helpEpilogue, helpWidth } from './command.ts';
import { yargsModule } from './command.ts';
import { conformYargs } from './conform.ts';

/** The command yargs answers; its name is what `conform --help` lists. */
export const COMPLETION_COMMAND = 'completion';
/** What the completion script asks with: the words typed so far after it. */
export const COMPLETION_REQUEST = '--get-yargs-completions';

const DESCRIBE = 'print a shell completion script for conform (bash; zsh with bashcompinit)';

export const COMPLETION_EXAMPLES: readonly Example[] = [
  ['conform completion >> ~/.bashrc', 'complete commands, load modes and options in every new bash'],
  ['source <(conform completion)', 'in this shell only'],
];

export const COMPLETION_EXIT_CODES: ExitCodes = { 0: 'the script (or the completions asked for) was printed' };

/** Whether argv asks for the script, its help, or completions. */
export const isCompletion = (argv: readonly string[]): boolean =>
  argv[0] === COMPLETION_COMMAND || argv[0] === COMPLETION_REQUEST;

/** One yargs tree of the main command's options and every command under it, with yargs' completion command. */
export function completionTree(argv: readonly string[], commands: readonly Command[], ctx: CommandContext) {
  let tree = conformYargs([...argv]);
  for (const c of commands) tree = tree.command(yargsModule(c, ctx, () => {}));
  return tree.completion(COMPLETION_COMMAND, DESCRIBE);
}

/**
 * Prints the completion script, or the completions of the words after `--get-yargs-completions`,
 * from the tree of `commands` under the main command's options; returns the exit code.
 */
export async function runCompletion(
  argv: readonly string[],
  commands: readonly Command[],
  ctx: CommandContext,
): Promise<number> {
  if (argv[0] === COMPLETION_COMMAND && (argv.includes('--help') || argv.includes('-h'))) {
    const help = await yargs([])
      .scriptName('conform')
      .usage(`conform ${COMPLETION_COMMAND}\n\n${DESCRIBE}`)
      .epilogue(helpEpilogue(COMPLETION_EXAMPLES, COMPLETION_EXIT_CODES))
      .help(false)
      .version(false)
      .wrap(helpWidth())
      .getHelp();
    process.stdout.write(`${help}\n`);
    return 0;
  }
  const tree = completionTree(argv, commands, ctx);
  // The script is yargs' own; the parse below answers what it asks (`--get-yargs-completions …`).
  if (argv[0] === COMPLETION_COMMAND) tree.showCompletionScript();
  else await tree.parseAsync();
  return 0;
}
