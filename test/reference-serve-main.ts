/** A minimal `conform` with only `serve`, as bin/cli.ts wires it: yargs, one-line errors, exit 2. */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { serveCommand } from '../reference/serve-command.ts';

let code = 0;
try {
  await yargs(hideBin(process.argv))
    .scriptName('conform')
    .command(serveCommand)
    .strict()
    .fail((msg, err) => {
      process.stderr.write(`conform: ${(err?.message ?? msg).split('\n')[0]}\n`);
      code = 2;
    })
    .parseAsync();
} catch {
  // yargs calls fail() and then rejects for a handler that throws: the line is already printed.
  code = 2;
}
process.exitCode = code;
