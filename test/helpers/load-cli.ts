/** Runs `conform load …` through a tiny yargs instance, in-process; the exit code and what was printed. */
import { vi } from 'vitest';
import yargs from 'yargs';
import { loadCommand } from '../../load/cli-command.ts';

export async function loadCli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => { out += String(c); return true; });
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((c) => { err += String(c); return true; });
  const before = process.exitCode;
  process.exitCode = undefined;
  try {
    await yargs(args).command(loadCommand).strict().exitProcess(false).fail((msg, error) => { throw error ?? new Error(msg); }).parseAsync();
    return { code: Number(process.exitCode ?? 0), out, err };
  } finally {
    process.exitCode = before;
    o.mockRestore();
    e.mockRestore();
  }
}
