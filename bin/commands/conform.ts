/**
 * argv → options: pure (no process, no environment, no output), so it is tested directly.
 * yargs parses; src/options.ts validates.
 */
import yargs from 'yargs';
import { UsageError } from '../src/errors.ts';
import { OPTION_DEFAULTS, type ConformOptions } from '../src/options.ts';
import { REPORT_FORMAT_NAMES } from '../reports/index.ts';
import { earlyRequest } from './early-args.ts';

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

/** The yargs definition of `conform [options]`, shared by parsing and the help text. */
export function conformYargs(argv: readonly string[]) {
  return yargs([...argv])
    .scriptName('conform')
    .usage(
      'conform [--target URL --key KEY | --profile FILE] [options]\n\nChecks a Real-Time Price ' +
        'Service against the spec. With neither --target nor --profile it checks the embedded ' +
        'reference service.\n\nconform serve   run the reference service (see conform serve ' +
        '--help)\nconform load    fan-out and REST load tools (see conform load --help)\nconform init    ' +
        'discover a target and write its profile (see conform init --help)',
    )
    .options({
      target: { type: 'string', describe: 'REST base URL of the target (the harness appends /v1/pairs, /v1/price)' },
      key: {
        type: 'string',
        describe: 'API key for --target (prefer --key-env: keeps it out of shell history and ps)',
      },
      'key-env': {
        type: 'string',
        default: OPTION_DEFAULTS.keyEnv,
        describe: 'environment variable holding the key for --target',
      },
      ws: { type: 'string', describe: 'WebSocket URL for --target (the spec does not show its path)' },
      profile: { type: 'string', describe: 'target profile JSON (schemas/profile.schema.json)' },
      only: {
        type: 'string',
        array: true,
        describe: 'run only these check ids, id prefixes or tags (comma-separated or repeated)',
      },
      skip: { type: 'string', array: true, describe: 'leave out these check ids, id prefixes or tags' },
      list: {
        type: 'boolean',
        default: false,
        describe: 'print the catalogue (id, severity, tags, spec clause) and exit',
      },
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
      concurrency: { type: 'number', default: OPTION_DEFAULTS.concurrency, describe: 'checks in flight at once' },
      timeout: {
        type: 'number',
        default: OPTION_DEFAULTS.timeout,
        describe: 'per-check timeout, ms (keep-alive checks set their own)',
      },
      bail: { type: 'boolean', default: false, describe: 'stop after the first failure or error' },
      'rerun-failed': { type: 'string', describe: 'run only what failed or errored in this earlier JSON report' },
      baseline: {
        type: 'string',
        describe: 'compare with this earlier JSON report: changed verdicts and observations',
      },
      'fail-on-change': {
        type: 'boolean',
        default: false,
        describe: 'exit 1 when anything changed against --baseline',
      },
      transport: {
        type: 'string',
        describe: 'stream transport for --target or the embedded service: ws (default) or socketio',
      },
      event: { type: 'string', describe: 'Socket.IO event that carries the JSON messages (with --transport socketio)' },
      'max-body': { type: 'number', default: OPTION_DEFAULTS.maxBody, describe: 'largest REST body read, bytes' },
      'max-payload': {
        type: 'number',
        default: OPTION_DEFAULTS.maxPayload,
        describe: 'largest WebSocket message accepted, bytes',
      },
      matrix: {
        type: 'boolean',
        default: false,
        describe: 'with --list: the traceability matrix (spec statement, checks, faults)',
      },
      'slot-release-wait': {
        type: 'number',
        describe:
          "longest a refused connection within a key's allowance is waited out after a close, ms " +
          "(default 30000, or what the profile's timing states)",
      },
      'min-coverage': {
        type: 'number',
        describe:
          'exit 1 when fewer than this percentage of the stated rules that need no operator state ' +
          "were checked (an error or a pass with nothing judged does not count); overrides the profile's minCoverage",
      },
      'list-unchecked': {
        type: 'boolean',
        default: false,
        describe: 'after the run, list every stated rule not checked in full: why, and what would check it',
      },
      'max-rate-wait': {
        type: 'number',
        describe:
          "longest the run waits on the target's REST rate limit in all, ms (default 10 minutes); " +
          "overrides the profile's maxRateWaitMs",
      },
    })
    .help(false)
    .version(false)
    .strict()
    .exitProcess(false)
    .wrap(100);
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

/** yargs writes some messages over several lines (`Invalid values:` then the argument); one line keeps them whole. */
export const yargsMessage = (msg: string): string =>
  msg
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ');

/** Parses argv (without node and the script). Never throws: problems come back as one line. */
export function parseArgs(argv: readonly string[]): ParseResult {
  const early = earlyRequest(argv);
  if (early) return { kind: early };
  let a: Record<string, unknown>;
  try {
    a = conformYargs(argv)
      .fail((msg, err) => {
        throw err ?? new UsageError(yargsMessage(msg));
      })
      .parseSync() as Record<string, unknown>;
  } catch (err) {
    const msg = (err as Error).message.split('\n')[0]!;
    const unknown = /^Unknown arguments?: (.*)$/.exec(msg);
    if (unknown) {
      const name = unknown[1]!.split(', ')[0]!;
      // yargs names the option without its dashes; give it back as the user typed it.
      const typed = argv.find((a) => a.replace(/^-+/, '').split('=')[0] === name);
      return {
        kind: 'error',
        message: typed?.startsWith('-') ? `unknown option: ${typed.split('=')[0]}` : `unexpected argument: ${name}`,
      };
    }
    return { kind: 'error', message: msg };
  }
  try {
    if ((a._ as unknown[]).length > 0)
      return {
        kind: 'error',
        message: `unexpected argument: ${String((a._ as unknown[])[0])} (options start with --)`,
      };
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
      maxBody: num('max-body'),
      maxPayload: num('max-payload'),
      matrix: a.matrix === true,
      minCoverage: a['min-coverage'] === undefined ? undefined : num('min-coverage'),
      listUnchecked: a['list-unchecked'] === true,
      slotReleaseWait: a['slot-release-wait'] === undefined ? undefined : num('slot-release-wait'),
      maxRateWait: a['max-rate-wait'] === undefined ? undefined : num('max-rate-wait'),
    };
    for (const k of Object.keys(options) as (keyof ConformOptions)[]) if (options[k] === undefined) delete options[k];
    return { kind: 'run', options };
  } catch (err) {
    return { kind: 'error', message: (err as Error).message };
  }
}

/** The help text. */
export const helpText = (): Promise<string> => conformYargs([]).getHelp();
