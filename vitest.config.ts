import { defineConfig } from 'vitest/config';

/**
 * Three tiers (CONTRIBUTING.md): `unit` is `npm test` (unit and loopback integration tests, no
 * whole-catalogue sweep); `ci` adds the sweeps of test:ci, the CLI against every hostile target,
 * `conform serve`, `conform load` and the Kubernetes Job as processes; `full` the whole sweep and
 * the tests that drive outside tools (the packed package, a browser, Schemathesis, the CI recipes).
 */
const SWEEPS = [
  'test/sweeps/**/*.test.ts',
  'test/hostile-run.test.ts',
  'test/hostile-ws.test.ts',
  'test/hostile-secrets.test.ts',
  'test/load-fanout-job.test.ts',
  // The command line as processes, end to end: `conform serve` and its signals, `conform load`.
  'test/reference-serve.test.ts',
  'test/load-cli.test.ts',
  // Whole runs from a URL and one key (discovery against drawn dialects), and whole catalogues
  // against the dialects of values: each run is seconds of waiting on the stream.
  'test/discovery.test.ts',
  'test/discovery-run.test.ts',
  'test/independent-service.test.ts',
  'test/values-dialects.test.ts',
];
const OUTSIDE_TOOLS = [
  'test/package.test.ts',
  'test/browser-reports.test.ts',
  'test/schemathesis.test.ts',
  'test/ci-recipes.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real servers and mostly wait on them (npm test kept two cores half
    // busy with two workers): three workers fill the waits without queueing the timers behind CPU work.
    maxWorkers: 3,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...SWEEPS, ...OUTSIDE_TOOLS] },
      },
      { extends: true, test: { name: 'ci', include: SWEEPS, env: { CONFORM_TIER: 'ci' } } },
      {
        extends: true,
        test: { name: 'full', include: [...SWEEPS, ...OUTSIDE_TOOLS], env: { CONFORM_TIER: 'full' } },
      },
    ],
  },
});
