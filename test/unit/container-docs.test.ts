/**
 * docs/container.md shows real runs: every `docker run` of the image passes conform arguments its
 * own parser accepts (the main command's, or a load mode's), and a run against a target takes its
 * key from the environment (`-e CONFORM_API_KEY`, no value), never from `--key`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { type Command, yargsModule } from '../../bin/commands/command.ts';
import { parseArgs } from '../../bin/commands/conform.ts';
import { loadCommand } from '../../bin/commands/load.ts';
import { ROOT } from '../helpers/conform-cli.ts';

const IMAGE = 'conform:0.1.0';
const doc = readFileSync(path.join(ROOT, 'docs/container.md'), 'utf8');

/** Every `docker run …` of the page, its continuation lines joined, as the shell's words (quotes removed). */
const runs: string[][] = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)]
  .flatMap((m) => m[1]!.replace(/\\\n\s*/g, ' ').split('\n'))
  .concat([...doc.matchAll(/`(docker run [^`]+)`/g)].map((m) => m[1]!))
  .filter((line) => line.trimStart().startsWith('docker run '))
  .map((line) => (line.match(/"[^"]*"|'[^']*'|\S+/g) ?? []).map((w) => w.replace(/^(['"])(.*)\1$/, '$2')));

const inert = (c: Command): Command => ({ ...c, run: async () => 0, subcommands: c.subcommands?.map(inert) });

async function loadParses(argv: string[]): Promise<void> {
  await yargs(argv)
    .command(yargsModule(inert(loadCommand), { version: '0' }, () => {}))
    .strict()
    .help(false)
    .version(false)
    .fail((msg, err) => {
      throw err ?? new Error(msg);
    })
    .parseAsync();
}

describe('docs/container.md', () => {
  it('shows conformance and load runs of the image', () => {
    const args = runs.map((words) => words.slice(words.indexOf(IMAGE) + 1));
    expect(runs.length).toBeGreaterThanOrEqual(5);
    expect(args.some((a) => a[0] === 'load')).toBe(true);
    expect(args.some((a) => a.includes('--target') && a[0] !== 'load')).toBe(true);
    expect(args.some((a) => a.includes('--profile'))).toBe(true);
  });

  it.each(runs.map((words) => [words.join(' '), words] as const))(
    '%s: conform accepts its arguments',
    async (_, words) => {
      const at = words.indexOf(IMAGE);
      expect(at, 'the image is named').toBeGreaterThan(1);
      const args = words.slice(at + 1);
      // Help is answered before any other argument is read.
      if (args.includes('--help')) return;
      if (args[0] === 'load') await expect(loadParses(args)).resolves.toBeUndefined();
      else expect(parseArgs(args).kind).toBe('run');
      if (args.includes('--target') || args.includes('--profile')) {
        expect(words.slice(0, at)).toContain('CONFORM_API_KEY');
        expect(words[words.indexOf('CONFORM_API_KEY') - 1]).toBe('-e');
      }
      expect(args).not.toContain('--key');
    },
  );
});
