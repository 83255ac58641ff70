/**
 * What the code under test actually read from a peer: every TCP client socket this process opens
 * while watching, through node's `net.client.socket` diagnostics channel. The peer's own count of
 * bytes written cannot bound a reader, since the kernel buffers of both ends hold megabytes.
 */
import diagnostics_channel from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { expect } from 'vitest';

/** The size of one socket read (libuv's read buffer): a reader that stops at a limit may hold this much past it. */
export const READ_CHUNK = 64 * 1024;

export interface ClientReads {
  /**
   * Waits for every socket opened so far to close, then stops watching and returns the bytes each
   * socket read (those opened meanwhile too: a reader that opens another on the way is seen).
   */
  closed(): Promise<number[]>;
}

export function watchClientReads(): ClientReads {
  const sockets: Socket[] = [];
  const onSocket = (message: unknown): void => {
    sockets.push((message as { socket: Socket }).socket);
  };
  diagnostics_channel.subscribe('net.client.socket', onSocket);
  return {
    async closed() {
      // 'close' only: a reader that hangs up mid-body may see ECONNRESET first, and that is not a failure here.
      await Promise.all(
        sockets.map((s) => (s.closed ? undefined : new Promise((resolve) => s.once('close', resolve)))),
      );
      diagnostics_channel.unsubscribe('net.client.socket', onSocket);
      return sockets.map((s) => s.bytesRead);
    },
  };
}

/** Asserts that exactly one socket was opened and it read `upTo` bytes, plus at most one socket read past them. */
export async function expectOneSocketReadTo(reads: ClientReads, upTo: number): Promise<void> {
  const [read, ...others] = await reads.closed();
  expect(others).toEqual([]);
  expect(read).toBeGreaterThanOrEqual(upTo);
  expect(read).toBeLessThanOrEqual(upTo + READ_CHUNK);
}
