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
 * The other key: one the profile names beyond its roles with a stated allowance first (no other
 * check uses it, so holding it still disturbs none), then the roles that have stream access.
 */
function otherKey(ctx: CheckContext, full: NamedKey): NamedKey | undefined {
  const entries = Object.entries(ctx.profile.keys).flatMap(([name, entry]) =>
    entry && typeof entry.key === 'string' && entry.key !== full.key ? [{ name, entry }] : [],
  );
  const roles: readonly string[] = [...STREAM_ROLES, ...NO_STREAM_ROLES];
  const spare = entries.find(
    (e) => !roles.includes(e.name) && typeof (e.entry as { connections?: unknown }).connections === 'number',
  );
  const role = STREAM_ROLES.map((name) => entries.find((e) => e.name === name)).find((e) => e !== undefined);
  const chosen = spare ?? role;
  return chosen ? { name: chosen.name, key: chosen.entry.key } : undefined;
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

export const perKeyChecks: readonly Check[] = [
  {
    id: 'ws.limits.keys-apart',
    enforces: ['limit:connections-per-key', 'rule:limits:keys-counted-apart'],
    catches: ['limit-pooled-across-keys'],
    clause: { section: 'Limits', rule: 'WebSocket connections per API key: counted per key' },
    title:
      'fills the allowance of keys.limited (else keys.primary), then opens connections of another key ' +
      'of the profile up to its own allowance (one when it is not known)',
    expectation:
      "every connection of the other key within its own allowance is accepted: the first key's full " +
      'allowance does not count against it',
    severity: 'must',
    tags: ['ws', 'limits', 'handshake'],
    needs: ['ws'],
    async run(ctx) {
      const full = fullKey(ctx);
      if (!full)
        return ctx.skip(
          'neither keys.limited nor keys.primary has an allowance stated or found, so neither can be ' +
            'filled without risking a connection beyond it',
        );
      const other = otherKey(ctx, full);
      if (!other)
        return ctx.skip(
          `no key with stream access given besides keys.${full.name}: a second key is ` +
            'needed to show that keys are counted apart',
        );
      const fullAllowance = knownAllowance(ctx, full.key)!;
      const otherAllowance = knownAllowance(ctx, other.key);
      const sessions: StreamSession[] = [];
      const leases: KeyLease[] = [];
      try {
        leases.push(await ctx.connections.freeze(full.key));
        leases.push(await ctx.connections.freeze(other.key));
        const [fullLease, otherLease] = leases as [KeyLease, KeyLease];
        await Promise.all(leases.map((l) => l.settled()));
        const fullHeld = fullLease.heldByOthers();
        const filled = await fill(ctx, full.key, fullHeld, fullAllowance, sessions);
        if (filled.refused)
          ctx.skip(
            `keys.${full.name} refused its connection ${filled.at} of ${fullAllowance} ` +
              `(${describeRefusal(filled.refused)}), so it never reached its allowance ` +
              '(ws.limits.connections.* judge that)',
          );
        ctx.note(
          `keys.${full.name} at its allowance of ${fullAllowance} ` +
            `(${fullHeld} of its connections held by other checks)`,
        );
        const otherHeld = otherLease.heldByOthers();
        if (otherAllowance === undefined && otherHeld > 0)
          ctx.skip(
            `keys.${other.name}'s allowance is not known and other checks hold ${otherHeld} of its ` +
              'connections, so another one could be beyond it',
          );
        const upTo = otherAllowance ?? otherHeld + 1;
        if (otherHeld >= upTo)
          ctx.skip(`other checks hold the whole allowance of keys.${other.name}, so none of ours can be opened`);
        const opened = await fill(ctx, other.key, otherHeld, upTo, sessions);
        if (!opened.refused) {
          ctx.note(`keys.${other.name}: ${upTo - otherHeld} connection(s) accepted, ${otherHeld} held by other checks`);
          return;
        }
        const received =
          `with keys.${full.name} at its allowance of ${fullAllowance}, connection ${opened.at} of ` +
          `${otherAllowance ?? 'an unknown allowance'} of keys.${other.name} ${describeRefusal(opened.refused)}`;
        if (refusalStatus(opened.refused) !== STATUS.CONNECTION_LIMIT)
          ctx.skip(`${received}: not a refusal for the connection count, so keys.${other.name} may not stream`);
        ctx.fail({
          received,
          expected:
            `keys.${other.name}'s connections within its own allowance are accepted: connections are ` +
            `counted per key, not pooled with keys.${full.name}'s`,
        });
      } finally {
        await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
        for (const l of leases) l.release();
      }
    },
  },
];
