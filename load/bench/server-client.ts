/**
 * Client process of `npm run bench:server`: opens N raw WebSocket connections on loopback,
 * subscribes each to the same pairs, and counts push frames and tick-to-receive latency.
 * Frames are read in place (src/ws-frame.ts, no Buffer per frame; `sent_at` read from one frame
 * per read) so the client stays cheaper than the server it measures. Talks to the parent over IPC.
 */
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import * as hdr from 'hdr-histogram-js';
import { OPCODE, WireReader, frame } from '../../src/ws-frame.ts';

interface Args {
  url: string;
  key: string;
  clients: number;
  pairs: string[];
  pingEveryMs: number;
}
const args = JSON.parse(process.argv[2]!) as Args;
const target = new URL(args.url);

let frames = 0;
let bytes = 0;
let connected = 0;
let failed = 0;
let closed = 0;
let histogram = hdr.build({
  lowestDiscernibleValue: 1,
  highestTrackableValue: 120_000,
  numberOfSignificantValueDigits: 3,
});
const sockets: Socket[] = [];
const SENT_AT = Buffer.from('"sent_at":');

/** A client frame must be masked (RFC 6455 5.3); a zero mask key is legal and leaves the payload as is. */
const ZERO_MASK = Buffer.alloc(4);
const clientFrame = (text: string): Buffer => frame({ opcode: OPCODE.text, payload: text, mask: ZERO_MASK });

/** The last push of the chunk being read (its buffer and where its payload starts): `sent_at` is read from it. */
let lastPush: Buffer | null = null;
let lastPushAt = 0;

/** Reads one connection's frames: counts push frames and notes the last of each chunk. */
function frameReader(socket: Socket): WireReader {
  return new WireReader(
    16 * 1024 * 1024,
    {
      message(buf, start) {
        // Push frames start with {"code"; notices with {"method"; Pong! is plain text.
        if (buf[start + 2] === 0x63) {
          frames++;
          lastPush = buf;
          lastPushAt = start;
        }
      },
    },
    {
      ping: (payload) => socket.write(frame({ opcode: OPCODE.pong, payload, mask: ZERO_MASK })),
      close: () => socket.end(),
      violation: () => socket.destroy(),
    },
  );
}

function open(): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(Number(target.port), target.hostname);
    socket.setNoDelay(true);
    let upgraded = false;
    let pending: Buffer | null = null;
    const reader = frameReader(socket);
    socket.once('connect', () => {
      socket.write(
        `GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: ` +
          `13\r\nX-API-Key: ${args.key}\r\n\r\n`,
      );
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (!upgraded) {
        failed++;
        resolve();
      } else closed++;
    });
    socket.on('data', (chunk: Buffer) => {
      if (!upgraded) {
        const buf = pending ? Buffer.concat([pending, chunk]) : chunk;
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) {
          pending = buf;
          return;
        }
        if (!buf.subarray(0, 12).toString().includes('101')) {
          failed++;
          socket.destroy();
          resolve();
          return;
        }
        upgraded = true;
        connected++;
        sockets.push(socket);
        socket.write(clientFrame(JSON.stringify({ method: 'subscribe', params: { pairs: args.pairs } })));
        resolve();
        chunk = buf.subarray(end + 4);
        pending = null;
        if (chunk.length === 0) return;
      }
      const now = Date.now();
      bytes += chunk.length;
      reader.write(chunk, now);
      if (lastPush !== null) {
        // Read at once, before another chunk arrives: the bytes are still those of this chunk.
        const buf = lastPush;
        lastPush = null;
        const at = buf.indexOf(SENT_AT, lastPushAt);
        if (at > 0) {
          const sentAt = Number(buf.subarray(at + SENT_AT.length, buf.indexOf(0x7d, at)).toString());
          histogram.recordValue(Math.max(1, now - sentAt));
        }
      }
    });
  });
}

async function main(): Promise<void> {
  const batch = 100;
  for (let i = 0; i < args.clients; i += batch)
    await Promise.all(Array.from({ length: Math.min(batch, args.clients - i) }, open));
  const ping = clientFrame(JSON.stringify({ method: 'ping' }));
  setInterval(() => {
    for (const s of sockets) s.write(ping);
  }, args.pingEveryMs).unref();
  let cpuStart = process.cpuUsage();
  let wallStart = process.hrtime.bigint();
  process.on('message', (msg: { cmd: string }) => {
    if (msg.cmd === 'start') {
      frames = 0;
      bytes = 0;
      histogram = hdr.build({
        lowestDiscernibleValue: 1,
        highestTrackableValue: 120_000,
        numberOfSignificantValueDigits: 3,
      });
      cpuStart = process.cpuUsage();
      wallStart = process.hrtime.bigint();
    } else if (msg.cmd === 'stop') {
      const cpu = process.cpuUsage(cpuStart);
      const wallMs = Number(process.hrtime.bigint() - wallStart) / 1e6;
      process.send!({
        kind: 'result',
        frames,
        bytes,
        wallMs,
        closed,
        clientCpuMs: (cpu.user + cpu.system) / 1000,
        latencyMs: {
          p50: histogram.getValueAtPercentile(50),
          p99: histogram.getValueAtPercentile(99),
          max: histogram.maxValue,
          samples: histogram.totalCount,
        },
      });
    } else if (msg.cmd === 'exit') {
      for (const s of sockets) s.destroy();
      process.exit(0);
    }
  });
  process.send!({ kind: 'ready', connected, failed });
}

void main();
