/**
 * Every wait, window and timeout of a run, in one place (what each file holds):
 *
 * - `waits.ts`: the waits the checks use, from the profile's statement, what the run measured and
 *   the defaults; `RunTiming`, the run's timing, made by the runner and handed to the connection
 *   budget and to every check's context;
 * - `keep-alive.ts`: the keep-alive window, its grace, the ping check's hold and the keep-alive
 *   checks' margins;
 * - `stream-windows.ts`: how long a stream check watches pushes (the watch and in-flight windows),
 *   from the push times a session showed;
 * - `check-limits.ts`: the checks' time limits; `check-pauses.ts`: the pauses and polls inside checks;
 * - `connection-steps.ts`: the connection budget's retry and release steps;
 * - `request-pacing.ts`: the pacing of REST requests within a rate limit and the bound on waiting for it;
 * - `setup.ts`: the preflight's and discovery's waits; `transport.ts`: the transports' own defaults;
 * - `explore.ts`: the explorer's budget, idles, settling and shrinking time.
 *
 * The spec's one time, the 30 s keep-alive window, stays in src/spec.ts (`LIMITS.pingTimeoutMs`);
 * keep-alive.ts derives from it. test/unit/timing-literals.test.ts lists any duration written elsewhere.
 */
export * from './waits.ts';
export * from './keep-alive.ts';
export * from './stream-windows.ts';
export * from './check-limits.ts';
export * from './check-pauses.ts';
export * from './connection-steps.ts';
export * from './request-pacing.ts';
export * from './setup.ts';
export * from './transport.ts';
export * from './explore.ts';
