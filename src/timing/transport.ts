/**
 * The transports' own waits (src/transports/): how long a request, a handshake, a frame and a close
 * are waited for when the caller names no other time, and the window the flood guard counts in.
 */

/** A REST request's timeout unless the caller sets one. */
export const REST_TIMEOUT_MS = 10_000;
/**
 * A kept-alive REST socket is dropped after this long idle, shorter than a server's usual
 * keep-alive window, so a request seldom meets a socket the server is closing.
 */
export const REST_IDLE_SOCKET_MS = 1000;
/** A stream handshake's timeout unless the caller sets one. */
export const HANDSHAKE_TIMEOUT_MS = 5000;
/** How long a stream session waits for a frame unless the caller sets another time. */
export const FRAME_WAIT_MS = 5000;
/** A peer that does not answer our close within this long is dropped. */
export const CLOSE_WAIT_MS = 1000;
/** The window the flood guard counts a peer's frames in: `maxFramesPerSecond` is per this much. */
export const FLOOD_WINDOW_MS = 1000;
/**
 * Pauses before sending again a request or a handshake whose connection was refused or reset
 * before any answer (a flaky network, a proxy restarting), ms: one attempt and as many retries as
 * pauses, as an ordinary client would; what still fails is a network error, not the target's.
 */
export const NETWORK_RETRY_STEPS_MS = [100, 400, 1000] as const;
