// Worker threads do not inherit tsx's loader from `--import tsx` or tsx's register(); this plain
// JS entry registers it inside the worker, then loads the TypeScript module named in workerData.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
