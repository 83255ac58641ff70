/**
 * The allowance checks when the key's count never holds still: in a whole run, other checks hold
 * connections of keys.primary and close them while a limit check measures, and on a loaded machine
 * that can go on for every attempt. Where the allowance ends is then undecided and the check skips;
 * but a refusal the target itself gives as its limit is the limit's wherever the count stood, so its
 * form is judged all the same. The moving count is played by a lease that reports a close by
 * another check after every refusal the check meets.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../reference/index.ts';
import type { Check, ConnectionBudgetView } from '../../src/check.ts';
import { runChecks } from '../../src/runner.ts';
import type { StreamClient } from '../../src/transports/stream.ts';
import { describeResult, scriptedWsChecks, startSuiteServer, withGrace } from '../helpers/stream-suite.ts';

let server: ReferenceServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** `check`, run as if another check closed a connection of the key after each refusal it met. */
function underMovingCount(check: Check): Check {
  return {
    ...check,
    run(ctx) {
      let refusals = 0;
      const stream: StreamClient = {
        open: async (options) => {
          const r = await ctx.stream.open(options);
          if (!r.ok) refusals++;
          return r;
        },
        now: () => ctx.stream.now(),
        closeAll: () => ctx.stream.closeAll(),
      };
      const connections: ConnectionBudgetView = {
        allowance: (key) => ctx.connections.allowance(key),
        borrow: (count, key) => ctx.connections.borrow(count, key),
        freeze: async (key) => {
          const lease = await ctx.connections.freeze(key);
          return {
            heldByOthers: () => lease.heldByOthers(),
            closedSince: () => lease.closedSince() + refusals,
            settled: () => lease.settled(),
            release: () => lease.release(),
          };
        },
      };
      return check.run({ ...ctx, stream, connections });
    },
  };
}

const PRIMARY = scriptedWsChecks.find((c) => c.id === 'ws.limits.connections.primary')!;

async function runMoving(fault?: string) {
  server = await startSuiteServer('ws', fault);
  const { results } = await runChecks({ profile: withGrace(server.profile), checks: [underMovingCount(PRIMARY)] });
  return results[0]!;
}

describe("keys.primary's allowance while other checks' closes move its count", () => {
  it('fails a 50009 under code, not status_number, though where the allowance ends is undecided', async () => {
    const r = await runMoving('handshake-body-code');
    expect(r.outcome, describeResult(r)).toBe('fail');
    expect(r.violations.map((v) => v.received).join('\n')).toMatch(
      /^connection 9 of keys\.primary: handshake refused: HTTP 429 \{"code":"50009"/m,
    );
  });

  it('skips a conforming target, saying the count never held still', async () => {
    const r = await runMoving();
    expect(r.outcome, describeResult(r)).toBe('skip');
    expect(r.reason).toMatch(/never held still/);
  });
});
