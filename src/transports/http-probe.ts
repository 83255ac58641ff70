/**
 * Whether anything answers HTTP at a URL: one GET without a key, settled at the head of the first
 * answer, whatever its status. The body is never read, so a target that answers slowly or not in
 * JSON still counts as there.
 */
import http from 'node:http';
import https from 'node:https';
import { KEEP_ALIVE } from './rest-client.ts';
import { httpsAgent, type TrustedCa } from './tls-trust.ts';

/** How an HTTP probe ended: an answer of any status, no answer in time, or a socket error's code and message. */
export type HttpProbe =
  | { answered: true }
  | { answered: false; timedOut: true }
  | { answered: false; code: string; message: string };

/** Sends one GET of `url` without a key and tells how it ended, within `timeoutMs`; HTTPS trusts `ca` too. */
export function probeHttp(url: URL, timeoutMs: number, ca?: TrustedCa): Promise<HttpProbe> {
  return new Promise<HttpProbe>((resolve) => {
    const lib = url.protocol === 'https:' ? https : http;
    const req = lib.get(url, {
      agent: url.protocol === 'https:' ? httpsAgent(ca, KEEP_ALIVE.https) : KEEP_ALIVE.http,
      headers: { accept: 'application/json' },
    });
    const timer = setTimeout(() => {
      resolve({ answered: false, timedOut: true });
      req.destroy();
    }, timeoutMs);
    req.once('response', (res) => {
      clearTimeout(timer);
      res.destroy();
      req.destroy();
      resolve({ answered: true });
    });
    req.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ answered: false, code: err.code ?? err.message, message: err.message });
    });
  });
}
