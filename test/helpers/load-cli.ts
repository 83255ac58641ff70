/** Runs the real `conform load …` (bin/conform.js) in a child process; the exit code and what was printed. */
import { conform } from './conform-cli.ts';

export async function loadCli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const r = await conform(args);
  return { code: r.code, out: r.stdout, err: r.stderr };
}
