/**
 * Pulls `code`, `last_updated` and `sent_at` out of a push frame's bytes without JSON.parse and
 * without building a string: the hot path of a load run. The code comes back as a byte range
 * and a hash (the caller maps it to a pair index). A fast path reads the common layout (code
 * first, the two times last); a general pass handles any key order and whitespace; anything
 * unusual (escapes, non-ASCII, non-integer times, missing keys) returns false and the caller
 * falls back to JSON.parse, so odd frames are measured correctly, only slower.
 */

const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;
const COMMA = 44;
const KEY_CODE = Buffer.from('"code"');
const KEY_SENT = Buffer.from('"sent_at"');
const KEY_LAST = Buffer.from('"last_updated"');
const CODE_FIRST = Buffer.from('{"code":"');

/** Fields of one push frame; reused between calls to spare allocations. */
export interface ScannedFrame {
  /** Byte range of the code's characters (between the quotes). */
  codeStart: number;
  codeEnd: number;
  /** FNV-1a hash of the code's bytes, cut to 30 bits so it stays a small integer (a Map key without boxing). */
  codeHash: number;
  lastUpdated: number;
  sentAt: number;
}

/** A fresh, reusable ScannedFrame. */
export const scannedFrame = (): ScannedFrame => ({ codeStart: 0, codeEnd: 0, codeHash: 0, lastUpdated: 0, sentAt: 0 });

/** The code of a scanned frame as a string (ASCII; only for codes not seen before). */
export function codeOf(buf: Buffer, f: ScannedFrame): string {
  return buf.toString('latin1', f.codeStart, f.codeEnd);
}

/** FNV-1a over a byte range; the same function the scanner applies to the code. */
export function hashBytes(buf: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  return h & 0x3fffffff;
}

function keyAt(buf: Uint8Array, i: number, end: number, key: Uint8Array): boolean {
  const n = key.length;
  if (i + n > end) return false;
  for (let k = 1; k < n; k++) if (buf[i + k] !== key[k]) return false;
  return true;
}

/** Reads the code string starting after its opening quote at `i`; returns the closing quote's index or -1. */
function readCode(buf: Uint8Array, i: number, n: number, out: ScannedFrame): number {
  let h = 0x811c9dc5;
  const start = i;
  for (; i < n; i++) {
    const b = buf[i]!;
    if (b === QUOTE) break;
    if (b === BACKSLASH || b > 127) return -1;
    h = Math.imul(h ^ b, 0x01000193);
  }
  if (i >= n) return -1;
  out.codeStart = start;
  out.codeEnd = i;
  out.codeHash = h & 0x3fffffff;
  return i;
}

const isSpace = (b: number | undefined): boolean => b === 32 || b === 9 || b === 10 || b === 13;

/**
 * Reads `"key":digits` backwards from `end` (the index just past the digits' end, whitespace
 * allowed, nothing read before `first`) into `out.sentAt` or `out.lastUpdated` (an object
 * field: a module-level `let` would box every double), and returns the index before the key's
 * opening quote, or -1 when it is not that key.
 */
function backNumber(buf: Uint8Array, first: number, end: number, sent: boolean, out: ScannedFrame): number {
  const key = sent ? KEY_SENT : KEY_LAST;
  let i = end - 1;
  while (i >= first && isSpace(buf[i])) i--;
  const last = i;
  // Digits right to left, each times its power of ten: one pass instead of a scan and a re-read.
  let v = 0;
  let scale = 1;
  let d = buf[i]!;
  while (i >= first && d >= 48 && d <= 57) {
    v += (d - 48) * scale;
    scale *= 10;
    d = buf[--i]!;
  }
  if (i === last) return -1;
  while (i >= first && isSpace(buf[i])) i--;
  if (buf[i] !== COLON) return -1;
  i--;
  while (i >= first && isSpace(buf[i])) i--;
  const kStart = i - key.length + 1;
  if (kStart < first) return -1;
  for (let k = 0; k < key.length; k++) if (buf[kStart + k] !== key[k]) return -1;
  if (sent) out.sentAt = v;
  else out.lastUpdated = v;
  return kStart - 1;
}

/** The common layout: `{"code":"…", …, "last_updated":N, "sent_at":N}` (the two times in either order). */
function fastPath(buf: Uint8Array, start: number, n: number, out: ScannedFrame): boolean {
  if (n - start < CODE_FIRST.length) return false;
  for (let k = 0; k < CODE_FIRST.length; k++) if (buf[start + k] !== CODE_FIRST[k]) return false;
  const codeEnd = readCode(buf, start + CODE_FIRST.length, n, out);
  if (codeEnd < 0) return false;
  let end = n - 1;
  while (end > codeEnd && isSpace(buf[end])) end--;
  if (buf[end] !== 125) return false; // }
  let sentLast = true;
  let i = backNumber(buf, codeEnd + 1, end, true, out);
  if (i < 0) {
    sentLast = false;
    i = backNumber(buf, codeEnd + 1, end, false, out);
  }
  if (i < 0) return false;
  while (i > codeEnd && isSpace(buf[i])) i--;
  if (buf[i] !== COMMA || i <= codeEnd) return false;
  return backNumber(buf, codeEnd + 1, i, !sentLast, out) >= 0;
}

/**
 * Fills `out` and returns true when bytes [start, end) hold all three fields in plain form.
 * Positions in `out` index `buf` itself.
 */
export function scanPushFrame(buf: Buffer, out: ScannedFrame, start = 0, end = buf.length): boolean {
  if (fastPath(buf, start, end, out)) return true;
  const n = end;
  let found = 0;
  for (let i = start; i < n; i++) {
    if (buf[i] !== QUOTE) continue;
    const c = buf[i + 1];
    let key = 0;
    if (c === 99 && keyAt(buf, i, n, KEY_CODE)) {
      key = 1;
      i += KEY_CODE.length;
    } else if (c === 115 && keyAt(buf, i, n, KEY_SENT)) {
      key = 2;
      i += KEY_SENT.length;
    } else if (c === 108 && keyAt(buf, i, n, KEY_LAST)) {
      key = 3;
      i += KEY_LAST.length;
    } else {
      // Some other string (a key or a value): skip to its closing quote.
      i++;
      while (i < n && buf[i] !== QUOTE) {
        if (buf[i] === BACKSLASH) i++;
        i++;
      }
      continue;
    }
    // Between a key and its value only whitespace and one colon may stand.
    let colon = false;
    while (i < n) {
      const b = buf[i];
      if (b === COLON && !colon) colon = true;
      else if (!isSpace(b)) break;
      i++;
    }
    if (!colon) return false;
    if (key === 1) {
      if (buf[i] !== QUOTE) return false;
      i = readCode(buf, i + 1, n, out);
      if (i < 0) return false;
    } else {
      const digits = i;
      let v = 0;
      let d = buf[i]!;
      while (d >= 48 && d <= 57 && i < n) {
        v = v * 10 + (d - 48);
        d = buf[++i]!;
      }
      // A fraction, exponent or sign is legal JSON but not plain here: let JSON.parse decide.
      if (i === digits || d === 46 || d === 101 || d === 69) return false;
      if (key === 2) out.sentAt = v;
      else out.lastUpdated = v;
      i--;
    }
    if (++found === 3) return true;
  }
  return false;
}
