/**
 * The load client's frame reader fed literal server frames, whole, split at every byte and
 * sharing chunks, as ws tests its Receiver: no socket, every chunk given with the time it came.
 */
import { describe, expect, it } from 'vitest';
import { frame, OPCODE, textFrame, WireReader } from '../../src/ws-frame.ts';

interface Seen {
  reader: WireReader;
  messages: { text: string; t: number }[];
  /** For each chunk the reader handed over: its length and whether it was clean. */
  chunks: [number, boolean][];
  pings: string[];
  closes: (number | null)[];
  violations: string[];
}

const ignore = { ping() {}, close() {}, violation() {} };

function reader(maxPayload = 1 << 20): Seen {
  const seen: Omit<Seen, 'reader'> = { messages: [], chunks: [], pings: [], closes: [], violations: [] };
  const r = new WireReader(
    maxPayload,
    {
      message: (buf, start, end, t) => seen.messages.push({ text: buf.toString('utf8', start, end), t }),
      chunk: (buf, clean) => seen.chunks.push([buf.length, clean]),
    },
    {
      ping: (payload) => seen.pings.push(payload.toString()),
      close: (code) => seen.closes.push(code),
      violation: (what) => seen.violations.push(what),
    },
  );
  return { reader: r, ...seen };
}

describe('WireReader: frames from a server', () => {
  it('reads an unmasked text message', () => {
    const s = reader();
    s.reader.write(Buffer.from('810548656c6c6f', 'hex'), 7);
    expect(s.messages).toEqual([{ text: 'Hello', t: 7 }]);
    expect(s.chunks).toEqual([[7, true]]);
  });

  it('reads several frames that share one chunk, each in place', () => {
    const seen: { buf: Buffer; text: string }[] = [];
    const r = new WireReader(
      1 << 20,
      { message: (buf, start, end) => seen.push({ buf, text: buf.toString('utf8', start, end) }) },
      ignore,
    );
    const chunk = Buffer.concat([textFrame('a'), textFrame('bb'), frame({ opcode: OPCODE.binary, payload: 'ccc' })]);
    r.write(chunk, 1);
    expect(seen.map((m) => m.text)).toEqual(['a', 'bb', 'ccc']);
    // No copy: every message is read in the chunk itself.
    expect(seen.every((m) => m.buf === chunk)).toBe(true);
  });

  it('reads a frame of 16-bit length split at every byte, timed by the byte that completed it', () => {
    const text = 'A'.repeat(200);
    const whole = textFrame(text);
    expect(whole.subarray(0, 4).toString('hex')).toBe('817e00c8');
    for (let cut = 1; cut < whole.length; cut++) {
      const s = reader();
      s.reader.write(whole.subarray(0, cut), 1);
      expect(s.messages, `cut at ${cut}`).toEqual([]);
      s.reader.write(whole.subarray(cut), 2);
      expect(s.messages, `cut at ${cut}`).toEqual([{ text, t: 2 }]);
    }
  });

  it('reads a frame given one byte a chunk, and the frame after it in the same last chunk', () => {
    const s = reader();
    const whole = textFrame('{"code":"X"}');
    for (let i = 0; i < whole.length - 1; i++) s.reader.write(whole.subarray(i, i + 1), i);
    s.reader.write(Buffer.concat([whole.subarray(-1), textFrame('next')]), 99);
    expect(s.messages).toEqual([
      { text: '{"code":"X"}', t: 99 },
      { text: 'next', t: 99 },
    ]);
  });

  it('reads frames split across chunks that all come in one buffer read into again, as a raw socket gives them', () => {
    const s = reader();
    const frames = Buffer.concat([textFrame('A'.repeat(300)), textFrame('second'), textFrame('B'.repeat(70_000))]);
    const shared = Buffer.alloc(1000);
    for (let at = 0; at < frames.length; at += 777) {
      const n = frames.copy(shared, 0, at, at + 777);
      s.reader.write(shared.subarray(0, n), at);
      // The socket's next read lands here: nothing the reader kept may be this memory.
      shared.fill(0xff);
    }
    expect(s.messages.map((m) => m.text)).toEqual(['A'.repeat(300), 'second', 'B'.repeat(70_000)]);
  });

  it('reads a frame of 64-bit length', () => {
    const s = reader();
    const text = 'B'.repeat(70_000);
    const whole = textFrame(text);
    expect(whole.subarray(0, 10).toString('hex')).toBe('817f0000000000011170');
    s.reader.write(whole.subarray(0, 5), 1);
    s.reader.write(whole.subarray(5), 2);
    expect(s.messages).toEqual([{ text, t: 2 }]);
  });

  it('joins a fragmented message once, passes on a ping between its fragments, marks its chunks unclean', () => {
    const s = reader();
    s.reader.write(frame({ opcode: OPCODE.text, payload: 'Hel', fin: false }), 1);
    s.reader.write(frame({ opcode: OPCODE.ping, payload: 'hi' }), 2);
    s.reader.write(Buffer.concat([frame({ opcode: OPCODE.continuation, payload: 'lo' }), textFrame('x')]), 3);
    s.reader.write(textFrame('y'), 4);
    expect(s.messages).toEqual([
      { text: 'Hello', t: 3 },
      { text: 'x', t: 3 },
      { text: 'y', t: 4 },
    ]);
    expect(s.pings).toEqual(['hi']);
    expect(s.chunks.map((c) => c[1])).toEqual([true, false, false, true]);
  });

  it('ignores a pong', () => {
    const s = reader();
    s.reader.write(Buffer.concat([frame({ opcode: OPCODE.pong, payload: 'p' }), textFrame('z')]), 1);
    expect(s.messages.map((m) => m.text)).toEqual(['z']);
  });

  it('reports a close frame with its code, or null without one, and reads nothing after it', () => {
    const withCode = reader();
    withCode.reader.write(Buffer.concat([Buffer.from('880203e9', 'hex'), textFrame('late')]), 1);
    withCode.reader.write(textFrame('later'), 2);
    expect(withCode.closes).toEqual([1001]);
    expect(withCode.messages).toEqual([]);
    const without = reader();
    without.reader.write(Buffer.from('8800', 'hex'), 1);
    expect(without.closes).toEqual([null]);
  });

  it.each([
    ['a masked frame', frame({ opcode: OPCODE.text, payload: 'hi', mask: Buffer.from([1, 2, 3, 4]) }), /masked/],
    ['a reserved bit', frame({ opcode: OPCODE.text, payload: 'hi', rsv: 4 }), /reserved bit/],
    ['a reserved opcode', frame({ opcode: 0x3, payload: 'hi' }), /reserved opcode 3/],
    ['a reserved control opcode', frame({ opcode: 0xb, payload: 'hi' }), /reserved opcode 11/],
    ['a fragmented ping', frame({ opcode: OPCODE.ping, payload: 'hi', fin: false }), /control frame/],
    ['an oversized ping', frame({ opcode: OPCODE.ping, payload: 'p'.repeat(126) }), /control frame/],
    ['a continuation with nothing to continue', frame({ opcode: OPCODE.continuation, payload: 'hi' }), /continuation/],
    [
      'a frame over the payload limit',
      textFrame('x'.repeat(1001)),
      /a frame of 1001 bytes is over the 1000-byte limit/,
    ],
    [
      'a message over the payload limit in fragments',
      Buffer.concat([
        frame({ opcode: OPCODE.text, payload: 'x'.repeat(600), fin: false }),
        frame({ opcode: OPCODE.continuation, payload: 'x'.repeat(600) }),
      ]),
      /a message of over 1000 bytes/,
    ],
    [
      'a new message inside a fragmented one',
      Buffer.concat([frame({ opcode: OPCODE.text, payload: 'a', fin: false }), textFrame('b')]),
      /a new message began/,
    ],
  ])('reports %s as a violation and reads nothing after it', (_name, bad, what) => {
    const s = reader(1000);
    s.reader.write(Buffer.concat([textFrame('before'), bad, textFrame('after')]), 1);
    s.reader.write(textFrame('later'), 2);
    expect(s.violations).toHaveLength(1);
    expect(s.violations[0]).toMatch(what);
    expect(s.messages.map((m) => m.text)).toEqual(['before']);
  });

  it('reads nothing once stopped, not even the rest of the chunk it was stopped in', () => {
    const messages: string[] = [];
    const r: WireReader = new WireReader(
      1 << 20,
      {
        message: (buf, start, end) => {
          messages.push(buf.toString('utf8', start, end));
          r.stop();
        },
      },
      ignore,
    );
    r.write(Buffer.concat([textFrame('one'), textFrame('two')]), 1);
    r.write(textFrame('three'), 2);
    expect(messages).toEqual(['one']);
  });
});
