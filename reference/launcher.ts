/**
 * Whether the processes that launched `conform serve` are still there. `npx conform serve` (or
 * `npm run …`) runs it under a shell under npm; a signal to npm reaches at most the shell, and
 * once they are gone the service would keep its port with nobody to stop it. So, when npm
 * launched it, the service watches its launchers and stops when one of them is gone.
 */
import { readFileSync } from 'node:fs';

/** How often the launchers are looked at; a stop takes at most this long to be noticed. */
export const LAUNCHER_POLL_MS = 500;

/** The parent of `pid`, read from /proc (Linux); undefined where that is not available. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 4, after the command name in parentheses (which may itself hold spaces or parentheses).
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) && ppid > 1 ? ppid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The processes to watch: none when npm did not launch this one (a service run with `nohup` or
 * `&` outlives its shell on purpose), else the parent (the shell npm ran) and its parent (npm).
 */
export function launchers(env: Readonly<Record<string, string | undefined>>, ppid = process.ppid): number[] {
  if (env.npm_command === undefined || ppid <= 1) return [];
  const grandparent = parentOf(ppid);
  return grandparent === undefined ? [ppid] : [ppid, grandparent];
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, owned by someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Calls `gone` once when one of `pids` has exited (or this process was handed to another parent); returns a stop. */
export function whenLaunchersGone(pids: readonly number[], gone: () => void): () => void {
  if (pids.length === 0) return () => {};
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent || !pids.every(alive)) {
      clearInterval(timer);
      gone();
    }
  }, LAUNCHER_POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
