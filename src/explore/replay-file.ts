/**
 * The replay file of a failure the explorer found: the shrunk steps, what the model expected at the
 * failing one and what the target did, the seed and sequence it came from, and the pairs it
 * names. `conform replay FILE --profile …` runs the steps again and holds them to the model. No key
 * is written: keys are named by their profile name. Pure.
 */
import { readFile } from 'node:fs/promises';
import { UsageError } from '../errors.ts';
import type { Step } from './commands.ts';

export const REPLAY_FORMAT = 'conform-explore-replay';
export const REPLAY_VERSION = 1;
/** The file the explorer writes a failure's replay to, under `--out`. */
export const REPLAY_FILE = 'conform-explore-replay.json';

/** A failing step: what the model expected and what the target did. */
export interface ReplayFailure {
  /** Index of the failing step in `steps`. */
  step: number;
  transition: string;
  rule: string;
  expected: string;
  received: string;
}

/** The replay file. */
export interface ReplayFile {
  format: typeof REPLAY_FORMAT;
  version: typeof REPLAY_VERSION;
  /** The run's seed and the sequence of it that failed before shrinking. */
  seed: number;
  sequence: number;
  /** Where it ran (never a key). */
  target: { rest: string; ws?: string };
  steps: Step[];
  failure: ReplayFailure;
  /** The transcript of the shrunk run, one line per step. */
  transcript: string[];
}

/** The replay file's JSON Schema (draft 2020-12): src/schema-definitions.ts renders it to schemas/. */
export const REPLAY_SCHEMA_BODY = {
  type: 'object',
  required: ['format', 'version', 'seed', 'sequence', 'target', 'steps', 'failure'],
  properties: {
    format: { const: REPLAY_FORMAT },
    version: { const: REPLAY_VERSION },
    seed: { type: 'integer' },
    sequence: { type: 'integer', minimum: 0 },
    target: {
      type: 'object',
      required: ['rest'],
      properties: { rest: { type: 'string' }, ws: { type: 'string' } },
    },
    steps: {
      type: 'array',
      items: {
        type: 'object',
        required: ['op'],
        properties: {
          op: { enum: ['open', 'close', 'subscribe', 'unsubscribe', 'ping', 'idle'] },
          conn: { type: 'string', pattern: '^c[0-9]+$' },
          key: { type: 'string' },
          silent: { type: 'boolean' },
          pairs: { type: 'array', items: { type: 'string' } },
          id: { type: 'string' },
          ms: { type: 'integer', minimum: 0 },
        },
      },
    },
    failure: {
      type: 'object',
      required: ['step', 'transition', 'rule', 'expected', 'received'],
      properties: {
        step: { type: 'integer', minimum: 0 },
        transition: { type: 'string' },
        rule: { type: 'string' },
        expected: { type: 'string' },
        received: { type: 'string' },
      },
    },
    transcript: { type: 'array', items: { type: 'string' } },
  },
} as const;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): v is string => typeof v === 'string';
const conn = (v: unknown): boolean => str(v) && /^c[0-9]+$/.test(v);

/** Why `v` is no step, or undefined when it is one. */
function stepProblem(v: unknown): string | undefined {
  if (!isObj(v)) return 'is not an object';
  switch (v.op) {
    case 'open':
      return conn(v.conn) && str(v.key) && typeof v.silent === 'boolean' ? undefined : 'open needs conn, key, silent';
    case 'close':
      return conn(v.conn) ? undefined : 'close needs conn';
    case 'subscribe':
    case 'unsubscribe':
      return conn(v.conn) && str(v.id) && Array.isArray(v.pairs) && v.pairs.every(str)
        ? undefined
        : `${v.op} needs conn, id and pairs (strings)`;
    case 'ping':
      return conn(v.conn) && str(v.id) ? undefined : 'ping needs conn and id';
    case 'idle':
      return Number.isInteger(v.ms) && (v.ms as number) >= 0 ? undefined : 'idle needs ms (an integer >= 0)';
    default:
      return `op ${JSON.stringify(v.op)} is none of open, close, subscribe, unsubscribe, ping, idle`;
  }
}

/** Reads a replay file from its text; throws ConfigError naming the file and the problem. */
export function parseReplay(text: string, file: string): ReplayFile {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${file}: is not JSON: ${(err as Error).message}`);
  }
  if (!isObj(v) || v.format !== REPLAY_FORMAT)
    throw new UsageError(`${file}: is not a replay file of the explorer (format "${REPLAY_FORMAT}")`);
  if (v.version !== REPLAY_VERSION)
    throw new UsageError(`${file}: version ${String(v.version)}: this conform reads ${REPLAY_VERSION}`);
  if (!Array.isArray(v.steps) || v.steps.length === 0) throw new UsageError(`${file}: has no steps`);
  for (const [i, s] of v.steps.entries()) {
    const problem = stepProblem(s);
    if (problem) throw new UsageError(`${file}: steps[${i}]: ${problem}`);
  }
  if (!isObj(v.failure) || !Number.isInteger(v.failure.step)) throw new UsageError(`${file}: has no failure.step`);
  return v as unknown as ReplayFile;
}

/** Reads the replay file at `file`. */
export async function readReplay(file: string): Promise<ReplayFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(
      `${file}: ` + `cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  return parseReplay(text, file);
}
