/**
 * The explorer's commands: what fast-check generates (abstract commands, indices into whatever the
 * run has: keys, open connections, the pool of pairs) and the steps they resolve to (concrete:
 * a connection's name, a key's name, pair codes). A step is what a transcript shows and a replay
 * file holds; resolving against the model's state keeps every generated sequence runnable
 * (fast-check's `fc.commands` does the same with each command's `check`). Pure: no socket.
 */
import fc from 'fast-check';

/** How a subscribe picks its pairs: some of the pool, with an unknown pair, refused for its key, or many. */
export type SubscribePick =
  | { kind: 'pool'; pick: readonly number[] }
  | { kind: 'unknown'; pick: readonly number[] }
  | { kind: 'refused'; pick: readonly number[] }
  | { kind: 'at-limit' }
  | { kind: 'over-limit' };

/** How an unsubscribe picks its pairs: some or all subscribed ones, those and one more, or only unsubscribed ones. */
export type UnsubscribePick = { kind: 'subset' | 'all' | 'superset' | 'unsubscribed'; pick: readonly number[] };

/**
 * A generated command: indices, resolved against the run when it is its turn. An open that fills
 * opens the key until its allowance is reached, and once beyond it when the sequence may.
 */
export type Command =
  | { op: 'open'; key: number; silent: boolean; fill?: boolean }
  | { op: 'close'; conn: number }
  | { op: 'subscribe'; conn: number; pairs: SubscribePick }
  | { op: 'unsubscribe'; conn: number; pairs: UnsubscribePick }
  | { op: 'ping'; conn: number }
  | { op: 'idle'; long: boolean };

/** A step as run, shown and replayed. Connections are named c1, c2… in the order they were opened. */
export type Step =
  | { op: 'open'; conn: string; key: string; silent: boolean }
  | { op: 'close'; conn: string }
  | { op: 'subscribe'; conn: string; pairs: string[]; id: string }
  | { op: 'unsubscribe'; conn: string; pairs: string[]; id: string }
  | { op: 'ping'; conn: string; id: string }
  | { op: 'idle'; ms: number };

/** Commands a sequence holds at most: long enough for the sequences nobody scripts, short enough to shrink. */
export const MAX_COMMANDS = 16;
/** Commands a sequence holds at least: fewer rarely reach a second request on one connection. */
export const MIN_COMMANDS = 10;
/** Indices are drawn below this and taken modulo what exists, so a shrunk index still names something. */
const INDEX = 8;

const index = fc.nat(INDEX - 1);
const picks = fc.uniqueArray(index, { minLength: 1, maxLength: 3 });
/** A subscription of the pool names two or three pairs: what one request does to the others shows only then. */
const poolPicks = fc.uniqueArray(index, { minLength: 2, maxLength: 3 });
/** Which open connection a command acts on: most often the one opened last (0), so requests chain on it. */
const conn = fc.nat(INDEX - 1).map((i) => (i < INDEX / 2 ? 0 : i - INDEX / 2 + 1));

const subscribePick: fc.Arbitrary<SubscribePick> = fc.oneof(
  { weight: 12, arbitrary: poolPicks.map((pick) => ({ kind: 'pool' as const, pick })) },
  { weight: 4, arbitrary: picks.map((pick) => ({ kind: 'pool' as const, pick })) },
  { weight: 1, arbitrary: picks.map((pick) => ({ kind: 'unknown' as const, pick })) },
  { weight: 1, arbitrary: picks.map((pick) => ({ kind: 'refused' as const, pick })) },
  { weight: 2, arbitrary: fc.constant({ kind: 'at-limit' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'over-limit' as const }) },
);

const unsubscribePick: fc.Arbitrary<UnsubscribePick> = fc.record({
  kind: fc.constantFrom(
    'subset' as const,
    'all' as const,
    'subset' as const,
    'superset' as const,
    'unsubscribed' as const,
  ),
  pick: picks,
});

/** One command: opens and subscribes most often, idling least. */
export const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('open' as const), key: index, silent: fc.boolean() }).map((c) => ({
      ...c,
      // A fifth of the connections go without the explorer's pings, so the keep-alive window is judged.
      silent: c.silent && c.key % 5 === 0,
    })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({ op: fc.constant('open' as const), key: index, silent: fc.constant(false), fill: fc.constant(true) })
      .map((c) => c),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('close' as const), conn }) },
  { weight: 10, arbitrary: fc.record({ op: fc.constant('subscribe' as const), conn, pairs: subscribePick }) },
  {
    weight: 5,
    arbitrary: fc.record({ op: fc.constant('unsubscribe' as const), conn, pairs: unsubscribePick }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('ping' as const), conn }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('idle' as const), long: fc.boolean() }) },
);

/** A sequence: an open first (nothing else applies before one), then MIN_COMMANDS - 1 to MAX_COMMANDS - 1 commands. */
export const sequenceArbitrary: fc.Arbitrary<Command[]> = fc
  .tuple(
    // Half the sequences start by filling a key's allowance: its boundary is where the slots are judged.
    fc.record({ op: fc.constant('open' as const), key: index, silent: fc.constant(false), fill: fc.boolean() }),
    fc.array(commandArbitrary, { minLength: MIN_COMMANDS - 1, maxLength: MAX_COMMANDS - 1 }),
  )
  .map(([first, rest]) => [first, ...rest]);

/** The seed of sequence `n` of a run seeded `seed`: the same run seed draws the same sequences. */
export const sequenceSeed = (seed: number, n: number): number => (Math.imul(seed ^ 0x5bd1e995, 31) + n) | 0;

/** Sequence `n` of the run seeded `seed`, always the same for the same pair (fast-check's seeded sample). */
export function drawSequence(seed: number, n: number): Command[] {
  return fc.sample(sequenceArbitrary, { seed: sequenceSeed(seed, n), numRuns: 1 })[0]!;
}

/** A step in one line, as a transcript shows it. */
export function stepText(step: Step): string {
  switch (step.op) {
    case 'open':
      return `${step.conn} = open keys.${step.key}${step.silent ? ' (no pings)' : ''}`;
    case 'close':
      return `close ${step.conn}`;
    case 'subscribe':
    case 'unsubscribe':
      return `${step.op} ${step.conn} ${pairsText(step.pairs)}`;
    case 'ping':
      return `ping ${step.conn}`;
    case 'idle':
      return `idle ${step.ms} ms`;
  }
}

/** Pair codes in a line: all of a few, the count and three of many. */
export const pairsText = (pairs: readonly string[]): string =>
  pairs.length <= 4 ? `[${pairs.join(', ')}]` : `[${pairs.slice(0, 3).join(', ')}, … ${pairs.length} pairs]`;
