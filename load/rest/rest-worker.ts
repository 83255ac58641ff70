/**
 * A worker thread of a REST run spread over several (rest-workers.ts): it runs its share of the
 * model, passes each second of its timeline on as it is made, and sends its figures at the end with
 * the histograms encoded. Plain messages both ways.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { encode, type Histogram } from '../histogram.ts';
import { runClosedModel } from './closed-model.ts';
import { runOpenModel, type OpenModelPlan } from './open-model.ts';
import type { RestPlan } from './plan.ts';
import type { RestWorkerData, RestWorkerMessage, RestWorkerResult } from './rest-workers.ts';

const data = workerData as RestWorkerData;
const port = parentPort!;
const post = (m: RestWorkerMessage): void => port.postMessage(m);

let ticks = 0;
port.once('message', async (start: { startEpochMs: number }) => {
  try {
    const plan: RestPlan = {
      ...data.plan,
      // The run's start on this thread's clock: every worker starts at the same instant.
      startAt: start.startEpochMs - performance.timeOrigin,
      share: { index: data.index, of: data.of },
      onTick: (point, second) => post({ type: 'tick', n: ticks++, point, second: second ? encode(second) : null }),
    };
    const m: { latency: Histogram; sendLag?: Histogram; ownSendLag?: Histogram } & Omit<
      RestWorkerResult,
      'latency' | 'sendLag' | 'ownSendLag'
    > = data.open ? await runOpenModel({ ...plan, ...data.open } as OpenModelPlan) : await runClosedModel(plan);
    const result: RestWorkerResult = {
      ...m,
      latency: encode(m.latency),
      sendLag: m.sendLag ? encode(m.sendLag) : null,
      ownSendLag: m.ownSendLag ? encode(m.ownSendLag) : null,
    };
    m.latency.destroy();
    m.sendLag?.destroy();
    m.ownSendLag?.destroy();
    post({ type: 'done', result });
  } catch (err) {
    post({ type: 'failed', message: (err as Error).message });
  }
});
post({ type: 'ready' });
