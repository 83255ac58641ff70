/**
 * The frame reader of the load generator's WebSocket client (RFC 6455 section 5, frames from a
 * server, no extensions): socket chunks in, messages out, read in place in each chunk. Pure of
 * sockets, like ws's Receiver: wire-socket.ts feeds it the chunks and writes what it asks for (a
 * pong, the closing handshake). Rare paths (frames split across chunks, fragmented messages,
 * control frames) copy; the per-frame path does not.
 */

const OP = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa } as const;

/** What the reader hands to its user for every chunk and message. */
export interface ReaderEvents {
  /**
   * A whole text or binary message: bytes [start, end) of `buf`, valid only during the call.
   * `t` is the time given with the chunk holding its last byte.
   */
  message(buf: Buffer, start: number, end: number, t: number): void;
  /**
   * Called before the messages of each chunk. `clean`: the chunk starts on a frame boundary with
   * no message half-read, so equal bytes in a later clean chunk yield the same messages.
   */
  chunk?(buf: Buffer, clean: boolean): void;
}

/** What the reader asks of the connection; after `close` or `violation` it reads nothing more. */
export interface ReaderControl {
  /** A ping came: answer with a pong carrying this payload (a copy, the caller may keep it). */
  ping(payload: Buffer): void;
  /** A close frame came, with its status code, or null when it carried none. */
  close(code: number | null): void;
  /** The server broke the protocol: `what` says how. */
  violation(what: string): void;
}

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

  /** `maxPayload`: a bigger frame or message is a protocol violation. */
  constructor(
    private readonly maxPayload: number,
    private readonly events: ReaderEvents,
    private readonly control: ReaderControl,
  ) {}

  /** Reads nothing more (the connection is gone or failing). */
  stop(): void {
    this.dead = true;
  }

  /** One chunk of the socket, which arrived at `t`. */
  write(chunk: Buffer, t: number): void {
    if (this.dead) return;
    let buf = chunk;
    // The pending bytes began on a frame boundary, so a joined buffer does too.
    const clean = this.fragments === null;
    if (this.pendingLength > 0) {
      this.pending.push(chunk);
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
      if ((b1 & 0x80) !== 0) return this.violation('the server masked a frame');
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
