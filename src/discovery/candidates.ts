/**
 * Where a stream may be: the paths and Socket.IO names real services use, tried on the REST URL's
 * own origin only (pure).
 */
import type { StreamCandidate } from './model.ts';

/** Stream paths real services use, tried under the REST URL's own prefix first, then at the root. */
export const STREAM_PATHS = [
  '/v1/ws',
  '/v1/stream',
  '/v1/websocket',
  '/v1/stream/prices',
  '/ws',
  '/stream',
  '/websocket',
];
/** Socket.IO's default engine path. */
export const SOCKETIO_PATH = '/socket.io/';
/** Socket.IO namespaces and events services commonly use; the spec shows neither. */
export const SOCKETIO_NAMESPACES = ['/', '/v1', '/prices', '/stream'];
export const SOCKETIO_EVENTS = ['message', 'price', 'prices', 'data'];

/** The prefix of a REST base URL's path (`/api` of `https://h/api/`), '' at the root. */
export function restPrefix(rest: string): string {
  return new URL(rest).pathname.replace(/\/+$/, '');
}

/**
 * The candidates in the order they are tried: raw WebSocket at each path under the REST prefix,
 * then at the root, then Socket.IO likewise; all on the REST URL's origin.
 */
export function streamCandidates(rest: string): StreamCandidate[] {
  const u = new URL(rest);
  const origin = `${u.protocol === 'https:' ? 'wss:' : 'ws:'}//${u.host}`;
  const prefix = restPrefix(rest);
  const under = (paths: readonly string[]): string[] => [
    ...new Set([...(prefix ? paths.map((p) => `${prefix}${p}`) : []), ...paths]),
  ];
  return [
    ...under(STREAM_PATHS).map((p) => ({ url: `${origin}${p}`, transport: 'ws' as const })),
    ...under([SOCKETIO_PATH]).map((p) => ({ url: `${origin}${p}`, transport: 'socketio' as const })),
  ];
}

/** Whether `url` has the REST URL's scheme family, host and port. */
export function sameOrigin(rest: string, url: string): boolean {
  const a = new URL(rest);
  const b = new URL(url);
  const scheme = (p: string): string => p.replace(/^ws/, 'http');
  return scheme(a.protocol) === scheme(b.protocol) && a.host === b.host;
}
