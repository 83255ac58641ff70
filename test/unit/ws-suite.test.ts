/**
 * The WebSocket suite through the real runner against the reference service on loopback: every
 * check passes against the clean service, and every fault of reference/faults/ that names a
 * ws check makes that check fail. A short ping window keeps the keep-alive checks to seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../reference/index.ts';
import { runChecks } from '../../src/runner.ts';
import type { CheckResult } from '../../src/check.ts';
import {
  describeResult,
  expectNoKey,
  runSuite,
  startSuiteServer,
  withGrace,
  scriptedWsChecks,
} from '../helpers/stream-suite.ts';

describe('ws suite against the clean reference service', () => {
  let server: ReferenceServer;
  let results: Map<string, CheckResult>;
  beforeAll(async () => {
    server = await startSuiteServer('ws');
    results = await runSuite(
      server,
      scriptedWsChecks.map((c) => c.id),
    );
  });
  afterAll(() => server?.close());

  it.each(scriptedWsChecks.map((c) => [c.id, c.severity] as const))('%s (%s) passes', (id) => {
    const r = results.get(id);
    expect(r?.outcome, describeResult(r)).toBe('pass');
    expect(r?.violations).toEqual([]);
  });

  it('records the observations the spec leaves open', () => {
    const observed = (id: string): string[] => results.get(id)!.observations.map((o) => o.name);
    expect(observed('ws.subscribe.observe-failed-keeps-previous')).toContain('previous-subscription');
    expect(observed('ws.unsubscribe.observe-not-subscribed')).toEqual(['known-pair-never-subscribed', 'unknown-pair']);
    expect(observed('ws.push.observe-timestamps')).toEqual([
      'last-updated-monotonic',
      'sent-at-not-before-last-updated',
      'timestamp-unit',
    ]);
    expect(observed('ws.keepalive.observe-other-traffic')).toEqual(['other-traffic-keeps-alive']);
    expect(observed('ws.push.observe-interval').length).toBeGreaterThan(0);
  });

  it('never puts a key of the profile into a result', () => expectNoKey(server, results));
});

/**
 * Checks of rules a broken service could slip past a looser check, each with the fault that breaks its rule and
 * what its violation must say (their clean passes are in the first describe, by id).
 */
const BLIND_SPOTS: readonly (readonly [string, string, RegExp])[] = [
  [
    'ws.subscribe.unknown-among-known',
    'subscribe-unknown-among-known-dropped',
    /the reply: method "subscribe" .*"code":"200"/,
  ],
  [
    'ws.subscribe.pushes-every-pair',
    'push-first-pair-only',
    /^no push for \S+ within \d+ ms of subscribing to .*, while its REST price moved$/m,
  ],
  [
    'ws.unsubscribe.stops-several',
    'unsubscribe-first-pair-only',
    /^\d+ push\(es\) for \S+ more than \d+ ms after the notice of an unsubscribe listing /m,
  ],
  [
    'ws.notice.error-shape',
    'notice-denied-shape',
    /keys\.whitelisted subscribing .*: id absent[\s\S]*keys\.cryptoOnly subscribing .*: data \{"reason"/,
  ],
  [
    'ws.handshake.header-case',
    'handshake-header-case-sensitive',
    /^key in "X-API-KEY": handshake refused: HTTP 401[\s\S]*^key in "x-api-key": handshake refused/m,
  ],
  [
    'ws.subscribe.asset-types',
    'entitlement-asset-type-partial',
    /^subscribe to Metal:\S+ with keys\.cryptoOnly answered .*"code":"200"/m,
  ],
  [
    'ws.subscribe.pushes-start',
    'push-after-ping',
    /^no push for .* ms of the success notice, with no request sent since, while the REST price of .* moved$/m,
  ],
  [
    'ws.subscribe.listed-pairs',
    'stream-refuses-equity',
    /^a subscribe to Equity:\S+, listed in \/v1\/pairs, answered .*"code":"50104".*, while .*prices it as active/m,
  ],
  [
    'ws.subscribe.replaces',
    'subscribe-replace-drops-kept',
    /^no push for \S+ after the subscribe to \[\S+, \S+\], while its REST price moved$/m,
  ],
  [
    'ws.unsubscribe.stops',
    'unsubscribe-stops-all',
    /^no push for \S+ after the unsubscribe from \S+ alone, while the REST price of \S+ moved$/m,
  ],
  ['ws.ping.pong.subscribed', 'pong-stops-when-subscribed', /^no frame within \d+ ms$/m],
  [
    'ws.limits.connections.limited',
    'limit-refusal-holds-slot',
    // The refusal's slot never comes back: the run's one verdict on it (the connection budget's), or the
    // check's own words when it meets it first.
    new RegExp(
      '^(after the refusal of connection 2 and the close of ours, connection 1 of 1 refused: handshake refused: ' +
        'HTTP 429|keys\\.limited: a connection within its allowance .* refused)',
      'm',
    ),
  ],
];

describe('ws checks of rules a broken service could slip past a looser check', () => {
  it.concurrent.for(BLIND_SPOTS)(
    '%s fails against fault %s, saying what broke',
    async ([id, fault, message], { expect: local }) => {
      const server = await startSuiteServer('ws', fault);
      try {
        const r = (await runSuite(server, [id])).get(id);
        local({ id: r?.id, outcome: r?.outcome }, describeResult(r)).toEqual({ id, outcome: 'fail' });
        local(r!.violations.map((v) => v.received).join('\n')).toMatch(message);
      } finally {
        await server.close();
      }
    },
  );
});

describe('ws checks sharing a key allowance', () => {
  it("measures keys.primary's allowance while a slow check holds one of its connections", async () => {
    const server = await startSuiteServer('ws');
    try {
      const ids = ['ws.keepalive.ping-keeps-alive', 'ws.limits.connections.primary'];
      const checks = ids.map((id) => scriptedWsChecks.find((c) => c.id === id)!);
      // Both start at once: the slow check takes its slot first, the limit check counts it.
      const { results } = await runChecks({
        profile: withGrace(server.profile),
        checks,
        settings: { concurrency: 2, timeoutMs: 20_000 },
      });
      for (const r of results) expect(r.outcome, describeResult(r)).toBe('pass');
      const notes = results[1]!.evidence.filter((e) => e.kind === 'note').map((e) => (e as { text: string }).text);
      expect(notes).toContain(
        `1 connection(s) of this key held by other checks count toward its allowance ` +
          `of ${server.profile.keys.primary.connections}`,
      );
    } finally {
      await server.close();
    }
  });
});
