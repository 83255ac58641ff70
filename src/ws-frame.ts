/**
 * The WebSocket frame codec of RFC 6455 (section 5, no extensions), the one every side of the
 * tree writes and reads frames with: the reference's fan-out (server frames), the load workers and
 * the bench client (masked client frames, server frames read), the hostile test targets (frames
 * that break the rules on purpose, client frames read). Pure, like ws's Sender and Receiver: bytes
 * in, bytes out, no socket; the caller writes what it is given and feeds the reader its chunks.
 * It reads nothing of the price service's spec.
 *
 * Writing: one allocation per frame, the header written in place (`textFrame` is the fan-out's
 * per-push path). Reading: socket chunks in, messages out, read in place in each chunk. Rare paths
 * (frames split across chunks, fragmented messages, control frames) copy; the per-frame path does not.
 */
import { createHash } from 'node:crypto';

/**
 * The opcodes, as the reader reads them on every frame: a binding private to the module, which V8
 * folds into the reader's code where it does not fold an exported one (measured: 4% of a frame).
 */
const OP = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa } as const;

/** Opcodes of RFC 6455 section 5.2; 0x3-0x7 and 0xB-0xF are reserved. */
export const OPCODE = OP;

/** The GUID of RFC 6455 section 1.3, appended to the client's key for Sec-WebSocket-Accept. */
const HANDSHAKE_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** The Sec-WebSocket-Accept value that answers a client's Sec-WebSocket-Key (section 4.2.2). */
export function acceptFor(clientKey: string): string {
  return createHash('sha1')
    .update(clientKey + HANDSHAKE_GUID)
    .digest('base64');
}

/** Bytes before the payload of a frame of `length` payload bytes: 2, 4 or 10, and 4 more for a mask key. */
export function headerSize(length: number, masked = false): number {
  return (length < 126 ? 2 : length < 0x10000 ? 4 : 10) + (masked ? 4 : 0);
}

/**
 * Writes a header at the start of `buf` (section 5.2): `first` is FIN, RSV and the opcode, `maskBit`
 * 0x80 or 0, the length in its shortest form (7, 16 or 64 bits). The mask key, if any, goes after.
 */
function putHeader(buf: Buffer, first: number, maskBit: number, length: number): void {
  buf[0] = first;
  if (length < 126) buf[1] = maskBit | length;
  else if (length < 0x10000) {
    buf[1] = maskBit | 126;
    buf.writeUInt16BE(length, 2);
  } else {
    buf[1] = maskBit | 127;
    // Two 32-bit halves: a payload is far below 2^53, and no BigInt is made per frame.
    buf.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    buf.writeUInt32BE(length >>> 0, 6);
  }
}

/** The first byte of a header: FIN, RSV1..3 and the opcode. */
const firstByte = (opcode: number, fin = true, rsv = 0): number =>
  (fin ? 0x80 : 0) | ((rsv & 0x7) << 4) | (opcode & 0xf);

/** XORs `length` bytes of `buf` from `at` with the 4-byte key at `keyAt` of `key` (section 5.3), in place. */
function unmask(buf: Buffer, at: number, length: number, key: Buffer, keyAt: number): void {
  for (let i = 0; i < length; i++) buf[at + i]! ^= key[keyAt + (i & 3)]!;
}

/** One frame: the header, then `payload` (masked with `mask` when given, as a client must). */
function build(first: number, payload: Buffer | string, mask: Buffer | undefined): Buffer {
  const text = typeof payload === 'string';
  const length = text ? Buffer.byteLength(payload) : payload.length;
  const at = headerSize(length, mask !== undefined);
  const buf = Buffer.allocUnsafe(at + length);
  putHeader(buf, first, mask ? 0x80 : 0, length);
  if (text) buf.write(payload, at, 'utf8');
  else payload.copy(buf, at);
  if (mask) {
    mask.copy(buf, at - 4, 0, 4);
    unmask(buf, at, length, mask, 0);
  }
  return buf;
}

/** What a frame holds; anything the rules forbid may be asked for (a test target breaks them on purpose). */
export interface FrameOptions {
  opcode: number;
  payload?: Buffer | string;
  /** Default true. */
  fin?: boolean;
  /** RSV1..RSV3 as a 3-bit number; non-zero without a negotiated extension is a violation. */
  rsv?: number;
  /** The 4-byte mask key: a client masks every frame, a server never does (section 5.1). */
  mask?: Buffer;
}

/** One whole frame, as the options describe it. */
export function frame(opts: FrameOptions): Buffer {
  return build(firstByte(opts.opcode, opts.fin, opts.rsv), opts.payload ?? Buffer.alloc(0), opts.mask);
}

/** A server's (unmasked) text frame: FIN, opcode 1, the length, the payload. */
export function textFrame(payload: Buffer | string): Buffer {
  return build(0x81, payload, undefined);
}

/** A close frame (section 5.5.1): the status code (any number, legal or not), then a reason of any length. */
export function closeFrame(code: number, reason: Buffer | string = '', mask?: Buffer): Buffer {
  const r = typeof reason === 'string' ? Buffer.from(reason, 'utf8') : reason;
  const payload = Buffer.allocUnsafe(2 + r.length);
  payload.writeUInt16BE(code, 0);
  r.copy(payload, 2);
  return build(firstByte(OP.close), payload, mask);
}

/**
 * The header of a frame for a payload of `length` bytes, alone: a target that announces a length
 * and sends other bytes writes it, then what it likes. `masked` sets the bit; the key is not included.
 */
export function frameHeader(head: {
  opcode: number;
  length: number;
  fin?: boolean;
  rsv?: number;
  masked?: boolean;
}): Buffer {
  const buf = Buffer.allocUnsafe(headerSize(head.length));
  putHeader(buf, firstByte(head.opcode, head.fin, head.rsv), head.masked ? 0x80 : 0, head.length);
  return buf;
}

/** Where the payload of the whole frame `frame` starts (after its length and its mask key, if any). */
export function payloadStart(frame: Buffer): number {
  const b1 = frame[1]!;
  const length = b1 & 0x7f;
  return (length === 126 ? 4 : length === 127 ? 10 : 2) + (b1 & 0x80 ? 4 : 0);
}

/** What the reader hands to its user for every chunk and message. */
export interface ReaderEvents {
  /**
   * A whole text or binary message: bytes [start, end) of `buf`, valid only during the call.
   * `t` is the time given with the chunk holding its last byte.
   */
  message(buf: Buffer, start: number, end: number, t: number): void;
  /**
   * Called before the messages of each chunk, valid only during the call (copy what is kept). `clean`:
   * the chunk starts on a frame boundary with no message half-read, so equal bytes in a later clean
   * chunk yield the same messages.
   */
  chunk?(buf: Buffer, clean: boolean): void;
}

/** What the reader asks of the connection; after `close` or `violation` it reads nothing more. */
export interface ReaderControl {
  /** A ping came: answer with a pong carrying this payload (a copy, the caller may keep it). */
  ping(payload: Buffer): void;
  /** A close frame came, with its status code, or null when it carried none. */
  close(code: number | null): void;
  /** The peer broke the protocol: `what` says how. */
  violation(what: string): void;
}

/**
 * Reads the frames of one peer: a server's (unmasked) as a client does, or a client's (masked,
 * unmasked in place in the chunk) as a server does. A client's frame that comes unmasked is read as
 * it is rather than refused: that test would sit on the per-frame path of a server's frames. The
 * reader's user writes what `control` asks for (a pong, the closing handshake) to its socket.
 */
export class WireReader {
  /** Bytes of a frame that did not fit in the chunks so far. */
  private pending: Buffer[] = [];
  private pendingLength = 0;
  /** Bytes the partial frame at the head of `pending` needs before it can be read (0: unknown yet). */
  private needed = 0;
  /** Fragments of a message sent in several frames (section 5.4). */
  private fragments: Buffer[] | null = null;
  private fragmentsLength = 0;
  /** Set on a close frame, a violation or stop(): nothing after it is read. */
  private dead = false;

  /** Whether the frames are a client's, masked (section 5.1): a server's never are. */
  private readonly fromClient: boolean;

  /** `maxPayload`: a bigger frame or message is a protocol violation. `from`: whose frames are read. */
  constructor(
    private readonly maxPayload: number,
    private readonly events: ReaderEvents,
    private readonly control: ReaderControl,
    from: 'server' | 'client' = 'server',
  ) {
    this.fromClient = from === 'client';
  }

  /** Reads nothing more (the connection is gone or failing). */
  stop(): void {
    this.dead = true;
  }

  /**
   * One chunk of the socket, which arrived at `t`. Its memory may be read into again once this
   * returns (a socket reading into one buffer): whatever of it is kept is copied.
   */
  write(chunk: Buffer, t: number): void {
    if (this.dead) return;
    let buf = chunk;
    // The pending bytes began on a frame boundary, so a joined buffer does too.
    const clean = this.fragments === null;
    if (this.pendingLength > 0) {
      this.pending.push(Buffer.from(chunk));
      this.pendingLength += chunk.length;
      if (this.pendingLength < this.needed) return;
      buf = Buffer.concat(this.pending, this.pendingLength);
      this.pending = [];
      this.pendingLength = 0;
    }
    this.events.chunk?.(buf, clean);
    this.needed = 0;
    let pos = 0;
    const n = buf.length;
    while (pos < n && !this.dead) {
      if (n - pos < 2) break;
      const b0 = buf[pos]!;
      const b1 = buf[pos + 1]!;
      let length = b1 & 0x7f;
      let header = 2;
      if (length === 126) {
        if (n - pos < 4) break;
        length = buf.readUInt16BE(pos + 2);
        header = 4;
      } else if (length === 127) {
        if (n - pos < 10) break;
        const high = buf.readUInt32BE(pos + 2);
        length = high * 0x100000000 + buf.readUInt32BE(pos + 6);
        header = 10;
      }
      if ((b0 & 0x70) !== 0) return this.violation('a reserved bit is set (no extension was negotiated)');
      if ((b1 & 0x80) !== 0) {
        // Masked: a client's frame, its 4-byte key after the length, unmasked in place once it is whole.
        // Off the per-frame path of a server's frames, which costs them nothing.
        if (!this.fromClient) return this.violation('the server masked a frame');
        header += 4;
        if (length <= this.maxPayload && n - pos >= header + length)
          unmask(buf, pos + header, length, buf, pos + header - 4);
      }
      if (length > this.maxPayload)
        return this.violation(`a frame of ${length} bytes is over the ${this.maxPayload}-byte limit`);
      if (n - pos < header + length) {
        this.needed = header + length;
        break;
      }
      const start = pos + header;
      pos = start + length;
      const opcode = b0 & 0x0f;
      const fin = (b0 & 0x80) !== 0;
      if ((opcode === OP.text || opcode === OP.binary) && fin && this.fragments === null) {
        this.events.message(buf, start, pos, t);
      } else {
        this.rareFrame(opcode, fin, buf, start, pos, t);
      }
    }
    if (pos < n && !this.dead) {
      // Keep a copy: the rest of this chunk is the start of a frame the next chunks complete.
      const rest = Buffer.from(buf.subarray(pos));
      this.pending.push(rest);
      this.pendingLength = rest.length;
      if (this.needed === 0) this.needed = rest.length + 1;
    }
  }

  private rareFrame(opcode: number, fin: boolean, buf: Buffer, start: number, end: number, t: number): void {
    const length = end - start;
    if (opcode >= OP.close) {
      if (!fin || length > 125) return this.violation('a fragmented or oversized control frame');
      if (opcode === OP.ping) {
        this.control.ping(Buffer.from(buf.subarray(start, end)));
        return;
      }
      if (opcode === OP.pong) return;
      if (opcode !== OP.close) return this.violation(`reserved opcode ${opcode}`);
      this.dead = true;
      this.control.close(length >= 2 ? buf.readUInt16BE(start) : null);
      return;
    }
    if (opcode === OP.text || opcode === OP.binary) {
      if (this.fragments !== null) return this.violation('a new message began before the fragmented one ended');
      this.fragments = [Buffer.from(buf.subarray(start, end))];
      this.fragmentsLength = length;
      return;
    }
    if (opcode !== OP.continuation) return this.violation(`reserved opcode ${opcode}`);
    if (this.fragments === null) return this.violation('a continuation frame without a message to continue');
    this.fragmentsLength += length;
    if (this.fragmentsLength > this.maxPayload) return this.violation(`a message of over ${this.maxPayload} bytes`);
    this.fragments.push(Buffer.from(buf.subarray(start, end)));
    if (!fin) return;
    const whole = Buffer.concat(this.fragments, this.fragmentsLength);
    this.fragments = null;
    this.fragmentsLength = 0;
    this.events.message(whole, 0, whole.length, t);
  }

  private violation(what: string): void {
    this.dead = true;
    this.control.violation(what);
  }
}
