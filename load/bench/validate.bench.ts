/**
 * Push frames validated per second: the hottest path of a load run. Frames are already parsed
 * (the load tools parse once and validate the object); the decimal format is on.
 * Last line: `validate-push-frame: <N> frames/s`; the figure goes to docs/benchmarks.md.
 */
import { Bench } from 'tinybench';
import { validator } from '../../src/validator.ts';
import { table, writeBenchmarkSection } from './benchmarks-doc.ts';

const frames = Array.from({ length: 1024 }, (_, i) => ({
  code: `Crypto:ALL:C${i % 100}/USDT`,
  ask: `${97000 + i}.51`,
  bid: `${97000 + i}.49`,
  price: `${97000 + i}.50`,
  last_updated: 1_732_300_000_000 + i,
  sent_at: 1_732_300_000_002 + i,
}));
const validate = validator.compiled('push-frame');
const BATCH = frames.length;

const bench = new Bench({ time: 2000, warmup: true });
bench.add('validate-push-frame', () => {
  for (let i = 0; i < BATCH; i++) if (validate(frames[i]) !== true) throw new Error('valid frame rejected');
});
await bench.run();

const task = bench.tasks[0]!;
const result = task.result as unknown as { throughput?: { mean: number }; hz?: number; latency?: { mean: number } };
const opsPerSecond = result.throughput?.mean ?? result.hz ?? 0;
const framesPerSecond = Math.round(opsPerSecond * BATCH);
console.table(bench.table());
console.log(`validate-push-frame: ${framesPerSecond} frames/s`);
writeBenchmarkSection({
  id: 'validate',
  title: 'Push frames validated per second',
  method:
    'Push frames, already parsed, held to the push-frame schema with the decimal format on, on one ' +
    'core (tinybench, 2 s): the hottest path of a load run. Goal: 1,000,000 frames/s.',
  body: table(['benchmark', 'frames/s'], [['validate-push-frame', framesPerSecond.toLocaleString('en-US')]]),
});
