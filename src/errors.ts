/**
 * The error classes of the harness: every error conform throws on purpose is a `ConformError` subclass declared
 * here, each with a stable code written once (its static `code`), so reports and CI can tell a
 * broken harness or network (`error`) from a broken target (`fail`), and the CLI can tell bad input
 * (one line, exit 2) from a crash. docs/errors.md is generated from this file (npm run gen:errors).
 * Dependency-free: the k6 scripts bundle it too.
 */

/** Base of every error class here; `code` is its class's stable code. */
export abstract class ConformError extends Error {
  /** The stable code, documented in docs/errors.md; CI may match on it, so it never changes. */
  static readonly code: string;
  /**
   * Bad input: options, files, config or a target that cannot be reached. The CLI prints the
   * message alone on one line and exits 2; any other error is reported as the harness's own.
   */
  static readonly badInput: boolean = false;
  override name = 'ConformError';
  readonly code: string;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = (new.target as unknown as typeof ConformError).code;
  }
}

// Errors that end one check as `error` (the run goes on).

/** No answer in the check's or the handshake's time; also the checks left when the circuit breaker trips. */
export class TimeoutError extends ConformError {
  static override readonly code = 'CONFORM_TIMEOUT';
  override name = 'TimeoutError';
}

/**
 * Refused, reset, DNS, TLS, or an answer that is not HTTP, while talking to the target; `errno` is
 * Node's code. A connection refused or reset before any answer is retried first; a run whose only
 * problems are these reads `INCONCLUSIVE: network` (exit 3), not FAIL.
 */
export class NetworkError extends ConformError {
  static override readonly code = 'CONFORM_NETWORK';
  override name = 'NetworkError';
  constructor(
    message: string,
    readonly errno?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A REST response body larger than the client accepts (`--max-body`). */
export class BodyTooLargeError extends ConformError {
  static override readonly code = 'CONFORM_BODY_TOO_LARGE';
  override name = 'BodyTooLargeError';
}

/** The target kept answering 50006 (rate limited) until the request's time ran out: nothing to judge. */
export class ThrottledError extends ConformError {
  static override readonly code = 'CONFORM_THROTTLED';
  override name = 'ThrottledError';
}

/** The run was stopped (signal, --bail, the check's end) before the wait or request finished. */
export class AbortedError extends ConformError {
  static override readonly code = 'CONFORM_ABORTED';
  override name = 'AbortedError';
  constructor(message = 'aborted') {
    super(message);
  }
}

/** A wait on the stream saw no matching frame in its time. */
export class WaitTimeoutError extends ConformError {
  static override readonly code = 'CONFORM_WAIT_TIMEOUT';
  override name = 'WaitTimeoutError';
}

/** The stream connection closed before the frame waited for, or before a send. */
export class StreamClosedError extends ConformError {
  static override readonly code = 'CONFORM_WAIT_CLOSED';
  override name = 'StreamClosedError';
}

/** The local address a connection was to leave from cannot be bound (e.g. no 127.0.0.2 on this host). */
export class BindError extends ConformError {
  static override readonly code = 'CONFORM_BIND';
  override name = 'BindError';
}

/** A check opened a stream on a target that has none (the profile names no ws URL). */
export class NoStreamError extends ConformError {
  static override readonly code = 'CONFORM_NO_STREAM';
  override name = 'NoStreamError';
}

// Bad input: the command stops with one line naming the problem (exit 2).

/** Bad options of `conform` or `conform spec`, or an input file (a report) it cannot read: one line, exit 2. */
export class UsageError extends ConformError {
  static override readonly code = 'CONFORM_USAGE';
  static override readonly badInput = true;
  override name = 'UsageError';
}

/** The target does not accept connections at all: the run stops at once (exit 2). */
export class UnreachableError extends ConformError {
  static override readonly code = 'CONFORM_UNREACHABLE';
  static override readonly badInput = true;
  override name = 'UnreachableError';
}

/**
 * The target's TLS certificate fails verification against Node's CAs and the one `--ca FILE` or the
 * profile's `tls.ca` names: the run stops before anything is sent, naming the host and the reason
 * (exit 2). Verification is never turned off.
 */
export class CertificateError extends ConformError {
  static override readonly code = 'CONFORM_TLS_CERTIFICATE';
  static override readonly badInput = true;
  override name = 'CertificateError';
}

/**
 * The target answers, but not as the service with this key: the key is refused, or the URL is not
 * the base URL. The run stops before the checks with what to try (exit 2).
 */
export class SetupError extends ConformError {
  static override readonly code = 'CONFORM_SETUP';
  static override readonly badInput = true;
  override name = 'SetupError';
}

/**
 * A profile that could not be read or is invalid, or a probe naming a missing key; the message names
 * the file and the field.
 */
export class ProfileError extends ConformError {
  static override readonly code = 'CONFORM_PROFILE';
  static override readonly badInput = true;
  override name = 'ProfileError';
}

/** A bad option of `conform load`; the message names the option and the rule. */
export class LoadUsageError extends ConformError {
  static override readonly code = 'CONFORM_LOAD_USAGE';
  static override readonly badInput = true;
  override name = 'LoadUsageError';
}

/** A load threshold that does not parse or names an unknown metric. */
export class ThresholdError extends ConformError {
  static override readonly code = 'CONFORM_THRESHOLD';
  static override readonly badInput = true;
  override name = 'ThresholdError';
}

/** A result file `conform load merge` cannot read or merge; the message names the file. */
export class MergeInputError extends ConformError {
  static override readonly code = 'CONFORM_LOAD_MERGE';
  static override readonly badInput = true;
  override name = 'MergeInputError';
}

/**
 * A load history file (`--history`) that cannot be read or appended to: unreadable, of another
 * kind of run, or with a damaged line; the message names the file and the line.
 */
export class HistoryError extends ConformError {
  static override readonly code = 'CONFORM_LOAD_HISTORY';
  static override readonly badInput = true;
  override name = 'HistoryError';
}

/** A k6 script's setting (its environment variables) that cannot be used; k6 stops before the run. */
export class K6ConfigError extends ConformError {
  static override readonly code = 'CONFORM_K6_CONFIG';
  static override readonly badInput = true;
  override name = 'K6ConfigError';
}

/** k6 is not where `CONFORM_K6` points, or it did not finish (tests and the load benchmark). */
export class K6RunError extends ConformError {
  static override readonly code = 'CONFORM_K6_RUN';
  override name = 'K6RunError';
}

/** A reference service config that cannot be used; `field` is the JSON path of the first bad field. */
export class ConfigError extends ConformError {
  static override readonly code = 'CONFORM_REFERENCE_CONFIG';
  static override readonly badInput = true;
  override name = 'ConfigError';
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

/** An unknown fault name for the reference service; the message says how to list the valid ones. */
export class UnknownFaultError extends ConformError {
  static override readonly code = 'CONFORM_REFERENCE_FAULT';
  static override readonly badInput = true;
  override name = 'UnknownFaultError';
}

/** A dialect of the reference service that cannot be used: one line naming the source and the field. */
export class DialectError extends ConformError {
  static override readonly code = 'CONFORM_DIALECT';
  static override readonly badInput = true;
  override name = 'DialectError';
}

/** A bad `conform serve` option; the message names it. */
export class ServeUsageError extends ConformError {
  static override readonly code = 'CONFORM_SERVE_USAGE';
  static override readonly badInput = true;
  override name = 'ServeUsageError';
}

/** The reference service the load tools start in a process of its own did not come up. */
export class ReferenceStartError extends ConformError {
  static override readonly code = 'CONFORM_REFERENCE_START';
  override name = 'ReferenceStartError';
}

/** Every error class, in the order docs/errors.md lists them. */
export const ERROR_CLASSES = [
  TimeoutError,
  NetworkError,
  BodyTooLargeError,
  ThrottledError,
  AbortedError,
  WaitTimeoutError,
  StreamClosedError,
  BindError,
  NoStreamError,
  UsageError,
  UnreachableError,
  CertificateError,
  SetupError,
  ProfileError,
  LoadUsageError,
  ThresholdError,
  MergeInputError,
  HistoryError,
  K6ConfigError,
  K6RunError,
  ConfigError,
  UnknownFaultError,
  DialectError,
  ServeUsageError,
  ReferenceStartError,
] as const;

/** Stable code for anything thrown that is not a ConformError: a harness bug. */
export const CRASH_CODE = 'CONFORM_CHECK_CRASHED';

/** Every stable code: the error classes' and the crash code. */
export const ERROR_CODES: readonly string[] = [...ERROR_CLASSES.map((c) => c.code), CRASH_CODE];

/** The stable code of any thrown value. */
export function errorCode(err: unknown): string {
  return err instanceof ConformError ? err.code : CRASH_CODE;
}

/** Whether `err` is bad input (see `ConformError.badInput`): the CLI answers it with its message and exit 2. */
export function isBadInput(err: unknown): err is ConformError {
  return err instanceof ConformError && (err.constructor as typeof ConformError).badInput;
}
