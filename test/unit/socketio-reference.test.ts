/**
 * The reference service's Socket.IO side from outside: socket.io-client over WebSocket and over
 * long-polling (a browser's default), refusals as the spec's JSON body in the HTTP phase of both
 * handshake forms, the allowance of a key shared with the raw WebSocket, the keep-alive, and
 * messages as string payloads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io, type Socket } from 'socket.io-client';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { API_KEY_HEADER, STATUS, TEXT } from '../../src/spec.ts';
import { connect, getRaw } from '../helpers/reference.ts';
import { createSocketIoClient } from '../../src/transports/socketio-session.ts';

const WINDOW = 1200;
const EVENT = 'quotes';
const BTC = 'Crypto:ALL:BTC/USD';
let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer({ tickMs: 50, pingTimeoutMs: WINDOW, transport: 'socketio', event: EVENT });
});
afterAll(() => server.close());

const key = (name: string): string => server.profile.keys[name]!.key;
const httpBase = (): string => server.socketIoUrl!.replace(/^ws:/, 'http:').replace(/\/socket\.io\/$/, '');

/**
 * A socket.io-client connection with the key of `keyName`; `polling` uses the browser default
 * (polling, then upgrade).
 */
function sio(keyName: string | null, options: { polling?: boolean } = {}): Socket {
  const socket = io(httpBase(), {
    path: '/socket.io/',
    forceNew: true,
    reconnection: false,
    timeout: 3000,
    transports: options.polling ? ['polling', 'websocket'] : ['websocket'],
    extraHeaders: keyName === null ? {} : { [API_KEY_HEADER]: key(keyName) },
  });
  sockets.push(socket);
  return socket;
}
const sockets: Socket[] = [];
afterAll(() => {
  for (const s of sockets) s.disconnect();
});

/** Connects `keyName` once the server has freed a slot a previous test closed. */
async function connectedEventually(keyName: string): Promise<Socket> {
  for (let i = 0; ; i++) {
    const socket = sio(keyName);
    try {
      await connected(socket);
      return socket;
    } catch (err) {
      if (i >= 30) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function connected(socket: Socket): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
}

/** The next payload of EVENT that matches. */
function nextMessage(socket: Socket, pred: (m: unknown) => boolean = () => true, timeoutMs = 3000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.off(EVENT, on);
      reject(new Error('no matching message in time'));
    }, timeoutMs);
    const on = (m: unknown): void => {
      if (!pred(m)) return;
      clearTimeout(timer);
      socket.off(EVENT, on);
      resolve(m);
    };
    socket.on(EVENT, on);
  });
}

const isNotice = (m: unknown): m is Record<string, unknown> => typeof m === 'object' && m !== null && 'method' in m;

describe('reference over Socket.IO: handshake', () => {
  it('describes itself in the profile as transport socketio with its event and URL, beside the raw WebSocket', () => {
    expect(server.profile).toMatchObject({ transport: 'socketio', event: EVENT, ws: server.socketIoUrl });
    expect(server.socketIoUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/socket\.io\/$/);
    expect(server.wsUrl).toMatch(/\/v1\/ws$/);
  });

  it('refuses a polling handshake without a key with the spec JSON body, before Socket.IO answers', async () => {
    const r = await getRaw(`${httpBase()}/socket.io/?EIO=4&transport=polling`, {});
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ status_number: STATUS.UNAUTHORIZED, message: expect.any(String) });
  });

  it("refuses a stream-less key's WebSocket handshake with 50010 in the HTTP phase (conform's client)", async () => {
    const stream = createSocketIoClient({
      url: server.socketIoUrl!,
      event: EVENT,
      primaryKey: key('primary'),
      record: () => undefined,
    });
    const result = await stream.open({ key: key('noStream') });
    expect(result).toMatchObject({
      ok: false,
      status: 403,
      json: { status_number: STATUS.ACCESS_DENIED, message: expect.any(String) },
    });
  });

  it('refuses a polling handshake of a suspended key with 50007 in the body', async () => {
    const r = await getRaw(`${httpBase()}/socket.io/?EIO=4&transport=polling`, { [API_KEY_HEADER]: key('suspended') });
    expect([r.status, r.body.status_number]).toEqual([403, STATUS.SUSPENDED]);
  });
});

describe('reference over Socket.IO: the protocol on the named event', () => {
  it('answers subscribe, pushes the pair, answers ping with the string Pong!, over WebSocket', async () => {
    const socket = sio('primary');
    await connected(socket);
    socket.emit(EVENT, { id: 's1', method: 'subscribe', params: { pairs: [BTC] } });
    expect(await nextMessage(socket, isNotice)).toEqual({
      method: 'subscribe',
      message: TEXT.subscribeSuccess,
      code: STATUS.OK,
      id: 's1',
      data: null,
    });
    expect(await nextMessage(socket, (m) => !isNotice(m) && typeof m === 'object')).toMatchObject({
      code: BTC,
      ask: expect.any(String),
      bid: expect.any(String),
      price: expect.any(String),
    });
    socket.emit(EVENT, { method: 'ping' });
    expect(await nextMessage(socket, (m) => typeof m === 'string')).toBe(TEXT.pong);
    socket.disconnect();
  });

  it('serves a long-polling client (socket.io-client default transports) the same way', async () => {
    const socket = sio('primary', { polling: true });
    await connected(socket);
    socket.emit(EVENT, { id: 'p1', method: 'subscribe', params: { pairs: [BTC] } });
    expect(await nextMessage(socket, isNotice)).toMatchObject({ method: 'subscribe', code: STATUS.OK, id: 'p1' });
    expect(await nextMessage(socket, (m) => !isNotice(m))).toMatchObject({ code: BTC });
    socket.disconnect();
  });

  it('reads a string payload as JSON text: malformed JSON gets the 50004 notice; a binary payload too', async () => {
    const socket = sio('primary');
    await connected(socket);
    socket.emit(EVENT, '{"method":"subscribe",');
    expect(await nextMessage(socket, isNotice)).toMatchObject({ method: 'error', code: STATUS.INVALID_REQUEST });
    socket.emit(EVENT, JSON.stringify({ id: 'j1', method: 'subscribe', params: { pairs: [BTC] } }));
    expect(await nextMessage(socket, isNotice)).toMatchObject({ method: 'subscribe', id: 'j1' });
    socket.emit(EVENT, Buffer.from('{}'));
    expect(await nextMessage(socket, (m) => isNotice(m) && m.method === 'error')).toMatchObject({
      code: STATUS.INVALID_REQUEST,
    });
    socket.disconnect();
  });

  it("closes a Socket.IO connection that sends no ping within the window, Socket.IO's heartbeat aside", async () => {
    const socket = sio('primary');
    let heartbeats = 0;
    socket.io.engine.on('ping', () => {
      heartbeats++;
    });
    await connected(socket);
    const start = Date.now();
    const reason = await new Promise<string>((resolve) => socket.once('disconnect', resolve));
    // The reference runs Socket.IO's heartbeat three times per window; none of it reset the window.
    expect(heartbeats).toBeGreaterThanOrEqual(2);
    expect(reason).toBe('io server disconnect');
    expect(Date.now() - start).toBeGreaterThanOrEqual(WINDOW - 100);
  });
});

describe('reference over Socket.IO: the allowance of a key across both transports', () => {
  it('refuses Socket.IO with 50009 while a raw WebSocket holds the limited key; frees it on close', async () => {
    const raw = await connect(server, 'limited');
    expect(raw.ok).toBe(true);
    const refusedBody = await getRaw(`${httpBase()}/socket.io/?EIO=4&transport=polling`, {
      [API_KEY_HEADER]: key('limited'),
    });
    expect([refusedBody.status, refusedBody.body.status_number]).toEqual([429, STATUS.CONNECTION_LIMIT]);
    if (raw.ok) await raw.client.close();
    await expect
      .poll(
        async () => {
          const s = sio('limited');
          const ok = await connected(s).then(
            () => true,
            () => false,
          );
          if (ok) s.disconnect();
          return ok;
        },
        { timeout: 3000, interval: 100 },
      )
      .toBe(true);
  });

  it('refuses a raw WebSocket connection with 50009 while Socket.IO holds the limited key', async () => {
    const socket = await connectedEventually('limited');
    const raw = await connect(server, 'limited');
    expect(raw.ok ? 'open' : raw.body.status_number).toBe(STATUS.CONNECTION_LIMIT);
    socket.disconnect();
  });

  it('counts Socket.IO clients in the fan-out stats', async () => {
    const socket = sio('primary');
    await connected(socket);
    socket.emit(EVENT, { method: 'subscribe', params: { pairs: [BTC] } });
    await nextMessage(socket, (m) => !isNotice(m) && typeof m === 'object');
    expect(server.stats.clients).toBeGreaterThanOrEqual(1);
    expect(server.stats.framesWritten).toBeGreaterThan(0);
    socket.disconnect();
  });
});
