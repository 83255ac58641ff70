/**
 * The hostile targets themselves: each one really misbehaves in the way its `breaks` line says,
 * as seen by a raw socket, node:http and the `ws` client. The harness runs against them are in
 * test/ci/hostile-run.test.ts and test/ci/hostile-secrets.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { RUN_DEFAULTS } from '../../src/runner.ts';
import { HOSTILE_TARGETS, closedPort, type HostileTarget } from '../helpers/hostile/targets.ts';
import { getHead, httpGet, rawExchange, wsWatch } from '../helpers/hostile/probe.ts';
import { parseHead } from '../helpers/hostile/raw-server.ts';
import { READ_CHUNK, watchClientReads } from '../helpers/client-reads.ts';
import { OPCODE, WireReader, acceptFor, closeFrame, frame, frameHeader } from '../../src/ws-frame.ts';

const running: HostileTarget[] = [];
async function start(name: string): Promise<HostileTarget> {
  const def = HOSTILE_TARGETS.find((t) => t.name === name);
  if (!def) throw new Error(`no hostile target ${name}`);
  const t = await def.start();
  running.push(t);
  return t;
}
afterAll(async () => {
  await Promise.all(running.map((t) => t.close()));
});

const restOf = (t: HostileTarget): string => t.rest ?? '';
const wsOf = (t: HostileTarget): string => t.ws ?? '';

describe('WebSocket wire encoding', () => {
  it('computes the accept value of RFC 6455 section 1.3 for its sample key', () => {
    expect(acceptFor('dGhlIHNhbXBsZSBub25jZQ==')).toBe('s3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
  });
  it('encodes 7-bit, 16-bit and 64-bit payload lengths', () => {
    expect([...frameHeader({ opcode: OPCODE.text, length: 5 })]).toEqual([0x81, 5]);
    expect([...frameHeader({ opcode: OPCODE.binary, length: 300 })]).toEqual([0x82, 126, 1, 44]);
    expect([...frameHeader({ opcode: OPCODE.text, length: 20 * 1024 * 1024 })]).toEqual([
      0x81, 127, 0, 0, 0, 0, 1, 64, 0, 0,
    ]);
  });
  it('writes a close frame with any code and reason length, and masks on request', () => {
    const c = closeFrame(1005, 'x'.repeat(200));
    expect(c[0]).toBe(0x88);
    expect(c[1]).toBe(126);
    expect(c.readUInt16BE(2)).toBe(202);
    expect(c.readUInt16BE(4)).toBe(1005);
    const m = frame({ opcode: OPCODE.text, payload: 'ab', mask: Buffer.from([1, 2, 3, 4]) });
    expect([...m]).toEqual([0x81, 0x82, 1, 2, 3, 4, 'a'.charCodeAt(0) ^ 1, 'b'.charCodeAt(0) ^ 2]);
  });
  it('parses masked client frames split across chunks', () => {
    const whole = frame({ opcode: OPCODE.text, payload: '{"method":"ping"}', mask: Buffer.from([9, 8, 7, 6]) });
    const read: string[] = [];
    const reader = new WireReader(
      1024,
      { message: (buf, start, end) => read.push(buf.toString('utf8', start, end)) },
      { ping() {}, close() {}, violation: (what) => read.push(`violation: ${what}`) },
      'client',
    );
    reader.write(whole.subarray(0, 5), 0);
    expect(read).toEqual([]);
    reader.write(whole.subarray(5), 0);
    expect(read).toEqual(['{"method":"ping"}']);
    // Nothing of the frame is left over: the next frame reads from its first byte.
    reader.write(frame({ opcode: OPCODE.text, payload: 'next', mask: Buffer.from([1, 1, 1, 1]) }), 0);
    expect(read).toEqual(['{"method":"ping"}', 'next']);
  });
  it('reads a request head and recognises an upgrade', () => {
    const r = parseHead('GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: WebSocket\r\nX-API-Key: k');
    expect(r).toMatchObject({ method: 'GET', target: '/ws', isUpgrade: true, headers: { 'x-api-key': 'k' } });
    expect(parseHead('SSH-2.0-OpenSSH')).toBeUndefined();
  });
});

describe('hostile targets misbehave as they say', () => {
  it('lists every target once, each with a one-line description', () => {
    const names = HOSTILE_TARGETS.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const t of HOSTILE_TARGETS) expect(t.breaks).toMatch(/^[^\n]{10,}$/);
  });

  it('silent accepts the connection and sends nothing', async () => {
    const t = await start('silent');
    const r = await rawExchange(restOf(t), getHead('/v1/pairs'), 300);
    expect(r).toMatchObject({ ended: 'timeout' });
    expect(r.bytes.length).toBe(0);
  });

  it('silent-behind-auth answers without a key and hangs with one', async () => {
    const t = await start('silent-behind-auth');
    expect((await httpGet(`${restOf(t)}/v1/pairs`, { key: '' })).status).toBe(401);
    expect((await httpGet(`${restOf(t)}/v1/pairs`, { ms: 300 })).error).toBe('timeout');
  });

  it('html-sign-in answers REST and upgrade with an HTML page', async () => {
    const t = await start('html-sign-in');
    const r = await httpGet(`${restOf(t)}/v1/pairs`);
    expect(r.status).toBe(200);
    expect(r.headers?.['content-type']).toMatch(/text\/html/);
    expect(r.body.toString()).toContain('Sign in');
    const w = await wsWatch(wsOf(t));
    expect(w.unexpectedStatus).toBe(200);
  });

  it('proxy-502 answers with nginx 502 HTML', async () => {
    const t = await start('proxy-502');
    const r = await httpGet(`${restOf(t)}/v1/price?code=x`);
    expect(r.status).toBe(502);
    expect(r.body.toString()).toContain('502 Bad Gateway');
  });

  it('reset-on-request resets REST requests and upgrades', async () => {
    const t = await start('reset-on-request');
    expect((await httpGet(`${restOf(t)}/v1/pairs`)).error).toBe('ECONNRESET');
    expect((await wsWatch(wsOf(t))).error).toMatch(/ECONNRESET|socket hang up/);
  });

  it('reset-mid-body resets after half the announced body', async () => {
    const t = await start('reset-mid-body');
    const r = await httpGet(`${restOf(t)}/v1/pairs`);
    expect(r.status).toBe(200);
    expect(Number(r.headers?.['content-length'])).toBeGreaterThan(r.body.length);
    expect(r.error).toMatch(/aborted|ECONNRESET/);
  });

  it('truncated-json closes before its Content-Length, mid-string', async () => {
    const t = await start('truncated-json');
    const r = await rawExchange(restOf(t), getHead('/v1/pairs'), 1000);
    expect(r.ended).toBe('end');
    const text = r.bytes.toString();
    expect(text).toContain('Content-Length: 1000');
    const body = text.slice(text.indexOf('\r\n\r\n') + 4);
    expect(body.length).toBeLessThan(1000);
    expect(() => JSON.parse(body)).toThrow();
  });

  it('short-content-length announces fewer bytes than its JSON', async () => {
    const t = await start('short-content-length');
    const r = await rawExchange(restOf(t), getHead('/v1/pairs'), 300);
    const text = r.bytes.toString();
    expect(text).toContain('Content-Length: 40\r\n');
    const body = text.slice(text.indexOf('\r\n\r\n') + 4);
    expect(body.length).toBeGreaterThan(40);
    expect(() => JSON.parse(body.slice(0, 40))).toThrow();
  });

  it('slowloris sends one byte, then waits seconds for the next', async () => {
    const t = await start('slowloris');
    const r = await rawExchange(restOf(t), getHead('/v1/pairs'), 800);
    expect(r.ended).toBe('timeout');
    expect(r.bytes.toString()).toBe('H');
  });

  it('octet-stream answers with binary noise', async () => {
    const t = await start('octet-stream');
    const r = await httpGet(`${restOf(t)}/v1/pairs`);
    expect(r.headers?.['content-type']).toBe('application/octet-stream');
    expect(r.body.length).toBe(64 * 1024);
  });

  // Written only as fast as it is read: a reader stopping at the body limit gets at most one socket read more.
  it('body-50mb announces 50 MB, is read to the 1 MiB limit plus one read, stops when the reader leaves', async () => {
    const t = await start('body-50mb');
    const reads = watchClientReads();
    const r = await httpGet(`${restOf(t)}/v1/pairs`, { maxBody: RUN_DEFAULTS.maxBodyBytes, ms: 5000 });
    expect(r.headers?.['content-length']).toBe(String(50 * 1024 * 1024));
    expect(r.error).toBe('max-body');
    expect(r.body.toString().startsWith('{"status_number":"200"')).toBe(true);
    const [read, ...others] = await reads.closed();
    expect(others).toEqual([]);
    expect(read).toBeGreaterThanOrEqual(RUN_DEFAULTS.maxBodyBytes);
    // The response head is a few hundred bytes: 1 KiB bounds it.
    expect(read).toBeLessThanOrEqual(1024 + RUN_DEFAULTS.maxBodyBytes + READ_CHUNK);
    await t.stats.settled();
    expect(t.stats.maxBytesWritten()).toBeLessThan(50 * 1024 * 1024);
  });

  it('bodies-near-limit answers with a well-formed envelope just under the default body limit', async () => {
    const t = await start('bodies-near-limit');
    const r = await httpGet(`${restOf(t)}/v1/pairs`, { maxBody: 2 * RUN_DEFAULTS.maxBodyBytes });
    expect(r.body.length).toBeGreaterThan(RUN_DEFAULTS.maxBodyBytes - 2048);
    expect(r.body.length).toBeLessThan(RUN_DEFAULTS.maxBodyBytes);
    expect((JSON.parse(r.body.toString()) as { data: unknown[] }).data.length).toBeGreaterThan(10_000);
  });

  it('ws-big-frames sends well-formed pushes just under the default maxPayload, which accepts them', async () => {
    const t = await start('ws-big-frames');
    const w = await wsWatch(wsOf(t), { maxPayload: RUN_DEFAULTS.maxPayloadBytes, stopAfter: 1, ms: 3000 });
    const first = w.messages[0]!.data;
    expect(first.length).toBeGreaterThan(RUN_DEFAULTS.maxPayloadBytes - 2048);
    expect(first.length).toBeLessThan(RUN_DEFAULTS.maxPayloadBytes);
    expect((JSON.parse(first.toString()) as { code: string }).code).toBe('Crypto:ALL:BTC/USD');
  });

  it('wrong-types gives every field the wrong type, in REST and WebSocket alike', async () => {
    const t = await start('wrong-types');
    const r = JSON.parse((await httpGet(`${restOf(t)}/v1/price?code=x`)).body.toString()) as Record<string, unknown>;
    expect(typeof r.status_number).toBe('number');
    expect(typeof r.ts).toBe('string');
    const w = await wsWatch(wsOf(t), { send: ['{"id":"1","method":"subscribe","params":{"pairs":["a"]}}'], ms: 500 });
    const frames = w.messages.map((m) => JSON.parse(m.data.toString()) as Record<string, unknown>);
    expect(frames.some((f) => typeof f.method === 'number' && typeof f.code === 'number')).toBe(true);
    expect(frames.some((f) => typeof f.ask === 'number')).toBe(true);
  });

  it('redirect-loop redirects to itself', async () => {
    const t = await start('redirect-loop');
    const r = await httpGet(`${restOf(t)}/v1/pairs`);
    expect(r.status).toBe(302);
    expect(r.headers?.location).toMatch(/^\/v1\/pairs\?loop=1/);
    expect((await wsWatch(wsOf(t))).unexpectedStatus).toBe(302);
  });

  it('redirect-elsewhere redirects to another port that records arrivals', async () => {
    const t = await start('redirect-elsewhere');
    const r = await httpGet(`${restOf(t)}/v1/pairs`);
    expect(r.status).toBe(307);
    const location = new URL(String(r.headers?.location));
    expect(location.port).not.toBe(new URL(restOf(t)).port);
    expect(t.stats.otherOrigin).toEqual([]);
    await httpGet(location.toString(), { key: 'followed' });
    expect(t.stats.otherOrigin?.[0]?.headers['x-api-key']).toBe('followed');
  });

  it('bad-chunking is refused by an HTTP parser', async () => {
    const t = await start('bad-chunking');
    expect((await httpGet(`${restOf(t)}/v1/pairs`)).error).toBe('HPE_INVALID_CHUNK_SIZE');
  });

  it('conflicting-lengths is refused by an HTTP parser', async () => {
    const t = await start('conflicting-lengths');
    expect((await httpGet(`${restOf(t)}/v1/pairs`)).error).toMatch(/^HPE_/);
  });

  it('not-http speaks SSH', async () => {
    const t = await start('not-http');
    expect((await httpGet(`${restOf(t)}/v1/pairs`)).error).toMatch(/^HPE_/);
  });

  it('ws-mute completes the handshake and stays silent', async () => {
    const t = await start('ws-mute');
    const w = await wsWatch(wsOf(t), { send: ['{"method":"ping"}'], ms: 300 });
    expect(w.opened).toBe(true);
    expect(w.messages).toEqual([]);
    expect(w.close).toBeUndefined();
  });

  it('ws-silent-upgrade never answers the upgrade', async () => {
    const t = await start('ws-silent-upgrade');
    const w = await wsWatch(wsOf(t), { ms: 400 });
    expect(w.opened).toBe(false);
    expect(w.unexpectedStatus).toBeUndefined();
  });

  it('ws-slow-upgrade dribbles a valid 101', async () => {
    const t = await start('ws-slow-upgrade');
    const r = await rawExchange(
      wsOf(t).replace('ws:', 'http:'),
      'GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ' +
        'dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
      500,
    );
    expect(r.bytes.toString()).toBe('H');
  });

  it('ws-reset-upgrade resets the upgrade', async () => {
    const t = await start('ws-reset-upgrade');
    expect((await wsWatch(wsOf(t))).error).toMatch(/ECONNRESET|socket hang up/);
  });

  it('ws-flood floods frames that are not JSON or not objects', async () => {
    const t = await start('ws-flood');
    const w = await wsWatch(wsOf(t), { ms: 2000, stopAfter: 2000 });
    expect(w.messages.length).toBeGreaterThanOrEqual(2000);
    const texts = w.messages.map((m) => m.data.toString());
    expect(texts).toContain('not json at all');
    expect(texts).toContain('[1,2,3]');
  });

  it('ws-frame-20mb announces a 20 MB frame that maxPayload refuses', async () => {
    const t = await start('ws-frame-20mb');
    const w = await wsWatch(wsOf(t), { maxPayload: 1024 * 1024 });
    expect(w.error).toMatch(/WS_ERR_UNSUPPORTED_MESSAGE_LENGTH|Max payload size exceeded/);
  });

  it('ws-binary sends binary frames', async () => {
    const t = await start('ws-binary');
    const w = await wsWatch(wsOf(t), { send: ['{"method":"ping"}'], ms: 400 });
    expect(w.messages.length).toBeGreaterThan(0);
    expect(w.messages.every((m) => m.isBinary)).toBe(true);
  });

  it('ws-reset-mid-frame resets inside a frame', async () => {
    const t = await start('ws-reset-mid-frame');
    const w = await wsWatch(wsOf(t));
    expect(w.messages).toEqual([]);
    expect(w.close?.code).toBe(1006);
  });

  it('ws-slow-frame opens and then delivers no whole frame for seconds', async () => {
    const t = await start('ws-slow-frame');
    const w = await wsWatch(wsOf(t), { ms: 500 });
    expect(w.opened).toBe(true);
    expect(w.messages).toEqual([]);
  });

  const violations: [string, RegExp][] = [
    ['ws-masked', /MASK must be clear/],
    ['ws-reserved-opcode', /invalid opcode 3/i],
    ['ws-reserved-bits', /RSV1 must be clear/],
    ['ws-invalid-utf8', /invalid UTF-8/i],
    ['ws-illegal-close-code', /invalid status code 1005/],
    ['ws-oversize-close', /WS_ERR_INVALID_CONTROL_PAYLOAD_LENGTH/],
  ];
  for (const [name, error] of violations) {
    it(`${name} is refused by the ws client as a protocol violation`, async () => {
      const t = await start(name);
      const w = await wsWatch(wsOf(t));
      expect(w.opened).toBe(true);
      expect(w.error).toMatch(error);
    });
  }

  it('ws-illegal-close-code cycles through illegal codes', async () => {
    const t = await start('ws-illegal-close-code');
    const errors = [];
    for (let i = 0; i < 3; i++) errors.push((await wsWatch(wsOf(t))).error);
    expect(errors.join(' ')).toMatch(/1005.*999.*1004|999.*1004.*1015/);
  });

  it('echo-key echoes the key in REST bodies, headers and status lines', async () => {
    const t = await start('echo-key');
    const r = await httpGet(`${restOf(t)}/v1/pairs`, { key: 'SECRET123' });
    expect(r.statusMessage).toContain('SECRET123');
    expect(r.headers?.['x-echo-key']).toBe('SECRET123');
    expect(r.body.toString()).toContain('SECRET123');
  });

  it('echo-key echoes the key in upgrade headers, notices, pongs, closes and every third refusal', async () => {
    const t = await start('echo-key');
    const w = await wsWatch(wsOf(t), {
      key: 'SECRET123',
      send: ['{"id":"1","method":"subscribe","params":{"pairs":["a"]}}', '{"method":"ping"}', '{"method":"ping"}'],
      ms: 1000,
    });
    expect(w.upgradeHeaders?.['x-echo-key']).toBe('SECRET123');
    const texts = w.messages.map((m) => m.data.toString());
    expect(texts.some((x) => x.startsWith('{"method":"error"') && x.includes('SECRET123'))).toBe(true);
    expect(texts).toContain('Pong! SECRET123');
    expect(w.close).toEqual({ code: 1008, reason: 'key SECRET123 revoked' });
    await wsWatch(wsOf(t), { key: 'SECRET123', ms: 200 });
    const third = await wsWatch(wsOf(t), { key: 'SECRET123' });
    expect(third.unexpectedStatus).toBe(429);
    expect(third.unexpectedBody).toContain('SECRET123');
  });

  it('a closed port refuses connections', async () => {
    const r = await httpGet(`${await closedPort()}/v1/pairs`);
    expect(r.error).toBe('ECONNREFUSED');
  });
});
