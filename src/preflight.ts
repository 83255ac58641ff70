/**
 * The two requests a run sends before its first check, so that a target that is not there, or
 * answers nothing with a key, stops the run at once instead of through a cascade of timeouts.
 */
import http from 'node:http';
import https from 'node:https';
import type { Evidence } from './check.ts';
import type { Profile } from './profile.ts';
import type { Redact } from './redact.ts';
import { createRestClient, KEEP_ALIVE } from './transports/rest-client.ts';
import { TimeoutError, UnreachableError } from './errors.ts';

/** Longest wait for the first HTTP response of a run. */
export const PREFLIGHT_TIMEOUT_MS = 10_000;

/**
 * Fails fast when the target takes no connection or does not answer HTTP at all, rather than a
 * cascade of timeouts: one GET of /v1/pairs without a key, any HTTP status will do.
 */
export async function assertReachable(restUrl: string, timeoutMs = PREFLIGHT_TIMEOUT_MS): Promise<void> {
  let url: URL;
  try {
    url = new URL(`${restUrl.replace(/\/+$/, '')}/v1/pairs`);
  } catch {
    throw new UnreachableError(`target ${restUrl} is not a URL`);
  }
  const origin = url.origin;
  await new Promise<void>((resolve, reject) => {
    const lib = url.protocol === 'https:' ? https : http;
    const req = lib.get(url, {
      agent: KEEP_ALIVE[url.protocol === 'https:' ? 'https' : 'http'],
      headers: { accept: 'application/json' },
    });
    const timer = setTimeout(() => {
      reject(new UnreachableError(`target ${origin} sent no HTTP response within ${timeoutMs} ms`));
      req.destroy();
    }, timeoutMs);
    req.once('response', (res) => {
      clearTimeout(timer);
      res.destroy();
      req.destroy();
      resolve();
    });
    req.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const code = err.code ?? err.message;
      reject(
        new UnreachableError(
          code.startsWith('HPE_')
            ? `target ${origin} does not answer HTTP (${code})`
            : `target ${origin} unreachable: ${code}`,
        ),
      );
    });
  });
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
    record: (e) => evidence.push(e),
    redact,
    timeoutMs,
  });
  try {
    await rest.get({ path: '/v1/pairs' });
    return undefined;
  } catch (err) {
    // Only silence stops the run; any other failure is for the checks to judge and report.
    if (err instanceof TimeoutError)
      return {
        reason:
          `not run: the target answered no request with the primary key within ${timeoutMs} ms ` +
          '(preflight GET /v1/pairs)',
        evidence,
      };
    return undefined;
  }
}
