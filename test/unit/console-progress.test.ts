/**
 * Progress while a run waits: the console names the checks still running and the longest time
 * they may still take, on the terminal's status line and, off a terminal, in a line now and then.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleHandler, waitingText } from '../../reports/console.ts';
import { runChecks } from '../../src/runner.ts';
import { startServer, synthetic, testProfile, type TestServer } from '../helpers/engine.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startServer((_req, res) => res.end('{}'));
});
afterAll(() => server.close());

describe('the waiting text', () => {
  it('names the check with the longest time to go first, counts the rest, rounds its time up', () => {
    const running = [
      { id: 'a.short', startedMs: 0, limitMs: 5_000 },
      { id: 'b.long', startedMs: 1_000, limitMs: 30_000 },
      { id: 'c.mid', startedMs: 0, limitMs: 10_000 },
    ];
    expect(waitingText(running, 6_500)).toBe('waiting on b.long, c.mid, a.short (at most ~25 s left)');
    expect(waitingText(running, 6_500, 1)).toBe('waiting on b.long and 2 more (at most ~25 s left)');
  });
});

/**
 * Runs a quick check and one that waits until `release` is called, through the real runner and
 * the console handler; resolves with what the console wrote.
 */
async function runWithWaitingCheck(
  tty: boolean,
  releaseWhen: (written: string) => boolean,
): Promise<{ text: string; lines: string[] }> {
  let text = '';
  let release = (): void => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const checks = [
    synthetic('rest.t.waits', () => released),
    synthetic('rest.t.quick', async (ctx) => {
      await ctx.rest.get({ path: '/v1/pairs' });
    }),
  ];
  await runChecks({
    profile: testProfile(server.url),
    checks,
    skipPreflight: true,
    settings: { concurrency: 2, timeoutMs: 60_000 },
    handlers: [
      consoleHandler({
        tty,
        verbose: true,
        progressEveryMs: 20,
        write: (t) => {
          text += t;
          if (releaseWhen(text)) release();
        },
      }),
    ],
  });
  // A status line is cleared with CR and erase-line before the next is drawn.
  return { text, lines: text.split('\n').flatMap((l) => l.split('\r\x1b[2K')) };
}

describe('console progress', () => {
  it('on a terminal, shows the check still running and its time left on the status line', async () => {
    const { lines } = await runWithWaitingCheck(true, (t) => t.includes('rest.t.quick  '));
    const status = lines.find((l) => l.startsWith('[1/2]'))!;
    expect(status).toMatch(
      /^\[1\/2\] 1 passed, 0 failed, 0 errors, 0 skipped · waiting on rest\.t\.waits \(at most ~(59|60) s left\)$/,
    );
  });

  it('off a terminal, writes a line naming the waiting check now and then, and none once it is done', async () => {
    const { text, lines } = await runWithWaitingCheck(false, (t) => t.includes('[1/2] waiting on'));
    expect(lines).toContainEqual(expect.stringMatching(/^\[1\/2\] waiting on rest\.t\.waits \(at most ~\d+ s left\)$/));
    expect(text).not.toContain('\x1b[');
    expect(text.slice(text.lastIndexOf('rest.t.waits  '))).not.toContain('waiting on');
  });
});
