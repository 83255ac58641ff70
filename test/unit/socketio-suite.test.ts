/**
 * The stream suite over Socket.IO through the real runner against the reference service serving
 * Socket.IO (event `price`): every check passes against the clean service, and every fault that
 * names a ws check makes that check fail, as it does over raw WebSocket. The checks are the same
 * objects as test/unit/ws-suite.test.ts runs; only the profile's transport differs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../reference/index.ts';
import type { CheckResult } from '../../src/check.ts';
import {
  describeResult,
  EVENT,
  expectNoKey,
  runSuite,
  startSuiteServer,
  scriptedWsChecks,
} from '../helpers/stream-suite.ts';

describe('stream suite over Socket.IO against the clean reference service', () => {
  let server: ReferenceServer;
  let results: Map<string, CheckResult>;
  beforeAll(async () => {
    server = await startSuiteServer('socketio');
    expect(server.profile).toMatchObject({ transport: 'socketio', event: EVENT, ws: server.socketIoUrl });
    results = await runSuite(
      server,
      scriptedWsChecks.map((c) => c.id),
    );
  });
  afterAll(() => server?.close());

  it.each(scriptedWsChecks.map((c) => [c.id, c.severity] as const))('%s (%s) passes over Socket.IO', (id) => {
    const r = results.get(id);
    expect(r?.outcome, describeResult(r)).toBe('pass');
    expect(r?.violations).toEqual([]);
  });

  it('saw the handshake refusals in the HTTP phase, as JSON bodies', () => {
    const evidence = JSON.stringify(results.get('ws.handshake.error-body')!.evidence);
    expect(evidence).toContain('refused: HTTP 401 {\\"status_number\\":\\"50005\\"');
  });

  it('never puts a key of the profile into a result', () => expectNoKey(server, results));
});
