// Worker threads do not inherit tsx's loader from `--import tsx` or tsx's register(); this plain
// JS entry registers it inside the worker when the entry named in workerData is TypeScript (the
// sources), then loads it. The compiled package's entries are JavaScript and need no loader.
import { workerData } from 'node:worker_threads';

if (workerData.entry.endsWith('.ts')) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.entry);
