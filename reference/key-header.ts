/** Reading the key header of a request or handshake. */
import type { IncomingMessage } from 'node:http';
import { API_KEY_HEADER } from '../src/spec.ts';

const HEADER_LC = API_KEY_HEADER.toLowerCase();

/** The key header value, matched case-insensitively (spec: Authentication 1). */
export function keyHeader(req: IncomingMessage): string | undefined {
  const v = req.headers[HEADER_LC];
  return Array.isArray(v) ? v[0] : v;
}

/** The value of the first key header whose name, as the client spelled it, passes `spelling`. */
export function keyHeaderSpelled(req: IncomingMessage, spelling: (name: string) => boolean): string | undefined {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]!.toLowerCase() === HEADER_LC && spelling(raw[i]!)) return raw[i + 1];
  return undefined;
}
