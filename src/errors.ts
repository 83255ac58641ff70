/**
 * Harness errors: anything that is not a check failure. Each kind has a stable code so reports
 * and CI can tell a broken harness or network (`error`) from a broken target (`fail`).
 */

/** Base of every harness error; `code` is stable and documented in the README. */
export class ConformError extends Error {
  override name = 'ConformError';
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The check ran past its timeout. */
export class TimeoutError extends ConformError {
  override name = 'TimeoutError';
  constructor(message: string) {
    super('CONFORM_TIMEOUT', message);
  }
}

/** A socket-level failure (reset, refused, DNS) while talking to the target. */
export class NetworkError extends ConformError {
  override name = 'NetworkError';
  constructor(
    message: string,
    readonly errno?: string,
    options?: { cause?: unknown },
  ) {
    super('CONFORM_NETWORK', message, options);
  }
}

/** The target does not accept connections at all: the run stops at once (exit 2). */
export class UnreachableError extends ConformError {
  override name = 'UnreachableError';
  constructor(message: string) {
    super('CONFORM_UNREACHABLE', message);
  }
}

/** A response body larger than the client accepts. */
export class BodyTooLargeError extends ConformError {
  override name = 'BodyTooLargeError';
  constructor(message: string) {
    super('CONFORM_BODY_TOO_LARGE', message);
  }
}

/** The target kept answering 50006 (rate limited) until the request's time ran out: nothing to judge. */
export class ThrottledError extends ConformError {
  override name = 'ThrottledError';
  constructor(message: string) {
    super('CONFORM_THROTTLED', message);
  }
}

/** Bad options or input files: the CLI prints the message on one line and exits 2. */
export class UsageError extends ConformError {
  override name = 'UsageError';
  constructor(message: string) {
    super('CONFORM_USAGE', message);
  }
}

/** The run was stopped (signal, --bail) before the check finished. */
export class AbortedError extends ConformError {
  override name = 'AbortedError';
  constructor(message = 'aborted') {
    super('CONFORM_ABORTED', message);
  }
}

/** Stable code for anything a check threw that is not a ConformError: a harness bug. */
export const CRASH_CODE = 'CONFORM_CHECK_CRASHED';

/** The stable code of any thrown value. */
export function errorCode(err: unknown): string {
  if (err instanceof ConformError) return err.code;
  // Transports may define their own error classes; a CONFORM_ code on them is honoured.
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('CONFORM_') ? code : CRASH_CODE;
}
