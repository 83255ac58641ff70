/** Small loopback clients for the reference-service tests: REST GETs and a WebSocket with a frame queue. */
import { once } from 'node:events';
import { request, type IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { API_KEY_HEADER } from '../../src/spec.ts';
import type { ReferenceServer } from '../../reference/index.ts';

export interface Reply {
  status: number;
  body: Record<string, unknown>;
  text: string;
}

/** GET `path` with the profile key named `keyName` (null: no key) under header `header`. */
export async function get(
  server: ReferenceServer,
  path: string,
  keyName: string | null = 'primary',
  header = API_KEY_HEADER,
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (keyName !== null) headers[header] = server.profile.keys[keyName]!.key;
  return getRaw(server.restUrl + path, headers);
}

/** A response's status and whole body, as text and (when it parses) as JSON. */
function readReply(res: IncomingMessage): Promise<Reply> {
  return new Promise((resolve) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (text += c));
    res.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        // not JSON: tests read `text`
      }
      resolve({ status: res.statusCode ?? 0, body, text });
    });
  });
}

/** GET with exact header names (node keeps their case on the wire). */
export function getRaw(url: string, headers: Record<string, string>): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      void readReply(res).then(resolve);
    });
    req.on('error', reject);
    req.end();
  });
}

export const q = (params: Record<string, string>): string => `?${new URLSearchParams(params).toString()}`;

export type Frame = { text: string; json: Record<string, unknown> | undefined; at: number };

/** A WebSocket client that queues every frame it receives. */
export class Client {
  readonly frames: Frame[] = [];
  private waiters: (() => void)[] = [];
  closed: { code: number; reason: string; at: number } | undefined;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      const text = isBinary ? `<binary ${(data as Buffer).length}>` : data.toString();
      let json: Record<string, unknown> | undefined;
      try {
        const v: unknown = JSON.parse(text);
        if (v && typeof v === 'object' && !Array.isArray(v)) json = v as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      this.frames.push({ text, json, at: Date.now() });
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString(), at: Date.now() };
      this.wake();
    });
    ws.on('error', () => {});
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  send(value: unknown): void {
    this.ws.send(typeof value === 'string' ? value : JSON.stringify(value));
  }

  /** Waits for the first queued frame matching `pred` (removing it and everything before it). */
  async next(pred: (f: Frame) => boolean = () => true, timeoutMs = 3000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.frames.findIndex(pred);
      if (i >= 0) return this.frames.splice(0, i + 1)[i]!;
      if (this.closed) throw new Error(`closed (${this.closed.code}) before a matching frame`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no matching frame in time');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** The next notice (a frame with `method`). */
  notice(timeoutMs?: number): Promise<Record<string, unknown>> {
    return this.next((f) => f.json?.method !== undefined, timeoutMs).then((f) => f.json!);
  }

  /** Collects push frames (JSON without `method`) for `ms`. */
  async pushesFor(ms: number): Promise<Record<string, unknown>[]> {
    this.frames.length = 0;
    await new Promise((r) => setTimeout(r, ms));
    return this.frames.filter((f) => f.json && f.json.method === undefined).map((f) => f.json!);
  }

  async waitClosed(timeoutMs = 5000): Promise<{ code: number; reason: string; at: number }> {
    if (!this.closed) await Promise.race([once(this.ws, 'close'), new Promise((r) => setTimeout(r, timeoutMs))]);
    if (!this.closed) throw new Error('not closed in time');
    return this.closed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.ws.terminate();
    await once(this.ws, 'close');
  }
}

export type Opened =
  | { ok: true; client: Client }
  | { ok: false; status: number; body: Record<string, unknown>; text: string };

/** Opens the stream with the key named `keyName` (null: none), from `localAddress`. */
export async function connect(
  server: ReferenceServer,
  keyName: string | null = 'primary',
  opts: { localAddress?: string; header?: string; url?: string } = {},
): Promise<Opened> {
  const headers: Record<string, string> = {};
  if (keyName !== null) headers[opts.header ?? API_KEY_HEADER] = server.profile.keys[keyName]!.key;
  const ws = new WebSocket(opts.url ?? server.wsUrl, { headers, localAddress: opts.localAddress });
  return new Promise<Opened>((resolve, reject) => {
    ws.once('open', () => resolve({ ok: true, client: new Client(ws) }));
    ws.once('unexpected-response', (_req, res) => {
      void readReply(res).then((r) => resolve({ ok: false, ...r }));
    });
    ws.once('error', reject);
  });
}

/** Opens the stream and fails the test if it is refused. */
export async function open(
  server: ReferenceServer,
  keyName: string | null = 'primary',
  opts: { localAddress?: string } = {},
): Promise<Client> {
  const r = await connect(server, keyName, opts);
  if (!r.ok) throw new Error(`refused: ${r.status} ${r.text}`);
  return r.client;
}

/** Subscribes and returns the reply notice. */
export async function subscribe(c: Client, pairs: unknown, id = 's1'): Promise<Record<string, unknown>> {
  c.send({ id, method: 'subscribe', params: { pairs } });
  return c.notice();
}
