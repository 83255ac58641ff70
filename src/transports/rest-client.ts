/**
 * The REST transport on node:http(s): one request per call, every exchange recorded as evidence
 * with a curl line, keys redacted. Redirects are never followed (a redirect elsewhere would carry
 * the key to another origin); bodies are bounded; every request has a timeout. Connections are
 * kept alive and shared across the run's requests: a catalogue of hundreds of pairs across a real
 * network would otherwise pay a handshake per request.
 */
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { Evidence } from '../check.ts';
import { API_KEY_HEADER, STATUS } from '../spec.ts';
import type { Redact } from '../redact.ts';
import { AbortedError, BodyTooLargeError, NetworkError, ThrottledError, TimeoutError } from '../errors.ts';
import { retryingNetwork } from './network-retry.ts';
import { rateLimitHeaders, retryAfterMs, type RequestBudget, type WaitListener } from '../request-budget.ts';
import type { RestClient, RestExchange, RestRequest } from './rest.ts';
import { REST_IDLE_SOCKET_MS, REST_TIMEOUT_MS } from '../timing/index.ts';
import { httpsAgent, type TrustedCa } from './tls-trust.ts';

export interface RestClientOptions {
  /** REST base URL; paths are appended to it. */
  baseUrl: string;
  /** Sent when a request does not name a key. */
  primaryKey: string;
  /** Receives every exchange, already redacted. */
  record: (e: Evidence) => void;
  redact: Redact;
  /** Per request; default 10000 ms. */
  timeoutMs?: number;
  /** Largest body read; default 1 MiB. */
  maxBodyBytes?: number;
  /** Aborts every request in flight (check timeout, run stopped). */
  signal?: AbortSignal;
  /** The run's shared request pace; without one, requests go at once and a 50006 comes back as it is. */
  budget?: RequestBudget;
  /** Hears when a request starts (true) and stops (false) waiting on the rate limit. */
  onRateWait?: WaitListener;
  /** Hears how long each answer took, from the request's sending to the end of its body, ms. */
  onAnswer?: (ms: number) => void;
  /** CA certificates the target's TLS is verified against beside Node's own (`--ca`, the profile's `tls.ca`). */
  ca?: TrustedCa;
}

/**
 * The agents every request goes through. Idle sockets do not hold the process open (Node unrefs
 * them), and a socket is dropped after a second idle, shorter than a server's usual keep-alive
 * window, so a request seldom meets a socket the server is closing.
 */
export const KEEP_ALIVE = {
  http: new http.Agent({ keepAlive: true, timeout: REST_IDLE_SOCKET_MS }),
  // Verification is set, not left to a default NODE_TLS_REJECT_UNAUTHORIZED=0 would change.
  https: new https.Agent({ keepAlive: true, timeout: REST_IDLE_SOCKET_MS, rejectUnauthorized: true }),
} as const;

/** Defaults of the REST client. */
export const REST_DEFAULTS = { timeoutMs: REST_TIMEOUT_MS, maxBodyBytes: 1024 * 1024 } as const;

/** Characters of a body kept in the evidence. */
export const EVIDENCE_BODY_CHARS = 16 * 1024;
const excerpt = (text: string): string =>
  text.length > EVIDENCE_BODY_CHARS
    ? `${text.slice(0, EVIDENCE_BODY_CHARS)}… (${text.length} characters in all)`
    : text;

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** A curl command that repeats the request (keys already redacted by the caller). */
export function curlLine(method: string, url: string, headers: Record<string, string>): string {
  const parts = ['curl', '-sS', '-i'];
  if (method !== 'GET') parts.push('-X', method);
  parts.push(shellQuote(url));
  for (const [name, value] of Object.entries(headers)) parts.push('-H', shellQuote(`${name}: ${value}`));
  return parts.join(' ');
}

/** Builds the URL of a request on a base URL, keeping any base path. */
export function requestUrl(baseUrl: string, path: string, query?: Record<string, string | undefined>): URL {
  const url = new URL(baseUrl.replace(/\/+$/, '') + path);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.append(k, v);
  return url;
}

function flatHeaders(raw: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw))
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** The status number of an answer as text, read loosely (its type is the envelope checks' rule). */
function statusOf(ex: RestExchange): string | undefined {
  const status = (ex.json as { status_number?: unknown } | undefined)?.status_number;
  return status === undefined ? undefined : String(status);
}

/**
 * Whether an answer is the rate limit's: status 50006 (read loosely: its type is the envelope
 * checks' rule), or an HTTP 429 without a status number, from whatever stands before the service
 * (a gateway's body need not be an envelope; a 429 that names another status is the check's).
 */
const throttledAnswer = (ex: RestExchange): boolean =>
  statusOf(ex) === STATUS.RATE_LIMITED || (ex.status === 429 && statusOf(ex) === undefined);

/** The options of one client with their defaults applied. */
type ClientSettings = RestClientOptions & { timeoutMs: number; maxBodyBytes: number };

/** The request budget's name for requests sent without a key: no key value a target issues. */
export const WITHOUT_A_KEY = '\u0000without a key';

/** Creates the REST client of one check. */
export function createRestClient(options: RestClientOptions): RestClient {
  const settings: ClientSettings = {
    ...options,
    timeoutMs: options.timeoutMs ?? REST_DEFAULTS.timeoutMs,
    maxBodyBytes: options.maxBodyBytes ?? REST_DEFAULTS.maxBodyBytes,
  };
  return {
    async get(req: RestRequest): Promise<RestExchange> {
      const key = req.key === undefined ? options.primaryKey : req.key;
      // Requests without a key are paced too, as one budget of their own: a gateway may limit them
      // per address before the service answers 401, and its 50006 is then the harness's doing.
      const paceAs = key === null ? WITHOUT_A_KEY : key;
      const budget = req.paced === false || !options.budget?.paces(paceAs) ? undefined : options.budget;
      if (!budget) return send(settings, req);
      return sendPaced(settings, req, paceAs, budget);
    },
  };
}

/** Sends in the key's turn of the run's request budget; a 50006 is waited out and sent again. */
async function sendPaced(
  options: ClientSettings,
  req: RestRequest,
  key: string,
  budget: RequestBudget,
): Promise<RestExchange> {
  for (;;) {
    await budget.take(key, options.signal, options.onRateWait).catch((err: unknown) => {
      if (err instanceof ThrottledError) throw err;
      throw new AbortedError("the check was stopped while its request waited for the key's turn");
    });
    const sentAtMs = performance.now();
    const ex = await send(options, req);
    if (!throttledAnswer(ex)) {
      budget.advised(key, ex.headers);
      return ex;
    }
    // A 50006 here is the harness's own doing (the limit's size is not shown): wait, retry, never judge it.
    const retryAfter = ex.headers['retry-after'];
    const waitMs = budget.throttled(key, retryAfterMs(retryAfter) ?? rateLimitHeaders(ex.headers).resetMs, sentAtMs);
    budget.advised(key, ex.headers);
    options.record({
      kind: 'note',
      text:
        `${statusOf(ex) === STATUS.RATE_LIMITED ? '50006' : `HTTP ${ex.status}`} (rate limited): ` +
        `waiting ${Math.round(waitMs)} ` +
        `ms${retryAfter ? ` (Retry-After: ${retryAfter})` : ''}, then retrying`,
      atMs: performance.now(),
    });
  }
}

/**
 * Sends once; a reused keep-alive socket that the server had closed (ECONNRESET before any
 * answer) is the client's race, not the target's doing, and the GET is sent once more. A GET
 * whose fresh connection is refused or reset before the answer is sent again after a pause
 * (network-retry.ts).
 */
async function send(options: ClientSettings, req: RestRequest): Promise<RestExchange> {
  const once = async (): Promise<RestExchange> => {
    try {
      return await sendOnce(options, req);
    } catch (err) {
      if (err instanceof StaleSocketError) return sendOnce(options, req);
      throw err;
    }
  };
  // Only what is safe to repeat is sent again after a connection refused or reset: every GET.
  if ((req.method ?? 'GET') !== 'GET' && req.method !== 'HEAD') return once();
  const note = (text: string): void => options.record({ kind: 'note', text, atMs: performance.now() });
  return retryingNetwork(once, note, options.signal);
}

/** One request as it goes out: where, what, and its evidence, redacted, with the curl line. */
interface Outgoing {
  method: string;
  url: URL;
  headers: Record<string, string>;
  shownUrl: string;
  evidence: Extract<Evidence, { kind: 'http' }>;
  withPrimaryKey: boolean;
}

/** The request's URL and headers (the key under its header), and its evidence. */
function outgoing(options: ClientSettings, req: RestRequest): Outgoing {
  const { redact } = options;
  const method = req.method ?? 'GET';
  const url = requestUrl(options.baseUrl, req.path, req.query);
  const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
  const key = req.key === undefined ? options.primaryKey : req.key;
  if (key !== null) headers[req.keyHeader ?? API_KEY_HEADER] = key;
  const shownHeaders: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) shownHeaders[redact(k)] = redact(v);
  const shownUrl = redact(url.toString());
  const evidence: Extract<Evidence, { kind: 'http' }> = {
    kind: 'http',
    request: { method, url: shownUrl, headers: shownHeaders },
    curl: curlLine(method, shownUrl, shownHeaders),
    atMs: performance.now(),
  };
  return { method, url, headers, shownUrl, evidence, withPrimaryKey: key !== null && key === options.primaryKey };
}

/** Ends a request once: with an error or with the exchange, recording its evidence either way. */
type Finish = (err: Error | null, exchange?: RestExchange) => void;

function sendOnce(options: ClientSettings, req: RestRequest): Promise<RestExchange> {
  const { redact, record, timeoutMs } = options;
  const out = outgoing(options, req);
  const { method, url, headers, shownUrl, evidence } = out;
  const started = performance.now();

  return new Promise<RestExchange>((resolve, reject) => {
    let settled = false;
    // Declared before `finish`, which clears them: a check stopped before the request settles at once.
    let timer: ReturnType<typeof setTimeout> | undefined;
    let request: http.ClientRequest | undefined;
    const onAbort = (): void => {
      const err = new AbortedError('the check was stopped during the request');
      finish(err);
      request?.destroy(err);
    };
    const finish: Finish = (err, exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (err) {
        evidence.error = redact(`${(err as { code?: string }).code ?? err.name}: ${err.message}`);
        record(evidence);
        reject(err);
      } else {
        record(evidence);
        resolve(exchange!);
      }
    };
    if (options.signal?.aborted) {
      finish(new AbortedError('the check was stopped before the request'));
      return;
    }
    const lib = url.protocol === 'https:' ? https : http;
    const sent = lib.request(url, {
      method,
      headers,
      agent: url.protocol === 'https:' ? httpsAgent(options.ca, KEEP_ALIVE.https) : KEEP_ALIVE.http,
    });
    request = sent;
    timer = setTimeout(() => {
      const err = new TimeoutError(`no complete response from ${shownUrl} within ${timeoutMs} ms`);
      finish(err);
      sent.destroy(err);
    }, timeoutMs);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    sent.on('error', (err: NodeJS.ErrnoException) => {
      if (sent.reusedSocket && err.code === 'ECONNRESET' && !settled) {
        settled = true;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        reject(new StaleSocketError());
        return;
      }
      finish(new NetworkError(redact(`${method} ${shownUrl}: ${err.code ?? err.message}`), err.code, { cause: err }));
    });
    sent.on('response', (res) => readAnswer(options, out, started, res, sent, finish));
    sent.end();
  });
}

/** Reads an answer's body, bounded, into the exchange the check sees and the evidence it leaves. */
function readAnswer(
  options: ClientSettings,
  out: Outgoing,
  started: number,
  res: http.IncomingMessage,
  request: http.ClientRequest,
  finish: Finish,
): void {
  const { redact, maxBodyBytes: maxBody } = options;
  const { shownUrl, evidence } = out;
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBody) {
      const err = new BodyTooLargeError(`response body of ${shownUrl} exceeds ${maxBody} bytes`);
      finish(err);
      request.destroy(err);
      return;
    }
    chunks.push(chunk);
  });
  res.on('error', (err: NodeJS.ErrnoException) =>
    finish(new NetworkError(redact(`${shownUrl}: ${err.code ?? err.message}`), err.code)),
  );
  res.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    const resHeaders = flatHeaders(res.headers);
    const status = res.statusCode ?? 0;
    // Checks judge the whole body; the evidence keeps an excerpt, cut after redaction.
    evidence.response = { status, headers: redactHeaders(resHeaders, redact), body: excerpt(redact(text)) };
    if (status >= 300 && status < 400 && resHeaders.location) {
      // Never followed: the key would travel to wherever the target points.
      evidence.error = redact(`redirect to ${resHeaders.location} not followed (the key is never forwarded)`);
    }
    // Checks see the body redacted too: whatever they quote or cut short holds no key.
    const shownText = redact(text);
    let json: unknown;
    try {
      json = shownText.length ? JSON.parse(shownText) : undefined;
    } catch {
      json = undefined;
    }
    const durationMs = performance.now() - started;
    options.onAnswer?.(durationMs);
    finish(null, {
      url: shownUrl,
      status,
      headers: redactHeaders(resHeaders, redact),
      text: shownText,
      json,
      durationMs,
      ...(out.withPrimaryKey ? { withPrimaryKey: true } : {}),
    });
  });
}

/** A reused keep-alive socket was closed under the request: sent again, never reported. */
class StaleSocketError extends Error {}

function redactHeaders(headers: Record<string, string>, redact: Redact): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[redact(k)] = redact(v);
  return out;
}
