import { defineConfig } from 'vitest/config';

/**
 * Three tiers (CONTRIBUTING.md), one folder each, so a test's place says its tier: `test/unit` is
 * `npm test` (unit and loopback integration tests, no whole-suite sweep); `test/ci` adds the
 * sweeps of test:ci, the CLI against every hostile target, `conform serve`, `conform load`, the
 * Kubernetes Job as processes and whole runs from a URL and one key; `test/full` adds the tests that
 * drive outside tools (the packed package, a browser, Schemathesis, the CI recipes) and runs the ci
 * files again with the whole sweep (`CONFORM_TIER=full`). `test/helpers` holds what they share.
 */
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
        // A clone without the spec document beside it says once which tests skip for want of it.
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], globalSetup: ['test/helpers/spec-presence.ts'] },
      },
      { extends: true, test: { name: 'ci', include: ['test/ci/**/*.test.ts'], env: { CONFORM_TIER: 'ci' } } },
      {
        extends: true,
        test: {
          name: 'full',
          include: ['test/ci/**/*.test.ts', 'test/full/**/*.test.ts'],
          env: { CONFORM_TIER: 'full' },
        },
      },
    ],
  },
});
