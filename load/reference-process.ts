/**
 * Runs the reference service in its own process for the load tools, so server and generator do
 * not share an event loop. Prints one JSON line `{ restUrl, wsUrl, profile }` on stdout when it
 * listens; answers each line `stats` on stdin with one line `{ stats }` (its stream counters, the
 * longest tick since the last such line among them); closes when stdin ends or on SIGTERM.
 * Argument: JSON ReferenceProcessOptions.
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_CONFIG, startReferenceServer } from '../reference/index.ts';
import type { ReferenceProcessOptions } from './target.ts';

const options = JSON.parse(process.argv[2] ?? '{}') as ReferenceProcessOptions;
// A load run needs more connections than the conformance keys allow: one key with a large
// allowance and no REST throttle, made up per run.
const loadKey = {
  key: `ref-load-${randomBytes(6).toString('hex')}`,
  connections: options.connections ?? 20_000,
  rateLimit: { requests: 1_000_000_000, windowMs: 1000 },
};
const server = await startReferenceServer({
  host: '127.0.0.1',
  port: 0,
  config: {
    keys: { ...DEFAULT_CONFIG.keys, load: loadKey },
    ...(options.moveProbability !== undefined ? { moveProbability: options.moveProbability } : {}),
    ...(options.restServiceRate !== undefined ? { restServiceRate: options.restServiceRate } : {}),
  },
  ...(options.tickMs !== undefined ? { tickMs: options.tickMs } : {}),
});
process.stdout.write(`${JSON.stringify({ restUrl: server.restUrl, wsUrl: server.wsUrl, profile: server.profile })}\n`);

let closing = false;
const stop = async (): Promise<void> => {
  if (closing) return;
  closing = true;
  await server.close();
  process.exit(0);
};
process.stdin.on('end', () => void stop());
let asked = '';
process.stdin.on('data', (chunk: Buffer) => {
  asked += chunk.toString();
  for (let nl = asked.indexOf('\n'); nl >= 0; nl = asked.indexOf('\n')) {
    const line = asked.slice(0, nl).trim();
    asked = asked.slice(nl + 1);
    if (line !== 'stats') continue;
    process.stdout.write(`${JSON.stringify({ stats: server.stats })}\n`);
    // The longest tick is told once: the next answer covers the time since this one.
    server.stats.tickMsMax = 0;
  }
});
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
