/**
 * Which stream transport a profile asks for: raw WebSocket (default) or Socket.IO with a named
 * event. The checks never know which one they talk to.
 */
import type { Evidence } from '../check.ts';
import { UsageError } from '../errors.ts';
import type { Profile } from '../profile.ts';
import type { Push, StreamClient } from './stream.ts';
import { createStreamClient } from './ws-session.ts';
import { createSocketIoClient } from './socketio-session.ts';

/** What the engine hands a stream factory for one check. */
export interface StreamFactoryOptions {
  url: string;
  primaryKey: string;
  record: (e: Evidence) => void;
  redact?: (s: string) => string;
  signal?: AbortSignal;
  /** Largest message accepted, bytes. */
  maxPayload?: number;
  /** Told of every push frame any session receives. */
  onPush?: (push: Push) => void;
}

/**
 * The stream client factory for `profile.transport`; Socket.IO needs `profile.event` and takes
 * `profile.namespace` (default `/`).
 */
export function streamFactoryFor(
  profile: Pick<Profile, 'transport' | 'event' | 'namespace'>,
): (options: StreamFactoryOptions) => StreamClient {
  if (profile.transport !== 'socketio') return createStreamClient;
  const event = profile.event;
  if (!event)
    throw new UsageError(
      'transport socketio needs the event name that carries the messages (profile field event, or --event NAME)',
    );
  const namespace = profile.namespace;
  return (options) => createSocketIoClient({ ...options, event, ...(namespace ? { namespace } : {}) });
}
