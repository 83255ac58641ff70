import { describe, expect, it } from 'vitest';
import { helpText, parseArgs } from '../../bin/commands/conform.ts';
import { OPTION_DEFAULTS, validateOptions, type ConformOptions } from '../../src/options.ts';
import { REPORT_FORMAT_NAMES, REPORT_FORMATS, reportHandlers } from '../../reports/index.ts';

const run = (argv: string[]): ConformOptions => {
  const r = parseArgs(argv);
  if (r.kind !== 'run') throw new Error(`expected options, got ${JSON.stringify(r)}`);
  return r.options;
};
const problem = (argv: string[]): string => {
  const r = parseArgs(argv);
  if (r.kind === 'error') return r.message;
  if (r.kind !== 'run') throw new Error(`expected a problem, got ${r.kind}`);
  try {
    validateOptions(r.options, REPORT_FORMAT_NAMES);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`no problem found in ${argv.join(' ')}`);
};

describe('parseArgs', () => {
  it('gives the defaults for an empty argv', () => {
    expect(run([])).toEqual({ ...OPTION_DEFAULTS });
  });

  it('reads every option, splitting lists on commas and repeats', () => {
    expect(
      run([
        '--target',
        'http://127.0.0.1:1',
        '--key',
        'k',
        '--ws',
        'ws://127.0.0.1:1/v1/ws',
        '--only',
        'rest.price,ws',
        '--only',
        'auth',
        '--skip',
        'slow',
        '--report',
        'json,junit',
        '--report',
        'html',
        '--out',
        'out',
        '--concurrency',
        '2',
        '--timeout',
        '500',
        '--bail',
        '--rerun-failed',
        'a.json',
        '--baseline',
        'b.json',
        '--fail-on-change',
        '--key-env',
        'K',
      ]),
    ).toEqual({
      target: 'http://127.0.0.1:1',
      key: 'k',
      ws: 'ws://127.0.0.1:1/v1/ws',
      only: ['rest.price', 'ws', 'auth'],
      skip: ['slow'],
      report: ['json', 'junit', 'html'],
      out: 'out',
      concurrency: 2,
      timeout: 500,
      bail: true,
      rerunFailed: 'a.json',
      baseline: 'b.json',
      failOnChange: true,
      keyEnv: 'K',
      list: false,
      maxBody: 1048576,
      maxPayload: 1048576,
      matrix: false,
      listUnchecked: false,
      verbose: false,
    });
    expect(
      run([
        '--target',
        'http://h',
        '--key',
        'k',
        '--transport',
        'socketio',
        '--event',
        'price',
        '--max-body',
        '2048',
        '--max-payload',
        '4096',
      ]),
    ).toMatchObject({ transport: 'socketio', event: 'price', maxBody: 2048, maxPayload: 4096 });
    expect(run(['--list', '--matrix'])).toMatchObject({ list: true, matrix: true });
    expect(run(['--list-unchecked'])).toMatchObject({ listUnchecked: true });
  });

  it('recognises help and version before anything else', () => {
    expect(parseArgs(['--bogus', '--help']).kind).toBe('help');
    expect(parseArgs(['--version']).kind).toBe('version');
  });

  const problems: [string[], string][] = [
    [['--frobnicate'], 'unknown option: --frobnicate'],
    [['--frob=1'], 'unknown option: --frob'],
    [['stray'], 'unexpected argument: stray'],
    [['--target', 'http://a', '--target', 'http://b', '--key', 'k'], '--target given more than once'],
    [['--target', 'not a url', '--key', 'k'], '--target: "not a url" is not a URL'],
    [['--target', 'ftp://host', '--key', 'k'], '--target: "ftp://host" must start with http:// or https://'],
    [['--target', 'http://h'], '--target needs a key: pass --key KEY or set CONFORM_API_KEY'],
    [
      ['--target', 'http://h', '--key', 'k', '--ws', 'http://h/ws'],
      '--ws: "http://h/ws" must start with ws:// or wss://',
    ],
    [
      ['--target', 'http://h', '--key', 'k', '--profile', 'p.json'],
      '--target and --profile exclude each other: give one',
    ],
    [['--key', 'k'], '--key needs --target (a profile names its own keys)'],
    [['--concurrency', '0'], '--concurrency: must be an integer from 1 to 64 (got 0)'],
    [['--concurrency', 'many'], '--concurrency: must be a number (got "many")'],
    [['--concurrency=abc'], '--concurrency: must be a number (got "abc")'],
    [['--timeout', '-5'], '--timeout: must be a positive integer of milliseconds (got -5)'],
    [['--report', 'pdf'], `--report: unknown format "pdf" (use ${REPORT_FORMAT_NAMES.join(', ')})`],
    [['--fail-on-change'], '--fail-on-change needs --baseline REPORT.json'],
    [['--key-env', 'BAD-NAME'], '--key-env: "BAD-NAME" is not an environment variable name'],
    [['--max-body', '10'], '--max-body: must be an integer of bytes, at least 1024 (got 10)'],
    [['--max-payload', 'big'], '--max-payload: must be a number (got "big")'],
    [['--transport', 'grpc'], '--transport: must be ws or socketio (got "grpc")'],
    [['--transport', 'socketio'], '--transport socketio needs --event NAME (the event that carries the JSON messages)'],
    [['--event', 'price'], '--event needs --transport socketio'],
    [
      ['--profile', 'p.json', '--transport', 'ws'],
      '--transport/--event: a profile names its own (fields transport and event)',
    ],
    [['--matrix'], '--matrix goes with --list'],
    [['--list', '--list-unchecked'], '--list-unchecked lists what a run left unchecked: drop --list'],
    [['--list-unchecked', '--report', 'json'], '--list-unchecked prints to the console: add console to --report'],
  ];
  for (const [argv, message] of problems) {
    it(`names the problem in "${argv.join(' ')}"`, () => {
      expect(problem(argv)).toBe(message);
    });
  }
});

describe('the registry of report formats', () => {
  const registered = Object.keys(REPORT_FORMATS);
  const withReport = (report: string[]): ConformOptions => ({ ...OPTION_DEFAULTS, report });

  it('is where the names come from: the options and the help list exactly the registered formats', async () => {
    expect(REPORT_FORMAT_NAMES).toEqual(registered);
    expect(await helpText()).toContain(`report formats: ${registered.join(',')}`);
  });

  it("accepts a format's name if and only if the registry holds it", () => {
    for (const name of registered) expect(() => validateOptions(withReport([name]), REPORT_FORMAT_NAMES)).not.toThrow();
    expect(() => validateOptions(withReport(['pdf']), REPORT_FORMAT_NAMES)).toThrow(
      `--report: unknown format "pdf" (use ${registered.join(', ')})`,
    );
    // The names checked are the registry's the caller passes, not a list of the library's own.
    expect(() => validateOptions(withReport(['pdf']), [...REPORT_FORMAT_NAMES, 'pdf'])).not.toThrow();
    expect(() => validateOptions(withReport(['json']), ['console'])).toThrow(/unknown format "json"/);
  });

  it('builds one handler per chosen format, in registry order', () => {
    const options = { outDir: 'unused', version: '0', write: () => {}, tty: false };
    // One more than the formats: the explorer's replay file is written whatever the formats.
    expect(reportHandlers({ ...options, formats: ['html', 'console'] })).toHaveLength(3);
    expect(reportHandlers({ ...options, formats: registered })).toHaveLength(registered.length + 1);
  });
});

// How long the run waits for a closed connection's slot.
describe('--slot-release-wait', () => {
  it("reads the bound of the wait for a slot, ms, and leaves the profile's when not given", () => {
    expect(run(['--slot-release-wait', '60000']).slotReleaseWait).toBe(60_000);
    expect(run([]).slotReleaseWait).toBeUndefined();
  });

  it('refuses a bound that is not a whole number of milliseconds', () => {
    expect(problem(['--slot-release-wait', '-1'])).toMatch(/^--slot-release-wait: must be a whole number/);
    expect(problem(['--slot-release-wait', 'soon'])).toMatch(/^--slot-release-wait: must be a number/);
  });
});
