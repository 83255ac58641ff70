/** Faults of the ping reply and of the keep-alive window. */
import { METHOD, STATUS, TEXT } from '../../src/spec.ts';
import { f, type Fault } from './record.ts';

/** A push interval from which checks waiting for pushes may outlast a mutation run's ping window. */
const KEEPALIVE_TIMING_TICK_MS = 500;

/** The faults of the ping reply and of the keep-alive window. */
export const KEEPALIVE_FAULTS = [
  f('ping-reply-json', 'ping', 'the ping reply is the plain text Pong!', ['rule:ping:reply', 'event:pong'], {
    session: { pong: () => ({ method: METHOD.ping, message: TEXT.pong, code: STATUS.OK, data: null }) },
  }),
  f('ping-reply-lowercase', 'ping', 'the ping reply is exactly Pong!', ['rule:ping:reply'], {
    session: { pong: (reply) => (typeof reply === 'string' ? reply.toLowerCase() : reply) },
  }),
  f(
    'keepalive-never',
    'keepalive',
    'a connection with no ping for the window is closed',
    ['transition:connected/no-ping', 'limit:ping-interval'],
    { session: { keepAlive: (k) => ({ ...k, windowMs: undefined }) } },
  ),
  f(
    'keepalive-early',
    'keepalive',
    'the connection is not closed before the ping window ends',
    ['limit:ping-interval'],
    {
      session: {
        keepAlive: (k) => ({ ...k, windowMs: k.windowMs === undefined ? undefined : Math.floor(k.windowMs / 2) }),
      },
    },
  ),
  f(
    'keepalive-ping-not-reset',
    'keepalive',
    'each ping restarts the window',
    ['limit:ping-interval'],
    { session: { keepAlive: (k) => ({ ...k, pingResets: false }) } },
    {
      // Under every dialect: its pushes keep a check watching frames past a window, pinging to hold it.
      widenedBy: () => 'a check that pings its connection to hold it across a window sees the window closed under it',
      // At pushes this slow, which other checks wait for pushes past a window (two seconds in the
      // mutation runs) is a matter of timing: the checks that see it closed under them are no fixed set.
      maskedBy: (d) =>
        d.stream.tickMs >= KEEPALIVE_TIMING_TICK_MS
          ? `at a push every ${d.stream.tickMs} ms, checks waiting for pushes outlast a window`
          : undefined,
    },
  ),
  f(
    'pong-stops-when-subscribed',
    'ping',
    'a ping is answered with Pong! (here not once the connection is subscribed)',
    ['rule:ping:reply', 'event:pong'],
    { session: { pong: (reply, { subscribed }) => (subscribed ? undefined : reply) } },
  ),
] as const satisfies readonly Fault[];
