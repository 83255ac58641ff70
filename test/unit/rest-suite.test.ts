/**
 * Every REST check passes against the clean reference service and fails against a target that
 * breaks its rule: the reference's named faults (reference/faults/), and for rules no fault
 * breaks yet, a small proxy on loopback that changes one thing of the reference's answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startReferenceServer } from '../../reference/index.ts';
import { FAULTS } from '../helpers/mutation.ts';
import type { CheckResult } from '../../src/check.ts';
import type { Profile } from '../../src/profile.ts';
import { runChecks } from '../../src/runner.ts';
import { restChecks } from '../../suites/rest/index.ts';

type Reference = Awaited<ReturnType<typeof startReferenceServer>>;
const run = async (profile: Profile, ids: readonly string[]): Promise<CheckResult[]> =>
  (await runChecks({ profile, checks: restChecks.filter((c) => ids.includes(c.id)), settings: { concurrency: 4 } }))
    .results;

/** Checks whose rule the reference cannot break over REST: a REST probe cannot provoke 50009 (handshake only). */
const SKIPPED_ON_REFERENCE: Record<string, string> = {
  'rest.probe.50009': "no probe of status 50009 given (a profile's probes name one)",
};

let clean: Reference;
let cleanResults: CheckResult[];
beforeAll(async () => {
  clean = await startReferenceServer();
  cleanResults = await run(
    clean.profile,
    restChecks.map((c) => c.id),
  );
});
afterAll(async () => {
  await clean.close();
});

describe('REST suite against the clean reference service', () => {
  for (const check of restChecks) {
    const skipReason = SKIPPED_ON_REFERENCE[check.id];
    it(skipReason ? `${check.id} skips with "${skipReason}"` : `${check.id} passes`, () => {
      const r = cleanResults.find((x) => x.id === check.id)!;
      if (skipReason) expect(r).toMatchObject({ outcome: 'skip', reason: skipReason });
      else
        expect({ id: r.id, outcome: r.outcome, reason: r.reason, violations: r.violations }).toEqual({
          id: check.id,
          outcome: 'pass',
          reason: undefined,
          violations: [],
        });
    });
  }

  it('records the undocumented behaviour as observations', () => {
    const obs = (id: string) => cleanResults.find((r) => r.id === id)!.observations;
    expect(obs('rest.observe.ts-unit')[0]).toMatchObject({ name: 'ts-unit', value: 'milliseconds' });
    expect(obs('rest.observe.http-status').map((o) => o.name)).toContain('http-status 50005');
    expect(obs('rest.observe.max-per-page')[0]!.value).toMatchObject({ largestHonoured: expect.any(Number) });
    expect(obs('rest.rate-limit').map((o) => o.name)).toEqual(['http-status', 'recovers']);
  });
});

const restFaults = FAULTS.filter((f) => f.catches.some((id) => id.startsWith('rest.')));

/**
 * Checks that read what other checks own (every pair of the catalogue, every answer's schema): a
 * fault only they meet fails its owner (src/ownership.ts), so they run beside every fault's catches.
 */
const READERS = ['rest.envelope.schema', 'rest.envelope.error-shape', 'rest.price.schema', 'rest.price.catalogue'];

/** Checks that catch no fault of their own: their reads fail the owners, under these faults. */
const READS_FOR_OTHERS: Record<string, { fault: string; owner: string }> = {
  'rest.price.catalogue': { fault: 'price-deep-pair-inverted', owner: 'rest.price.mid' },
};

describe('REST suite against each reference fault', () => {
  for (const fault of restFaults) {
    const ids = fault.catches.filter((id) => id.startsWith('rest.'));
    it(`${fault.name} (${fault.rule}) fails its owners only: ${ids.join(', ')}`, async () => {
      const ref = await startReferenceServer({ fault: fault.name });
      try {
        const results = await run(ref.profile, [...new Set([...ids, ...READERS])]);
        // Only owners fail (a reader that met the fault cites it), and it is caught. Which owners a
        // stream check's REST reads also reach is the whole suite's to say: the sweep holds it exact.
        const failing = results.filter((r) => r.outcome === 'fail').map((r) => r.id);
        expect(failing.filter((id) => !ids.includes(id))).toEqual([]);
        expect(failing.length).toBeGreaterThan(0);
        for (const r of results.filter((x) => failing.includes(x.id))) {
          expect(r.violations[0]!.received.length).toBeGreaterThan(0);
          expect(r.violations[0]!.expected.length).toBeGreaterThan(0);
          expect(r.violations[0]!.rule).toBeDefined();
        }
      } finally {
        await ref.close();
      }
    });
  }

  it('never fails an observation, whatever the fault', async () => {
    const observe = restChecks.filter((c) => c.severity === 'observe').map((c) => c.id);
    for (const fault of ['envelope-ts-string', 'auth-http-403', 'pairs-per-page-ignored']) {
      const ref = await startReferenceServer({ fault });
      try {
        for (const r of await run(ref.profile, observe))
          expect([r.id, r.outcome]).toEqual([r.id, r.outcome === 'skip' ? 'skip' : 'pass']);
      } finally {
        await ref.close();
      }
    }
  });
});

/**
 * Checks of rules a broken service could slip past a looser check, each with the fault that breaks its rule and
 * what its violation must say (their clean passes are in the first describe, by id).
 */
const BLIND_SPOTS: readonly (readonly [string, string, RegExp])[] = [
  [
    'rest.envelope.error-shape',
    'pairs-error-envelope',
    /^GET \/v1\/pairs\?page=0: status_number 50004 with data \[\]$/m,
  ],
  [
    'rest.entitlements.asset-types',
    'entitlement-asset-type-partial',
    /^GET \/v1\/price\?code=Metal:\S+ with keys\.cryptoOnly: HTTP 200 \{"status_number":"200"/m,
  ],
  [
    'rest.entitlements.whitelist-price',
    'entitlement-whitelist-price-ignored',
    /^GET \/v1\/price\?code=\S+ with keys\.whitelisted: HTTP 200 \{"status_number":"200"/m,
  ],
  [
    'rest.pairs.page-default-size',
    'pairs-page-alone-per-page-20',
    /^page=1: 20 pairs .*; page=1&per_page=10: 10 pairs/m,
  ],
  ['rest.pairs.code-search', 'pairs-type-ignores-code', /^GET \/v1\/pairs\?code=Crypto:ALL:BTC\/USD&type=Crypto: /m],
  [
    'rest.entitlements.whitelist-pairs',
    'entitlement-whitelist-unlisted',
    /^Crypto:ALL:BTC\/USD: served to keys\.whitelisted by \/v1\/price \(HTTP 200 .*\), but missing from its/m,
  ],
];

describe('REST checks of rules a broken service could slip past a looser check', () => {
  for (const [id, fault, message] of BLIND_SPOTS) {
    it(`${id} fails against fault ${fault}, saying what broke`, async () => {
      const ref = await startReferenceServer({ fault });
      try {
        const [r] = await run(ref.profile, [id]);
        expect({ id: r?.id, outcome: r?.outcome }).toEqual({ id, outcome: 'fail' });
        expect(r!.violations.map((v) => v.received).join('\n')).toMatch(message);
      } finally {
        await ref.close();
      }
    });
  }
});

/** A proxy in front of the reference that changes one thing: the request it forwards or the body it returns. */
interface Mutation {
  name: string;
  catches: readonly string[];
  /** The rule each caught check must name: matched against a violation's "received | expected". */
  violated: RegExp;
  request?: (req: http.IncomingMessage, url: URL, headers: Record<string, string>) => void;
  body?: (body: Record<string, unknown>, url: URL) => void;
}

const MUTATIONS: readonly Mutation[] = [
  {
    // Answering it as if absent conforms (the spec never says it must be refused); a 50000 does not.
    name: 'invalid per_page answered with an internal error',
    catches: ['rest.pairs.invalid-param.per-page-zero', 'rest.pairs.invalid-param.per-page-text'],
    violated: /\{"status_number":"50000".* \| GET \/v1\/pairs\?per_page=(0|ten): status_number "50004", or the page/,
    body: (b, url) => {
      if (['0', 'ten'].includes(url.searchParams.get('per_page') ?? ''))
        Object.assign(b, { status_number: '50000', data: null, message: 'internal error' });
    },
  },
  {
    name: 'pair records without name',
    catches: ['rest.pairs.schema'],
    violated: /\/data\/\d+: must have required property "name"/,
    body: (b, url) => {
      if (url.pathname === '/v1/pairs' && Array.isArray(b.data))
        for (const p of b.data) delete (p as Record<string, unknown>).name;
    },
  },
  {
    name: 'the key refused when sent as X-API-Key exactly',
    catches: ['rest.auth.header-case.canonical'],
    violated:
      /with X-API-Key: HTTP 401 \{"status_number":"50005".* \| GET \/v1\/pairs with X-API-Key: status_number "200"$/,
    request: (req, _url, headers) => {
      const raw = req.rawHeaders.filter((_, i) => i % 2 === 0);
      if (raw.includes('X-API-Key')) delete headers['x-api-key'];
    },
  },
  {
    name: 'every error status_number replaced by another',
    catches: restChecks.filter((c) => c.id.startsWith('rest.probe.') && c.id !== 'rest.probe.50009').map((c) => c.id),
    violated: /: HTTP \d{3} \{"status_number":"5000[01]".* \| .*: status_number "5\d{4}"$/,
    body: (b) => {
      if (typeof b.status_number === 'string' && b.status_number !== '200')
        b.status_number = b.status_number === '50000' ? '50001' : '50000';
    },
  },
  {
    name: "a pair on the key's whitelist refused with 50010",
    catches: ['rest.entitlements.whitelist-price'],
    violated: new RegExp(
      /Forex:ALL:EUR\/USD with keys\.whitelisted: HTTP 200 \{"status_number":"50010".* \| /.source +
        /served, not refused: Forex:ALL:EUR\/USD is on the key's whitelist$/.source,
    ),
    body: (b, url) => {
      if (url.pathname === '/v1/price' && url.searchParams.get('code') === 'Forex:ALL:EUR/USD') {
        b.status_number = '50010';
        b.data = null;
      }
    },
  },
  {
    name: 'a Crypto pair refused with 50109, whatever the key',
    catches: ['rest.entitlements.asset-types'],
    violated: new RegExp(
      /with keys\.cryptoOnly: HTTP 200 \{"status_number":"50109".* \| /.source +
        /served, not refused: Crypto is one of the key's asset types$/.source,
    ),
    body: (b, url) => {
      if (url.pathname === '/v1/price' && url.searchParams.get('code')?.startsWith('Crypto:')) {
        b.status_number = '50109';
        b.data = null;
      }
    },
  },
  {
    name: '50006 answered with data filled',
    catches: ['rest.rate-limit'],
    violated: /the 50006 answer: \/data: must be null/,
    body: (b) => {
      if (b.status_number === '50006') b.data = {};
    },
  },
];

async function startProxy(upstream: string, m: Mutation): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', upstream);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host') headers[k] = v;
    m.request?.(req, url, headers);
    const up = http.request(url, { method: req.method, headers, agent: false }, (upRes) => {
      const chunks: Buffer[] = [];
      upRes.on('data', (c: Buffer) => chunks.push(c));
      upRes.on('end', () => {
        let text = Buffer.concat(chunks).toString('utf8');
        try {
          const b = JSON.parse(text);
          m.body?.(b, url);
          text = JSON.stringify(b);
        } catch {
          /* not JSON: passed through */
        }
        res.writeHead(upRes.statusCode ?? 502, { 'content-type': 'application/json' });
        res.end(text);
      });
    });
    up.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    up.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('REST suite against a proxy that breaks one rule the faults do not', () => {
  it('passes every one of these checks through the same proxy when it changes nothing', async () => {
    const proxy = await startProxy(clean.restUrl, { name: 'identity', catches: [], violated: /^$/ });
    try {
      const ids = [...new Set(MUTATIONS.flatMap((m) => m.catches))];
      const results = await run({ ...clean.profile, rest: proxy.url }, ids);
      expect(results).toHaveLength(ids.length);
      for (const r of results)
        expect({ id: r.id, outcome: r.outcome, reason: r.reason }).toEqual({
          id: r.id,
          outcome: 'pass',
          reason: undefined,
        });
    } finally {
      await proxy.close();
    }
  });

  for (const m of MUTATIONS) {
    const caught = m.catches.length > 3 ? `${m.catches.length} checks (${m.catches[0]} …)` : m.catches.join(', ');
    it(`${m.name} fails ${caught}`, async () => {
      const proxy = await startProxy(clean.restUrl, m);
      try {
        const results = await run({ ...clean.profile, rest: proxy.url }, m.catches);
        expect(results).toHaveLength(m.catches.length);
        for (const r of results) expect({ id: r.id, outcome: r.outcome }).toEqual({ id: r.id, outcome: 'fail' });
        for (const r of results)
          expect(
            r.violations.some((v) => m.violated.test(`${v.received} | ${v.expected}`)),
            `${r.id}: ${JSON.stringify(r.violations)}`,
          ).toBe(true);
      } finally {
        await proxy.close();
      }
    });
  }
});

/**
 * Faults under dialects that answer otherwise what the spec leaves open: a page past the end
 * refused with 50004, invalid paging answered with the defaults. The answer a reader meets is then
 * the dialect's, and only the owners of the broken rule fail.
 */
describe('REST faults under dialects: only the owners fail', () => {
  const PAGING = ['rest.envelope.schema', 'rest.pairs.page-default-size', 'rest.pairs.defaults'];
  const INVALID = restChecks.filter((c) => c.id.startsWith('rest.pairs.invalid-param.')).map((c) => c.id);
  it.each([
    // page alone pages by 20: page 2 of a small catalogue lies past the end, and is refused.
    ['pairs-page-alone-per-page-20', { pastEnd: 'error', catalogueSize: 12 }, ['rest.pairs.page-default-size']],
    // The 200 of invalid paging answered with the defaults carries the number 200.
    ['envelope-status-number-integer', { invalidPaging: 'defaults' }, ['rest.envelope.schema']],
  ] as const)('%s under %o fails %o', async (fault, rest, owners) => {
    const ref = await startReferenceServer({ fault, dialect: { rest } });
    try {
      const results = await run(ref.profile, [...PAGING, ...INVALID]);
      const failing = results.filter((r) => r.outcome === 'fail').map((r) => r.id);
      expect(failing.sort(), results.map((r) => `${r.id} ${r.outcome} ${r.reason ?? ''}`).join('\n')).toEqual([
        ...owners,
      ]);
    } finally {
      await ref.close();
    }
  });
});

describe('coverage', () => {
  it('has every must REST check broken by at least one fault or proxy mutation', () => {
    const caught = new Set([...restFaults.flatMap((f) => f.catches), ...MUTATIONS.flatMap((m) => m.catches)]);
    const uncaught = restChecks
      .filter((c) => c.severity === 'must' && !caught.has(c.id) && !SKIPPED_ON_REFERENCE[c.id])
      .map((c) => c.id);
    expect(uncaught).toEqual(Object.keys(READS_FOR_OTHERS));
  });

  it.each(Object.entries(READS_FOR_OTHERS))(
    '%s catches no fault of its own, but its reads fail the owner of what it met',
    async (reader, { fault, owner }) => {
      const ref = await startReferenceServer({ fault });
      try {
        const alone = await run(ref.profile, [owner]);
        expect(alone[0]!.outcome, 'the owner alone misses it').toBe('pass');
        const both = await run(ref.profile, [owner, reader]);
        expect(both.map((r) => [r.id, r.outcome])).toEqual([
          [owner, 'fail'],
          [reader, 'pass'],
        ]);
        expect(both[0]!.violations.some((v) => v.seenBy === reader)).toBe(true);
        expect(both[1]!.alsoSeen?.[0]).toMatchObject({ owner });
      } finally {
        await ref.close();
      }
    },
  );
});
