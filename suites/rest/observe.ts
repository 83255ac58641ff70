/** Observations: what the spec leaves "not shown", recorded and never failing. */
import type { Check, CheckContext } from '../../src/check.ts';
import type { RestExchange } from '../../src/transports/rest.ts';
import { LIMITS, PATHS, QUERY, REST_STATUSES_WITH_DATA, STATUS } from '../../src/spec.ts';
import { UNKNOWN_ENDPOINT, UNKNOWN_PAIR } from './envelope.ts';
import { body, catalogue, clause, restCheck } from './support.ts';

/** Fields of the envelope the spec documents; anything else is pagination metadata or similar. */
const ENVELOPE_FIELDS = ['status_number', 'ts', 'data', 'message'];
/** per_page values tried for the largest honoured (the maximum is not shown). */
export const PER_PAGE_TRIES = [10, 25, 50, 100, 200, 500, 1000] as const;

/** The unit of an epoch timestamp from its magnitude, and its distance from the local clock. */
export function tsUnit(ts: number, nowMs: number): { unit: string; skewMs: number | null } {
  const units: [string, number][] = [
    ['seconds', 1e-3],
    ['milliseconds', 1],
    ['microseconds', 1e3],
    ['nanoseconds', 1e6],
  ];
  let best: [string, number] | undefined;
  for (const [unit, perMs] of units) {
    const skew = Math.abs(ts / perMs - nowMs);
    if (!best || skew < best[1]) best = [unit, skew];
  }
  // More than a day off in the closest unit: not an epoch time we can name.
  return best && best[1] < 86_400_000
    ? { unit: best[0], skewMs: Math.round(ts / units.find((u) => u[0] === best![0])![1] - nowMs) }
    : { unit: 'unknown', skewMs: null };
}

const observeCheck = (c: Parameters<typeof restCheck>[0]): Check => restCheck({ ...c, severity: 'observe' });

async function errorSamples(ctx: CheckContext): Promise<[string, RestExchange][]> {
  const out: [string, RestExchange][] = [
    ['no key', await ctx.rest.get({ path: PATHS.pairs, key: null })],
    ['invalid key', await ctx.rest.get({ path: PATHS.pairs, key: 'conform-invalid-key' })],
    ['unknown pair', await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: UNKNOWN_PAIR } })],
    ['no code', await ctx.rest.get({ path: PATHS.price })],
    ['unknown endpoint', await ctx.rest.get({ path: UNKNOWN_ENDPOINT })],
    ['page=0', await ctx.rest.get({ path: PATHS.pairs, query: { [QUERY.pairs.page]: '0' } })],
  ];
  const p = ctx.profile;
  if (p.pairs?.stale)
    out.push(['pairs.stale', await ctx.rest.get({ path: PATHS.price, query: { [QUERY.price.code]: p.pairs.stale } })]);
  if (p.keys.suspended)
    out.push(['keys.suspended', await ctx.rest.get({ path: PATHS.pairs, key: p.keys.suspended.key })]);
  for (const probe of p.probes ?? []) {
    const key = p.keys[probe.key ?? 'primary']?.key;
    // A probe of 50006 wants the throttled answer, so it is not paced (and not retried).
    if (key)
      out.push([
        `probe ${probe.status}`,
        await ctx.rest.get({ path: probe.path, query: probe.query, key, paced: probe.status !== STATUS.RATE_LIMITED }),
      ]);
  }
  return out;
}

export const observeChecks: readonly Check[] = [
  observeCheck({
    id: 'rest.observe.ts-unit',
    enforces: ['field:envelope:ts'],
    clause: clause('REST envelope', 'unit of ts: not shown'),
    title: 'GET /v1/pairs, ts compared with the local clock',
    expectation: 'recorded: seconds, milliseconds, microseconds or nanoseconds since the epoch',
    async run(ctx) {
      const ex = await ctx.rest.get({ path: PATHS.pairs });
      const ts = body(ex)?.ts;
      if (typeof ts !== 'number')
        return ctx.skip(`ts is not a number (${JSON.stringify(ts)}); rest.envelope.schema reports it`);
      const { unit, skewMs } = tsUnit(ts, Date.now());
      // The skew goes in the note: it differs every run and would read as a change against a baseline.
      ctx.observe(
        'ts-unit',
        unit,
        `ts ${ts}; ${skewMs === null ? 'no epoch unit fits' : `${skewMs} ms from the local clock`}`,
      );
    },
  }),
  observeCheck({
    id: 'rest.observe.pagination-metadata',
    enforces: ['rule:pairs:pagination'],
    clause: clause('GET /v1/pairs', 'pagination metadata: not shown'),
    title: 'GET /v1/pairs?page=1&per_page=5',
    expectation: 'recorded: fields beside status_number, ts, data, message',
    async run(ctx) {
      const b =
        body(
          await ctx.rest.get({ path: PATHS.pairs, query: { [QUERY.pairs.page]: '1', [QUERY.pairs.perPage]: '5' } }),
        ) ?? {};
      const extra = Object.fromEntries(Object.entries(b).filter(([k]) => !ENVELOPE_FIELDS.includes(k)));
      ctx.observe(
        'pagination-metadata',
        Object.keys(extra).length ? extra : null,
        Object.keys(extra).length ? 'fields beyond the envelope' : 'none: only the envelope fields',
      );
    },
  }),
  observeCheck({
    id: 'rest.observe.page-past-end',
    enforces: ['rule:pairs:pagination'],
    clause: clause('GET /v1/pairs', 'what a page past the last answers: not shown'),
    title: 'GET /v1/pairs?page=<one past the last page>',
    expectation: 'recorded: an empty list, or an error status_number (50004 is the usual one)',
    async run(ctx) {
      const total = (await catalogue(ctx)).length;
      const page = Math.floor(total / LIMITS.defaultPerPage) + 2;
      const ex = await ctx.rest.get({ path: PATHS.pairs, query: { [QUERY.pairs.page]: String(page) } });
      const b = body(ex);
      const answer = Array.isArray(b?.data)
        ? b.data.length === 0
          ? 'empty list'
          : `${b.data.length} pairs`
        : `status_number ${String(b?.status_number)}`;
      ctx.observe('page-past-end', answer, `page ${page} of a ${total}-pair catalogue; HTTP ${ex.status}`);
    },
  }),
  observeCheck({
    id: 'rest.observe.max-per-page',
    enforces: ['limit:per_page-default'],
    clause: clause('Limits', 'per_page maximum: not shown'),
    title: `GET /v1/pairs?per_page=${PER_PAGE_TRIES.join('|')}`,
    expectation: 'recorded: the largest per_page answered in full',
    async run(ctx) {
      const total = (await catalogue(ctx)).length;
      const answered: Record<string, number | string> = {};
      let largest: number | null = null;
      for (const n of PER_PAGE_TRIES) {
        const b = body(await ctx.rest.get({ path: PATHS.pairs, query: { [QUERY.pairs.perPage]: String(n) } }));
        const got = Array.isArray(b?.data) ? b.data.length : `status ${String(b?.status_number)}`;
        answered[n] = got;
        if (got === Math.min(n, total)) largest = n;
        if (n >= total) break; // beyond the catalogue's size a cap cannot be told from the end of the list
      }
      ctx.observe(
        'max-per-page',
        { largestHonoured: largest, catalogueSize: total, answered },
        largest !== null && largest >= total ? 'every value tried up to the catalogue size was honoured' : undefined,
      );
    },
  }),
  observeCheck({
    id: 'rest.observe.http-status',
    enforces: ['rule:price:client-checks-status'],
    clause: clause('REST `status_number` values', 'HTTP status for each status_number: not shown'),
    title:
      'error requests (no key, invalid key, unknown pair, no code, unknown ' +
      'endpoint, page=0, profile pairs, keys and probes)',
    expectation: 'recorded: the HTTP status that came with each status_number',
    async run(ctx) {
      const seen: Record<string, number[]> = {};
      for (const [, ex] of await errorSamples(ctx)) {
        const s = body(ex)?.status_number;
        if (typeof s !== 'string' || s === '200') continue;
        seen[s] = [...new Set([...(seen[s] ?? []), ex.status])];
      }
      for (const [s, https] of Object.entries(seen).sort())
        ctx.observe(
          `http-status ${s}`,
          https.length === 1 ? https[0] : https,
          (REST_STATUSES_WITH_DATA as readonly string[]).includes(s) ? 'spec: HTTP 200 for 50102' : undefined,
        );
    },
  }),
];
