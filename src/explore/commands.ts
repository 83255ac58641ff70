/**
 * The explorer's commands: what fast-check generates (abstract commands, indices into whatever the
 * run has: keys, open connections, the pool of pairs) and the steps they resolve to (concrete:
 * a connection's name, a key's name, pair codes). A step is what a transcript shows and a replay
 * file holds; resolving against the model's state keeps every generated sequence runnable
 * (fast-check's `fc.commands` does the same with each command's `check`). Pure: no socket.
 */
import fc from 'fast-check';

/**
 * How a subscribe picks its pairs: some of the pool, with an unknown pair, refused for its key, or
 * many; or from the connection's past: its set with one pair swapped (`kept`), the pairs it
 * unsubscribed or the set its last subscribe replaced (`again`), most of the limit's list away from
 * its set (`large`).
 */
export type SubscribePick =
  | { kind: 'pool'; pick: readonly number[] }
  | { kind: 'unknown'; pick: readonly number[] }
  | { kind: 'refused'; pick: readonly number[] }
  | { kind: 'kept'; pick: readonly number[] }
  | { kind: 'again'; pick: readonly number[] }
  | { kind: 'large'; pick: readonly number[] }
  | { kind: 'at-limit' }
  | { kind: 'over-limit' };

/** How an unsubscribe picks its pairs: some or all subscribed ones, those and one more, or only unsubscribed ones. */
export type UnsubscribePick = { kind: 'subset' | 'all' | 'superset' | 'unsubscribed'; pick: readonly number[] };

/**
 * A generated command: indices, resolved against the run when it is its turn. An open that fills
 * opens the key until its allowance is reached, and once beyond it when the sequence may; an open
 * `home` opens the first key (primary), whatever the index.
 */
export type Command =
  | { op: 'open'; key: number; silent: boolean; fill?: boolean; home?: boolean }
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
  { weight: 3, arbitrary: picks.map((pick) => ({ kind: 'kept' as const, pick })) },
  { weight: 3, arbitrary: picks.map((pick) => ({ kind: 'again' as const, pick })) },
  { weight: 2, arbitrary: picks.map((pick) => ({ kind: 'large' as const, pick })) },
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

/** One draw in SINGLE_WEIGHT + CHAIN_WEIGHT is a chain. */
const SINGLE_WEIGHT = 1;
const CHAIN_WEIGHT = 2;

/** An open of the first key (primary), whatever key was opened last. */
const home: Command = { op: 'open', key: 0, silent: false, home: true };
const sub = (c: number, pairs: SubscribePick): Command => ({ op: 'subscribe', conn: c, pairs });
const unsub = (c: number, kind: UnsubscribePick['kind'], pick: readonly number[]): Command => ({
  op: 'unsubscribe',
  conn: c,
  pairs: { kind, pick },
});

/** What a chain draws: its connection and its picks; its kind comes from its turn in the sequence. */
interface ChainDraw {
  c: number;
  a: readonly number[];
  b: readonly number[];
  d: readonly number[];
}

/**
 * Requests in a row on one connection, each drawing on what the one before left. Drawn one command
 * at a time such rows are rare, and what a service keeps of a connection's past shows only at their
 * end. `history`: a set replaced by one that keeps pairs, an unsubscribe of some, a third subscribe
 * naming them again, an unsubscribe that empties the set. `large`: two sets near the limit, on a
 * connection of the limit's key opened for them (a close drawn before may have left none; one that
 * has a past would keep it in a shrunk transcript), and a ping while subscribed between them (the
 * explorer's own pings may come seconds apart).
 */
const CHAINS = {
  history: ({ c, a, b, d }: ChainDraw): Command[] => [
    sub(c, { kind: 'pool', pick: a }),
    sub(c, { kind: 'kept', pick: b }),
    unsub(c, 'subset', d),
    sub(c, { kind: 'again', pick: a }),
    unsub(c, 'all', b),
  ],
  large: ({ b, d }: ChainDraw): Command[] => [
    home,
    sub(0, { kind: 'large', pick: b }),
    { op: 'ping', conn: 0 },
    sub(0, { kind: 'large', pick: d }),
  ],
} as const;
const CHAIN_KINDS = Object.values(CHAINS);

const chainDraw: fc.Arbitrary<ChainDraw> = fc.record({ c: conn, a: poolPicks, b: picks, d: picks });

/** A command, or a chain to be given its kind. */
type Run = { single: Command } | { chain: ChainDraw };
const runArbitrary: fc.Arbitrary<Run> = fc.oneof(
  { weight: SINGLE_WEIGHT, arbitrary: commandArbitrary.map((single) => ({ single })) },
  { weight: CHAIN_WEIGHT, arbitrary: chainDraw.map((chain) => ({ chain })) },
);

/** Of FILL_FIRST + 1 draws of a sequence's first open, all but one fill: the slots are judged at a key's boundary. */
const FILL_FIRST = 15;

/**
 * A sequence: an open first (nothing else applies before one), then MIN_COMMANDS - 1 to
 * MAX_COMMANDS - 1 commands. A sequence that fills first opens the first key next, so that its
 * requests go on a connection of the key the limit's list was made for. Its chains take the kinds
 * in turn from a drawn one, so that a sequence of two chains meets both.
 */
export const sequenceArbitrary: fc.Arbitrary<Command[]> = fc
  .tuple(
    fc.record({
      op: fc.constant('open' as const),
      key: index,
      silent: fc.constant(false),
      fill: fc.nat(FILL_FIRST).map((n) => n > 0),
    }),
    fc.nat(CHAIN_KINDS.length - 1),
    fc.array(runArbitrary, { minLength: MIN_COMMANDS - 1, maxLength: MAX_COMMANDS - 1 }),
  )
  .map(([first, turn, runs]) => {
    let chains = turn;
    const rest = runs
      .flatMap((r) => ('single' in r ? [r.single] : CHAIN_KINDS[chains++ % CHAIN_KINDS.length]!(r.chain)))
      .slice(0, MAX_COMMANDS - 1);
    return first.fill ? [first, home, ...rest] : [first, ...rest];
  });

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
