/**
 * The supported Node lines and the version pinned for each, as scripts/install-node.sh states them,
 * and the way to put one on PATH. Read by running the script, so the pins are written once.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './conform-cli.ts';

const SCRIPT = path.join(ROOT, 'scripts/install-node.sh');

/** Each supported line (`22`) and the version pinned for it (`22.23.3`). */
export function nodeLines(): { line: string; version: string }[] {
  return execFileSync('bash', [SCRIPT, '--list'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => {
      const [line, version] = l.split(' ');
      return { line: line!, version: version! };
    });
}

/** Installs the pinned Node of `line` (once) and returns the folder holding its `node`. */
export function installNode(line: string): string {
  return execFileSync('bash', [SCRIPT, line], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}
