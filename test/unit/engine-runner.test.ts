import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { RUN_DEFAULTS, matches, runChecks, selectChecks, unknownSelectors, type RunEvent } from '../../src/runner.ts';
import { UnreachableError } from '../../src/errors.ts';
import { deadPort, SECRET, startServer, synthetic, testProfile, type TestServer } from '../helpers/engine.ts';

let server: TestServer;
beforeEach(async () => {
  server = await startServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ status_number: '200', ts: 1, data: [] }));
  });
});
afterEach(async () => {
  await server.close();
});

describe('runner verdicts', () => {
  it('makes a clean body pass, a violation fail, ctx.skip skip and a throw an error with a stable code', async () => {
    const checks = [
      synthetic('t.pass', async (ctx) => {
        await ctx.rest.get({ path: '/v1/pairs' });
      }),
      synthetic('t.fail', async (ctx) => {
        ctx.violation({ received: 'one', expected: 'two' });
        ctx.violation({ received: 'three', expected: 'four' });
      }),
      synthetic('t.skip', async (ctx) => ctx.skip('profile has nothing for this')),
      synthetic('t.crash', async () => {
        throw new TypeError('harness bug');
      }),
      synthetic('t.failfast', async (ctx) => {
        ctx.fail({ received: 'bad', expected: 'good' });
      }),
    ];
    const { results, summary } = await runChecks({ profile: testProfile(server.url), checks });
    expect(results.map((r) => [r.id, r.outcome])).toEqual([
      ['t.pass', 'pass'],
      ['t.fail', 'fail'],
      ['t.skip', 'skip'],
      ['t.crash', 'error'],
      ['t.failfast', 'fail'],
    ]);
    expect(results[1]!.violations).toHaveLength(2);
    expect(results[2]!.reason).toBe('profile has nothing for this');
    expect(results[3]!.errorCode).toBe('CONFORM_CHECK_CRASHED');
    expect(results[3]!.reason).toBe('harness bug');
    expect(results[0]!.evidence[0]).toMatchObject({ kind: 'http', response: { status: 200 } });
    expect(summary).toMatchObject({ total: 5, pass: 1, fail: 2, skip: 1, error: 1, verdict: 'fail' });
  });

  it('ends a check that outlives its timeout as error CONFORM_TIMEOUT and aborts its signal', async () => {
    let aborted = false;
    const checks = [
      synthetic('t.slow', async (ctx) => {
        await sleep(5000, undefined, { signal: ctx.signal }).catch(() => {
          aborted = true;
        });
      }),
      synthetic(
        't.own',
        async () => {
          await sleep(5000);
        },
        { timeoutMs: () => 50 },
      ),
    ];
    const { results } = await runChecks({ profile: testProfile(server.url), checks, settings: { timeoutMs: 100 } });
    expect(results.map((r) => [r.outcome, r.errorCode])).toEqual([
      ['error', 'CONFORM_TIMEOUT'],
      ['error', 'CONFORM_TIMEOUT'],
    ]);
    // Ended by its 50 ms timeout, not by its own 5 s sleep.
    expect(results[1]!.durationMs).toBeLessThan(5000);
    expect(aborted).toBe(true);
  });

  it('skips a check whose profile fields are missing, naming them', async () => {
    let ran = false;
    const { results } = await runChecks({
      profile: testProfile(server.url),
      checks: [
        synthetic(
          't.needs',
          async () => {
            ran = true;
          },
          { needs: ['keys.cryptoOnly', 'keys.suspended'] },
        ),
      ],
    });
    expect(results[0]).toMatchObject({ outcome: 'skip', reason: 'profile has no keys.cryptoOnly' });
    expect(ran).toBe(false);
  });

  it('never fails an observe check: its violations become observations', async () => {
    const { results } = await runChecks({
      profile: testProfile(server.url),
      checks: [
        synthetic(
          't.obs',
          async (ctx) => {
            ctx.violation({ received: 'odd', expected: 'even' });
            ctx.fail({ received: 'odder', expected: 'even' });
          },
          { severity: 'observe' },
        ),
      ],
    });
    expect(results[0]!.outcome).toBe('pass');
    expect(results[0]!.observations.map((o) => o.value)).toEqual(['odd', 'odder']);
  });

  it('keeps at most `concurrency` checks in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const body = async (): Promise<void> => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await sleep(20);
      inFlight--;
    };
    const checks = Array.from({ length: 10 }, (_, i) => synthetic(`t.c${i}`, body));
    const { results } = await runChecks({ profile: testProfile(server.url), checks, settings: { concurrency: 3 } });
    expect(results.every((r) => r.outcome === 'pass')).toBe(true);
    expect(peak).toBe(3);
  });

  it('with bail, stops launching after the first failure and reports the rest as skipped with the reason', async () => {
    const checks = [
      synthetic('t.a', async (ctx) => ctx.fail({ received: 'x', expected: 'y' })),
      synthetic('t.b', async () => {}),
      synthetic('t.c', async () => {}),
    ];
    const { results } = await runChecks({
      profile: testProfile(server.url),
      checks,
      settings: { concurrency: 1, bail: true },
    });
    expect(results.map((r) => r.outcome)).toEqual(['fail', 'skip', 'skip']);
    expect(results[1]!.reason).toBe('not run: --bail after t.a');
  });

  it('runs slow checks in lanes of their own, outside the bound, and still reports in registry order', async () => {
    const started: string[] = [];
    let release!: () => void;
    const fastDone = new Promise<void>((r) => {
      release = r;
    });
    const checks = [
      synthetic('t.fast1', async () => {
        started.push('t.fast1');
      }),
      // Waits until the last fast check has run: with one worker it would deadlock inside the bound.
      synthetic(
        't.slow',
        async () => {
          started.push('t.slow');
          await fastDone;
        },
        { tags: ['rest', 'slow'] },
      ),
      synthetic('t.fast2', async () => {
        started.push('t.fast2');
        release();
      }),
    ];
    const { results } = await runChecks({
      profile: testProfile(server.url),
      checks,
      settings: { concurrency: 1, timeoutMs: 2000 },
    });
    expect(started).toEqual(['t.slow', 't.fast1', 't.fast2']);
    expect(results.map((r) => [r.id, r.outcome])).toEqual([
      ['t.fast1', 'pass'],
      ['t.slow', 'pass'],
      ['t.fast2', 'pass'],
    ]);
  });

  it('runs checks that watch pushes in lanes of their own too, each overlapping the others', async () => {
    const started: string[] = [];
    let watching = 0;
    let bothWatching!: () => void;
    const overlap = new Promise<void>((r) => {
      bothWatching = r;
    });
    // Each waits until the other is watching too: inside a bound of one they would run in turn and time out.
    const watcher = (id: string) =>
      synthetic(
        id,
        async () => {
          started.push(id);
          if (++watching === 2) bothWatching();
          await overlap;
        },
        { tags: ['ws', 'push'] },
      );
    const checks = [
      synthetic('t.fast', async () => {
        started.push('t.fast');
      }),
      watcher('t.push1'),
      watcher('t.push2'),
    ];
    const { results } = await runChecks({
      profile: testProfile(server.url),
      checks,
      settings: { concurrency: 1, timeoutMs: 2000 },
    });
    expect(started).toEqual(['t.push1', 't.push2', 't.fast']);
    expect(results.map((r) => [r.id, r.outcome])).toEqual([
      ['t.fast', 'pass'],
      ['t.push1', 'pass'],
      ['t.push2', 'pass'],
    ]);
  });

  it('keeps at most 50 violations of one check and counts the rest in one line', async () => {
    const { results } = await runChecks({
      profile: testProfile(server.url),
      checks: [
        synthetic('t.many', async (ctx) => {
          for (let i = 0; i < 5000; i++) ctx.violation({ received: `item ${i}`, expected: 'none' });
          ctx.expectSchema('pair-record', {}, 'an empty record');
        }),
      ],
    });
    const v = results[0]!.violations;
    expect(v).toHaveLength(51);
    expect(v[50]!.received).toBe('… and 4954 more violations of the same check, not kept');
  });

  it('aborts the signal of a check when it ends, cancelling waits it left armed', async () => {
    let leftover: Promise<unknown> | undefined;
    const { results } = await runChecks({
      profile: testProfile(server.url),
      checks: [
        synthetic('t.race', async (ctx) => {
          leftover = sleep(60_000, undefined, { signal: ctx.signal }).catch((err: Error) => err.name);
          await Promise.race([Promise.resolve(), leftover]);
        }),
      ],
    });
    expect(results[0]!.outcome).toBe('pass');
    await expect(leftover).resolves.toBe('AbortError');
  });

  it('emits run-start, check-end per check and run-end in order', async () => {
    const events: RunEvent['type'][] = [];
    await runChecks({
      profile: testProfile(server.url),
      checks: [synthetic('t.a', async () => {}), synthetic('t.b', async () => {})],
      handlers: [
        {
          handle: (e) => {
            events.push(e.type);
          },
        },
      ],
    });
    expect(events.filter((t) => t !== 'check-start')).toEqual(['run-start', 'check-end', 'check-end', 'run-end']);
  });

  it('redacts every key from violations, observations, reasons and evidence', async () => {
    const checks = [
      synthetic('t.leak', async (ctx) => {
        await ctx.rest.get({ path: '/v1/pairs' });
        ctx.observe('echo', { header: SECRET });
        ctx.violation({ received: `saw ${SECRET}`, expected: 'nothing' });
      }),
      synthetic('t.leak2', async () => {
        throw new Error(`boom ${SECRET}`);
      }),
    ];
    const { results } = await runChecks({ profile: testProfile(server.url), checks });
    const text = JSON.stringify(results);
    expect(text).not.toContain(SECRET);
    expect(text).toContain('<key:primary>');
  });
});

describe('unreachable target', () => {
  it('stops before any check with UnreachableError naming the target', async () => {
    const url = await deadPort();
    let ran = false;
    const started = Date.now();
    await expect(
      runChecks({
        profile: testProfile(url),
        checks: [
          synthetic('t.a', async () => {
            ran = true;
          }),
        ],
      }),
    ).rejects.toThrow(UnreachableError);
    await expect(runChecks({ profile: testProfile(url), checks: [] })).rejects.toThrow(/unreachable: ECONNREFUSED/);
    expect(ran).toBe(false);
    // Sooner than one check's timeout: the refused connection is the answer, nothing is waited out.
    expect(Date.now() - started).toBeLessThan(RUN_DEFAULTS.timeoutMs);
  });

  it('ends every check as a timeout error at once when the target answers only requests without a key', async () => {
    const s = await startServer((req, res) => {
      if (!req.headers['x-api-key']) res.end('{}');
    });
    let ran = false;
    try {
      const { results } = await runChecks({
        profile: testProfile(s.url),
        checks: [
          synthetic('t.a', async () => {
            ran = true;
          }),
          synthetic('t.b', async () => {}, { needs: ['keys.cryptoOnly'] }),
        ],
        settings: { timeoutMs: 300 },
      });
      expect(results.map((r) => [r.outcome, r.errorCode])).toEqual([
        ['error', 'CONFORM_TIMEOUT'],
        ['skip', undefined],
      ]);
      expect(results[0]!.reason).toBe(
        'not run: the target answered no request with the primary key within 300 ms (preflight GET /v1/pairs)',
      );
      expect(results[0]!.evidence[0]).toMatchObject({ kind: 'http', curl: expect.stringContaining('<key:primary>') });
      expect(ran).toBe(false);
      // Never started: ended by the preflight's wait alone.
      expect(results[0]!.durationMs).toBe(0);
    } finally {
      await s.close();
    }
  });

  it('trips the circuit breaker when the target stops answering mid-run: the rest time out at once', async () => {
    let served = 0;
    // Answers the two preflights and the first check, then never again.
    const s = await startServer((_req, res) => {
      if (served++ < 3) res.end('{}');
    });
    const checks = Array.from({ length: 20 }, (_, i) =>
      synthetic(`t.c${String(i).padStart(2, '0')}`, async (ctx) => {
        await ctx.rest.get({ path: '/v1/pairs' });
      }),
    );
    checks.push(synthetic('t.needs', async () => {}, { needs: ['keys.cryptoOnly'] }));
    try {
      const { results } = await runChecks({
        profile: testProfile(s.url),
        checks,
        settings: { concurrency: 1, timeoutMs: 200 },
      });
      expect(results[0]!.outcome).toBe('pass');
      expect(results.slice(1, 20).every((r) => r.outcome === 'error' && r.errorCode === 'CONFORM_TIMEOUT')).toBe(true);
      expect(results[20]).toMatchObject({ outcome: 'skip', reason: 'profile has no keys.cryptoOnly' });
      expect(results[19]!.reason).toMatch(
        /^not run: the target stopped answering \(6 checks in a row got no answer; the last, t\.c06: /,
      );
      expect(served).toBeLessThan(10);
      // Past the six silent checks that tripped it, none started, so none waited out its timeout.
      expect(results.slice(7, 20).map((r) => r.durationMs)).toEqual(Array(13).fill(0));
    } finally {
      await s.close();
    }
  });

  it('stops at once when the target goes away during the run', async () => {
    const s = await startServer((_q, r) => r.end('{}'));
    const later: string[] = [];
    const checks = [
      synthetic('t.kill', async (ctx) => {
        await s.close();
        await ctx.rest.get({ path: '/v1/pairs' });
      }),
      ...Array.from({ length: 5 }, (_, i) =>
        synthetic(`t.after${i}`, async () => {
          later.push(String(i));
        }),
      ),
    ];
    await expect(runChecks({ profile: testProfile(s.url), checks, settings: { concurrency: 1 } })).rejects.toThrow(
      /unreachable during t.kill: ECONNREFUSED/,
    );
    expect(later).toEqual([]);
  });
});

describe('selection', () => {
  const checks = [
    synthetic('rest.price.mid', async () => {}, { tags: ['rest', 'price'] }),
    synthetic('rest.pairs.schema', async () => {}),
    synthetic('rest.rate-limit', async () => {}, { tags: ['rest', 'disruptive'] }),
    synthetic('ws.ping.pong.bare', async () => {}, { tags: ['ws'] }),
  ];
  const ids = (cs: { id: string }[]): string[] => cs.map((c) => c.id);

  it('matches by exact id, by dotted prefix and by tag, never by a bare substring', () => {
    expect(matches(checks[0]!, 'rest.price')).toBe(true);
    expect(matches(checks[0]!, 'rest.pri')).toBe(false);
    expect(matches(checks[0]!, 'price')).toBe(true);
    expect(matches(checks[0]!, 'rest.price.mid')).toBe(true);
  });

  it('leaves disruptive checks out unless --only names them', () => {
    expect(ids(selectChecks(checks))).toEqual(['rest.price.mid', 'rest.pairs.schema', 'ws.ping.pong.bare']);
    expect(ids(selectChecks(checks, { only: ['disruptive'] }))).toEqual(['rest.rate-limit']);
    expect(ids(selectChecks(checks, { only: ['rest'], skip: ['rest.pairs'] }))).toEqual([
      'rest.price.mid',
      'rest.rate-limit',
    ]);
  });

  it('reports selectors that match nothing', () => {
    expect(unknownSelectors(checks, ['rest', 'rest.nope', 'nope'])).toEqual(['rest.nope', 'nope']);
  });
});
