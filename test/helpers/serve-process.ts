/** `conform serve` as a user runs it (a child process of bin/conform.js), for tests of outside tools. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BIN, ROOT } from './conform-cli.ts';

export interface ServeProcess {
  rest: string;
  profileFile: string;
  primaryKey: string;
  stop(): Promise<void>;
}

/**
 * Starts `conform serve --port 0 --profile-out DIR/profile.json …args`; resolves once it has
 * printed where it listens.
 */
export async function startServeProcess(dir: string, args: string[] = []): Promise<ServeProcess> {
  const profileFile = path.join(dir, 'profile.json');
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--profile-out', profileFile, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const rest = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      // The profile line comes last, once the file is written.
      const m = /REST\s+(\S+)[\s\S]*\nprofile /.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`conform serve exited ${code}: ${err.trim()}`)));
  });
  const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as { keys: { primary: { key: string } } };
  return {
    rest,
    profileFile,
    primaryKey: profile.keys.primary.key,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
