/**
 * `conform [options]`, the main command: its yargs definition, argv → `ConformOptions` (pure: no
 * process, no environment, no output, so it is tested directly), and the run: the key read from the
 * environment, the registry, the report writers and the embedded reference wired into the
 * library's IO. yargs parses; src/options.ts validates.
 */
import yargs from 'yargs';
import { UsageError } from '../../src/errors.ts';
import { OPTION_DEFAULTS, type ConformOptions } from '../../src/options.ts';
import { targetKey } from '../../src/target.ts';
import { REPORT_FORMAT_NAMES } from '../../reports/index.ts';
import { earlyRequest } from '../early-args.ts';
import { type CommandContext, type Example, type ExitCodes, helpEpilogue, helpWidth, yargsMessage } from './command.ts';
import { targetOptions } from './target-options.ts';

export type ParseResult =
  | { kind: 'run'; options: ConformOptions }
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'error'; message: string };

const list = (v: unknown): string[] =>
  (Array.isArray(v) ? v : v === undefined ? [] : [v])
    .flatMap((x) => String(x).split(','))
    .map((s) => s.trim())
    .filter(Boolean);

const USAGE = [
  'conform [--target URL | --profile FILE] [options]',
  '',
  'Checks a Real-Time Price Service against the spec. With neither --target nor --profile it checks the ' +
    'embedded reference service. The key of --target is read from CONFORM_API_KEY (--key-env NAME).',
  '',
  'conform init         discover a target and write its profile (conform init --help)',
  'conform serve        run the reference service, with a fault or a dialect (conform serve --help)',
  'conform load         fan-out and REST load tools (conform load --help)',
  'conform spec         print the OpenAPI or AsyncAPI document of the service (conform spec --help)',
  "conform explore      explore the stream's state space against a model of the spec (conform explore --help)",
  'conform replay FILE  run again a failure the explorer found, from its replay file (conform replay --help)',
  'conform completion   print a shell completion script (conform completion >> ~/.bashrc)',
].join('\n');

/** Real invocations, shown under Examples in `--help` (test/unit/cli-help.test.ts parses each). */
export const CONFORM_EXAMPLES: readonly Example[] = [
  ['conform', 'check the embedded reference service: the quickest way to see the suite work'],
  [
    'CONFORM_API_KEY=… conform --target https://prices.example.com',
    'a real target: discover it with one key, then check it',
  ],
  [
    'conform --profile staging.json --report console,json,html --min-coverage 90',
    'gate a release: reports for people and CI, exit 1 below 90 % of the rules',
  ],
  ['conform --rerun-failed conform-reports/conform-report.json', 'run again only what failed or errored'],
];

/** What `conform`'s exit codes mean (`EXIT` of src/conform.ts). */
export const CONFORM_EXIT_CODES: ExitCodes = {
  0: 'every check passed or skipped (a pass that left rules unchecked reads PASS (partial))',
  1:
    'a check failed or errored; or too little was checked (--min-coverage); or, with --fail-on-change, ' +
    'something changed against the baseline',
  2:
    'bad options, an unreadable or invalid profile, a target that does not answer, refuses the key or ' +
    'fails TLS verification: one line on stderr',
  3:
    'INCONCLUSIVE: network: no check failed, but some ended in CONFORM_NETWORK (a connection refused or reset ' +
    'after retries), so the run could not judge everything: run again',
};

/** Which checks run, and the listings that print the checks instead of running them. */
const SELECTION_OPTIONS = {
  only: {
    type: 'string',
    array: true,
    describe: 'run only these check ids, id prefixes or tags (comma-separated or repeated)',
  },
  skip: { type: 'string', array: true, describe: 'leave out these check ids, id prefixes or tags' },
  'rerun-failed': { type: 'string', describe: 'run only what failed or errored in this earlier JSON report' },
  list: {
    type: 'boolean',
    default: false,
    describe: 'print the checks (id, severity, tags, spec clause) and exit',
  },
  matrix: {
    type: 'boolean',
    default: false,
    describe: 'with --list: the traceability matrix (spec statement, checks, faults)',
  },
} as const;

/** What the run writes, what it compares with and what makes it exit 1. */
export const REPORT_OPTIONS = {
  report: {
    type: 'string',
    array: true,
    describe: `report formats: ${REPORT_FORMAT_NAMES.join(',')}`,
    default: OPTION_DEFAULTS.report,
  },
  out: {
    type: 'string',
    default: OPTION_DEFAULTS.out,
    describe: 'directory for the report files (and the job summary outside GitHub Actions)',
  },
  'list-unchecked': {
    type: 'boolean',
    default: false,
    describe: 'after the run, list every stated rule not checked in full: why, and what would check it',
  },
  verbose: {
    type: 'boolean',
    default: false,
    describe:
      'the console in full: a line per check, every failure and observation ' +
      '(the JSON and HTML reports always hold all)',
  },
  baseline: {
    type: 'string',
    describe: 'compare with this earlier JSON report: changed verdicts and observations',
  },
  'fail-on-change': {
    type: 'boolean',
    default: false,
    describe: 'exit 1 when anything changed against --baseline',
  },
  'min-coverage': {
    type: 'number',
    describe:
      'exit 1 when fewer than this percentage of the stated rules that need no operator state ' +
      "were checked (an error or a pass with nothing judged does not count); overrides the profile's minCoverage",
  },
} as const;

/** How the run paces itself and bounds what it reads and waits for. */
const RUN_OPTIONS = {
  concurrency: { type: 'number', default: OPTION_DEFAULTS.concurrency, describe: 'checks in flight at once' },
  timeout: {
    type: 'number',
    default: OPTION_DEFAULTS.timeout,
    describe: 'per-check timeout, ms (keep-alive checks set their own)',
  },
  bail: { type: 'boolean', default: false, describe: 'stop after the first failure or error' },
  'max-body': { type: 'number', default: OPTION_DEFAULTS.maxBody, describe: 'largest REST body read, bytes' },
  'max-payload': {
    type: 'number',
    default: OPTION_DEFAULTS.maxPayload,
    describe: 'largest WebSocket message accepted, bytes',
  },
  'slot-release-wait': {
    type: 'number',
    describe:
      "longest a refused connection within a key's allowance is waited out after a close, ms " +
      "(default 30000, or what the profile's timing states)",
  },
  'max-rate-wait': {
    type: 'number',
    describe:
      "longest the run waits on the target's REST rate limit in all, ms (default 10 minutes); " +
      "overrides the profile's maxRateWaitMs",
  },
  explore: {
    type: 'string',
    describe:
      "add ws.explore: sequences over the stream's connections and keys, held to a model of the spec, " +
      'for this long (60s, 500ms, 2m; see conform explore --help)',
  },
  seed: { type: 'number', describe: 'with --explore: the seed sequences are drawn from (default drawn and reported)' },
} as const;

/** The yargs definition of `conform [options]`, shared by parsing and the help text. */
export function conformYargs(argv: readonly string[]) {
  return yargs([...argv])
    .scriptName('conform')
    .usage(USAGE)
    .options(
      // The main command's own: not inherited by the commands beside it (the completion's tree holds them all).
      Object.fromEntries(
        Object.entries({
          ...targetOptions(['target', 'key', 'key-env', 'ws', 'profile', 'transport', 'event', 'ca']),
          ...SELECTION_OPTIONS,
          ...REPORT_OPTIONS,
          ...RUN_OPTIONS,
        }).map(([name, o]) => [name, { ...o, global: false }]),
      ),
    )
    .epilogue(helpEpilogue(CONFORM_EXAMPLES, CONFORM_EXIT_CODES))
    .help(false)
    .version(false)
    .strict()
    .exitProcess(false)
    .wrap(helpWidth());
}

const single = (name: string, v: unknown): string | undefined => {
  if (Array.isArray(v)) throw new UsageError(`--${name} given more than once`);
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new UsageError(`--${name} needs a value`);
  return v;
};

/** The text given for `--name` (`--name VALUE` or `--name=VALUE`), the last one given. */
function typedValue(argv: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  argv.forEach((a, i) => {
    if (a === `--${name}`) value = argv[i + 1];
    else if (a.startsWith(`--${name}=`)) value = a.slice(name.length + 3);
  });
  return value;
}

/** What yargs made of argv, or the one line that says what it could not read. */
function yargsArgv(argv: readonly string[]): { args: Record<string, unknown> } | { message: string } {
  try {
    const args = conformYargs(argv)
      .fail((msg, err) => {
        throw err ?? new UsageError(yargsMessage(msg));
      })
      .parseSync() as Record<string, unknown>;
    return { args };
  } catch (err) {
    const msg = (err as Error).message.split('\n')[0]!;
    const unknown = /^Unknown arguments?: (.*)$/.exec(msg);
    if (!unknown) return { message: msg };
    const name = unknown[1]!.split(', ')[0]!;
    // yargs names the option without its dashes; give it back as the user typed it.
    const typed = argv.find((a) => a.replace(/^-+/, '').split('=')[0] === name);
    return {
      message: typed?.startsWith('-') ? `unknown option: ${typed.split('=')[0]}` : `unexpected argument: ${name}`,
    };
  }
}

/** The options yargs' parse gives; throws UsageError for a value given twice or not a number. */
function optionsOf(a: Record<string, unknown>, argv: readonly string[]): ConformOptions {
  const num = (name: string): number => {
    const v = a[name];
    if (Array.isArray(v)) throw new UsageError(`--${name} given more than once`);
    if (typeof v === 'number' && !Number.isNaN(v)) return v;
    // yargs has turned what was typed into NaN; the message quotes what was typed.
    throw new UsageError(`--${name}: must be a number (got ${JSON.stringify(typedValue(argv, name) ?? '')})`);
  };
  const options: ConformOptions = {
    ...OPTION_DEFAULTS,
    target: single('target', a.target),
    key: single('key', a.key),
    keyEnv: single('key-env', a['key-env']) ?? OPTION_DEFAULTS.keyEnv,
    ws: single('ws', a.ws),
    profile: single('profile', a.profile),
    only: list(a.only),
    skip: list(a.skip),
    list: a.list === true,
    report: list(a.report) as ConformOptions['report'],
    out: single('out', a.out) ?? OPTION_DEFAULTS.out,
    concurrency: num('concurrency'),
    timeout: num('timeout'),
    bail: a.bail === true,
    rerunFailed: single('rerun-failed', a['rerun-failed']),
    baseline: single('baseline', a.baseline),
    failOnChange: a['fail-on-change'] === true,
    transport: single('transport', a.transport) as ConformOptions['transport'],
    event: single('event', a.event),
    ca: single('ca', a.ca),
    maxBody: num('max-body'),
    maxPayload: num('max-payload'),
    matrix: a.matrix === true,
    minCoverage: a['min-coverage'] === undefined ? undefined : num('min-coverage'),
    listUnchecked: a['list-unchecked'] === true,
    verbose: a.verbose === true,
    slotReleaseWait: a['slot-release-wait'] === undefined ? undefined : num('slot-release-wait'),
    maxRateWait: a['max-rate-wait'] === undefined ? undefined : num('max-rate-wait'),
    explore: single('explore', a.explore),
    seed: a.seed === undefined ? undefined : num('seed'),
  };
  for (const k of Object.keys(options) as (keyof ConformOptions)[]) if (options[k] === undefined) delete options[k];
  return options;
}

/** Parses argv (without node and the script). Never throws: problems come back as one line. */
export function parseArgs(argv: readonly string[]): ParseResult {
  const early = earlyRequest(argv);
  if (early) return { kind: early };
  const parsed = yargsArgv(argv);
  if ('message' in parsed) return { kind: 'error', message: parsed.message };
  const a = parsed.args;
  if ((a._ as unknown[]).length > 0)
    return { kind: 'error', message: `unexpected argument: ${String((a._ as unknown[])[0])} (options start with --)` };
  try {
    return { kind: 'run', options: optionsOf(a, argv) };
  } catch (err) {
    return { kind: 'error', message: (err as Error).message };
  }
}

/**
 * The console's width: `COLUMNS` when set (the shell's convention, honoured off a terminal too),
 * else the terminal's; off a terminal without it, the report's default (120).
 */
export function consoleWidth(
  stdout: { isTTY?: boolean; columns?: number },
  env: Readonly<Record<string, string | undefined>>,
): { width?: number } {
  const columns = Number(env.COLUMNS);
  if (Number.isInteger(columns) && columns > 0) return { width: columns };
  return stdout.isTTY && stdout.columns ? { width: stdout.columns } : {};
}

/** The help text. */
export const helpText = (): Promise<string> => conformYargs([]).getHelp();

/**
 * Runs `conform [options]`: parses argv, reads the key from the environment, and calls the library
 * with the checks, the report writers and the embedded reference; returns the exit code.
 */
export async function runConform(argv: readonly string[], ctx: CommandContext): Promise<number> {
  const { EXIT } = await import('../../src/conform.ts');
  const parsed = parseArgs(argv);
  switch (parsed.kind) {
    case 'help':
      process.stdout.write(`${await helpText()}\n`);
      return EXIT.ok;
    case 'version':
      process.stdout.write(`${ctx.version}\n`);
      return EXIT.ok;
    case 'error':
      process.stderr.write(`conform: ${parsed.message}\n`);
      return EXIT.usage;
    default:
      break;
  }
  return runWithOptions(parsed.options, ctx);
}

/**
 * Runs the library with `options` as the CLI runs it: the key read from the environment, the
 * checks, the report writers and the embedded reference; returns the exit code. `conform explore`
 * and `conform replay` run through it too.
 */
export async function runWithOptions(options: ConformOptions, ctx: CommandContext): Promise<number> {
  const [{ conform }, { colorWanted }, { CHECKS }, { githubEnvironment, REPORTS }] = await Promise.all([
    import('../../src/conform.ts'),
    import('../../src/options.ts'),
    import('../../suites/index.ts'),
    import('../../reports/index.ts'),
  ]);
  // The environment is read here only: the key stays out of argv, shell history and ps.
  const key = targetKey(options, process.env);
  if (key !== undefined) options.key = key;
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  return conform(options, CHECKS, {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    tty: process.stdout.isTTY === true,
    color: colorWanted(process.env, process.stdout.isTTY === true),
    ...consoleWidth(process.stdout, process.env),
    version: ctx.version,
    reports: REPORTS,
    github: githubEnvironment(process.env),
    signal: stop.signal,
    env: process.env,
    faults: (await import('../../reference/faults/index.ts')).FAULTS,
    async startEmbedded({ transport, event }) {
      const { startReferenceServer } = await import('../../reference/index.ts');
      return startReferenceServer(
        transport === 'socketio' ? ({ transport, event } as Parameters<typeof startReferenceServer>[0]) : {},
      );
    },
  });
}
