/**
 * A run reads the catalogue once: every check that walks `/v1/pairs` shares the first walk of each
 * key and query (the run's pair ledger keeps it), and the walk reads pages of 100 pairs where the
 * target answers them in full, so a large catalogue behind a rate limit costs one walk of a tenth of
 * the requests, not one per check. Counted by a proxy on loopback in front of the reference.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { runChecks } from '../../src/runner.ts';
import { restChecks } from '../../suites/rest/index.ts';

/** Checks that walk the whole catalogue of the primary key. */
const WALKERS = [
  'rest.pairs.code-form',
  'rest.pairs.type-filter',
  'rest.price.catalogue',
  'rest.price.schema',
  'rest.price.market.timezone',
  'rest.observe.page-past-end',
  'rest.observe.max-per-page',
];

describe('the catalogue walks of a run', () => {
  let reference: ReferenceServer;
  let proxy: http.Server;
  let proxyUrl: string;
  /** Unfiltered pages of 100 pairs of /v1/pairs read, by page number. */
  const pages = new Map<number, number>();

  beforeAll(async () => {
    reference = await startReferenceServer({ dialect: { rest: { catalogueSize: 250 } } });
    const target = new URL(reference.restUrl);
    proxy = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://proxy.invalid');
      const params = [...url.searchParams.keys()].sort();
      const wide = url.searchParams.get('per_page') === '100';
      if (url.pathname === '/v1/pairs' && params.join() === 'page,per_page' && wide) {
        const page = Number(url.searchParams.get('page'));
        pages.set(page, (pages.get(page) ?? 0) + 1);
      }
      const out = http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(out);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    proxy?.closeAllConnections();
    await new Promise<void>((resolve) => proxy?.close(() => resolve()));
    await reference?.close();
  });

  it('read each page of the catalogue once, however many checks walk it', async () => {
    const checks = restChecks.filter((c) => WALKERS.includes(c.id));
    expect(checks).toHaveLength(WALKERS.length);
    const { results } = await runChecks({
      profile: { ...reference.profile, rest: proxyUrl },
      checks,
      settings: { concurrency: 4 },
    });
    expect(results.map((r) => `${r.id} ${r.outcome}`).sort()).toEqual(WALKERS.map((id) => `${id} pass`).sort());
    // 250 pairs and the special ones: three pages of 100 (and at most a read past the end), each read once.
    expect([...pages.keys()]).toEqual(expect.arrayContaining([1, 2, 3]));
    expect([...pages].filter(([, n]) => n !== 1)).toEqual([]);
    const shared = results.flatMap((r) =>
      r.evidence.filter((e) => e.kind === 'note' && /read once this run/.test(e.text)),
    );
    expect(shared.length).toBeGreaterThanOrEqual(WALKERS.length - 2);
  }, 120_000);
});
