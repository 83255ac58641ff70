/** GET /v1/pairs: schema, pagination, filters, code form (spec: GET /v1/pairs; Pair code; Pair record). */
import type { Check, CheckContext } from '../../src/check.ts';
import { LIMITS, parsePairCode, PATHS, QUERY, STATUS } from '../../src/spec.ts';
import {
  answerBrokenBy,
  assetTypeOf,
  body,
  catalogue,
  clause,
  expectStatus,
  pageOrEnd,
  pairsPage,
  restCheck,
  shown,
  statusOf,
  type PairRecord,
} from './support.ts';
import type { FaultName } from '../../src/fault-name.ts';

const { page: PAGE, perPage: PER_PAGE, type: TYPE, code: CODE } = QUERY.pairs;
const codes = (data: readonly { code: string }[]): string[] => data.map((p) => p.code);
const PAIRS = 'GET /v1/pairs';

/**
 * Invalid page / per_page values, one check each. The spec names 50004 for invalid parameters but
 * never says these must be refused: answering them with the defaults conforms too.
 */
export const INVALID_PARAMS = [
  { id: 'page-zero', param: PAGE, value: '0' },
  { id: 'page-negative', param: PAGE, value: '-1' },
  { id: 'page-text', param: PAGE, value: 'first' },
  { id: 'per-page-zero', param: PER_PAGE, value: '0' },
  { id: 'per-page-text', param: PER_PAGE, value: 'ten' },
] as const;

/** The reference fault that fails on an invalid value of each parameter. */
const FAILS_ON_INVALID: Readonly<Record<(typeof INVALID_PARAMS)[number]['param'], FaultName>> = {
  [PAGE]: 'pairs-invalid-page-internal-error',
  [PER_PAGE]: 'pairs-invalid-per-page-internal-error',
};

/** Pages of each type's filtered list that rest.pairs.type-filter reads. */
const TYPE_FILTER_PAGES = 3;

/** per_page values asked for by rest.pairs.per-page. */
const PER_PAGE_SIZES = [3, 7] as const;

/**
 * Judges the answer to a search for `q` that must find `known`: each result holds `q` in its code, or
 * in its name (a match by name is recorded: whether a search reads names is not shown).
 */
function searched(ctx: CheckContext, q: string, known: PairRecord, list: readonly PairRecord[], also = ''): void {
  const what = `${PAIRS}?${CODE}=${q}${also}`;
  const has = (text: unknown): boolean => typeof text === 'string' && text.toLowerCase().includes(q.toLowerCase());
  const byName = list.filter((p) => !has(p.code) && has(p.name)).map((p) => p.code);
  const stray = list.filter((p) => !has(p.code) && !has(p.name)).map((p) => p.code);
  if (byName.length) ctx.observe(`search by name ${q}`, byName.slice(0, 5), `${what}: results whose name holds "${q}"`);
  if (stray.length)
    ctx.violation({
      received: `${what}: ${stray.slice(0, 5).join(', ')}${stray.length > 5 ? ` and ${stray.length - 5} more` : ''}`,
      expected: `only pairs whose code (or name) contains "${q}"`,
    });
  if (!list.some((p) => p.code === known.code))
    ctx.violation({
      received: `${what}: [${codes(list).slice(0, 10).join(', ')}]`,
      expected: `${known.code} among the results`,
    });
}

export const pairsChecks: readonly Check[] = [
  restCheck({
    id: 'rest.pairs.schema',
    enforces: [
      'field:pair:code',
      'field:pair:name',
      'field:pair:base',
      'field:pair:quote',
      'status:200',
      'rule:versioning:v1-prefix',
    ],
    catches: ['pairs-record-name-missing'],
    tags: ['pagination'],
    clause: clause('GET /v1/pairs', 'envelope with status_number 200 and data an array of pair records'),
    title: `${PAIRS} (page 1 and page 2)`,
    expectation:
      'each body matches pairs-response: code, name, base, quote strings per record ' +
      '(page 2 may instead answer 50004, as a page past the end may)',
    async run(ctx) {
      const first = await ctx.rest.get({ path: PATHS.pairs, query: { [PAGE]: '1' } });
      ctx.expectSchema('pairs-response', first.json, `${PAIRS}?page=1`);
      const second = await ctx.rest.get({ path: PATHS.pairs, query: { [PAGE]: '2' } });
      // A page past the end may answer 50004 (not shown either way); then it is an error envelope.
      // Whether page 2 lies past the end is the pagination checks' question, not this one's.
      const pastEnd = statusOf(second) === STATUS.INVALID_REQUEST;
      if (pastEnd) ctx.note(`${PAIRS}?page=2 answered 50004: read as a page past the end`);
      ctx.expectSchema(pastEnd ? 'rest-envelope' : 'pairs-response', second.json, `${PAIRS}?page=2`);
    },
  }),
  restCheck({
    id: 'rest.pairs.defaults',
    enforces: ['parameter:pairs:page', 'parameter:pairs:per_page', 'limit:per_page-default', 'limit:page-default'],
    catches: ['pairs-default-per-page-20'],
    tags: ['pagination'],
    clause: clause('GET /v1/pairs', 'page default 1, per_page default 10'),
    title: `${PAIRS} with no page/per_page, then with page=1&per_page=10`,
    expectation: 'both answers list the same pairs, at most 10',
    async run(ctx) {
      const bare = codes((await pairsPage(ctx)).data);
      if (bare.length === 0) ctx.skip(`${PAIRS} lists no pair: an empty list shows no page size and no page number`);
      const explicit = codes(
        (await pairsPage(ctx, { [PAGE]: String(LIMITS.defaultPage), [PER_PAGE]: String(LIMITS.defaultPerPage) })).data,
      );
      if (bare.length > LIMITS.defaultPerPage)
        ctx.violation({
          received: `${PAIRS}: ${bare.length} pairs`,
          expected: `at most ${LIMITS.defaultPerPage} pairs (per_page default 10)`,
        });
      if (bare.join() !== explicit.join())
        ctx.violation({
          received: `no parameters: [${bare.join(', ')}]; page=1&per_page=10: [${explicit.join(', ')}]`,
          expected: 'the same pairs: the defaults are page 1 and per_page 10',
        });
    },
  }),
  restCheck({
    id: 'rest.pairs.page-default-size',
    enforces: ['parameter:pairs:page', 'parameter:pairs:per_page', 'limit:per_page-default'],
    catches: ['pairs-default-per-page-20', 'pairs-page-alone-per-page-20'],
    tags: ['pagination'],
    clause: clause('GET /v1/pairs', `per_page default ${LIMITS.defaultPerPage}, also when page is given`),
    title:
      `${PAIRS}?page=1 and ?page=2 without per_page, each beside the same page ` +
      `with per_page=${LIMITS.defaultPerPage}`,
    expectation: `each page holds the same pairs as with per_page=${LIMITS.defaultPerPage}`,
    async run(ctx) {
      const size = String(LIMITS.defaultPerPage);
      // Page 2 exists only past the default size; a page past the end may be empty or 50004 (not shown).
      const second = body(await ctx.rest.get({ path: PATHS.pairs, query: { [PAGE]: '2', [PER_PAGE]: size } }));
      if (second?.status_number !== STATUS.OK || !Array.isArray(second.data) || second.data.length === 0)
        ctx.skip(`${PAIRS}?page=2&per_page=${size} lists no pair: the catalogue holds ${size} pairs or fewer`);
      const sort = (l: string[]): string => [...l].sort().join(', ');
      for (const page of ['1', '2']) {
        // Page 2 without per_page past the end (a 50004, which may answer that) is a page of another size.
        const bare = codes((await pageOrEnd(ctx, { [PAGE]: page })).data ?? []);
        const explicit = codes((await pairsPage(ctx, { [PAGE]: page, [PER_PAGE]: size })).data);
        if (sort(bare) !== sort(explicit))
          ctx.violation({
            received:
              `page=${page}: ${bare.length} pairs [${bare.join(', ')}]; ` +
              `page=${page}&per_page=${size}: ${explicit.length} pairs [${explicit.join(', ')}]`,
            expected: `the same pairs: without per_page, page ${page} has the default size ${size}`,
          });
      }
    },
  }),
  restCheck({
    id: 'rest.pairs.pages-disjoint',
    enforces: ['parameter:pairs:page', 'rule:pairs:pagination'],
    catches: ['pairs-pages-overlap', 'pairs-per-page-ignored'],
    tags: ['pagination'],
    clause: clause('GET /v1/pairs', 'a paginated list: page n holds the per_page items after page n-1'),
    title: `${PAIRS}?per_page=5 pages 1 to 3, and ?per_page=10 page 1`,
    expectation: 'pages share no pair, and pages 1 and 2 of 5 hold the same pairs as page 1 of 10',
    async run(ctx) {
      const pages: string[][] = [];
      for (const page of [1, 2, 3])
        pages.push(codes((await pageOrEnd(ctx, { [PAGE]: String(page), [PER_PAGE]: '5' })).data ?? []));
      const seen = new Map<string, number>();
      pages.forEach((list, i) => {
        for (const code of list) {
          const before = seen.get(code);
          if (before !== undefined)
            ctx.violation({
              received: `${code} on page ${before + 1} and page ${i + 1} (per_page=5)`,
              expected: 'each pair on one page only',
            });
          else seen.set(code, i);
        }
      });
      if (pages[1]!.length === 0) ctx.skip('the catalogue has 5 pairs or fewer: nothing to page through');
      const ten = codes((await pairsPage(ctx, { [PAGE]: '1', [PER_PAGE]: '10' })).data);
      const five = [...pages[0]!, ...pages[1]!];
      const sort = (l: string[]): string => [...l].sort().join(', ');
      if (sort(ten) !== sort(five))
        ctx.violation({
          received: `per_page=5 pages 1+2: [${five.join(', ')}]; per_page=10 page 1: [${ten.join(', ')}]`,
          expected: 'the same pairs',
        });
    },
  }),
  restCheck({
    id: 'rest.pairs.per-page',
    enforces: ['parameter:pairs:per_page'],
    catches: ['pairs-per-page-ignored'],
    tags: ['pagination'],
    clause: clause('GET /v1/pairs', 'per_page: items per page'),
    title: `${PAIRS}?per_page=${PER_PAGE_SIZES.join(', then ')}`,
    expectation: 'exactly per_page pairs when the catalogue holds more',
    async run(ctx) {
      const full = (await pairsPage(ctx)).data.length;
      if (full === 0) ctx.skip(`${PAIRS} lists no pair: an empty list shows no page size`);
      for (const n of PER_PAGE_SIZES) {
        const got = (await pairsPage(ctx, { [PER_PAGE]: String(n) })).data.length;
        // A default page short of its size is the whole catalogue: a page of n then holds n of it, or all.
        const want = full >= LIMITS.defaultPerPage ? n : Math.min(n, full);
        if (got !== want)
          ctx.violation({
            received: `${PAIRS}?per_page=${n}: ${got} pairs (the default page holds ${full})`,
            expected: `${want} pairs`,
          });
      }
    },
  }),
  restCheck({
    id: 'rest.pairs.type-filter',
    enforces: ['parameter:pairs:type'],
    catches: ['pairs-type-filter-ignored'],
    tags: ['pagination'],
    clause: clause('GET /v1/pairs', 'type filters by asset type'),
    title: `${PAIRS}?type=<T> (first ${TYPE_FILTER_PAGES} pages) for every asset type in the catalogue`,
    expectation: 'only pairs of asset type T, and at least one',
    async run(ctx) {
      const types = [
        ...new Set(
          codes(await catalogue(ctx))
            .map(assetTypeOf)
            .filter((t): t is string => !!t),
        ),
      ];
      if (types.length === 0) ctx.skip('the catalogue is empty');
      for (const t of types) {
        // A few pages per type: a filter that lets other types through shows there, and a catalogue of
        // hundreds of pairs would otherwise cost a walk per type.
        const list = codes(await catalogue(ctx, { [TYPE]: t }, undefined, TYPE_FILTER_PAGES));
        const others = list.filter((c) => assetTypeOf(c) !== t);
        if (list.length === 0)
          ctx.violation({
            received: `${PAIRS}?type=${t}: no pairs`,
            expected: `the ${t} pairs the unfiltered list shows`,
          });
        if (others.length)
          ctx.violation({
            received:
              `${PAIRS}?type=${t}: ${others.slice(0, 5).join(', ')}` +
              `${others.length > 5 ? ` and ${others.length - 5} more` : ''}`,
            expected: `only ${t} pairs`,
          });
      }
    },
  }),
  restCheck({
    id: 'rest.pairs.code-search',
    enforces: ['parameter:pairs:code', 'parameter:pairs:type'],
    catches: ['pairs-code-search-ignored', 'pairs-type-ignores-code'],
    tags: ['pagination'],
    clause: clause('GET /v1/pairs', 'code searches pairs by a code or a fragment of it; type filters by asset type'),
    title:
      `${PAIRS}?code=<a listed code>, then ?code=<its base symbol>, then ` + '?type=<its asset type>&code=<its code>',
    expectation:
      'the full code finds that pair; every result contains the searched text in its code or its name ' +
      '(a search "by a code or fragment of it" may also read names: such matches are recorded); with ' +
      'type as well, only pairs of that type, and the code still searched',
    async run(ctx) {
      const known = (await pairsPage(ctx)).data[0];
      if (!known) return ctx.skip('the catalogue is empty');
      const parts = parsePairCode(known.code);
      for (const q of [known.code, ...(parts ? [parts.base] : [])])
        searched(ctx, q, known, await catalogue(ctx, { [CODE]: q }));
      // Both filters at once: a service that drops one of them when the other is given lists the whole type.
      if (parts) {
        const query = { [TYPE]: parts.assetType, [CODE]: known.code };
        const list = await catalogue(ctx, query);
        searched(ctx, known.code, known, list, `&${TYPE}=${parts.assetType}`);
        const others = codes(list).filter((c) => assetTypeOf(c) !== parts.assetType);
        if (others.length)
          ctx.violation({
            received: `${PAIRS}?${TYPE}=${parts.assetType}&${CODE}=${known.code}: ${others.slice(0, 5).join(', ')}`,
            expected: `only ${parts.assetType} pairs`,
          });
      }
    },
  }),
  restCheck({
    id: 'rest.pairs.code-form',
    enforces: ['field:pair:code', 'field:pair:base', 'field:pair:quote', 'rule:pair-code:form'],
    catches: ['pairs-base-mismatch'],
    tags: ['pagination'],
    clause: clause('Pair code', 'a code is <asset_type>:<market>:<base>/<quote>; base and quote are its symbols'),
    title: `${PAIRS}, every page`,
    expectation: "every code has the four parts; base and quote equal the code's base and quote",
    async run(ctx) {
      // The first page read here, the rest as the run read it: another check may have walked the
      // listing first, and a verdict needs an answer this check holds.
      // (A violation met twice is reported once.)
      const listed = [...(await pairsPage(ctx)).data, ...(await catalogue(ctx))];
      if (listed.length === 0) ctx.skip(`${PAIRS} lists no pair, so there is no code to judge`);
      for (const p of listed) {
        const parts = parsePairCode(p.code);
        if (!parts) {
          ctx.violation({
            received: `code ${JSON.stringify(p.code)}`,
            expected: 'a code of the form <asset_type>:<market>:<base>/<quote>',
          });
          continue;
        }
        if (p.base !== parts.base)
          ctx.violation({ received: `${p.code}: base ${JSON.stringify(p.base)}`, expected: `base "${parts.base}"` });
        if (p.quote !== parts.quote)
          ctx.violation({
            received: `${p.code}: quote ${JSON.stringify(p.quote)}`,
            expected: `quote "${parts.quote}" (the code identifies the quote currency)`,
          });
      }
    },
  }),
  ...INVALID_PARAMS.map((c) =>
    restCheck({
      id: `rest.pairs.invalid-param.${c.id}`,
      enforces: ['parameter:pairs:page', 'parameter:pairs:per_page', 'status:50004'],
      catches: [FAILS_ON_INVALID[c.param]],
      tags: ['pagination'],
      clause: clause('REST `status_number` values', '50004: malformed or invalid parameters'),
      title: `${PAIRS}?${c.param}=${c.value}`,
      expectation:
        'status_number "50004", or a page answered as with the default ' +
        `${c.param} (never a 50000 or another error)`,
      async run(ctx) {
        const what = `${PAIRS}?${c.param}=${c.value}`;
        const ex = await ctx.rest.get({ path: PATHS.pairs, query: { [c.param]: c.value } });
        const status = statusOf(ex);
        if (status === STATUS.INVALID_REQUEST) {
          ctx.observe('invalid-param', 'refused', `${what}: refused with 50004 (refuse or default: not shown)`);
          return;
        }
        if (status !== STATUS.OK) {
          // A 50000, a 5xx or any other status is a failure to handle the parameter, not a refusal of it;
          // a 50004 or a 200 written as a number is the envelope's rule, which its owner judges.
          const meant = String(status) === STATUS.OK ? STATUS.OK : STATUS.INVALID_REQUEST;
          if (String(status) === meant || answerBrokenBy(ex)) expectStatus(ctx, ex, meant, what);
          else
            ctx.violation({
              received: `${what}: ${shown(ex)}`,
              expected: `${what}: status_number "50004", or the page answered as with the default ${c.param}`,
            });
          return;
        }
        // Answered: a page, read as the default, which the page without the parameter shows. The
        // page's own schema is rest.pairs.schema's to judge, not this check's.
        if (!Array.isArray(body(ex)?.data))
          ctx.violation({
            received: `${what}: ${shown(ex)}`,
            expected: `${what}: status_number "50004", or a page of pairs (data a list) as with the default ${c.param}`,
          });
        const answered = codes((body(ex)?.data as { code: string }[] | undefined) ?? []);
        const defaults = codes((await pairsPage(ctx)).data);
        const same = answered.join() === defaults.join();
        ctx.observe(
          'invalid-param',
          same ? 'defaults' : 'answered',
          same
            ? `${what}: answered as with the default ${c.param} (refuse or default: not shown)`
            : `${what}: answered with a page other than the default one (not shown)`,
        );
      },
    }),
  ),
];
