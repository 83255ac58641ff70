/**
 * Stated rules a broken service could slip past without their checks: requests without id, malformed messages of
 * every shape, keys counted apart, the whole notice of a key refused after connecting, and a check
 * that saw no push. Each check fails against the fault that breaks its rule, saying what broke, and
 * passes against the clean service; a check with nothing to judge skips.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../reference/index.ts';
import type { CheckResult } from '../../src/check.ts';
import { runChecks } from '../../src/runner.ts';
import { wsChecks } from '../../suites/ws/index.ts';
import { describeResult, runSuite, startSuiteServer, withGrace } from '../helpers/stream-suite.ts';

/** Check, the fault that breaks its rule, and what its violation must say. */
const CASES: readonly (readonly [string, string, RegExp])[] = [
  ['ws.subscribe.without-id', 'request-without-id-refused', /^the reply to a subscribe without id: method "error"/m],
  [
    'ws.unsubscribe.without-id',
    'request-without-id-refused',
    /^the reply to an unsubscribe without id: method "error"/m,
  ],
  ['ws.handshake.missing-key', 'auth-notice-status-number', /^no key: the notice's status_number "50005"/m],
  ['ws.handshake.invalid-key', 'auth-notice-status-number', /^an invalid key: the notice's status_number "50005"/m],
  [
    'ws.limits.keys-apart',
    'limit-pooled-across-keys',
    /^with keys\.limited at its allowance of 1, connection \d+ of \d+ of keys\.secondary handshake refused: .*50009/m,
  ],
  [
    'ws.limits.keys-apart',
    'limit-pooled-with-primary',
    new RegExp(
      '^with keys\\.limited at its allowance of 1, keys\\.secondary and .* at theirs, ' +
        'connection \\d+ of 8 of keys\\.primary handshake refused: .*50009',
      'm',
    ),
  ],
  ['ws.unsubscribe.invalid.missing-params', 'unsubscribe-invalid-pairs-accepted', /^the reply: method "unsubscribe"/m],
  ['ws.unsubscribe.invalid.pairs-not-array', 'unsubscribe-invalid-pairs-accepted', /^the reply: method "unsubscribe"/m],
  [
    'ws.unsubscribe.invalid.pairs-not-strings',
    'unsubscribe-invalid-pairs-accepted',
    /^the reply: method "unsubscribe"/m,
  ],
  [
    'ws.subscribe.invalid.params-without-pairs',
    'subscribe-params-without-pairs-accepted',
    /^the reply: method "subscribe"/m,
  ],
  ['ws.request.not-object.array', 'notice-not-object-ignored', /^no frame within \d+ ms answering \["conform/m],
  ['ws.request.not-object.string', 'notice-not-object-ignored', /^no frame within \d+ ms answering "conform/m],
  ['ws.request.missing-method', 'notice-missing-method-ignored', /^no frame within \d+ ms answering \{"id"/m],
];

describe('checks of stated rules, against the clean reference service', () => {
  let server: ReferenceServer;
  let results: Map<string, CheckResult>;
  beforeAll(async () => {
    server = await startSuiteServer('ws');
    results = await runSuite(server, [...new Set(CASES.map(([id]) => id))]);
  });
  afterAll(() => server?.close());

  it.each([...new Set(CASES.map(([id]) => id))].map((id) => [id]))('%s passes', (id) => {
    const r = results.get(id);
    expect(r?.outcome, describeResult(r)).toBe('pass');
  });

  it('ws.limits.keys-apart fills keys.limited and then keys.secondary to their allowances', () => {
    const notes = results
      .get('ws.limits.keys-apart')!
      .evidence.filter((e) => e.kind === 'note')
      .map((e) => (e as { text: string }).text);
    expect(notes[0]).toMatch(/^keys\.limited at its allowance of 1 /);
    expect(notes[1]).toMatch(/^keys\.secondary: \d+ connection\(s\) accepted/);
  });
});

describe('checks of stated rules a broken service could otherwise slip past', () => {
  it.concurrent.for(CASES)(
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

describe('a check that needs what the profile does not give', () => {
  it('ws.limits.keys-apart skips, saying why, when the profile knows one key only', async () => {
    const server = await startSuiteServer('ws');
    try {
      const id = 'ws.limits.keys-apart';
      const { primary, limited } = server.profile.keys;
      const profile = withGrace({ ...server.profile, keys: { primary, limited } });
      const alone = withGrace({ ...server.profile, keys: { primary } });
      const check = wsChecks.filter((c) => c.id === id);
      const settings = { concurrency: 1, timeoutMs: 20_000 };
      const [two] = (await runChecks({ profile, checks: check, settings })).results;
      const [one] = (await runChecks({ profile: alone, checks: check, settings })).results;
      expect(two?.outcome, describeResult(two)).toBe('pass');
      expect(one?.outcome, describeResult(one)).toBe('skip');
      expect(one?.reason).toMatch(/^no key with stream access given besides keys\.primary/);
    } finally {
      await server.close();
    }
  });
});

describe('a check that saw nothing to judge', () => {
  it('ws.frames.no-status-number skips when no push arrived, saying so', async () => {
    const server = await startSuiteServer('ws', 'push-never-starts');
    try {
      const r = (await runSuite(server, ['ws.frames.no-status-number'])).get('ws.frames.no-status-number');
      expect(r?.outcome, describeResult(r)).toBe('skip');
      expect(r?.reason).toMatch(/no push arrived/);
    } finally {
      await server.close();
    }
  });
});
