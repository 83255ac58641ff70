/**
 * The REST transport the checks use. Interface here; the implementation (undici/fetch, evidence
 * recording, redaction, no cross-origin redirects, bounded bodies) belongs to the engine.
 */

export interface RestRequest {
  /** Path on the REST base URL, e.g. `/v1/price`. */
  path: string;
  query?: Record<string, string | undefined>;
  /** Key value to send; `undefined` sends the profile's primary key, `null` sends no key header. */
  key?: string | null;
  /** Header name that carries the key; default `X-API-Key`. */
  keyHeader?: string;
  headers?: Record<string, string>;
  method?: 'GET' | 'POST' | 'HEAD';
  /**
   * Default true: the request takes its key's turn in the run's request budget, and a 50006 is
   * waited out and retried, never handed to the check. False sends at once and returns a 50006 as
   * it came: only for checks that provoke the rate limit on purpose.
   */
  paced?: boolean;
}

export interface RestExchange {
  url: string;
  status: number;
  /** Lower-cased header names; values with keys redacted. */
  headers: Record<string, string>;
  /** The body with every profile key redacted (`<key:NAME>`), so nothing a check quotes can leak one. */
  text: string;
  /** The parsed (redacted) body; `undefined` when it is not JSON. */
  json: unknown;
  durationMs: number;
  /** Sent with the profile's primary key, which the run's preflight saw accepted. */
  withPrimaryKey?: boolean;
}

export interface RestClient {
  /** Sends one request; every exchange is recorded as evidence of the running check. */
  get(request: RestRequest): Promise<RestExchange>;
}
