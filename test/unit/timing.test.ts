/**
 * The run's waits (src/timing/): what the profile states shortens or lengthens them by the
 * harness's margin, what the run measured only lengthens them, and a target that states nothing
 * is waited for as long as the defaults say.
 */
import { describe, expect, it } from 'vitest';
import {
  KEEPALIVE_DEFAULTS,
  RunTiming,
  WAIT_DEFAULTS,
  inFlightMs,
  keepAliveTiming,
  margin,
  waitStretch,
  waitsFor,
  watchMs,
} from '../../src/timing/index.ts';

describe('the waits of a run', () => {
  it('are the defaults for a profile that states nothing', () => {
    expect(waitsFor({})).toEqual(WAIT_DEFAULTS);
    expect(waitsFor({ timing: { pingTimeoutMs: 2000, pingGraceMs: 500 } })).toEqual(WAIT_DEFAULTS);
    expect(waitStretch(waitsFor({}))).toBe(1);
  });

  it('come from a stated push interval, reply time and release time, with twice the figure plus a second', () => {
    const w = waitsFor({ timing: { pushIntervalMs: 100, noticeMs: 500, slotReleaseMs: 0 } });
    expect(w).toMatchObject({ pushMs: 1200, cadenceMs: 1400, firstPushMs: 1200, noticeMs: 2000, releaseMs: 1000 });
    expect(w.inFlightMs).toBe(WAIT_DEFAULTS.inFlightMs);
    expect(margin(250)).toBe(1500);
  });

  it('keep the stop wait as a floor however fast the stated cadence', () => {
    // A push every 10 ms: two pushes are waited for 1040 ms, a stop still 1.5 s.
    const fast = waitsFor({ timing: { pushIntervalMs: 10 } });
    expect(fast.cadenceMs).toBe(1040);
    expect(inFlightMs(fast, new Map([['A', [0, 10, 20]]]), 'A')).toBe(1500);
    expect(inFlightMs(fast, new Map([['A', [0, 10]]]), 'A')).toBe(1500);
  });

  it('let a stop take 1.5 s unless the profile states how soon pushes stop, which may tighten it', () => {
    expect(WAIT_DEFAULTS.stopMs).toBe(1500);
    expect(waitsFor({ timing: { stopMs: 100 } }).stopMs).toBe(1200);
    expect(waitsFor({ timing: { stopMs: 2000 } }).stopMs).toBe(5000);
  });

  it('take a stated first-push time over the interval, and grow past the defaults for a slow target', () => {
    expect(waitsFor({ timing: { pushIntervalMs: 100, firstPushMs: 4000 } }).firstPushMs).toBe(9000);
    const slow = waitsFor({ timing: { pushIntervalMs: 11_000 } });
    expect(slow).toMatchObject({ pushMs: 23_000, cadenceMs: 45_000 });
    // The per-check timeout stretches with the most stretched wait: 23 s for a push against 5 s unstated.
    expect(waitStretch(slow)).toBe(4.6);
  });

  it('lengthen with a release the run measured, never shorten', () => {
    const timing = new RunTiming({ timing: { slotReleaseMs: 0 } });
    timing.observeSlotRelease(3000);
    expect(timing.waits.releaseMs).toBe(7000);
    timing.observeSlotRelease(100);
    expect(timing.waits.releaseMs).toBe(7000);
    const fast = new RunTiming({});
    fast.observeSlotRelease(0);
    expect(fast.waits.releaseMs).toBe(WAIT_DEFAULTS.releaseMs);
  });

  it('wait out an unstated slot release for 30 s, or the bound the operator sets, and never past that bound', () => {
    expect(WAIT_DEFAULTS.releaseMs).toBe(30_000);
    expect(waitsFor({ timing: { slotReleaseWaitMs: 60_000 } }).releaseMs).toBe(60_000);
    // A stated release time is the operator's own figure: it wins over the bound.
    expect(waitsFor({ timing: { slotReleaseWaitMs: 60_000, slotReleaseMs: 500 } }).releaseMs).toBe(2000);
    const bounded = new RunTiming({ timing: { slotReleaseWaitMs: 8000 } });
    bounded.observeSlotRelease(12_000);
    expect(bounded.waits.releaseMs).toBe(8000);
    // The time limit pauses while a slot is waited for: a long release wait stretches no check.
    expect(waitStretch(waitsFor({ timing: { slotReleaseWaitMs: 120_000 } }))).toBe(1);
  });
});

describe('the stream windows', () => {
  const w = WAIT_DEFAULTS;

  it('wait for two pushes after a stop when the pair was pushed fewer than three times', () => {
    expect(inFlightMs(w, new Map([['A', [0, 10]]]), 'A')).toBe(w.cadenceMs);
    expect(inFlightMs(w, new Map(), 'A')).toBe(w.cadenceMs);
  });

  it('are four of the largest push gaps on the session, at least the stop wait, at most two pushes', () => {
    // A pair pushed every 100 ms may still come for 1.5 s: a fan-out may drop it a second late.
    expect(inFlightMs(w, new Map([['A', [0, 100, 200]]]), 'A')).toBe(1500);
    expect(inFlightMs(w, new Map([['A', [0, 400, 800]]]), 'A')).toBe(1600);
    expect(
      inFlightMs(
        w,
        new Map([
          ['A', [0, 100, 200]],
          ['B', [0, 500]],
        ]),
        'A',
      ),
    ).toBe(2000);
    expect(inFlightMs(w, new Map([['A', [0, 10, 20]]]), 'A')).toBe(w.stopMs);
    expect(inFlightMs(w, new Map([['A', [0, 5000, 10_000]]]), 'A')).toBe(w.cadenceMs);
  });

  it('wait for one push after pushes that all came at one instant', () => {
    expect(inFlightMs(w, new Map([['A', [7, 7, 7]]]), 'A')).toBe(w.pushMs);
  });

  it('watch a stopped pair for three of its largest gaps, at least the settle wait; a push wait without gaps', () => {
    expect(watchMs(w, new Map([['A', [0, 400, 600]]]), 'A')).toBe(1200);
    expect(watchMs(w, new Map([['A', [0, 100]]]), 'A')).toBe(w.settleMs);
    expect(watchMs(w, new Map(), 'A')).toBe(w.pushMs);
  });
});

describe('the keep-alive timing', () => {
  it('allows a close up to 1.5 windows after the last ping unless the profile states a grace', () => {
    // "Closed if no ping arrives within 30 seconds", no deadline after: an idle sweep every 10 to 15 s
    // closes between 30 and 45 s.
    expect(keepAliveTiming({})).toMatchObject({ windowMs: 30_000, graceMs: 15_000 });
    expect(keepAliveTiming({ timing: { pingTimeoutMs: 2000 } }).graceMs).toBe(1000);
    expect(keepAliveTiming({ timing: { pingGraceMs: 2000 } }).graceMs).toBe(2000);
    expect(KEEPALIVE_DEFAULTS.graceWindows).toBe(0.5);
  });

  const holdMs = (timing: Parameters<typeof keepAliveTiming>[0]['timing']): number => {
    const t = keepAliveTiming({ timing });
    return Math.round(t.windowMs * t.holdWindows);
  };

  it('holds a pinged connection a second past the window and its grace, unless the profile states the hold', () => {
    expect(holdMs(undefined)).toBe(30_000 + 15_000 + 1000);
    expect(holdMs({ pingGraceMs: 2000 })).toBe(30_000 + 2000 + 1000);
    expect(holdMs({ pingTimeoutMs: 2000, pingGraceMs: 500 })).toBe(3500);
    expect(holdMs({ keepAliveHoldWindows: 2.5 })).toBe(75_000);
  });
});
