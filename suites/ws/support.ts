/**
 * Steps the WebSocket checks share: open a session, wait for a reply, turn a missing reply into a
 * violation. A target that does not answer breaks the rule (fail); a harness that breaks is an error.
 */
import type { CheckContext } from '../../src/check.ts';
import { StreamError, type InboundFrame, type OpenOptions, type StreamSession } from '../../src/transports/stream.ts';

/** Opens a session with the primary key (or `options`); a refused handshake fails the check. */
export async function openPrimary(ctx: CheckContext, options: OpenOptions = {}): Promise<StreamSession> {
  const result = await ctx.stream.open(options);
  if (!result.ok) {
    ctx.fail({ received: `handshake refused: HTTP ${result.status} ${result.text}`, expected: 'a valid key with stream access is accepted (spec: Authentication)' });
  }
  return result.session;
}

/** Whether an error is the target not answering (timeout, close) rather than the harness breaking. */
export function isSilence(err: unknown): err is StreamError {
  return err instanceof StreamError && (err.code === 'CONFORM_WAIT_TIMEOUT' || err.code === 'CONFORM_WAIT_CLOSED');
}

/** Waits for a frame; no frame (timeout or close) fails the check with `expected`. */
export async function waitFrame(ctx: CheckContext, session: StreamSession, predicate: (f: InboundFrame) => boolean, expected: string, timeoutMs?: number): Promise<InboundFrame> {
  try {
    return await session.next(predicate, timeoutMs);
  } catch (err) {
    if (isSilence(err)) ctx.fail({ received: err.message, expected });
    throw err;
  }
}

/** Sends a request and waits for its notice; no notice fails the check with `expected`. */
export async function requestNotice(ctx: CheckContext, session: StreamSession, message: Record<string, unknown>, expected: string, timeoutMs?: number): Promise<Record<string, unknown>> {
  try {
    return await session.request(message, timeoutMs);
  } catch (err) {
    if (isSilence(err)) ctx.fail({ received: err.message, expected });
    throw err;
  }
}
