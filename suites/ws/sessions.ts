/**
 * Stream sessions as the checks use them: open one within the key's allowance, keep it alive with
 * pings, send on it, wait on it, and wait for its close. A target that does not answer breaks a rule
 * (fail); a harness that breaks is an error.
 *
 * The engine lends each key's allowance (src/connection-budget.ts): `ctx.stream.open()` waits for a
 * slot, waits out a 50009 the target owes to a slot it has not freed yet, and gives the slot back
 * when the session closes. Checks never count connections themselves.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CheckContext } from '../../src/check.ts';
import { StreamClosedError, WaitTimeoutError } from '../../src/errors.ts';
import { METHOD } from '../../src/spec.ts';
import { keepAliveTiming, keepOpenPingMs } from '../../src/timing/index.ts';
import type {
  CloseInfo,
  InboundFrame,
  OpenOptions,
  OpenResult,
  Refusal,
  StreamSession,
} from '../../src/transports/stream.ts';

/** Whether an error is the target not answering (timeout, close) rather than the harness breaking. */
export function isSilence(err: unknown): err is WaitTimeoutError | StreamClosedError {
  return err instanceof WaitTimeoutError || err instanceof StreamClosedError;
}

/** Opens a session within the key's allowance; a refusal comes back as data for the check to judge. */
export function tryOpen(ctx: CheckContext, options: OpenOptions = {}): Promise<OpenResult> {
  return ctx.stream.open(options);
}

/** Describes a refusal in one line for a violation. */
export const describeRefusal = (r: Refusal): string => `handshake refused: HTTP ${r.status} ${r.text.slice(0, 300)}`;

/**
 * Opens a session that must be accepted (a key with stream access); a refusal fails the check.
 * `keepAlive` pings every window/3 so that checks longer than a short test window are not
 * closed under them; ping and keep-alive checks turn it off.
 */
export async function openSession(
  ctx: CheckContext,
  options: OpenOptions & { keepAlive?: boolean } = {},
): Promise<StreamSession> {
  const { keepAlive = true, ...open } = options;
  const result = await tryOpen(ctx, open);
  if (!result.ok)
    ctx.fail({
      received: describeRefusal(result),
      expected: 'a valid key with stream access is accepted (spec: Authentication)',
    });
  const session = result.session;
  if (keepAlive) keepOpen(ctx, session);
  return session;
}

/**
 * Pings `session` every window/3 until it closes, so that the target's keep-alive window never
 * closes it under a check.
 */
export function keepOpen(ctx: CheckContext, session: StreamSession): void {
  const every = keepOpenPingMs(keepAliveTiming(ctx.profile));
  const timer = setInterval(() => {
    if (session.isOpen) session.send({ method: METHOD.ping });
  }, every);
  void session.closed.then(() => clearInterval(timer));
}

/** Waits for a frame; no frame (timeout or close) fails the check with `expected`. */
export async function waitFrame(
  ctx: CheckContext,
  session: StreamSession,
  predicate: (f: InboundFrame) => boolean,
  expected: string,
  timeoutMs?: number,
): Promise<InboundFrame> {
  try {
    return await session.next(predicate, timeoutMs ?? ctx.waits.noticeMs);
  } catch (err) {
    if (isSilence(err)) ctx.fail({ received: silence(err, timeoutMs ?? ctx.waits.noticeMs), expected });
    throw err;
  }
}

/** What the target's silence looked like: a timeout or a close. */
export function silence(err: WaitTimeoutError | StreamClosedError, timeoutMs: number): string {
  return err instanceof WaitTimeoutError ? `no frame within ${timeoutMs} ms` : err.message;
}

/** Sends a message; a connection the target already closed fails the check with `expected`. */
export function sendOrFail(ctx: CheckContext, session: StreamSession, message: unknown, expected: string): void {
  try {
    if (typeof message === 'string') session.sendText(message);
    else session.send(message);
  } catch (err) {
    if (isSilence(err)) ctx.fail({ received: err.message, expected });
    throw err;
  }
}

/** Waits until `atMs` on the stream clock (no-op when it has passed). */
export async function until(ctx: CheckContext, atMs: number): Promise<void> {
  const left = atMs - ctx.stream.now();
  if (left > 0) await sleep(left, undefined, { signal: ctx.signal });
}

/**
 * Waits `ms` or until the session closes, whichever comes first; resolves with the close, or
 * undefined when the time ran out. The timer that loses is cancelled, so no sleep outlives it.
 */
export async function closeWithin(
  ctx: CheckContext,
  session: StreamSession,
  ms: number,
): Promise<CloseInfo | undefined> {
  const stop = new AbortController();
  const timer = sleep(ms, undefined, { signal: AbortSignal.any([ctx.signal, stop.signal]) }).then(
    () => undefined,
    (err: unknown) => {
      if (stop.signal.aborted) return undefined;
      throw err;
    },
  );
  try {
    return await Promise.race([session.closed, timer]);
  } finally {
    stop.abort();
  }
}

/** Sleeps without ending early, unless the check is aborted. */
export const pause = (ms: number, ctx: CheckContext): Promise<void> => sleep(ms, undefined, { signal: ctx.signal });
