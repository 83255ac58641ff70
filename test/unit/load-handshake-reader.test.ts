/**
 * The answer to a WebSocket opening handshake as the load generator reads it off a raw socket
 * (load/fanout/handshake-reader.ts), on literal wire data cut at every byte: the switch with the
 * frames that share its packet, refusals framed every way HTTP allows, and bytes that are no answer.
 */
import { describe, expect, it } from 'vitest';
import { dechunk, HandshakeReader } from '../../load/fanout/handshake-reader.ts';

type Told =
  | { switched: [string | undefined, string | undefined, string, number] }
  | { refused: [number, string] }
  | { violation: string };

/** Reads `pieces` through one reused buffer (as the socket does), then `end()` if asked; what it told. */
function read(pieces: readonly string[], end = false, limits?: { headMax: number; bodyMax: number }): Told[] {
  const told: Told[] = [];
  const reader = new HandshakeReader(
    {
      switched: (accept, extensions, rest, t) =>
        told.push({ switched: [accept, extensions, rest.toString('latin1'), t] }),
      refused: (status, body) => told.push({ refused: [status, body.toString('latin1')] }),
      violation: (what) => told.push({ violation: what }),
    },
    limits,
  );
  const shared = Buffer.alloc(1024);
  pieces.forEach((piece, i) => {
    const n = shared.write(piece, 'latin1');
    reader.read(shared.subarray(0, n), i);
    shared.fill('#');
  });
  if (end) reader.end();
  return told;
}

const splits = (wire: string): string[][] =>
  Array.from({ length: wire.length - 1 }, (_, i) => [wire.slice(0, i + 1), wire.slice(i + 1)]);

const SWITCH =
  'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
  'Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n';
const FRAME = '\x81\x05hello';

describe('the generator reads the answer to its opening handshake', () => {
  it('tells the switch once, with the accept value and the frames that came in its packet, cut anywhere', () => {
    const wire = SWITCH + FRAME;
    expect(read([wire])).toEqual([{ switched: ['s3pPLMBiTxaQ9kYGzzhZRbK+xOo=', undefined, FRAME, 0] }]);
    for (const pieces of splits(wire)) {
      const told = read(pieces);
      expect(told).toHaveLength(1);
      // The head ends in the first piece or the second: what follows it there is handed over, timed by that piece.
      const inFirst = pieces[0]!.length >= SWITCH.length;
      const rest = inFirst ? pieces[0]!.slice(SWITCH.length) : FRAME;
      expect(told[0]).toEqual({ switched: ['s3pPLMBiTxaQ9kYGzzhZRbK+xOo=', undefined, rest, inFirst ? 0 : 1] });
    }
  });

  it('passes on an extension the server chose, whatever the case of its header names', () => {
    const wire = SWITCH.replace('Sec-WebSocket-Accept', 'sec-websocket-accept').replace(
      '\r\n\r\n',
      '\r\nSEC-WEBSOCKET-EXTENSIONS: permessage-deflate\r\n\r\n',
    );
    expect(read([wire])).toEqual([{ switched: ['s3pPLMBiTxaQ9kYGzzhZRbK+xOo=', 'permessage-deflate', '', 0] }]);
  });

  it('tells a refusal with its Content-Length body, cut anywhere', () => {
    const body = '{"status_number":"50009","message":"too many connections"}';
    const wire =
      'HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${body.length}\r\n\r\n${body}`;
    for (const pieces of [[wire], ...splits(wire)]) expect(read(pieces)).toEqual([{ refused: [429, body] }]);
  });

  it('tells a refusal with a chunked body once its last chunk came, or with a body the close ends', () => {
    const chunked = 'HTTP/1.1 401 Unauthorized\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\n3\r\n:1}\r\n0\r\n\r\n';
    for (const pieces of [[chunked], ...splits(chunked)]) expect(read(pieces)).toEqual([{ refused: [401, '{"a":1}'] }]);
    const closed = 'HTTP/1.0 403 Forbidden\r\n\r\nno stream for this key';
    expect(read([closed])).toEqual([]);
    expect(read([closed], true)).toEqual([{ refused: [403, 'no stream for this key'] }]);
  });

  it('reads a refusal body up to its bound, and a head up to its bound', () => {
    const long = `HTTP/1.1 500 Oops\r\nContent-Length: 5000\r\n\r\n${'x'.repeat(900)}`;
    expect(read([long], false, { headMax: 256, bodyMax: 100 })).toEqual([{ refused: [500, 'x'.repeat(100)] }]);
    expect(read([`HTTP/1.1 101 Switching\r\nX: ${'y'.repeat(300)}`], false, { headMax: 256, bodyMax: 100 })).toEqual([
      { violation: 'an answer head over 256 bytes' },
    ]);
  });

  it('tells bytes that are no HTTP answer as a violation, once', () => {
    expect(read(['SSH-2.0-OpenSSH_9.2\r\n\r\n', SWITCH])).toEqual([{ violation: 'the answer is no HTTP response' }]);
  });

  it('decodes a chunked body as far as it arrived', () => {
    expect(dechunk(Buffer.from('3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n'))).toEqual({
      body: Buffer.from('abcde'),
      done: true,
    });
    expect(dechunk(Buffer.from('3\r\nabc\r\n2\r\nd'))).toEqual({ body: Buffer.from('abcd'), done: false });
  });
});
