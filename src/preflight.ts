/**
 * The two requests a run sends before its first check, so that a target that is not there, or
 * answers nothing with a key, stops the run at once instead of through a cascade of timeouts.
 */
import type { Evidence } from './check.ts';
import type { Profile } from './profile.ts';
import type { Redact } from './redact.ts';
import { createRestClient, requestUrl } from './transports/rest-client.ts';
import { probeHttp } from './transports/http-probe.ts';
import { caOf, certificateProblem, isCertificateFailure, type TrustedCa, verifyTls } from './transports/tls-trust.ts';
import { SetupError, TimeoutError, UnreachableError } from './errors.ts';
import { API_KEY_HEADER, PATHS, STATUS } from './spec.ts';
import type { RestExchange } from './transports/rest.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { NETWORK_RETRY_STEPS_MS, PREFLIGHT_TIMEOUT_MS } from './timing/index.ts';

/** Errnos of a probe whose connection was refused or reset before any answer. */
const TRANSIENT_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * Stops a run whose target's TLS certificate fails verification, on the REST origin and on the
 * stream's when it is another (CertificateError, exit 2: one line naming the host and the reason),
 * before a request carries a key to it. Plain HTTP and an origin that does not answer pass: the
 * reachability checks report those.
 */
export async function assertTrusted(
  profile: Pick<Profile, 'rest' | 'ws' | 'tls'>,
  timeoutMs = PREFLIGHT_TIMEOUT_MS,
): Promise<void> {
  const ca = caOf(profile);
  const origins = new Set([new URL(profile.rest).host]);
  await verifyTls(profile.rest, ca, timeoutMs);
  if (profile.ws && !origins.has(new URL(profile.ws).host)) await verifyTls(profile.ws, ca, timeoutMs);
}

/** The target's TLS verified (`assertTrusted`), then its REST answering HTTP at all (`assertReachable`). */
export async function assertOpen(profile: Pick<Profile, 'rest' | 'ws' | 'tls'>, timeoutMs: number): Promise<void> {
  await assertTrusted(profile, timeoutMs);
  await assertReachable(profile.rest, timeoutMs, caOf(profile));
}

/**
 * Fails fast when the target takes no connection or does not answer HTTP at all, rather than a
 * cascade of timeouts: one GET of /v1/pairs without a key, any HTTP status will do.
 */
export async function assertReachable(
  restUrl: string,
  timeoutMs = PREFLIGHT_TIMEOUT_MS,
  ca?: TrustedCa,
): Promise<void> {
  let url: URL;
  try {
    url = requestUrl(restUrl, PATHS.pairs);
  } catch {
    throw new UnreachableError(`target ${restUrl} is not a URL`);
  }
  const origin = url.origin;
  let probe = await probeHttp(url, timeoutMs, ca);
  // A connection refused or reset once is tried again after a pause, as every request of the run is.
  for (const pauseMs of NETWORK_RETRY_STEPS_MS) {
    if (probe.answered || 'timedOut' in probe || !TRANSIENT_ERRNO.has(probe.code)) break;
    await sleep(pauseMs);
    probe = await probeHttp(url, timeoutMs, ca);
  }
  if (probe.answered) return;
  if ('timedOut' in probe) throw new UnreachableError(`target ${origin} sent no HTTP response within ${timeoutMs} ms`);
  if (isCertificateFailure(probe.code))
    throw certificateProblem(origin, { code: probe.code, message: probe.message } as NodeJS.ErrnoException);
  throw new UnreachableError(
    probe.code.startsWith('HPE_')
      ? `target ${origin} does not answer HTTP (${probe.code})`
      : `target ${origin} unreachable: ${probe.code}`,
  );
}

/**
 * The second preflight: one GET of /v1/pairs with the primary key. A target that answers without
 * a key but never with one (a gateway whose backend hangs) would cost every check its timeout;
 * returns the evidence and the reason when that request got no answer in time.
 */
export async function keyedPreflight(
  profile: Profile,
  redact: Redact,
  timeoutMs: number,
): Promise<{ reason: string; evidence: Evidence[] } | undefined> {
  const evidence: Evidence[] = [];
  const rest = createRestClient({
    baseUrl: profile.rest,
    primaryKey: profile.keys.primary.key,
    ca: caOf(profile),
    record: (e) => evidence.push(e),
    redact,
    timeoutMs,
  });
  try {
    await rest.get({ path: PATHS.pairs });
    return undefined;
  } catch (err) {
    // Only silence stops the run; any other failure is for the checks to judge and report.
    if (err instanceof TimeoutError)
      return {
        reason:
          `not run: the target answered no request with the primary key within ${timeoutMs} ms ` +
          `(preflight GET ${PATHS.pairs})`,
        evidence,
      };
    return undefined;
  }
}

/** What is wrong with a set-up whose `GET /v1/pairs` with the primary key answered `ex`, if anything. */
export function setupProblem(restUrl: string, ex: RestExchange, keySource: string): string | undefined {
  const url = `${restUrl.replace(/\/+$/, '')}${PATHS.pairs}`;
  const json = ex.json !== null && typeof ex.json === 'object' ? (ex.json as Record<string, unknown>) : undefined;
  // Only the answers that say "not here" or "not this key" are a set-up's: anything else (a redirect,
  // an error page, a broken body) is the target's answer, and the checks judge it.
  if (ex.status === 401 || String(json?.status_number) === STATUS.UNAUTHORIZED)
    return (
      `the target refuses the primary key (HTTP ${ex.status}, status_number ` +
      `${JSON.stringify(json?.status_number ?? null)} on GET ${url}): ` +
      `check ${keySource} holds a valid key for this target`
    );
  // No JSON, or the service's own "no such endpoint": /v1/pairs is not under this URL.
  const notFound = json === undefined || !('status_number' in json) || String(json.status_number) === STATUS.NOT_FOUND;
  if (ex.status === 404 && notFound) {
    const path = new URL(restUrl).pathname.replace(/\/+$/, '');
    const hint = /\/v1$/.test(path)
      ? ` (drop the trailing /v1: the harness appends ${PATHS.pairs})`
      : path === ''
        ? ' (is a path prefix such as /api missing?)'
        : '';
    return (
      `--target ${restUrl} does not look like the service's base URL: GET ${url} answered HTTP ` +
      `${ex.status} ` +
      (json === undefined ? 'without JSON' : `with status_number ${JSON.stringify(json.status_number ?? null)}`) +
      '; give the URL ' +
      `${PATHS.pairs} sits under${hint}`
    );
  }
  return undefined;
}

/**
 * Stops a run whose set-up is wrong before any check judges the target by it: the primary key
 * refused, or a URL that is not the base URL (SetupError, exit 2). A key refused under the
 * canonical header but taken in another case is the target's fault, for the checks to judge.
 * Resolves with whether the target answered the request with the key at all.
 */
export async function assertSetup(
  profile: Profile,
  redact: Redact,
  timeoutMs: number,
  keySource = "the profile's keys.primary",
): Promise<{ answered: boolean }> {
  await assertOpen(profile, timeoutMs);
  const rest = createRestClient({
    baseUrl: profile.rest,
    primaryKey: profile.keys.primary.key,
    ca: caOf(profile),
    record: () => undefined,
    redact,
    timeoutMs,
  });
  let ex: RestExchange;
  try {
    ex = await rest.get({ path: PATHS.pairs });
  } catch {
    // Silence and network trouble are the keyed preflight's and the checks' to report.
    return { answered: false };
  }
  const problem = setupProblem(profile.rest, ex, keySource);
  if (problem === undefined) return { answered: true };
  if (/refuses the primary key/.test(problem)) {
    const again = await rest.get({ path: PATHS.pairs, keyHeader: API_KEY_HEADER.toLowerCase() }).catch(() => undefined);
    if (again && setupProblem(profile.rest, again, keySource) === undefined) return { answered: true };
  }
  throw new SetupError(redact(problem));
}
