/**
 * Reads HTTP/1.1 responses off a keep-alive socket in place, chunk by chunk, for the load
 * generator's client (http-client.ts): the status code, the framing (Content-Length, chunked, or
 * the body until the connection closes), whether the connection stays open, and the envelope's
 * `status_number` found in the body's bytes. Pure: bytes in, one callback per response out.
 */

const CR = 0x0d;
const LF = 0x0a;
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
const STATUS_NUMBER = Buffer.from('"status_number"', 'latin1');
/** A response head longer than this is not one a load target sends: the reader gives up on the connection. */
const MAX_HEAD_BYTES = 64 * 1024;

/** Called once per response, in order: its status, its `status_number`, whether the connection stays open. */
export type OnResponse = (status: number, statusNumber: string | undefined, keepAlive: boolean) => void;

/** The body's framing, from the head. */
type Framing = 'length' | 'chunked' | 'close' | 'none';

/**
 * The `status_number` of a JSON envelope in `buf[from, to)`: the string value after the first
 * `"status_number"` key, without decoding the rest of the body; undefined when there is none.
 */
export function statusNumberIn(buf: Buffer, from: number, to: number): string | undefined {
  // Searched within the body only: past it lies the next response, or stale bytes of a reused buffer.
  const found = buf.subarray(from, to).indexOf(STATUS_NUMBER);
  if (found < 0) return undefined;
  let i = from + found + STATUS_NUMBER.length;
  while (i < to && isSpace(buf[i]!)) i++;
  if (buf[i] !== 0x3a) return undefined; // ':'
  i++;
  while (i < to && isSpace(buf[i]!)) i++;
  if (buf[i] !== 0x22) return undefined; // '"': a status_number that is not a string is not the envelope's
  const start = i + 1;
  const end = buf.indexOf(0x22, start);
  if (end < 0 || end >= to) return undefined;
  const raw = buf.toString('utf8', start, end);
  // An escape in a status code is unheard of; decoded properly all the same.
  return raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
}

const isSpace = (b: number): boolean => b === 0x20 || b === 0x09 || b === CR || b === LF;

/** Lower-cases an ASCII header name's bytes for comparison. */
const lower = (b: number): number => (b >= 0x41 && b <= 0x5a ? b + 32 : b);

/** Whether `buf[from, to)` is `name` (lower-case ASCII), ignoring case. */
function nameIs(buf: Buffer, from: number, to: number, name: string): boolean {
  if (to - from !== name.length) return false;
  for (let i = 0; i < name.length; i++) if (lower(buf[from + i]!) !== name.charCodeAt(i)) return false;
  return true;
}

/** Whether the value `buf[from, to)` contains the token `token` (lower-case), ignoring case. */
function valueHas(buf: Buffer, from: number, to: number, token: string): boolean {
  return buf.toString('latin1', from, to).toLowerCase().includes(token);
}

/** One response's head: status, framing, length, whether the connection stays open. */
interface Head {
  status: number;
  framing: Framing;
  length: number;
  keepAlive: boolean;
}

/** Parses the head in `buf[from, end)` (end: the index of its blank line); undefined when it is no HTTP head. */
export function parseHead(buf: Buffer, from: number, end: number): Head | undefined {
  // "HTTP/1.x SSS ..."
  if (end - from < 12 || buf[from] !== 0x48 || buf[from + 4] !== 0x2f) return undefined;
  const http10 = buf[from + 7] === 0x30;
  const status = (buf[from + 9]! - 48) * 100 + (buf[from + 10]! - 48) * 10 + (buf[from + 11]! - 48);
  if (!(status >= 100 && status <= 999)) return undefined;
  let length = -1;
  let chunked = false;
  let keepAlive = !http10;
  let line = buf.indexOf(LF, from) + 1;
  while (line > 0 && line < end) {
    let eol = buf.indexOf(LF, line);
    if (eol < 0 || eol > end) eol = end;
    const colon = buf.indexOf(0x3a, line);
    if (colon > 0 && colon < eol) {
      let v = colon + 1;
      while (v < eol && (buf[v] === 0x20 || buf[v] === 0x09)) v++;
      const vEnd = buf[eol - 1] === CR ? eol - 1 : eol;
      if (nameIs(buf, line, colon, 'content-length')) length = Number(buf.toString('latin1', v, vEnd));
      else if (nameIs(buf, line, colon, 'transfer-encoding')) chunked = valueHas(buf, v, vEnd, 'chunked');
      else if (nameIs(buf, line, colon, 'connection'))
        keepAlive = http10 ? valueHas(buf, v, vEnd, 'keep-alive') : !valueHas(buf, v, vEnd, 'close');
    }
    line = eol + 1;
  }
  // RFC 9112 §6.3: no body for 1xx, 204 and 304; chunked wins over a length; else the length; else until close.
  const framing: Framing =
    status < 200 || status === 204 || status === 304 ? 'none' : chunked ? 'chunked' : length >= 0 ? 'length' : 'close';
  if (framing === 'length' && !Number.isSafeInteger(length)) return undefined;
  return { status, framing, length, keepAlive: keepAlive && framing !== 'close' };
}

/** The responses of one connection, read as its chunks arrive. */
export class ResponseReader {
  /** Bytes of a head or a body not yet complete, carried into the next chunk. */
  private carry: Buffer | null = null;
  private head: Head | null = null;
  /** Chunked framing: the body's data so far. */
  private dechunked: Buffer[] = [];
  private failed = false;

  constructor(
    private readonly onResponse: OnResponse,
    private readonly onViolation: () => void,
  ) {}

  /**
   * Reads the chunk `buf[0, length)`: every response it completes is told, in order. The chunk's
   * memory may be read into again once this returns: what is kept of it is copied.
   */
  read(buf: Buffer, length = buf.length): void {
    if (this.failed) return;
    let data = buf;
    let end = length;
    if (this.carry) {
      data = Buffer.concat([this.carry, buf.subarray(0, length)]);
      end = data.length;
      this.carry = null;
    }
    let at = 0;
    while (at < end && !this.failed) {
      const next = this.head ? this.body(data, at, end) : this.headAt(data, at, end);
      if (next < 0) {
        this.carry = Buffer.from(data.subarray(at, end));
        return;
      }
      at = next;
    }
  }

  /** The connection closed: a body framed by the close ends here. */
  end(): void {
    if (this.head?.framing !== 'close') return;
    const body = this.carry ?? Buffer.alloc(0);
    this.carry = null;
    this.finish(statusNumberIn(body, 0, body.length));
  }

  /** Reads a head at `at`; returns where its body starts, or -1 when the head is not complete yet. */
  private headAt(buf: Buffer, at: number, to: number): number {
    const end = buf.indexOf(HEAD_END, at);
    if (end < 0 || end + 4 > to) {
      if (to - at > MAX_HEAD_BYTES) this.violation();
      return -1;
    }
    const head = parseHead(buf, at, end + 2);
    if (!head) {
      this.violation();
      return to;
    }
    // An interim response (100 Continue) is followed by the real one.
    if (head.status >= 100 && head.status < 200) return end + 4;
    this.head = head;
    if (head.framing === 'none') this.finish(undefined);
    return end + 4;
  }

  /** Reads body bytes from `at`; returns where the next response starts, or -1 to wait for more. */
  private body(buf: Buffer, at: number, to: number): number {
    const head = this.head!;
    if (head.framing === 'length') {
      if (to - at < head.length) return -1;
      const end = at + head.length;
      this.finish(statusNumberIn(buf, at, end));
      return end;
    }
    if (head.framing === 'close') return -1;
    return this.chunk(buf, at, to);
  }

  /** Chunked framing (RFC 9112 §7.1): one chunk, or the last chunk and its trailers, from `at`. */
  private chunk(buf: Buffer, at: number, to: number): number {
    const eol = buf.indexOf(LF, at);
    if (eol < 0 || eol >= to) return -1;
    const size = Number.parseInt(buf.toString('latin1', at, eol).split(';')[0]!.trim(), 16);
    if (!Number.isSafeInteger(size) || size < 0) {
      this.violation();
      return to;
    }
    if (size === 0) {
      // The last chunk: trailer lines, if any, then a blank line.
      let end: number;
      if (eol + 2 < to && buf[eol + 1] === CR && buf[eol + 2] === LF) end = eol + 3;
      else {
        const blank = buf.indexOf(HEAD_END, eol - 1);
        if (blank < 0 || blank + 4 > to) return -1;
        end = blank + 4;
      }
      const body = Buffer.concat(this.dechunked);
      this.dechunked = [];
      this.finish(statusNumberIn(body, 0, body.length));
      return end;
    }
    if (to < eol + 1 + size + 2) return -1;
    this.dechunked.push(Buffer.from(buf.subarray(eol + 1, eol + 1 + size)));
    return eol + 1 + size + 2;
  }

  private finish(statusNumber: string | undefined): void {
    const head = this.head!;
    this.head = null;
    this.onResponse(head.status, statusNumber, head.keepAlive);
  }

  private violation(): void {
    this.failed = true;
    this.carry = null;
    this.onViolation();
  }
}
