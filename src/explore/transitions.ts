/**
 * The model's transitions, each with the statements of the spec (src/statements.ts) a step that
 * judged it credits. Written from the spec's tables: "Subscription on one WebSocket connection"
 * (States and transitions), Limits, Method ping and Authentication 3.
 */
import type { StatementKey } from '../statements.ts';

/** Every transition of the model, by name, with the statements it judges. */
export const TRANSITIONS = {
  /** Limits: a key's connections up to its allowance are accepted. */
  'open within the allowance': ['limit:connections-per-key'],
  /** Limits: beyond the allowance a handshake is refused with 50009 (never the field code). */
  'open beyond the allowance': ['limit:connections-per-key', 'status:50009', 'rule:handshake:never-code'],
  /** Limits: a closed connection frees its slot (within the release bound). */
  'close frees its slot': ['limit:connections-per-key'],
  /** no subscription --subscribe--> subscribed to exactly the listed pairs; notice 200; pushes start. */
  'subscribe from no subscription': [
    'transition:none/subscribe',
    'event:notice-subscribe',
    'rule:subscribe:pushes-without-requests',
  ],
  /** subscribed --subscribe--> subscribed to exactly the newly listed pairs (replaced, not extended). */
  'subscribe replaces the subscription': ['transition:subscribed/subscribe', 'limit:subscriptions-per-connection'],
  /** subscribe attempt with an unknown pair --> error notice 50104, no change stated. */
  'subscribe with an unknown pair': ['transition:attempt/subscribe', 'rule:subscribe:unknown-pair-message'],
  /** Authentication 4: a pair outside the key's whitelist or asset types is refused (50010, 50109). */
  'subscribe to a pair the key may not read': ['rule:auth:entitlements'],
  /** Limits: 100 pairs are accepted, more give 50004. */
  'subscribe to 100 pairs': ['limit:pairs-per-connection'],
  'subscribe to more than 100 pairs': ['limit:pairs-per-connection'],
  /** subscribed --unsubscribe--> pushes for the listed pairs stop; notice 200. */
  'unsubscribe subscribed pairs': ['transition:subscribed/unsubscribe', 'event:notice-unsubscribe'],
  /** Method unsubscribe: pairs that are not subscribed: not shown (the outcome is recorded, not judged). */
  'unsubscribe pairs not subscribed': [],
  /** Method ping: the reply is the plain text Pong!, whatever the connection's subscription. */
  'ping answered with Pong!': ['rule:ping:reply', 'event:pong'],
  /** Limits: a connection that pings is not closed. */
  'pinged connection stays open': ['limit:ping-interval'],
  /** connected --no ping for the window--> closed. */
  'silent connection closed after the window': ['transition:connected/no-ping', 'limit:ping-interval'],
  /** Notice frame: the request's id is echoed. */
  'notice echoes the id': ['field:notice:id'],
} as const satisfies Record<string, readonly StatementKey[]>;

export type TransitionName = keyof typeof TRANSITIONS;

/** The statements of the transitions named. */
export const statementsOf = (names: Iterable<TransitionName>): StatementKey[] => [
  ...new Set([...names].flatMap((n) => [...TRANSITIONS[n]])),
];

/** Every statement the model can judge: the explorer's `enforces`. */
export const MODEL_STATEMENTS: readonly StatementKey[] = statementsOf(Object.keys(TRANSITIONS) as TransitionName[]);

/** How often each transition was exercised (a step took it) and judged (its outcome was held to the model). */
export interface TransitionCount {
  transition: TransitionName;
  exercised: number;
  judged: number;
}

/** Counts of the transitions a run exercised and judged. */
export class TransitionTally {
  private readonly counts = new Map<TransitionName, { exercised: number; judged: number }>();

  private entry(t: TransitionName): { exercised: number; judged: number } {
    let e = this.counts.get(t);
    if (!e) {
      e = { exercised: 0, judged: 0 };
      this.counts.set(t, e);
    }
    return e;
  }

  exercised(t: TransitionName): void {
    this.entry(t).exercised++;
  }

  judged(t: TransitionName): void {
    this.entry(t).judged++;
  }

  /** Adds another tally's counts (a sequence's into the run's). */
  add(other: TransitionTally): void {
    for (const c of other.list()) {
      const e = this.entry(c.transition);
      e.exercised += c.exercised;
      e.judged += c.judged;
    }
  }

  /** The counts in the order of TRANSITIONS. */
  list(): TransitionCount[] {
    return (Object.keys(TRANSITIONS) as TransitionName[])
      .filter((t) => this.counts.has(t))
      .map((t) => ({ transition: t, ...this.counts.get(t)! }));
  }

  /** The statements of the transitions some step judged: all the run may be credited with. */
  judgedStatements(): StatementKey[] {
    return statementsOf(
      this.list()
        .filter((c) => c.judged > 0)
        .map((c) => c.transition),
    );
  }
}
