/**
 * The REST load generator's response reader (load/rest/http-reader.ts) on literal wire data: every
 * framing HTTP/1.1 allows a server, responses back to back in one chunk, and each split at every
 * byte, since a socket may cut a response anywhere.
 */
import { describe, expect, it } from 'vitest';
import { ResponseReader, statusNumberIn } from '../../load/rest/http-reader.ts';

type Seen = [status: number, statusNumber: string | undefined, keepAlive: boolean];

/** Reads `wire` in the given pieces (one reused buffer, as the client's socket reads); returns what it told. */
function read(pieces: readonly string[]): { seen: Seen[]; violations: number } {
  const seen: Seen[] = [];
  let violations = 0;
  const reader = new ResponseReader(
    (status, statusNumber, keepAlive) => seen.push([status, statusNumber, keepAlive]),
    () => violations++,
  );
  // One buffer read into again and again, with stale bytes after each chunk: the reader must keep nothing of it.
  const shared = Buffer.alloc(4096, 'x');
  for (const piece of pieces) {
    const n = shared.write(piece, 'latin1');
    reader.read(shared, n);
    shared.fill('"status_number":"99999"\r\n\r\n', 0);
  }
  return { seen, violations };
}

const ok = (body: string, extra = ''): string =>
  'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n' +
  `${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const ENVELOPE = '{"status_number":"200","ts":1,"data":{"code":"Crypto:ALL:BTC/USD"}}';

/** Every way to cut `wire` in two. */
const splits = (wire: string): string[][] =>
  Array.from({ length: wire.length - 1 }, (_, i) => [wire.slice(0, i + 1), wire.slice(i + 1)]);

describe('the load generator reads responses in place', () => {
  it('reads the status and the envelope status_number of a Content-Length response, cut anywhere', () => {
    const wire = ok(ENVELOPE);
    expect(read([wire]).seen).toEqual([[200, '200', true]]);
    for (const pieces of splits(wire)) expect(read(pieces).seen).toEqual([[200, '200', true]]);
  });

  it('reads responses back to back in one chunk, in order', () => {
    const second = '{"status_number":"50104","data":null,"message":"pair not found"}';
    const wire = ok(ENVELOPE) + ok(second).replace('200 OK', '404 Not Found');
    expect(read([wire]).seen).toEqual([
      [200, '200', true],
      [404, '50104', true],
    ]);
  });

  it('reads a chunked body, trailers or not, cut anywhere', () => {
    const chunked = (trailer: string): string =>
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' +
      `a\r\n{"status_n\r\n${(ENVELOPE.length - 10).toString(16)};ext=1\r\n${ENVELOPE.slice(10)}\r\n0\r\n${trailer}\r\n`;
    for (const wire of [chunked(''), chunked('X-Trailer: yes\r\n')]) {
      expect(read([wire]).seen).toEqual([[200, '200', true]]);
      for (const pieces of splits(wire)) expect(read(pieces).seen).toEqual([[200, '200', true]]);
    }
  });

  it('reads a body the server ends by closing, and says the connection does not stay open', () => {
    const seen: Seen[] = [];
    const reader = new ResponseReader(
      (...r) => seen.push(r),
      () => undefined,
    );
    reader.read(Buffer.from(`HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n${ENVELOPE.slice(0, 20)}`, 'latin1'));
    reader.read(Buffer.from(ENVELOPE.slice(20), 'latin1'));
    expect(seen).toEqual([]);
    reader.end();
    expect(seen).toEqual([[200, '200', false]]);
  });

  it('honours Connection: close, HTTP/1.0 without keep-alive, and no body for 204 and 304', () => {
    expect(read([ok(ENVELOPE, 'Connection: close\r\n')]).seen).toEqual([[200, '200', false]]);
    expect(read([ok(ENVELOPE).replace('HTTP/1.1', 'HTTP/1.0')]).seen).toEqual([[200, '200', false]]);
    expect(read([ok(ENVELOPE, 'Connection: Keep-Alive\r\n').replace('HTTP/1.1', 'HTTP/1.0')]).seen).toEqual([
      [200, '200', true],
    ]);
    expect(read(['HTTP/1.1 204 No Content\r\nX: y\r\n\r\n' + ok(ENVELOPE)]).seen).toEqual([
      [204, undefined, true],
      [200, '200', true],
    ]);
    expect(read(['HTTP/1.1 100 Continue\r\n\r\n' + ok(ENVELOPE)]).seen).toEqual([[200, '200', true]]);
  });

  it('gives no status_number for a body without one, or with one that is not a string', () => {
    expect(read([ok('{"data":[]}')]).seen).toEqual([[200, undefined, true]]);
    expect(read([ok('{"status_number":200}')]).seen).toEqual([[200, undefined, true]]);
    expect(read([ok('<html>busy</html>')]).seen).toEqual([[200, undefined, true]]);
  });

  it('reads the first status_number of the body whatever the spaces around its colon', () => {
    const body = Buffer.from('{ "status_number" :\n "50006" , "message": "status_number"}');
    expect(statusNumberIn(body, 0, body.length)).toBe('50006');
    expect(statusNumberIn(Buffer.from('{"status_number":"2\\u0030"}'), 0, 27)).toBe('20');
    // The search stays inside the body: a key past its end is the next response's.
    const two = Buffer.from('{}{"status_number":"200"}');
    expect(statusNumberIn(two, 0, 2)).toBeUndefined();
  });

  it('gives up on bytes that are no HTTP response, once', () => {
    const { seen, violations } = read(['SSH-2.0-OpenSSH\r\n\r\n', ok(ENVELOPE)]);
    expect(seen).toEqual([]);
    expect(violations).toBe(1);
    expect(read(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n']).violations).toBe(1);
  });
});
