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
import { caOf, type TrustedCa } from './tls-trust.ts';

/** What the engine hands a stream factory for one check. */
export interface StreamFactoryOptions {
  url: string;
  /** CA certificates the stream's certificate is verified against beside Node's own. */
  ca?: TrustedCa;
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
  profile: Pick<Profile, 'transport' | 'event' | 'namespace' | 'tls'>,
): (options: StreamFactoryOptions) => StreamClient {
  // The profile's CA goes with every client the factory makes, unless the caller names its own.
  const ca = caOf(profile);
  if (profile.transport !== 'socketio')
    return ca ? (options) => createStreamClient({ ca, ...options }) : createStreamClient;
  const event = profile.event;
  if (!event)
    throw new UsageError(
      'transport socketio needs the event name that carries the messages (profile field event, or --event NAME)',
    );
  const namespace = profile.namespace;
  return (options) => createSocketIoClient({ ca, ...options, event, ...(namespace ? { namespace } : {}) });
}
