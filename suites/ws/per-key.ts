/**
 * Connections are counted per key (spec: Limits, WebSocket connections per API key): with one key
 * at its allowance, another key's connections within its own allowance are still accepted. A
 * service that pools the count across keys refuses them. Never more connections of a key than it
 * allows are opened: the check fills each key only up to its allowance.
 */
import type { Check, CheckContext, KeyLease } from '../../src/check.ts';
import { STATUS } from '../../src/spec.ts';
import type { StreamSession } from '../../src/transports/stream.ts';
import { refusalStatus } from '../../src/limit-refusal.ts';
import { describeRefusal, keepOpen, tryOpen } from './sessions.ts';

/**
 * Profile roles whose keys have stream access by definition, in the order the other key is taken:
 * the roles fewest checks use first, so that other checks hold the fewest of its connections.
 */
const STREAM_ROLES = ['cryptoOnly', 'whitelisted', 'primary', 'limited'] as const;
/** Profile roles of keys without stream access, or refused for their state. */
const NO_STREAM_ROLES = new Set(['noStream', 'suspended']);

interface NamedKey {
  name: string;
  key: string;
}

/** The allowance the run knows for a key (stated or found), or undefined. */
function knownAllowance(ctx: CheckContext, key: string): number | undefined {
  const a = ctx.connections.allowance(key);
  return a.source === 'profile' || a.source === 'found' ? a.connections : undefined;
}

/** The key filled to its allowance: keys.limited (a small allowance is cheap to fill), else keys.primary. */
function fullKey(ctx: CheckContext): NamedKey | undefined {
  for (const name of ['limited', 'primary'] as const) {
    const key = ctx.profile.keys[name]?.key;
    if (typeof key === 'string' && knownAllowance(ctx, key) !== undefined) return { name, key };
  }
  return undefined;
}

/**
 * The other keys, each to be filled up to its own allowance beside the full one: every key with
 * stream access whose allowance the run knows (stated or found), those the profile names beyond
 * its roles first (no other check uses them, so holding them still disturbs none); lacking any,
 * one key whose allowance is not known, of which one connection is opened. A count pooled across
 * some keys shows only where those keys are full together, so no known key is left out.
 */
function otherKeys(ctx: CheckContext, full: NamedKey): { known: NamedKey[]; unknown?: NamedKey } {
  const entries = Object.entries(ctx.profile.keys).flatMap(([name, entry]) =>
    entry && typeof entry.key === 'string' && entry.key !== full.key ? [{ name, key: entry.key }] : [],
  );
  const roles: readonly string[] = [...STREAM_ROLES, ...NO_STREAM_ROLES];
  const spares = entries.filter((e) => !roles.includes(e.name));
  const streaming = STREAM_ROLES.flatMap((name) => entries.filter((e) => e.name === name));
  const known = [...spares, ...streaming].filter((e) => knownAllowance(ctx, e.key) !== undefined);
  // Two names of one key value are one key.
  const distinct = known.filter((e, i) => known.findIndex((x) => x.key === e.key) === i);
  return distinct.length > 0 ? { known: distinct } : { known: [], ...(streaming[0] ? { unknown: streaming[0] } : {}) };
}

/** Opens connections of `key` until `upTo` are open (counting `from` held by others); the first refusal ends it. */
async function fill(
  ctx: CheckContext,
  key: string,
  from: number,
  upTo: number,
  sessions: StreamSession[],
): Promise<{ refused?: Awaited<ReturnType<typeof tryOpen>> & { ok: false }; at: number }> {
  for (let i = from; i < upTo; i++) {
    const r = await tryOpen(ctx, { key });
    if (!r.ok) return { refused: r, at: i + 1 };
    // Pinged, so that a short keep-alive window does not close them under the measurement.
    keepOpen(ctx, r.session);
    sessions.push(r.session);
  }
  return { at: upTo };
}

/** Fills the first key to its allowance; a refusal there is the allowance checks' to judge, so the check skips. */
async function fillFull(ctx: CheckContext, full: NamedKey, lease: KeyLease, sessions: StreamSession[]): Promise<void> {
  const allowance = knownAllowance(ctx, full.key)!;
  const held = lease.heldByOthers();
  const filled = await fill(ctx, full.key, held, allowance, sessions);
  if (filled.refused)
    ctx.skip(
      `keys.${full.name} refused its connection ${filled.at} of ${allowance} ` +
        `(${describeRefusal(filled.refused)}), so it never reached its allowance ` +
        '(ws.limits.connections.* judge that)',
    );
  ctx.note(`keys.${full.name} at its allowance of ${allowance} (${held} of its connections held by other checks)`);
}

/**
 * Fills another key up to its own allowance (one connection when it is not known) while the keys
 * before it are full: a 50009 within its allowance means its count includes theirs.
 */
async function fillOther(
  ctx: CheckContext,
  full: NamedKey,
  before: readonly NamedKey[],
  other: NamedKey,
  lease: KeyLease,
  sessions: StreamSession[],
): Promise<void> {
  const allowance = knownAllowance(ctx, other.key);
  // A connection another check closed while the keys before filled is still cooling down: the
  // target may count it a moment longer, and a 50009 then would be the harness's own doing.
  await lease.settled();
  const held = lease.heldByOthers();
  if (allowance === undefined && held > 0)
    ctx.skip(
      `keys.${other.name}'s allowance is not known and other checks hold ${held} of its ` +
        'connections, so another one could be beyond it',
    );
  const upTo = allowance ?? held + 1;
  if (held >= upTo) {
    ctx.note(`other checks hold the whole allowance of keys.${other.name}, so none of ours is opened`);
    return;
  }
  const opened = await fill(ctx, other.key, held, upTo, sessions);
  if (!opened.refused) {
    ctx.note(`keys.${other.name}: ${upTo - held} connection(s) accepted, ${held} held by other checks`);
    return;
  }
  const alsoFull = before.length ? `, ${before.map((k) => `keys.${k.name}`).join(' and ')} at theirs` : '';
  const received =
    `with keys.${full.name} at its allowance of ${knownAllowance(ctx, full.key)}${alsoFull}, ` +
    `connection ${opened.at} of ${allowance ?? 'an unknown allowance'} of keys.${other.name} ` +
    describeRefusal(opened.refused);
  if (refusalStatus(opened.refused) !== STATUS.CONNECTION_LIMIT)
    ctx.skip(`${received}: not a refusal for the connection count, so keys.${other.name} may not stream`);
  ctx.fail({
    received,
    expected:
      `keys.${other.name}'s connections within its own allowance are accepted: connections are ` +
      `counted per key, not pooled with other keys'`,
  });
}

export const perKeyChecks: readonly Check[] = [
  {
    id: 'ws.limits.keys-apart',
    enforces: ['rule:limits:keys-counted-apart', 'limit:connections-per-key'],
    catches: ['limit-pooled-across-keys', 'limit-pooled-with-primary'],
    clause: { section: 'Limits', rule: 'WebSocket connections per API key: counted per key' },
    title:
      'fills the allowance of keys.limited (else keys.primary), then, keeping each full, fills every other key ' +
      'whose allowance is stated or found up to it (lacking any, opens one connection of another key)',
    expectation:
      "every connection of the other key within its own allowance is accepted: the first key's full " +
      'allowance does not count against it',
    severity: 'must',
    tags: ['ws', 'limits', 'handshake'],
    needs: ['ws'],
    async run(ctx) {
      // The limit's other parts (the refusal beyond it, any address) are the other limit checks'.
      ctx.partly("only that one key's full allowance does not count against another's", ['limit:connections-per-key']);
      const full = fullKey(ctx);
      if (!full)
        return ctx.skip(
          'neither keys.limited nor keys.primary has an allowance stated or found, so neither can be ' +
            'filled without risking a connection beyond it',
        );
      const { known, unknown } = otherKeys(ctx, full);
      const others = unknown ? [unknown] : known;
      if (others.length === 0)
        return ctx.skip(
          `no key with stream access given besides keys.${full.name}: a second key is ` +
            'needed to show that keys are counted apart',
        );
      const sessions: StreamSession[] = [];
      const leases: KeyLease[] = [];
      try {
        for (const k of [full, ...others]) leases.push(await ctx.connections.freeze(k.key));
        await Promise.all(leases.map((l) => l.settled()));
        await fillFull(ctx, full, leases[0]!, sessions);
        // Each key stays full while the next fills: a count pooled with any of them shows.
        for (const [i, other] of others.entries())
          await fillOther(ctx, full, others.slice(0, i), other, leases[i + 1]!, sessions);
      } finally {
        await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
        for (const l of leases) l.release();
      }
    },
  },
];
