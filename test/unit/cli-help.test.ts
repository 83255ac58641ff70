/**
 * Help that teaches: every command's `--help` (the main one, each command beside it, each load mode,
 * the completion) ends with two to four examples, each of which its own parser accepts, and what
 * each exit code means; `conform --help` names every command; and shell completion is yargs' own,
 * completing commands, load modes and each mode's own options, in a real bash.
 */
import { exploreCommand, replayCommand } from '../../bin/commands/explore.ts';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yargs from 'yargs';
import { afterAll, describe, expect, it } from 'vitest';
import { type Command, type Example, yargsModule } from '../../bin/commands/command.ts';
import { COMPLETION_EXAMPLES, completionTree } from '../../bin/commands/completion.ts';
import { CONFORM_EXAMPLES, helpText, parseArgs } from '../../bin/commands/conform.ts';
import { initCommand } from '../../bin/commands/init.ts';
import { loadCommand } from '../../bin/commands/load.ts';
import { serveCommand } from '../../bin/commands/serve.ts';
import { specCommand } from '../../bin/commands/spec.ts';
import { BIN, conform } from '../helpers/conform-cli.ts';

/** The words of an example as the shell would pass them after `conform`: no variable, no redirection, no quotes. */
function argvOf(example: string): string[] {
  const words = (example.match(/'[^']*'|\S+/g) ?? []).map((w) => w.replace(/^'(.*)'$/, '$1'));
  const start = words.indexOf('conform');
  const end = words.findIndex((w, i) => i > start && /^[<>]/.test(w));
  return words.slice(start + 1, end < 0 ? undefined : end);
}

/** The command with every handler a no-op, so parsing an example runs nothing. */
const inert = (c: Command): Command => ({ ...c, run: async () => 0, subcommands: c.subcommands?.map(inert) });

/** Parses argv as yargs would for `conform <command> …`, strictly; rejects with the message of what it refuses. */
async function parsedBy(command: Command, argv: string[]): Promise<void> {
  await yargs(argv)
    .command(yargsModule(inert(command), { version: '0' }, () => {}))
    .strict()
    .help(false)
    .version(false)
    .fail((msg, err) => {
      throw err ?? new Error(msg);
    })
    .parseAsync();
}

/** The commands beside the main one, and the load modes, each with how `--help` is asked of it. */
const COMMANDS: [string[], Command][] = [
  [['serve'], serveCommand],
  [['init'], initCommand],
  [['spec'], specCommand],
  [['load'], loadCommand],
  [['explore'], exploreCommand],
  [['replay'], replayCommand],
  ...loadCommand
    .subcommands!.filter((m) => m.describe !== false)
    .map((m): [string[], Command] => [['load', m.command.split(' ')[0]!], m]),
];

it('holds every command bin/cli.ts registers to these rules', () => {
  // A command added to the CLI is added here too, so its help is held to the same rules.
  const registered = [
    ...readFileSync(new URL('../../bin/cli.ts', import.meta.url), 'utf8').matchAll(/^ {2}(\w+): \{ file:/gm),
  ];
  expect(registered.map((m) => m[1]).sort()).toEqual(
    COMMANDS.filter(([a]) => a.length === 1)
      .map(([a]) => a[0])
      .sort(),
  );
});

/** The `--help` of `conform <argv>`, as yargs writes it for the command (in-process: no child per command). */
const helpOf = (argv: string[]): Promise<string> =>
  new Promise((resolve) => {
    const [, command] = COMMANDS.find(([a]) => a[0] === argv[0])!;
    void yargs()
      .scriptName('conform')
      .command(yargsModule(inert(command), { version: '0' }, () => {}))
      .help()
      .version(false)
      .parse([...argv, '--help'], {}, (_err, _argv, output) => {
        if (output) resolve(output);
      });
  });

/** The examples and exit codes at the end of a help text. */
function helpEnd(help: string): { examples: string[]; codes: string[] } {
  const examples = help.slice(help.indexOf('\nExamples:\n'), help.indexOf('\nExit codes:\n'));
  return {
    examples: examples.split('\n').filter((l) => /^ {2}\S/.test(l)),
    codes: help
      .slice(help.indexOf('\nExit codes:\n'))
      .split('\n')
      .filter((l) => /^ {2}\d {2}/.test(l))
      .map((l) => l.trim()[0]!),
  };
}

describe('--help of every command', () => {
  it('ends conform --help with its examples and exit codes, and names every command', async () => {
    const r = await conform(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${await helpText()}\n`);
    const { examples, codes } = helpEnd(r.stdout);
    expect(examples.length).toBeGreaterThanOrEqual(2);
    expect(examples.length).toBeLessThanOrEqual(4);
    expect(codes).toEqual(['0', '1', '2', '3']);
    for (const name of ['init', 'serve', 'load', 'spec', 'completion'])
      expect(r.stdout).toMatch(new RegExp(`^conform ${name} `, 'm'));
  });

  it.each(COMMANDS.map(([argv, c]) => [argv.join(' '), argv, c] as const))(
    'ends conform %s --help with two to four examples and what each exit code means',
    async (_name, argv, command) => {
      const { examples, codes } = helpEnd(await helpOf(argv));
      expect(examples.length).toBe(command.examples.length);
      expect(command.examples.length).toBeGreaterThanOrEqual(2);
      expect(command.examples.length).toBeLessThanOrEqual(4);
      expect(codes).toEqual(Object.keys(command.exitCodes));
      expect(codes).toContain('0');
      expect(codes).toContain('2');
    },
  );

  it('ends conform completion --help with its examples and exit code', async () => {
    const r = await conform(['completion', '--help']);
    expect(r.code).toBe(0);
    expect(helpEnd(r.stdout)).toEqual({ examples: COMPLETION_EXAMPLES.map(([c]) => `  ${c}`), codes: ['0'] });
  });

  it("lists only a load mode's own options in its help, as the command line prints it", async () => {
    const fanout = await conform(['load', 'fanout', '--help']);
    expect(fanout.code).toBe(0);
    expect(fanout.stdout).toMatch(/--clients/);
    expect(fanout.stdout).not.toMatch(/--rate\b|--endpoint\b|--arrival\b/);
    expect(helpEnd(fanout.stdout).examples.length).toBe(loadCommand.subcommands![0]!.examples.length);
    const rest = await helpOf(['load', 'rest']);
    expect(rest).toMatch(/--endpoint/);
    expect(rest).not.toMatch(/--clients\b|--ramp-rate\b|--shard\b/);
  });
});

describe('the examples', () => {
  it('of conform are runs its parser accepts', () => {
    for (const [example] of CONFORM_EXAMPLES) expect(parseArgs(argvOf(example)).kind, example).toBe('run');
  });

  it.each(COMMANDS.flatMap(([argv, c]) => c.examples.map((e): [string, string[], Example] => [e[0], argv, e])))(
    '%s is accepted by its command',
    async (_text, argv, [example]) => {
      const words = argvOf(example);
      // A load example may name another mode: each is parsed by the command it names.
      const root = argv[0] === 'load' ? loadCommand : COMMANDS.find(([a]) => a[0] === words[0])![1];
      await expect(parsedBy(root, words)).resolves.toBeUndefined();
    },
  );

  it('are refused when they name an option the command lacks (the parse is strict)', async () => {
    await expect(parsedBy(loadCommand, ['load', 'fanout', '--rate', '200'])).rejects.toThrow(/Unknown argument/);
    expect(parseArgs(['--bogus']).kind).toBe('error');
  });
});

describe('shell completion', () => {
  const commands = [serveCommand, loadCommand, specCommand, initCommand];
  /** What the completion tree offers after `conform <words>` (in-process, as the script's request gets it). */
  const complete = (...words: string[]): Promise<string[]> =>
    new Promise((resolve) => {
      const argv = ['--get-yargs-completions', 'conform', ...words];
      void completionTree(argv, commands, { version: '0' }).parse(argv, {}, (_err, _argv, output) => {
        if (output) resolve(output.trim().split('\n'));
      });
    });

  it("prints yargs' completion script, which asks conform itself for completions", async () => {
    const r = await conform(['completion']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('###-begin-conform-completions-###');
    expect(r.stdout).toContain(`conform --get-yargs-completions "$\{args[@]}"`);
    expect(r.stdout).toMatch(/complete .*-F _conform_yargs_completions conform/);
  });

  it('completes the commands, the load modes, and each mode with its own options only', async () => {
    expect(await complete('')).toEqual(expect.arrayContaining(['serve', 'load', 'spec', 'init', 'completion']));
    expect(await complete('load', '')).toEqual(['fanout', 'rest', 'calibrate', 'merge', 'trend', 'capacity']);
    const fanout = await complete('load', 'fanout', '--');
    expect(fanout).toContain('--clients');
    expect(fanout).not.toContain('--rate');
    expect(fanout).not.toContain('--only');
    const rest = await complete('load', 'rest', '--');
    expect(rest).toContain('--rate');
    expect(rest).not.toContain('--clients');
    expect(await complete('--')).toEqual(expect.arrayContaining(['--profile', '--only', '--verbose']));
  });

  const dir = mkdtempSync(path.join(tmpdir(), 'conform-completion-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('completes in a real bash once the script is sourced', async () => {
    // conform on PATH, as an installed package puts it there.
    writeFileSync(path.join(dir, 'conform'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 });
    /** Completes the words as bash does when TAB is pressed after the last one, and prints what it offers. */
    const tab = (label: string, words: string): string =>
      `COMP_WORDS=(${words}); COMP_CWORD=${words.split(' ').length - 1}; _conform_yargs_completions; ` +
      `echo "${label}: $\{COMPREPLY[*]}"`;
    const script = [
      'source <(conform completion)',
      tab('modes', 'conform load f'),
      tab('rest', 'conform load rest --ra'),
    ].join('\n');
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        'bash',
        ['-c', script],
        { env: { ...process.env, PATH: `${dir}${path.delimiter}${process.env.PATH ?? ''}` } },
        (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout)),
      ),
    );
    expect(out).toContain('modes: fanout\n');
    expect(out).toContain('rest: --rate\n');
  });
});
