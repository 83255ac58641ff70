/**
 * The options that say what a command runs against, declared once for `conform`, `conform init`
 * and the load modes that take a target; each command takes the ones it has. Their rules, the key
 * read from the environment and the resolution into a profile are the library's (src/target.ts),
 * so a programmatic caller gets the same checks.
 */
import type { Options } from 'yargs';
import { PATHS } from '../../src/spec.ts';
import { DEFAULT_KEY_ENV } from '../../src/target.ts';

/** Every target option by name, in the order help lists them. */
export const TARGET_OPTIONS = {
  target: {
    type: 'string',
    describe: `REST base URL of the target (the harness appends ${PATHS.pairs}, ${PATHS.price})`,
  },
  key: {
    type: 'string',
    describe: 'API key for --target (prefer --key-env: keeps it out of shell history and ps)',
  },
  'key-env': {
    type: 'string',
    default: DEFAULT_KEY_ENV,
    describe: 'environment variable holding the key for --target',
  },
  ws: { type: 'string', describe: 'WebSocket URL for --target (the spec does not show its path)' },
  profile: { type: 'string', describe: 'target profile JSON (schemas/profile.schema.json)' },
  transport: {
    type: 'string',
    describe: 'stream transport for --target or the embedded service: ws (default) or socketio',
  },
  event: { type: 'string', describe: 'Socket.IO event that carries the JSON messages (with --transport socketio)' },
  ca: {
    type: 'string',
    describe:
      "PEM file of the CA that signs the target's certificate (a company CA), trusted beside Node's own " +
      "for REST and the stream; overrides the profile's tls.ca",
  },
} satisfies Record<string, Options>;

export type TargetOptionName = keyof typeof TARGET_OPTIONS;

/**
 * The declarations of the target options a command takes, in the order of TARGET_OPTIONS, each
 * with what that command changes of it (a description that says more, a demanded option).
 */
export function targetOptions<N extends TargetOptionName>(
  names: readonly N[],
  changes: Partial<Record<N, Options>> = {},
): Record<N, Options> {
  const chosen = (Object.keys(TARGET_OPTIONS) as TargetOptionName[]).filter((n): n is N => names.includes(n as N));
  return Object.fromEntries(chosen.map((n) => [n, { ...TARGET_OPTIONS[n], ...changes[n] }])) as Record<N, Options>;
}
