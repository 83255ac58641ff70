/**
 * Connection allowance per key (spec: Limits, WebSocket connections per API key; Authentication 3).
 * The allowance is the profile's `keys.X.connections`, or what the engine found at the start of the
 * run (src/connection-budget.ts). Each check freezes its key's count: no other check of the run
 * opens a connection of the key meanwhile, and the connections they already hold count toward the
 * allowance. The one connection beyond it is the only refusal these checks provoke, and the thing
 * they judge.
 */
import type { Allowance, Check, CheckContext, KeyLease } from '../../src/check.ts';
import { BindError } from '../../src/errors.ts';
import { STATUS } from '../../src/spec.ts';
import { LIMIT_QUIET_MAX_MS, LIMIT_QUIET_MS, LIMIT_QUIET_POLL_MS, LIMIT_SETTLE_MS } from '../../src/timing/index.ts';
import type { OpenResult, Refusal, StreamSession } from '../../src/transports/stream.ts';
import { isLimitRefusal, refusalStatus } from '../../src/limit-refusal.ts';
import { describeRefusal, keepOpen, pause, tryOpen } from './sessions.ts';

/** A second source address on loopback, to show the count is per key and not per IP. */
export const SECOND_SOURCE_ADDRESS = '127.0.0.2';

const clause = (rule: string) => ({ section: 'Limits', rule });

/** Tries to measure with the key's count steady this many times before giving up. */
const STEADY_ATTEMPTS = 5;
/** Waits until no other check's connection of the key has closed for LIMIT_QUIET_MS (at most LIMIT_QUIET_MAX_MS). */
async function quiet(ctx: CheckContext, lease: KeyLease): Promise<void> {
  const until = ctx.stream.now() + LIMIT_QUIET_MAX_MS;
  let seen = lease.closedSince();
  let since = ctx.stream.now();
  while (ctx.stream.now() - since < LIMIT_QUIET_MS && ctx.stream.now() < until) {
    await pause(LIMIT_QUIET_POLL_MS, ctx);
    if (lease.closedSince() !== seen) {
      seen = lease.closedSince();
      since = ctx.stream.now();
    }
  }
}

/** What a limit check knows of a key's allowance; `found` when the engine found it, not the profile. */
interface Judged {
  connections: number;
  found: boolean;
}

/**
 * The allowance the check judges: stated in the profile, or found at the start of the run (recorded
 * as an observation). Without either there is no "one beyond" to try: the check skips and says why.
 */
function judgedAllowance(ctx: CheckContext, key: string, name: string): Judged {
  const a: Allowance = ctx.connections.allowance(key);
  if (a.source === 'profile') return { connections: a.connections!, found: false };
  ctx.observe(
    'allowance',
    a.source === 'found' ? a.connections : a.source === 'at-least' ? `at least ${a.connections}` : 'unknown',
    [a.note, ...a.steps].filter(Boolean).join('; '),
  );
  if (a.source === 'found') return { connections: a.connections!, found: true };
  return ctx.skip(
    `keys.${name} states no connections and the run did not find its allowance ` +
      `(${a.note ?? a.source}), so there is no connection beyond it to try`,
  );
}

/**
 * A found allowance that the target now contradicts is the search's uncertainty, not a broken rule:
 * skip with what happened.
 */
function contradicted(ctx: CheckContext, name: string, judged: Judged, what: string): never {
  return ctx.skip(
    `${what}, unlike at the start of the run, when keys.${name}'s allowance was found to ` +
      `be ${judged.connections} (a slot of an earlier connection may still have been counted then)`,
  );
}

/**
 * Freezes `key`'s count, fills its allowance (the connections other checks of the run hold count
 * too), runs `probe` and closes everything. When another check's connection closed meanwhile, the
 * count moved under the probe, so it is repeated.
 */
async function atAllowance<T>(
  ctx: CheckContext,
  key: string,
  name: string,
  judged: Judged,
  probe: (sessions: StreamSession[]) => Promise<T>,
): Promise<T> {
  const allowance = judged.connections;
  for (let attempt = 1; attempt <= STEADY_ATTEMPTS; attempt++) {
    const lease = await ctx.connections.freeze(key);
    const sessions: StreamSession[] = [];
    try {
      // Note: a retry means the count moved under the last attempt; let the closes drain first.
      if (attempt > 1) await quiet(ctx, lease);
      await lease.settled();
      const closed0 = lease.closedSince();
      const others = lease.heldByOthers();
      if (others > 0)
        ctx.note(`${others} connection(s) of this key held by other checks count toward its allowance of ${allowance}`);
      let refused: OpenResult | undefined;
      // Each of these is within the allowance: the engine waits out a 50009 a slot not yet freed causes.
      for (let i = others; i < allowance && !refused; i++) {
        const r = await tryOpen(ctx, { key });
        // Pinged, so that a short keep-alive window on a slow machine does not close them under the measurement.
        if (r.ok) {
          keepOpen(ctx, r.session);
          sessions.push(r.session);
        } else refused = r;
      }
      if (refused && !refused.ok)
        expectLimitForm(ctx, refused, `connection ${others + sessions.length + 1} of keys.${name}`);
      if (refused && !refused.ok && lease.closedSince() === closed0) {
        const received =
          `connection ${others + sessions.length + 1} of ${allowance} ` + `refused: ${describeRefusal(refused)}`;
        if (judged.found) contradicted(ctx, name, judged, received);
        ctx.fail({ received, expected: `every connection up to the allowance of ${allowance} is accepted` });
      }
      if (!refused) {
        const held = [...sessions];
        const result = await probe(sessions);
        await pause(LIMIT_SETTLE_MS, ctx);
        // Ours count too: one the target closed under the probe (a short keep-alive window on a
        // slow machine) moved the count as well.
        const ownLost = held.filter((s) => !s.isOpen && sessions.includes(s)).length;
        if (lease.closedSince() === closed0 && ownLost === 0) return result;
        if (ownLost > 0)
          ctx.note(
            `the target closed ${ownLost} of our connection(s) of this key during ` +
              `the measurement; measuring again (${attempt})`,
          );
        else
          ctx.note(
            `another check closed a connection of this key during the measurement; measuring again (${attempt})`,
          );
        continue;
      }
      ctx.note(`another check closed a connection of this key during the measurement; measuring again (${attempt})`);
    } finally {
      await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
      lease.release();
    }
  }
  return ctx.skip(
    `connections of the key kept closing during the measurement (other checks', or ours closed ` +
      `by the target), so its count never held still for ${STEADY_ATTEMPTS} attempts`,
  );
}

/** Opens one more connection; an accepted one joins `sessions` so that it is closed with them. */
async function extra(
  ctx: CheckContext,
  key: string,
  sessions: StreamSession[],
  localAddress?: string,
): Promise<OpenResult> {
  const result = await tryOpen(ctx, { key, ...(localAddress ? { localAddress } : {}) });
  if (result.ok) sessions.push(result.session);
  return result;
}

/** The next connection must be refused in the handshake with 50009 (spec: Limits, last paragraph). */
function expectLimitRefusal(ctx: CheckContext, result: OpenResult, what: string, name: string, judged: Judged): void {
  if (result.ok) {
    if (judged.found) contradicted(ctx, name, judged, `${what} was accepted`);
    ctx.fail({
      received: `${what} was accepted`,
      expected: `refused in the handshake with status_number "${STATUS.CONNECTION_LIMIT}"`,
    });
  }
  ctx.observe('http-status', result.status, 'HTTP status of the 50009 refusal');
  if (result.json === undefined)
    ctx.fail({
      received: `${what}: ${describeRefusal(result)} (not JSON)`,
      expected: `a JSON body with status_number "${STATUS.CONNECTION_LIMIT}" and message`,
    });
  ctx.expectSchema('handshake-error', result.json, `${what}: refusal body`);
  if (refusalStatus(result) !== STATUS.CONNECTION_LIMIT)
    ctx.violation({
      received: `${what}: ${describeRefusal(result)}`,
      expected: `status_number "${STATUS.CONNECTION_LIMIT}"`,
    });
}

/**
 * A refusal the target itself gives as its connection limit (50009, under status_number or under
 * a code in its place) is the limit's, wherever the key's count stood: its body is held to the
 * form of a 50009 in the handshake even when other checks' closes moved the count under the
 * measurement, which leaves only where the allowance ends undecided.
 */
function expectLimitForm(ctx: CheckContext, result: Refusal, what: string): void {
  if (!isLimitRefusal(result)) return;
  ctx.expectSchema('handshake-error', result.json, `${what}: refusal body`);
  if (refusalStatus(result) !== STATUS.CONNECTION_LIMIT)
    ctx.violation({
      received: `${what}: ${describeRefusal(result)}`,
      expected: `status_number "${STATUS.CONNECTION_LIMIT}"`,
    });
}

/**
 * At the allowance, closes the last of our connections and opens one in its place: whether a close
 * frees its slot, shown before the refusal so that a slot still taken afterwards is the refusal's.
 * Undefined when other checks hold the whole allowance and there is none of ours to close.
 */
async function closeFreesSlot(ctx: CheckContext, key: string, sessions: StreamSession[]): Promise<boolean | undefined> {
  const last = sessions.pop();
  if (!last) return undefined;
  await last.close().catch(() => undefined);
  const r = await tryOpen(ctx, { key });
  if (!r.ok) return false;
  keepOpen(ctx, r.session);
  sessions.push(r.session);
  return true;
}

/**
 * After the refusal of the connection beyond the allowance and the close of every connection the
 * check held, the key's whole allowance opens again (the connections other checks hold count): a
 * handshake refused for the count takes no slot. The engine waits out a 50009 within the allowance
 * for the release wait, as for any slot a close has not freed yet. Judged only where a close was
 * shown to free its slot before the refusal: a slot a close never frees is the rule of
 * ws.limits.connections.slot-freed.
 */
async function refills(
  ctx: CheckContext,
  key: string,
  name: string,
  judged: Judged,
  closeFrees: boolean | undefined,
): Promise<void> {
  if (closeFrees !== true) {
    ctx.note(
      closeFrees === false
        ? `a connection of keys.${name} closed at the allowance did not free its slot, so whether the refused ` +
            'handshake took one is not judged (ws.limits.connections.slot-freed judges the close)'
        : `other checks held the whole allowance of keys.${name}, so whether a close frees a slot, and so ` +
            'whether the refused handshake took one, is not judged',
    );
    return;
  }
  const lease = await ctx.connections.freeze(key);
  const sessions: StreamSession[] = [];
  try {
    await lease.settled();
    const others = lease.heldByOthers();
    for (let i = others; i < judged.connections; i++) {
      const r = await tryOpen(ctx, { key });
      if (!r.ok) {
        const received =
          `after the refusal of connection ${judged.connections + 1} and the close of ours, connection ` +
          `${i + 1} of ${judged.connections} refused: ${describeRefusal(r)}`;
        if (judged.found) contradicted(ctx, name, judged, received);
        ctx.fail({
          received,
          expected: `a refused handshake holds no slot: the allowance of ${judged.connections} opens again`,
        });
      }
      keepOpen(ctx, r.session);
      sessions.push(r.session);
    }
  } finally {
    await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
    lease.release();
  }
}

/** Keys whose allowance the checks judge: stated in the profile, or found at the start of the run. */
const ALLOWANCE_CASES = [
  {
    id: 'limited',
    key: 'limited',
    needs: ['ws', 'keys.limited'],
    enforces: ['status:50009', 'limit:connections-per-key', 'rule:auth:handshake-failures'],
  },
  { id: 'primary', key: 'primary', needs: ['ws'], enforces: ['status:50009', 'limit:connections-per-key'] },
] as const;

const allowanceChecks: Check[] = ALLOWANCE_CASES.map(
  (c): Check => ({
    id: `ws.limits.connections.${c.id}`,
    enforces: c.enforces,
    // A refusal that keeps its slot shows as a slot within the allowance never freed: in a whole run
    // the connection budget meets it first and ws.limits.connections.slot-freed owns that verdict.
    catches: ['handshake-body-code', 'limit-off-by-one'],
    clause: clause("a connection beyond the key's allowance is refused: 50009 in the handshake; within it, accepted"),
    title:
      `opens keys.${c.key}.connections connections with keys.${c.key} (or as ` +
      `many as the run found it allows), then one more`,
    expectation:
      `every connection up to the allowance is accepted; the next is refused in the ` +
      `handshake with status_number "${STATUS.CONNECTION_LIMIT}"; once ours are closed, the whole ` +
      'allowance opens again (the refused handshake took no slot)',
    severity: 'must',
    tags: ['ws', 'limits', 'handshake'],
    needs: c.needs,
    async run(ctx) {
      // From one source address the count per key and a count per address look alike.
      ctx.partly('counted from one source address only: per key rather than per address is not judged', [
        'limit:connections-per-key',
      ]);
      const key = ctx.profile.keys[c.key]!.key;
      const judged = judgedAllowance(ctx, key, c.key);
      const what = `connection ${judged.connections + 1} of keys.${c.key}`;
      const { closeFrees, result } = await atAllowance(ctx, key, c.key, judged, async (sessions) => {
        const closeFrees = await closeFreesSlot(ctx, key, sessions);
        const result = await extra(ctx, key, sessions);
        if (!result.ok) expectLimitForm(ctx, result, what);
        return { closeFrees, result };
      });
      expectLimitRefusal(ctx, result, what, c.key, judged);
      await refills(ctx, key, c.key, judged, closeFrees);
    },
  }),
);

function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || /^127\./.test(host);
}

export const limitChecks: readonly Check[] = [
  ...allowanceChecks,
  {
    id: 'ws.limits.connections.per-key',
    enforces: ['status:50009', 'limit:connections-per-key'],
    catches: ['handshake-body-code', 'limit-per-ip', 'limit-off-by-one'],
    clause: clause(
      'counted per key, not per IP address: beyond the allowance a connection is refused from any address',
    ),
    title: `fills keys.limited's allowance from the default address, then opens one more from ${SECOND_SOURCE_ADDRESS}`,
    expectation:
      'the extra connection from the other address is refused ' +
      'with status_number ' +
      `"${STATUS.CONNECTION_LIMIT}"`,
    severity: 'must',
    tags: ['ws', 'limits', 'handshake'],
    needs: ['ws', 'keys.limited'],
    async run(ctx) {
      if (!isLoopback(ctx.profile.ws!))
        ctx.skip(
          `the target is not on loopback, so ${SECOND_SOURCE_ADDRESS} cannot reach it as a second source address`,
        );
      const key = ctx.profile.keys.limited!.key;
      const judged = judgedAllowance(ctx, key, 'limited');
      const { result, confirmed } = await atAllowance(ctx, key, 'limited', judged, async (sessions) => {
        // A found allowance may be an underestimate, so an acceptance from the second address alone
        // would prove nothing. Refused from the default address first, the count is the allowance at
        // this moment: the same count accepted from another address is then a count per address.
        if (judged.found) {
          const here = await extra(ctx, key, sessions);
          if (here.ok) contradicted(ctx, 'limited', judged, `connection ${judged.connections + 1} was accepted`);
        }
        try {
          return { result: await extra(ctx, key, sessions, SECOND_SOURCE_ADDRESS), confirmed: judged.found };
        } catch (err) {
          if (err instanceof BindError) ctx.skip(`this host cannot bind ${SECOND_SOURCE_ADDRESS}: ${err.message}`);
          throw err;
        }
      });
      if (confirmed) ctx.note(`the default address was refused at ${judged.connections + 1} connections first`);
      expectLimitRefusal(
        ctx,
        result,
        `connection ${judged.connections + 1} of keys.limited from ${SECOND_SOURCE_ADDRESS}`,
        'limited',
        confirmed ? { ...judged, found: false } : judged,
      );
    },
  },
  {
    id: 'ws.limits.connections.slot-freed',
    enforces: ['limit:connections-per-key'],
    catches: ['limit-slot-not-freed', 'limit-slots-never-freed', 'limit-refusal-holds-slot'],
    clause: clause('the allowance counts open connections: closing one frees its slot'),
    title: "fills keys.limited's allowance, closes one connection, opens another",
    expectation:
      'the new connection is accepted: the slot is freed (the spec states no release time, so a ' +
      '50009 is waited out for the release wait, timing.slotReleaseMs or timing.slotReleaseWaitMs, ' +
      'and the time the slot took is recorded)',
    severity: 'must',
    tags: ['ws', 'limits'],
    needs: ['ws', 'keys.limited'],
    async run(ctx) {
      // The limit's other parts (the refusal beyond it, any address) are the other limit checks'.
      ctx.partly('only that closing a connection frees its slot', ['limit:connections-per-key']);
      const key = ctx.profile.keys.limited!.key;
      const judged = judgedAllowance(ctx, key, 'limited');
      await atAllowance(ctx, key, 'limited', judged, async (sessions) => {
        const mine = sessions.pop();
        if (!mine)
          return ctx.skip('other checks hold the whole allowance of keys.limited, so none of ours can be closed');
        const closed = await mine.close();
        // Within the allowance again: the engine waits out a 50009 for the release wait before giving
        // it back. How long the slot took is the target's choice, recorded, never judged.
        const next = await tryOpen(ctx, { key });
        if (next.ok) {
          sessions.push(next.session);
          ctx.observe(
            'freed-after-ms',
            Math.round(next.session.openedAtMs - closed.atMs),
            'time from the close to an accepted connection (the spec states no release time)',
          );
          return;
        }
        const waited = Math.round(ctx.stream.now() - closed.atMs);
        ctx.observe('not-freed-after-ms', waited, 'the release wait ran out');
        ctx.fail({
          received: `${waited} ms after closing one connection, still ${describeRefusal(next)}`,
          expected:
            `a connection is accepted once one of the ${judged.connections} is closed (waited for ` +
            `${ctx.waits.releaseMs} ms: timing.slotReleaseMs, or timing.slotReleaseWaitMs / --slot-release-wait)`,
        });
      });
    },
  },
];
