/**
 * Reads a server's answer to a WebSocket opening handshake (RFC 6455 section 4.1) off a raw socket,
 * chunk by chunk: a 101 with its Sec-WebSocket-Accept and -Extensions and the bytes after the head
 * (the first frames may share its packet), or a refusal with its status and body (Content-Length,
 * chunked, or until the server closes), read up to a bound. Pure: bytes in, one callback out.
 */

const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');

/** What the reader tells, exactly once. */
export interface HandshakeEvents {
  /** 101: the accept and extensions headers as sent (undefined when absent), and the bytes after the head. */
  switched(accept: string | undefined, extensions: string | undefined, rest: Buffer, t: number): void;
  /** Any other status, with the body as far as it was read. */
  refused(status: number, body: Buffer): void;
  /** Bytes that are no HTTP answer, or a head past the bound. */
  violation(what: string): void;
}

/** The parts of a head the handshake needs. */
interface Head {
  status: number;
  headers: Map<string, string>;
}

/** Parses the head in `text` (latin1, without its blank line); undefined when it is no HTTP status line. */
function parseHead(text: string): Head | undefined {
  const lines = text.split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!m) return undefined;
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
  }
  return { status: Number(m[1]), headers };
}

/** The data of a chunked body as far as it arrived (RFC 9112 section 7.1), and whether its last chunk came. */
export function dechunk(raw: Buffer): { body: Buffer; done: boolean } {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at, 'latin1');
    if (eol < 0) return { body: Buffer.concat(parts), done: false };
    const size = Number.parseInt(raw.toString('latin1', at, eol).split(';')[0]!.trim(), 16);
    if (!Number.isSafeInteger(size) || size < 0) return { body: Buffer.concat(parts), done: true };
    if (size === 0) return { body: Buffer.concat(parts), done: true };
    parts.push(raw.subarray(eol + 2, Math.min(raw.length, eol + 2 + size)));
    if (raw.length < eol + 2 + size + 2) return { body: Buffer.concat(parts), done: false };
    at = eol + 2 + size + 2;
  }
}

/** The answer to one opening handshake, read as its chunks arrive. */
export class HandshakeReader {
  /** The head's bytes so far (copied: the chunk's memory is read into again). */
  private head: Buffer = Buffer.alloc(0);
  /** After a refusal's head: its status, framing and body so far. */
  private refusal: { status: number; length: number; chunked: boolean; body: Buffer } | null = null;
  private done = false;

  constructor(
    private readonly events: HandshakeEvents,
    private readonly limits = { headMax: 16 * 1024, bodyMax: 4096 },
  ) {}

  /** One chunk of the socket, which arrived at `t`; its memory may be reused once this returns. */
  read(chunk: Buffer, t: number): void {
    if (this.done) return;
    if (this.refusal) {
      this.bodyBytes(chunk);
      return;
    }
    this.head = Buffer.concat([this.head, chunk]);
    const end = this.head.indexOf(HEAD_END);
    if (end < 0) {
      if (this.head.length > this.limits.headMax) this.violation(`an answer head over ${this.limits.headMax} bytes`);
      return;
    }
    const head = parseHead(this.head.toString('latin1', 0, end));
    const rest = this.head.subarray(end + HEAD_END.length);
    if (!head) return this.violation('the answer is no HTTP response');
    if (head.status === 101) {
      this.done = true;
      this.events.switched(
        head.headers.get('sec-websocket-accept'),
        head.headers.get('sec-websocket-extensions'),
        rest,
        t,
      );
      return;
    }
    const length = Number(head.headers.get('content-length') ?? Number.NaN);
    this.refusal = {
      status: head.status,
      length: Number.isSafeInteger(length) && length >= 0 ? length : -1,
      chunked: /chunked/i.test(head.headers.get('transfer-encoding') ?? ''),
      body: Buffer.alloc(0),
    };
    this.bodyBytes(rest);
  }

  /** The server ended its side: a refusal's body ends here, a head that never came is a violation. */
  end(): void {
    if (this.done) return;
    if (this.refusal) this.refuse();
  }

  private bodyBytes(chunk: Buffer): void {
    const r = this.refusal!;
    if (r.body.length < this.limits.bodyMax + 64) r.body = Buffer.concat([r.body, chunk]);
    const complete = r.chunked ? dechunk(r.body).done : r.length >= 0 && r.body.length >= r.length;
    if (complete || r.body.length >= this.limits.bodyMax) this.refuse();
  }

  private refuse(): void {
    const r = this.refusal!;
    this.done = true;
    const body = r.chunked ? dechunk(r.body).body : r.length >= 0 ? r.body.subarray(0, r.length) : r.body;
    this.events.refused(r.status, body.subarray(0, this.limits.bodyMax));
  }

  private violation(what: string): void {
    this.done = true;
    this.events.violation(what);
  }
}

/** Stands in where no raw handshake is read (a wss: connection, whose handshake Node's HTTP client reads). */
export const NO_HANDSHAKE = new HandshakeReader({
  switched: () => undefined,
  refused: () => undefined,
  violation: () => undefined,
});
