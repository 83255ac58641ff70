/**
 * Connection allowance per key (spec: Limits, WebSocket connections per API key; Authentication 3).
 * Each check freezes its key's count: no other check of the run opens a connection of the key
 * meanwhile, and the connections they already hold count toward the allowance.
 */
import type { Check, CheckContext } from '../../src/check.ts';
import { STATUS } from '../../src/spec.ts';
import type { OpenResult, StreamSession } from '../../src/transports/stream.ts';
import { StreamError } from '../../src/transports/stream.ts';
import { describeRefusal, freezeKey, pause, refusalStatus, tryOpen, type KeyLease } from './support.ts';

/** A second source address on loopback, to show the count is per key and not per IP. */
export const SECOND_SOURCE_ADDRESS = '127.0.0.2';
/** How long a freed slot may take to be counted free again. */
const SLOT_FREED_WITHIN_MS = 2000;

const clause = (rule: string) => ({ section: 'Limits', rule });

/** Tries to measure with the key's count steady this many times before giving up. */
const STEADY_ATTEMPTS = 5;
/** A close by another check may reach the target this long before our side hears of it (longer on a loaded machine). */
const SETTLE_MS = 250;
/** Before measuring again, the key's count must have held still this long (other checks' closes drain; the freeze stops new opens). */
const QUIET_MS = 300;
/** Longest wait for that quiet. */
const QUIET_MAX_MS = 5000;

/** Waits until no other check's connection of the key has closed for QUIET_MS (at most QUIET_MAX_MS). */
async function quiet(ctx: CheckContext, lease: KeyLease): Promise<void> {
  const until = ctx.stream.now() + QUIET_MAX_MS;
  let seen = lease.closedSince();
  let since = ctx.stream.now();
  while (ctx.stream.now() - since < QUIET_MS && ctx.stream.now() < until) {
    await pause(50, ctx);
    if (lease.closedSince() !== seen) { seen = lease.closedSince(); since = ctx.stream.now(); }
  }
}

/**
 * Freezes `key`'s count, fills its allowance (the connections other checks of the run hold count
 * too), runs `probe` and closes everything. When another check's connection closed meanwhile, the
 * count moved under the probe, so it is repeated.
 */
async function atAllowance<T>(ctx: CheckContext, key: string, allowance: number, probe: (sessions: StreamSession[]) => Promise<T>): Promise<T> {
  for (let attempt = 1; attempt <= STEADY_ATTEMPTS; attempt++) {
    const lease = await freezeKey(ctx, key);
    const sessions: StreamSession[] = [];
    try {
      // Note: a retry means the count moved under the last attempt; let the closes drain first.
      if (attempt > 1) await quiet(ctx, lease);
      const closed0 = lease.closedSince();
      const others = lease.heldByOthers();
      if (others > 0) ctx.note(`${others} connection(s) of this key held by other checks count toward its allowance of ${allowance}`);
      let refused: OpenResult | undefined;
      for (let i = others; i < allowance && !refused; i++) {
        const r = await tryOpen(ctx, { key, reserved: true });
        if (r.ok) sessions.push(r.session);
        else refused = r;
      }
      if (refused && !refused.ok && lease.closedSince() === closed0) {
        ctx.fail({ received: `connection ${others + sessions.length + 1} of ${allowance} refused: ${describeRefusal(refused)}`, expected: `every connection up to the allowance of ${allowance} is accepted` });
      }
      if (!refused) {
        const result = await probe(sessions);
        await pause(SETTLE_MS, ctx);
        if (lease.closedSince() === closed0) return result;
      }
      ctx.note(`another check closed a connection of this key during the measurement; measuring again (${attempt})`);
    } finally {
      await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
      lease.release();
    }
  }
  return ctx.skip(`other checks of this run kept closing connections of the key, so its count never held still for ${STEADY_ATTEMPTS} attempts`);
}

/** Opens one more connection; an accepted one joins `sessions` so that it is closed with them. */
async function extra(ctx: CheckContext, key: string, sessions: StreamSession[], localAddress?: string): Promise<OpenResult> {
  const result = await tryOpen(ctx, { key, reserved: true, ...(localAddress ? { localAddress } : {}) });
  if (result.ok) sessions.push(result.session);
  return result;
}

/** The next connection must be refused in the handshake with 50009 (spec: Limits, last paragraph). */
function expectLimitRefusal(ctx: CheckContext, result: OpenResult, what: string): void {
  if (result.ok) {
    ctx.fail({ received: `${what} was accepted`, expected: `refused in the handshake with status_number "${STATUS.CONNECTION_LIMIT}"` });
  }
  ctx.observe('http-status', result.status, 'HTTP status of the 50009 refusal');
  if (result.json === undefined) ctx.fail({ received: `${what}: ${describeRefusal(result)} (not JSON)`, expected: `a JSON body with status_number "${STATUS.CONNECTION_LIMIT}" and message` });
  ctx.expectSchema('handshake-error', result.json, `${what}: refusal body`);
  if (refusalStatus(result) !== STATUS.CONNECTION_LIMIT) ctx.violation({ received: `${what}: ${describeRefusal(result)}`, expected: `status_number "${STATUS.CONNECTION_LIMIT}"` });
}

/** Keys whose allowance the profile states: one check each. */
const ALLOWANCE_CASES = [
  { id: 'limited', key: 'limited', needs: ['ws', 'keys.limited'] },
  { id: 'primary', key: 'primary', needs: ['ws', 'keys.primary.connections'] },
] as const;

const allowanceChecks: Check[] = ALLOWANCE_CASES.map((c): Check => ({
  id: `ws.limits.connections.${c.id}`,
  clause: clause('a connection beyond the key\'s allowance is refused: 50009 in the handshake'),
  title: `opens keys.${c.key}.connections connections with keys.${c.key}, then one more`,
  expectation: `every connection up to the allowance is accepted; the next is refused in the handshake with status_number "${STATUS.CONNECTION_LIMIT}"`,
  severity: 'must',
  tags: ['ws', 'limits', 'handshake'],
  needs: c.needs,
  async run(ctx) {
    const entry = ctx.profile.keys[c.key] as { key: string; connections: number };
    const result = await atAllowance(ctx, entry.key, entry.connections, (sessions) => extra(ctx, entry.key, sessions));
    expectLimitRefusal(ctx, result, `connection ${entry.connections + 1} of keys.${c.key}`);
  },
}));

function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || /^127\./.test(host);
}

export const limitChecks: readonly Check[] = [
  ...allowanceChecks,
  {
    id: 'ws.limits.connections.per-key',
    clause: clause('counted per key, not per IP address: beyond the allowance a connection is refused from any address'),
    title: `fills keys.limited's allowance from the default address, then opens one more from ${SECOND_SOURCE_ADDRESS}`,
    expectation: `the extra connection from the other address is refused with status_number "${STATUS.CONNECTION_LIMIT}"`,
    severity: 'must',
    tags: ['ws', 'limits', 'handshake'],
    needs: ['ws', 'keys.limited'],
    async run(ctx) {
      if (!isLoopback(ctx.profile.ws!)) ctx.skip(`the target is not on loopback, so ${SECOND_SOURCE_ADDRESS} cannot reach it as a second source address`);
      const entry = ctx.profile.keys.limited!;
      const result = await atAllowance(ctx, entry.key, entry.connections, async (sessions) => {
        try {
          return await extra(ctx, entry.key, sessions, SECOND_SOURCE_ADDRESS);
        } catch (err) {
          if (err instanceof StreamError && err.code === 'CONFORM_BIND') ctx.skip(`this host cannot bind ${SECOND_SOURCE_ADDRESS}: ${err.message}`);
          throw err;
        }
      });
      expectLimitRefusal(ctx, result, `connection ${entry.connections + 1} of keys.limited from ${SECOND_SOURCE_ADDRESS}`);
    },
  },
  {
    id: 'ws.limits.connections.slot-freed',
    clause: clause('the allowance counts open connections: closing one frees its slot'),
    title: 'fills keys.limited\'s allowance, closes one connection, opens another',
    expectation: `the new connection is accepted (within ${SLOT_FREED_WITHIN_MS} ms of the close)`,
    severity: 'must',
    tags: ['ws', 'limits'],
    needs: ['ws', 'keys.limited'],
    async run(ctx) {
      const entry = ctx.profile.keys.limited!;
      await atAllowance(ctx, entry.key, entry.connections, async (sessions) => {
        const mine = sessions.pop();
        if (!mine) return ctx.skip('other checks hold the whole allowance of keys.limited, so none of ours can be closed');
        const closed = await mine.close();
        let last: OpenResult | undefined;
        while (ctx.stream.now() - closed.atMs < SLOT_FREED_WITHIN_MS) {
          last = await tryOpen(ctx, { key: entry.key, reserved: true });
          if (last.ok) {
            sessions.push(last.session);
            ctx.observe('freed-after-ms', Math.round(ctx.stream.now() - closed.atMs), 'time from the close to an accepted connection');
            return;
          }
          if (refusalStatus(last) !== STATUS.CONNECTION_LIMIT) break;
          await pause(100, ctx);
        }
        ctx.fail({ received: last && !last.ok ? `after closing one connection: ${describeRefusal(last)}` : 'no connection accepted', expected: `a connection is accepted once one of the ${entry.connections} is closed` });
      });
    },
  },
];
