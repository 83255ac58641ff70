/**
 * A refused stream handshake: the HTTP response that came back instead of the upgrade, read into
 * a Refusal (status, headers, body, parsed JSON) for the handshake checks. Shared by every
 * transport whose handshake is an HTTP request.
 */
import type { IncomingMessage } from 'node:http';
import type { Refusal } from './stream.ts';

/** Refusal bodies are read up to this many bytes. */
export const MAX_REFUSAL_BODY = 64 * 1024;

/**
 * Reads a response body up to MAX_REFUSAL_BODY, then stops the transfer; a server that keeps the
 * socket open after its body still gets a verdict on close.
 */
export function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const text = (): string => Buffer.concat(chunks).subarray(0, MAX_REFUSAL_BODY).toString('utf8');
    res.on('data', (c: Buffer) => {
      chunks.push(c);
      size += c.length;
      // Enough for a verdict: stop the transfer rather than drain a huge body.
      if (size >= MAX_REFUSAL_BODY) {
        resolve(text());
        res.destroy();
      }
    });
    res.once('end', () => resolve(text()));
    res.once('error', reject);
    res.once('close', () => resolve(text()));
  });
}

/** The Refusal of a response and its body text. */
export function toRefusal(res: IncomingMessage, text: string): Refusal {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers))
    if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { ok: false, status: res.statusCode ?? 0, headers, text, json };
}

/** Reads a refused handshake's response into a Refusal. */
export async function readRefusal(res: IncomingMessage): Promise<Refusal> {
  return toRefusal(res, await readBody(res));
}
