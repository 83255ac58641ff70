// load/clock.ts's monotonic clock (process.hrtime, performance) is Node-only; the k6 bundles
// import only its pure estimates, and esbuild leaves the rest out (a test checks no bundle
// mentions `process`). These declarations let `tsc -p load/k6` type-check that file without
// Node's types.
declare const process: { hrtime: { bigint(): bigint } };
declare const performance: { now(): number };
