/**
 * WebSocket wire encoding for hostile targets (RFC 6455 section 5.2), written by hand so a target
 * can send what a library would refuse: masked server frames, reserved opcodes and bits, lengths
 * that lie, invalid UTF-8, illegal close codes. Pure: bytes in, bytes out, no socket.
 */
import { createHash } from 'node:crypto';

/** The GUID of RFC 6455 section 1.3, appended to the client's key for Sec-WebSocket-Accept. */
const HANDSHAKE_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** Opcodes of RFC 6455 section 5.2; 0x3-0x7 and 0xB-0xF are reserved. */
export const OPCODE = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa } as const;

/** The Sec-WebSocket-Accept value that answers a client's Sec-WebSocket-Key. */
export function acceptFor(clientKey: string): string {
  return createHash('sha1')
    .update(clientKey + HANDSHAKE_GUID)
    .digest('base64');
}

/** A complete 101 response for a client's Sec-WebSocket-Key. */
export function switchingProtocols(clientKey: string): string {
  return [
    'HTTP/1.1 101 Switching Protocols',
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Accept: ${acceptFor(clientKey)}`,
    '',
    '',
  ].join('\r\n');
}

export interface FrameOptions {
  opcode: number;
  payload?: Buffer | string;
  /** Default true. */
  fin?: boolean;
  /** RSV1..RSV3 as a 3-bit number; non-zero without a negotiated extension is a violation. */
  rsv?: number;
  /** A server must never mask (section 5.1); set to break that rule. */
  mask?: Buffer;
  /** Announce this payload length instead of the real one (a frame that lies about its size). */
  announcedLength?: number;
}

/** The header of a frame (section 5.2), for a payload of `length` bytes. */
export function frameHeader(opts: {
  opcode: number;
  length: number;
  fin?: boolean;
  rsv?: number;
  masked?: boolean;
}): Buffer {
  const first = ((opts.fin ?? true) ? 0x80 : 0) | (((opts.rsv ?? 0) & 0x7) << 4) | (opts.opcode & 0xf);
  const maskBit = opts.masked ? 0x80 : 0;
  if (opts.length < 126) return Buffer.from([first, maskBit | opts.length]);
  if (opts.length < 0x10000) {
    const b = Buffer.alloc(4);
    b[0] = first;
    b[1] = maskBit | 126;
    b.writeUInt16BE(opts.length, 2);
    return b;
  }
  const b = Buffer.alloc(10);
  b[0] = first;
  b[1] = maskBit | 127;
  b.writeBigUInt64BE(BigInt(opts.length), 2);
  return b;
}

/** One whole frame, as the options describe it (rules broken on purpose included). */
export function frame(opts: FrameOptions): Buffer {
  const payload =
    typeof opts.payload === 'string' ? Buffer.from(opts.payload, 'utf8') : (opts.payload ?? Buffer.alloc(0));
  const header = frameHeader({
    opcode: opts.opcode,
    length: opts.announcedLength ?? payload.length,
    fin: opts.fin,
    rsv: opts.rsv,
    masked: opts.mask !== undefined,
  });
  if (!opts.mask) return Buffer.concat([header, payload]);
  const masked = Buffer.alloc(payload.length);
  for (let i = 0; i < payload.length; i++) masked[i] = payload[i]! ^ opts.mask[i % 4]!;
  return Buffer.concat([header, opts.mask, masked]);
}

/** A text frame. */
export const textFrame = (text: string | Buffer): Buffer => frame({ opcode: OPCODE.text, payload: text });

/** A close frame with a status code (any number, legal or not) and a reason of any length. */
export function closeFrame(code: number, reason: string | Buffer = ''): Buffer {
  const r = typeof reason === 'string' ? Buffer.from(reason, 'utf8') : reason;
  const payload = Buffer.alloc(2 + r.length);
  payload.writeUInt16BE(code, 0);
  r.copy(payload, 2);
  return frame({ opcode: OPCODE.close, payload });
}

/** A client frame read from the wire: clients must mask, so this unmasks. */
export interface ClientFrame {
  opcode: number;
  fin: boolean;
  payload: Buffer;
}

/**
 * Splits client bytes into whole frames; returns the frames and the bytes left over (a partial
 * frame). Payloads above `maxPayload` throw: a hostile target has no reason to buffer them.
 */
export function parseClientFrames(buffer: Buffer, maxPayload = 1024 * 1024): { frames: ClientFrame[]; rest: Buffer } {
  const frames: ClientFrame[] = [];
  let offset = 0;
  for (;;) {
    if (buffer.length - offset < 2) break;
    const b0 = buffer[offset]!;
    const b1 = buffer[offset + 1]!;
    let length = b1 & 0x7f;
    let pos = offset + 2;
    if (length === 126) {
      if (buffer.length - pos < 2) break;
      length = buffer.readUInt16BE(pos);
      pos += 2;
    } else if (length === 127) {
      if (buffer.length - pos < 8) break;
      const big = buffer.readBigUInt64BE(pos);
      if (big > BigInt(maxPayload)) throw new Error(`client frame of ${big} bytes`);
      length = Number(big);
      pos += 8;
    }
    if (length > maxPayload) throw new Error(`client frame of ${length} bytes`);
    const masked = (b1 & 0x80) !== 0;
    const maskLen = masked ? 4 : 0;
    if (buffer.length - pos < maskLen + length) break;
    const mask = masked ? buffer.subarray(pos, pos + 4) : undefined;
    pos += maskLen;
    const payload = Buffer.from(buffer.subarray(pos, pos + length));
    if (mask) for (let i = 0; i < payload.length; i++) payload[i] = payload[i]! ^ mask[i % 4]!;
    frames.push({ opcode: b0 & 0xf, fin: (b0 & 0x80) !== 0, payload });
    offset = pos + length;
  }
  return { frames, rest: buffer.subarray(offset) };
}
