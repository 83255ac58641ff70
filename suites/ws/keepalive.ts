/**
 * Keep-alive (spec: Method ping "A ping must arrive at least once every 30 seconds"; Limits, Ping
 * interval; States and transitions). Slow: each waits out the window, so they run beside the rest.
 * The window comes from profile.timing.pingTimeoutMs (the spec's 30 s by default).
 */
import type { Check } from '../../src/check.ts';
import { METHOD, TEXT } from '../../src/spec.ts';
import {
  closeCheckTimeoutMs,
  closeWaitMs,
  EARLY_TOLERANCE_MS,
  holdCheckTimeoutMs,
  KEEPALIVE_DEFAULTS,
  keepAliveSendMs,
  keepAliveTiming,
  LAST_PING_MARGIN_MS,
} from '../../src/timing/index.ts';
import { subscribe } from './notices.ts';
import { needPairs } from './pair-choice.ts';
import { closeWithin, isSilence, openSession } from './sessions.ts';

const clause = {
  section: 'Limits',
  rule: 'Ping interval: the connection is closed if no ping arrives within 30 seconds',
};

/** `ms` in keep-alive windows, to a tenth. */
const closeWindows = (ms: number, windowMs: number): number => Math.round((10 * ms) / windowMs) / 10;

export const keepaliveChecks: readonly Check[] = [
  {
    id: 'ws.keepalive.timeout',
    enforces: ['transition:connected/no-ping', 'limit:ping-interval'],
    catches: ['keepalive-never', 'keepalive-early'],
    clause,
    title: 'opens a connection and sends nothing',
    expectation:
      'the server closes it no earlier than pingTimeoutMs after the connection opened, and within ' +
      `the grace after that (timing.pingGraceMs, default ${KEEPALIVE_DEFAULTS.graceWindows} of a window)`,
    severity: 'must',
    tags: ['ws', 'keepalive', 'slow'],
    needs: ['ws'],
    timeoutMs: (p) => closeCheckTimeoutMs(keepAliveTiming(p)),
    async run(ctx) {
      const t = keepAliveTiming(ctx.profile);
      const { windowMs, graceMs } = t;
      const session = await openSession(ctx, { keepAlive: false });
      // The server's timer starts between our handshake start and our 'open': the lower bound is
      // measured from the former, the upper from the latter, so neither side is judged unfairly.
      const started = session.startedAtMs;
      const opened = session.openedAtMs;
      const closed = await closeWithin(ctx, session, closeWaitMs(t));
      if (!closed)
        return ctx.fail({
          received: `still open ${closeWaitMs(t)} ms after opening with no ping`,
          expected: `closed within ${windowMs} + ${graceMs} ms`,
        });
      // Our side dropping a misbehaving peer is not the server's keep-alive close.
      if (closed.by === 'client')
        return ctx.fail({
          received:
            `the connection ended ${Math.round(closed.atMs - opened)} ms after ` +
            `opening, not by the server: ${closed.reason}`,
          expected: `the server closes a silent connection after ${windowMs} ms`,
        });
      const early = closed.atMs - started;
      const late = closed.atMs - opened;
      ctx.observe(
        'closed-after-ms',
        Math.round(late),
        `close code ${closed.code}${closed.reason ? ` reason ${JSON.stringify(closed.reason)}` : ''}, by ${closed.by}`,
      );
      // In tenths of a window, so that a baseline shows a change of how late the target closes, not timer jitter.
      ctx.observe(
        'closed-after-windows',
        closeWindows(late, windowMs),
        'when a connection without a ping was closed, in keep-alive windows (no deadline after the window is stated)',
      );
      ctx.observe('close-code', closed.code);
      if (early < windowMs - EARLY_TOLERANCE_MS)
        ctx.fail({
          received: `closed ${Math.round(early)} ms after the handshake began (code ${closed.code}, by ${closed.by})`,
          expected: `not closed before the ${windowMs} ms window ends`,
        });
      if (late > windowMs + graceMs)
        ctx.fail({
          received: `closed ${Math.round(late)} ms after opening`,
          expected: `closed within ${windowMs} + ${graceMs} ms`,
        });
    },
  },
  {
    id: 'ws.keepalive.ping-keeps-alive',
    enforces: ['transition:connected/no-ping', 'limit:ping-interval'],
    catches: ['keepalive-ping-not-reset'],
    clause,
    title:
      'opens a connection and pings every pingTimeoutMs/3 until a second past the window and its grace ' +
      '(timing.keepAliveHoldWindows windows, when the profile states it)',
    expectation:
      'the connection stays open past the moment a server that ignores pings has closed it (the pongs are ' +
      "counted as an observation; their form is ws.ping.pong's rule)",
    severity: 'must',
    tags: ['ws', 'keepalive', 'slow'],
    needs: ['ws'],
    timeoutMs: (p) => holdCheckTimeoutMs(keepAliveTiming(p)),
    async run(ctx) {
      const t = keepAliveTiming(ctx.profile);
      const { windowMs, holdWindows } = t;
      const session = await openSession(ctx, { keepAlive: false });
      const every = keepAliveSendMs(t);
      const until = session.openedAtMs + windowMs * holdWindows;
      let pings = 0;
      // A timer may fire a hair before the hold ends; a ping sent in its last moments proves nothing.
      while (until - ctx.stream.now() > LAST_PING_MARGIN_MS) {
        if (!session.isOpen) break;
        session.send({ method: METHOD.ping });
        pings++;
        await closeWithin(ctx, session, Math.min(every, Math.max(0, until - ctx.stream.now())));
      }
      if (!session.isOpen) {
        const c = await session.closed;
        ctx.fail({
          received:
            `closed ${Math.round(c.atMs - session.openedAtMs)} ms after opening (code ${c.code}, ` +
            `by ${c.by}) despite ${pings} ping(s) every ${Math.round(every)} ms`,
          expected: `open for at least ${Number(holdWindows.toFixed(2))} × ${windowMs} ms while pinging`,
        });
      }
      const pongs = session.frames.filter((f) => f.kind === 'text' && f.text === TEXT.pong).length;
      ctx.observe('pings-and-pongs', { pings, pongs });
    },
  },
  {
    id: 'ws.keepalive.observe-other-traffic',
    enforces: ['limit:ping-interval'],
    clause: {
      section: 'Method ping',
      rule: 'a ping must arrive at least once every 30 seconds; whether other traffic counts: not shown',
    },
    title: 'opens a connection and sends subscribe requests (never ping) every pingTimeoutMs/3',
    expectation: 'recorded: whether the connection is closed after the window despite the traffic',
    severity: 'observe',
    tags: ['ws', 'keepalive', 'slow'],
    needs: ['ws'],
    timeoutMs: (p) => closeCheckTimeoutMs(keepAliveTiming(p)),
    async run(ctx) {
      const t = keepAliveTiming(ctx.profile);
      const pairs = await needPairs(ctx, 1);
      const session = await openSession(ctx, { keepAlive: false });
      const until = session.openedAtMs + closeWaitMs(t);
      let sent = 0;
      while (session.isOpen && ctx.stream.now() < until) {
        try {
          session.send(subscribe(pairs, `conform-traffic-${sent}`));
          sent++;
        } catch (err) {
          if (!isSilence(err)) throw err;
        }
        await closeWithin(ctx, session, Math.min(keepAliveSendMs(t), Math.max(0, until - ctx.stream.now())));
      }
      if (session.isOpen)
        ctx.observe(
          'other-traffic-keeps-alive',
          true,
          `open ${Math.round(ctx.stream.now() - session.openedAtMs)} ms with ${sent} subscribe request(s) and no ping`,
        );
      else {
        const c = await session.closed;
        ctx.observe(
          'other-traffic-keeps-alive',
          false,
          `closed ${Math.round(c.atMs - session.openedAtMs)} ms after opening ` +
            `(code ${c.code}) despite ${sent} subscribe request(s)`,
        );
      }
    },
  },
];
