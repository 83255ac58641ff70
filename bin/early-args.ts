/**
 * `--help` and `--version` win over every other argument. Kept apart from commands/conform.ts (which
 * loads yargs) so the CLI can answer `--version` before anything heavy is imported.
 */
export function earlyRequest(argv: readonly string[]): 'help' | 'version' | undefined {
  if (argv.includes('--help') || argv.includes('-h')) return 'help';
  if (argv.includes('--version')) return 'version';
  return undefined;
}
