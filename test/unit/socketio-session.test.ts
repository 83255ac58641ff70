/**
 * What only the Socket.IO session has, against Socket.IO servers on port 0 (peers, not the thing
 * under test): the URL's path, the transport a profile picks, engine.io's own refusals and
 * heartbeat, the named event, and Socket.IO's disconnect reasons. The contract it shares with the
 * raw WebSocket session is the table in helpers/stream-contract.ts, run here first.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Socket } from 'socket.io';
import { socketIoTarget } from '../../src/transports/socketio-session.ts';
import { createStreamClient } from '../../src/transports/ws-session.ts';
import { streamFactoryFor } from '../../src/transports/stream-factory.ts';
import { minimalProfile, parseProfile } from '../../src/profile.ts';
import { streamSessionContract } from '../helpers/stream-contract.ts';
import {
  EVENT,
  KEY,
  cleanup,
  client,
  deferCleanup,
  openOk,
  socketIoTransport,
  wsTransport,
} from '../helpers/stream-peers.ts';

afterEach(cleanup);

streamSessionContract(socketIoTransport);

const t = socketIoTransport;

/** A Socket.IO peer whose raw Socket.IO connection handler the test writes. */
async function ioPeer(onConnection: (socket: Socket) => void, io?: Parameters<typeof t.peer>[1]) {
  const p = await t.peer(undefined, io);
  p.io!.on('connection', onConnection);
  return p;
}

describe('socket.io session: target URL', () => {
  it('takes the URL path as the Socket.IO path and defaults it to /socket.io/', () => {
    expect(socketIoTarget('ws://127.0.0.1:8080/socket.io/')).toEqual({
      origin: 'ws://127.0.0.1:8080',
      path: '/socket.io/',
    });
    expect(socketIoTarget('wss://example.test')).toEqual({ origin: 'wss://example.test', path: '/socket.io/' });
    expect(socketIoTarget('ws://127.0.0.1:9/v1/stream')).toEqual({ origin: 'ws://127.0.0.1:9', path: '/v1/stream' });
  });
});

describe('transport selection by profile', () => {
  it('picks raw WebSocket without a transport or with ws, and Socket.IO with socketio and its event', async () => {
    expect(streamFactoryFor({})).toBe(createStreamClient);
    expect(streamFactoryFor({ transport: 'ws' })).toBe(createStreamClient);
    let arrived!: (m: unknown) => void;
    const event = new Promise((r) => {
      arrived = r;
    });
    const p = await ioPeer((s) => s.on('quotes', (m: unknown) => arrived(m)));
    const factory = streamFactoryFor({ transport: 'socketio', event: 'quotes' });
    const stream = factory({ url: p.url, primaryKey: KEY, record: () => undefined });
    deferCleanup(() => stream.closeAll());
    const session = await openOk(stream);
    session.send({ method: 'ping' });
    expect(await event).toEqual({ method: 'ping' });
  });

  it('refuses socketio without an event name, in the factory and in a profile', () => {
    expect(() => streamFactoryFor({ transport: 'socketio' })).toThrow(/needs the event name/);
    expect(() =>
      parseProfile({ rest: 'http://127.0.0.1:1', keys: { primary: { key: 'k' } }, transport: 'socketio' }),
    ).toThrow(/required property "event"/);
    expect(
      minimalProfile({
        target: 'http://127.0.0.1:1/',
        key: 'k',
        ws: 'ws://127.0.0.1:1/socket.io/',
        transport: 'socketio',
        event: 'price',
      }),
    ).toMatchObject({ transport: 'socketio', event: 'price', ws: 'ws://127.0.0.1:1/socket.io/' });
  });
});

describe('socket.io session: handshake', () => {
  it('uses the WebSocket transport only, so the handshake is one HTTP upgrade request', async () => {
    const p = await t.peer();
    const { stream } = client(t, p.url);
    const session = await openOk(stream);
    expect(p.handshakes).toHaveLength(1);
    expect(p.handshakes[0]!.url).toMatch(/^\/socket\.io\/\?EIO=4&transport=websocket/);
    expect(session.openedAtMs).toBeGreaterThanOrEqual(session.startedAtMs);
  });

  it("reports Socket.IO's own upgrade refusal (allowRequest) as HTTP 400 with engine.io's text", async () => {
    const p = await t.peer(undefined, { io: { allowRequest: (_req, cb) => cb('nope', false) } });
    const { stream } = client(t, p.url);
    // engine.io cannot write a body of our choosing here: a service must answer before it.
    expect(await stream.open()).toMatchObject({ ok: false, status: 400, text: 'nope', json: undefined });
  });

  it('returns a namespace refusal (CONNECT_ERROR after the upgrade) as a Refusal: status 101, its data', async () => {
    const p = await t.peer();
    p.io!.use((_socket, next) =>
      next(Object.assign(new Error('denied'), { data: { status_number: '50010', message: 'Access denied' } })),
    );
    const { stream, evidence } = client(t, p.url);
    const result = await stream.open();
    expect(result).toMatchObject({
      ok: false,
      status: 101,
      json: { status_number: '50010', message: 'Access denied' },
    });
    expect(evidence).toContainEqual(
      expect.objectContaining({ kind: 'ws-open', outcome: expect.stringContaining('CONNECT_ERROR') }),
    );
  });

  it('rejects with CONFORM_NETWORK saying so when the peer is a plain WebSocket server', async () => {
    const p = await wsTransport.peer((c) => c.send('{"method":"subscribe"}'));
    const { stream } = client(t, t.urlAt(p.port));
    await expect(stream.open()).rejects.toMatchObject({
      code: 'CONFORM_NETWORK',
      message: expect.stringContaining('does not speak Socket.IO'),
    });
  });
});

describe('socket.io session: the named event', () => {
  it('keeps messages the server emits in its connection handler, before the client sees connect', async () => {
    const p = await ioPeer((s) => {
      s.emit(EVENT, { method: 'error', code: '50005', message: 'Invalid API key', data: null });
    });
    const { stream } = client(t, p.url);
    const session = await openOk(stream);
    expect(await session.find((f) => f.kind === 'json')).toMatchObject({ value: { code: '50005' } });
  });

  it('records messages on another event as notes, not frames', async () => {
    const p = await ioPeer((s) => {
      s.emit('other', { method: 'subscribe' });
      s.emit(EVENT, 'Pong!');
    });
    const { stream, evidence } = client(t, p.url);
    const session = await openOk(stream);
    await session.find((f) => f.kind === 'text');
    expect(session.frames).toHaveLength(1);
    expect(evidence).toContainEqual(
      expect.objectContaining({ kind: 'note', text: expect.stringContaining('event "other"') }),
    );
  });

  it("does not surface Socket.IO's own heartbeat as frames, and it keeps the connection up", async () => {
    // Each heartbeat is a ping the client answered within pingTimeout: three prove the connection was kept up.
    let beat!: () => void;
    const threeBeats = new Promise<void>((r) => {
      beat = r;
    });
    const p = await ioPeer(
      (s) => {
        let beats = 0;
        s.conn.on('heartbeat', () => {
          if (++beats === 3) beat();
        });
      },
      { io: { pingInterval: 40, pingTimeout: 200 } },
    );
    const { stream } = client(t, p.url);
    const session = await openOk(stream);
    await threeBeats;
    expect(session.frames).toEqual([]);
    expect(session.isOpen).toBe(true);
  });
});

describe('socket.io session: closing', () => {
  it('keeps the WebSocket close code and reason when the server closes the transport under Socket.IO', async () => {
    const p = await ioPeer((s) =>
      s.on(EVENT, () => {
        (s.conn.transport as unknown as { socket: { close(code: number, reason: string): void } }).socket.close(
          1008,
          'no ping within the keep-alive window',
        );
      }),
    );
    const { stream } = client(t, p.url);
    const session = await openOk(stream);
    session.send({ method: 'ping' });
    expect(await session.closed).toMatchObject({
      by: 'server',
      code: 1008,
      reason: 'transport close: no ping within the keep-alive window',
    });
  });

  it('closes from the client side with by client, and the server sees a namespace disconnect', async () => {
    let gone!: (reason: string) => void;
    const disconnected = new Promise<string>((r) => {
      gone = r;
    });
    const p = await ioPeer((s) => s.on('disconnect', (r) => gone(r)));
    const { stream } = client(t, p.url);
    const session = await openOk(stream);
    expect(await session.close()).toMatchObject({ by: 'client', code: 1000, reason: 'io client disconnect' });
    expect(await disconnected).toBe('client namespace disconnect');
  });
});
