/**
 * The fan-out schedule every machine shares, in ms from the common start: client g opens at
 * g / rate, the measured window opens once the whole ramp is done plus a settling second and the
 * warm-up, and every client closes a grace period after the window ends (so the window's last
 * frames arrive). Pure and import-free: `conform load fanout --start-at` and the k6 script
 * (k6 is not Node) share it, so every host, of either kind, measures the same window.
 */

/** Time for the last client's handshake and subscribe after its scheduled open. */
export const SETTLE_MS = 1000;
/** Time after the window for frames sent inside it to arrive before the clients close. */
export const CLOSE_GRACE_MS = 1000;

export interface FanoutSchedule {
  openAtMs(client: number): number;
  windowStartMs: number;
  windowEndMs: number;
  closeAtMs: number;
  /** A bound on the whole scenario, start wait excluded (k6 maxDuration). */
  maxDurationMs: number;
}

export function fanoutSchedule(o: {
  clients: number;
  rampRate: number;
  warmupMs: number;
  durationS: number;
  startAtMs: number | null;
}): FanoutSchedule {
  const rampMs = ((o.clients - 1) * 1000) / o.rampRate;
  const windowStartMs = Math.ceil(rampMs + SETTLE_MS + o.warmupMs);
  const windowEndMs = windowStartMs + Math.round(o.durationS * 1000);
  const closeAtMs = windowEndMs + CLOSE_GRACE_MS;
  // A START_AT in the future adds its wait to the scenario's run time.
  const wait = o.startAtMs === null ? 0 : Math.max(0, o.startAtMs - Date.now());
  return {
    openAtMs: (g) => (g * 1000) / o.rampRate,
    windowStartMs,
    windowEndMs,
    closeAtMs,
    maxDurationMs: wait + closeAtMs + 30_000,
  };
}
