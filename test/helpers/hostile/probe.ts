/**
 * Small clients that look at what a hostile target really sends: a raw socket, node:http and the
 * `ws` client (which refuses protocol violations, so its error names the violation).
 */
import http from 'node:http';
import net from 'node:net';
import { WebSocket } from 'ws';

/**
 * Sends `request` on a raw socket; resolves with every byte received within `ms` (or until the peer
 * closes) and how it ended.
 */
export function rawExchange(
  url: string,
  request: string,
  ms: number,
): Promise<{ bytes: Buffer; ended: 'timeout' | 'end' | 'reset' | 'error'; error?: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(Number(port), hostname);
    let settled = false;
    const finish = (ended: 'timeout' | 'end' | 'reset' | 'error', error?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ bytes: Buffer.concat(chunks), ended, error });
    };
    const timer = setTimeout(() => finish('timeout'), ms);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => finish('end'));
    socket.on('error', (e: NodeJS.ErrnoException) =>
      finish(e.code === 'ECONNRESET' ? 'reset' : 'error', e.code ?? e.message),
    );
    socket.write(request);
  });
}

/** A GET request head for a raw socket. */
export const getHead = (path: string, key = 'probe-key'): string =>
  `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\n\r\n`;

export interface HttpOutcome {
  status?: number;
  statusMessage?: string;
  headers?: http.IncomingHttpHeaders;
  body: Buffer;
  /** Error code (e.g. ECONNRESET, HPE_INVALID_CHUNK_SIZE) when the exchange broke. */
  error?: string;
}

/** A GET with node:http (no key header when `key` is ''), reading at most `maxBody` bytes, giving up after `ms`. */
export function httpGet(url: string, opts: { key?: string; maxBody?: number; ms?: number } = {}): Promise<HttpOutcome> {
  const maxBody = opts.maxBody ?? 1024 * 1024;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let out: HttpOutcome = { body: Buffer.alloc(0) };
    let settled = false;
    const finish = (error?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve({ ...out, body: Buffer.concat(chunks), error });
    };
    const headers: Record<string, string> = opts.key === '' ? {} : { 'x-api-key': opts.key ?? 'probe-key' };
    const req = http.get(url, { headers, agent: false }, (res) => {
      out = { status: res.statusCode, statusMessage: res.statusMessage, headers: res.headers, body: Buffer.alloc(0) };
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        size += c.length;
        if (size >= maxBody) finish('max-body');
      });
      res.on('end', () => finish());
      res.on('aborted', () => finish('aborted'));
      res.on('error', (e: NodeJS.ErrnoException) => finish(e.code ?? e.message));
    });
    req.on('error', (e: NodeJS.ErrnoException) => finish(e.code ?? e.message));
    const timer = setTimeout(() => finish('timeout'), opts.ms ?? 2000);
  });
}

export interface WsOutcome {
  opened: boolean;
  messages: { data: Buffer; isBinary: boolean }[];
  unexpectedStatus?: number;
  unexpectedBody?: string;
  unexpectedHeaders?: http.IncomingHttpHeaders;
  error?: string;
  close?: { code: number; reason: string };
  upgradeHeaders?: http.IncomingHttpHeaders;
}

/** Opens a WebSocket with the `ws` client, sends `send` once open, and watches for `ms`. */
export function wsWatch(
  url: string,
  opts: { key?: string; send?: string[]; ms?: number; maxPayload?: number; stopAfter?: number } = {},
): Promise<WsOutcome> {
  return new Promise((resolve) => {
    const out: WsOutcome = { opened: false, messages: [] };
    const ws = new WebSocket(url, {
      headers: { 'x-api-key': opts.key ?? 'probe-key' },
      maxPayload: opts.maxPayload ?? 1024 * 1024,
      handshakeTimeout: opts.ms ?? 2000,
    });
    let settled = false;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ws.terminate();
      resolve(out);
    };
    const timer = setTimeout(finish, opts.ms ?? 1000);
    ws.on('upgrade', (res) => {
      out.upgradeHeaders = res.headers;
    });
    ws.on('open', () => {
      out.opened = true;
      for (const m of opts.send ?? []) ws.send(m);
    });
    ws.on('message', (data, isBinary) => {
      out.messages.push({ data: Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer), isBinary });
      if (opts.stopAfter !== undefined && out.messages.length >= opts.stopAfter) finish();
    });
    ws.on('unexpected-response', (_req, res) => {
      out.unexpectedStatus = res.statusCode;
      out.unexpectedHeaders = res.headers;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        size += c.length;
        if (size > 64 * 1024) {
          out.unexpectedBody = Buffer.concat(chunks).toString();
          finish();
        }
      });
      res.on('end', () => {
        out.unexpectedBody = Buffer.concat(chunks).toString();
        finish();
      });
      res.on('error', finish);
    });
    ws.on('error', (e: Error & { code?: string }) => {
      out.error ??= e.code ? `${e.code}: ${e.message}` : e.message;
    });
    ws.on('close', (code, reason) => {
      out.close = { code, reason: reason.toString() };
      finish();
    });
  });
}
