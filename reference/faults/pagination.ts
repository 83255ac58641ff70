/** Faults of /v1/pairs: its paging, its filters and the pair record. */
import { LIMITS, QUERY, STATUS } from '../../src/spec.ts';
import { f, type Fault } from './record.ts';
import { without, invalidPaging } from './support.ts';

/** An internal failure in place of the answer. */
const FAILED = { status: STATUS.INTERNAL, data: null, message: 'internal error' } as const;

/** The faults of /v1/pairs: its paging, its filters and the pair record. */
export const PAGINATION_FAULTS = [
  f(
    'pairs-default-per-page-20',
    'pagination',
    'per_page defaults to 10',
    ['limit:per_page-default', 'parameter:pairs:per_page'],
    {
      query: { pairs: (q, { params }) => (params.has(QUERY.pairs.perPage) ? q : { ...q, perPage: 20 }) },
    },
  ),
  f(
    'pairs-page-alone-per-page-20',
    'pagination',
    'page given without per_page pages with the default size 10 (here 20)',
    ['limit:per_page-default', 'parameter:pairs:per_page'],
    {
      query: {
        pairs: (q, { params }) =>
          params.has(QUERY.pairs.page) && !params.has(QUERY.pairs.perPage) ? { ...q, perPage: 20 } : q,
      },
    },
  ),
  f(
    'pairs-pages-overlap',
    'pagination',
    'pages are disjoint: page n starts after page n-1 ends',
    ['rule:pairs:pagination', 'parameter:pairs:page'],
    { query: { window: (w) => (w.start > 0 ? { ...w, start: w.start - 1 } : w) } },
  ),
  f(
    'pairs-per-page-ignored',
    'pagination',
    'per_page sets the number of items per page',
    ['parameter:pairs:per_page'],
    {
      query: {
        window: (_w, { page }) => ({ start: (page - 1) * LIMITS.defaultPerPage, count: LIMITS.defaultPerPage }),
      },
    },
  ),
  f(
    'pairs-invalid-page-internal-error',
    'pagination',
    'an invalid page is refused with 50004 or answered with the defaults (here a 50000)',
    ['parameter:pairs:page', 'status:50004'],
    {
      envelope: {
        answer: (a, { by, params }) => (by === 'pairs' && invalidPaging(params, QUERY.pairs.page) ? FAILED : a),
      },
    },
  ),
  f(
    'pairs-invalid-per-page-internal-error',
    'pagination',
    'an invalid per_page is refused with 50004 or answered with the defaults (here a 50000)',
    ['parameter:pairs:per_page', 'status:50004'],
    {
      envelope: {
        answer: (a, { by, params }) => (by === 'pairs' && invalidPaging(params, QUERY.pairs.perPage) ? FAILED : a),
      },
    },
  ),
  // Filters and the pair record
  f('pairs-type-filter-ignored', 'filters', 'type filters by asset type', ['parameter:pairs:type'], {
    query: { pairs: (q) => ({ ...q, type: undefined }) },
  }),
  f('pairs-code-search-ignored', 'filters', 'code searches pairs by a code or fragment', ['parameter:pairs:code'], {
    query: { pairs: (q) => ({ ...q, code: undefined }) },
  }),
  f('pairs-record-name-missing', 'pair-record', 'a pair record has code, name, base and quote', ['field:pair:name'], {
    record: { pair: (r) => without(r, 'name') },
  }),
  f(
    'pairs-base-mismatch',
    'pair-record',
    'base and quote are the symbols of the code',
    ['field:pair:base', 'field:pair:quote'],
    { record: { pair: (r) => ({ ...r, base: r.quote }) } },
  ),
  f(
    'pairs-type-ignores-code',
    'filters',
    'code searches pairs by a code or fragment, also beside type (here type given, code is ignored)',
    ['parameter:pairs:code'],
    { query: { pairs: (q) => (q.type === undefined ? q : { ...q, code: undefined }) } },
  ),
] as const satisfies readonly Fault[];
