/**
 * The baseline of the load benchmark: a minimal `ws` client loop (connect, subscribe, count
 * frames, ping), nothing measured per frame. `conform load fanout` is compared with it at the
 * same N, on the same threads, in the same run.
 */
import { parentPort, workerData } from 'node:worker_threads';
import WebSocket from 'ws';

const cfg = workerData as {
  wsUrl: string;
  keyHeader: string;
  keys: string[];
  pairs: string[];
  rampRate: number;
  workers: number;
  offset: number;
};
let frames = 0;
let subscribed = 0;
const sockets: WebSocket[] = [];
const subscribe = JSON.stringify({ method: 'subscribe', params: { pairs: cfg.pairs } });

cfg.keys.forEach((key, i) => {
  // Same open-model ramp as fanout: global client index / rate.
  setTimeout(
    () => {
      const ws = new WebSocket(cfg.wsUrl, { headers: { [cfg.keyHeader]: key }, perMessageDeflate: false });
      ws.on('open', () => ws.send(subscribe));
      let first = true;
      ws.on('message', () => {
        if (first) {
          first = false;
          subscribed++;
          return;
        }
        frames++;
      });
      ws.on('error', () => {});
      sockets.push(ws);
    },
    ((i * cfg.workers + cfg.offset) * 1000) / cfg.rampRate,
  );
});
const ping = setInterval(() => {
  for (const ws of sockets) if (ws.readyState === WebSocket.OPEN) ws.send('{"method":"ping"}');
}, 15_000);

parentPort!.on('message', (msg: string) => {
  if (msg === 'count') parentPort!.postMessage({ frames, subscribed });
  if (msg === 'close') {
    clearInterval(ping);
    for (const ws of sockets) ws.terminate();
    parentPort!.postMessage({ frames, subscribed, closed: true });
  }
});
parentPort!.postMessage({ ready: true });
