/**
 * Preloaded into a child conform (`--import tsx --import <this file>`, CONFORM_READS_FILE set): on
 * exit, writes the bytes read by each TCP client socket it opened, as a JSON array. A target's own
 * count of bytes written cannot bound the reader: the kernel buffers of both ends hold megabytes.
 */
import diagnostics_channel from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';

const file = process.env.CONFORM_READS_FILE;
if (file) {
  const sockets: Socket[] = [];
  diagnostics_channel.subscribe('net.client.socket', (message) => {
    sockets.push((message as { socket: Socket }).socket);
  });
  process.on('exit', () => writeFileSync(file, JSON.stringify(sockets.map((s) => s.bytesRead))));
}
