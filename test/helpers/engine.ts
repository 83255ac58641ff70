/** Small real servers and synthetic checks for the engine's tests. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Check, CheckContext, Tag } from '../../src/check.ts';
import type { Profile } from '../../src/profile.ts';

export interface TestServer {
  url: string;
  requests: http.IncomingMessage[];
  close(): Promise<void>;
}

/** An http server on 127.0.0.1, port 0, answering with `handler`; records every request. */
export async function startServer(handler: http.RequestListener): Promise<TestServer> {
  const requests: http.IncomingMessage[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port that had a listener a moment ago and has none now. */
export async function deadPort(): Promise<string> {
  const s = await startServer((_q, r) => r.end());
  await s.close();
  return s.url;
}

export const SECRET = 'sekret-key-5c1e09aa77';
export const OTHER_SECRET = 'other-sekret-91be3f';

/** A profile for `url` whose keys are the test secrets. */
export const testProfile = (url: string): Profile => ({
  rest: url,
  keys: { primary: { key: SECRET }, suspended: { key: OTHER_SECRET } },
});

/** A synthetic check with the given body. */
export function synthetic(id: string, run: (ctx: CheckContext) => Promise<void>, extra: Partial<Check> = {}): Check {
  return {
    id,
    title: `synthetic ${id}`,
    expectation: 'whatever the test says',
    severity: 'must',
    tags: ['rest'] as Tag[],
    needs: [],
    clause: { section: 'REST envelope', rule: 'synthetic' },
    enforces: [],
    run,
    ...extra,
  };
}
