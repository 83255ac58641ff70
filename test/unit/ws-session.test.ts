/**
 * What only the raw WebSocket session has, against small servers on port 0: literal wire frames
 * written byte by byte, the frame size limit and protocol errors. The contract it shares with the
 * Socket.IO session is the table in helpers/stream-contract.ts, run here first.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { streamSessionContract } from '../helpers/stream-contract.ts';
import { cleanup, client, openOk, wsTransport } from '../helpers/stream-peers.ts';
import { switchingProtocols } from '../helpers/hostile/raw-server.ts';
import { textFrame } from '../../src/ws-frame.ts';

afterEach(async () => {
  // A test that failed with frozen timers must not leave them frozen for the teardown.
  vi.useRealTimers();
  await cleanup();
});

streamSessionContract(wsTransport);

/** Completes the upgrade by hand (a 101 with the right accept value), so the test writes the frames. */
const acceptUpgrade = (req: IncomingMessage, socket: Socket): void => {
  socket.write(switchingProtocols(req.headers['sec-websocket-key']!));
};

describe('ws session: frames', () => {
  it('classifies JSON, plain text and binary frames written as literal wire bytes, split across chunks', async () => {
    const p = await wsTransport.peer(undefined, {
      raw: (req, socket) => {
        acceptUpgrade(req, socket);
        const wire = Buffer.concat([
          textFrame('{"code":"Crypto:ALL:BTC/USDT","ask":"2","bid":"1","price":"1.5"}'),
          textFrame('Pong!'),
          textFrame('"Pong!"'),
          Buffer.from([0x82, 0x03, 1, 2, 3]),
        ]);
        // One byte per write, so the parser must reassemble every frame.
        let i = 0;
        const drip = (): void => {
          if (i < wire.length && !socket.destroyed) {
            socket.write(wire.subarray(i, i + 1));
            i++;
            setImmediate(drip);
          }
        };
        drip();
        return true;
      },
    });
    const { stream } = client(wsTransport, p.url);
    const session = await openOk(stream);
    await session.find((f) => f.kind === 'binary');
    expect(session.frames.map((f) => f.kind)).toEqual(['json', 'text', 'json', 'binary']);
    expect(session.frames[1]).toMatchObject({ kind: 'text', text: 'Pong!' });
    expect(session.frames[2]).toMatchObject({ kind: 'json', text: '"Pong!"', value: 'Pong!' });
    expect(session.frames[3]).toMatchObject({ kind: 'binary', bytes: 3 });
    expect(session.pushes().map((p) => p.value.code)).toEqual(['Crypto:ALL:BTC/USDT']);
  });
});

describe('ws session: limits and protocol errors', () => {
  it('refuses a frame over maxPayload, records why and closes the connection', async () => {
    const p = await wsTransport.peer((c) => c.send('x'.repeat(2048)));
    const { stream, evidence } = client(wsTransport, p.url, { maxPayload: 1024 });
    const session = await openOk(stream);
    const info = await session.closed;
    expect(session.frames).toHaveLength(0);
    expect(info).toMatchObject({
      by: 'client',
      reason: expect.stringMatching(/^failed by the client: Max payload size exceeded/),
    });
    expect(evidence).toContainEqual(
      expect.objectContaining({ kind: 'note', text: expect.stringMatching(/max payload/i) }),
    );
  });

  it('drops the connection at once, with no timer left to run out, when the peer breaks the protocol', async () => {
    // Answers the first message with a frame of the reserved opcode 0x3, then stays silent: no close reply ever comes.
    const p = await wsTransport.peer(undefined, {
      raw: (req, socket) => {
        acceptUpgrade(req, socket);
        socket.once('data', () => socket.write(Buffer.from([0x83, 0x00])));
        return true;
      },
    });
    const { stream } = client(wsTransport, p.url);
    const session = await openOk(stream);
    // Frozen timers: a client that waited for the close reply (its own close deadline, or ws's 30 s one) never closes.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const pending = session.next(() => true, 5000).catch((e: unknown) => e);
      session.send({ method: 'ping' });
      const info = await session.closed;
      expect(info).toMatchObject({
        by: 'client',
        reason: expect.stringMatching(
          /^failed by the client: Invalid WebSocket frame: invalid opcode 3 \(WS_ERR_INVALID_OPCODE\)/,
        ),
      });
      expect(await pending).toMatchObject({
        code: 'CONFORM_WAIT_CLOSED',
        message: expect.stringMatching(/failed by the client: Invalid WebSocket frame: invalid opcode 3/),
      });
    } finally {
      vi.useRealTimers();
    }
    expect(() => session.send({ method: 'ping' })).toThrow(
      /cannot send: the connection is closed \(1006 failed by the client: Invalid WebSocket frame/,
    );
  }, 15_000);
});
