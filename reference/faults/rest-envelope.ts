/** Faults of the REST envelope (status_number, ts, data, message) and of the status numbers it carries. */
import { STATUS, type RestStatus } from '../../src/spec.ts';
import { f, type Fault } from './record.ts';
import { withBody } from './support.ts';

/** Whether an answer with `status` is an error (neither 200 nor 50102, the two that carry data). */
const isError = (status: RestStatus): boolean => status !== STATUS.OK && status !== STATUS.PRICE_STALE;

/** The faults of the REST envelope (status_number, ts, data, message) and of the status numbers it carries. */
export const REST_ENVELOPE_FAULTS = [
  f('envelope-status-number-integer', 'rest-envelope', 'status_number is a string', ['field:envelope:status_number'], {
    envelope: { write: (out) => withBody(out, (b) => (b.status_number = Number(b.status_number))) },
  }),
  f('envelope-ts-string', 'rest-envelope', 'ts is an integer', ['field:envelope:ts'], {
    envelope: { write: (out) => withBody(out, (b) => (b.ts = String(b.ts))) },
  }),
  f('envelope-error-data-filled', 'rest-envelope', 'data is null on errors', ['field:envelope:data'], {
    envelope: { write: (out, { status }) => (isError(status) ? withBody(out, (b) => (b.data = {})) : out) },
  }),
  f('envelope-error-message-missing', 'rest-envelope', 'message is present on errors', ['field:envelope:message'], {
    envelope: { write: (out, { status }) => (isError(status) ? withBody(out, (b) => delete b.message) : out) },
  }),
  f(
    'pairs-error-envelope',
    'rest-envelope',
    '/v1/pairs errors have data null and a message (here data [] and no message on 50004)',
    ['field:envelope:data', 'field:envelope:message'],
    {
      // The pairs endpoint's invalid-request errors carry an empty list and no message.
      envelope: {
        write: (out, { status, by }) =>
          by === 'pairs' && status === STATUS.INVALID_REQUEST
            ? withBody(out, (b) => {
                b.data = [];
                delete b.message;
              })
            : out,
      },
    },
    {
      // Lenient paging, a clamped per_page and an empty page past the end leave /v1/pairs no 50004 to answer.
      maskedBy: (d) =>
        d.rest.invalidPaging === 'defaults' && d.rest.perPageOver === 'clamp' && d.rest.pastEnd === 'empty'
          ? '/v1/pairs answers every paging it is given, so it has no invalid-request error to write'
          : undefined,
    },
  ),
  f(
    'unknown-endpoint-50004',
    'rest-envelope',
    'an unknown endpoint answers 50008',
    ['rule:endpoints:unknown-endpoint', 'status:50008'],
    {
      envelope: {
        answer: (a, { by }) =>
          by === 'router' && a.status === STATUS.NOT_FOUND ? { status: STATUS.INVALID_REQUEST, data: null } : a,
      },
    },
  ),
  // Status numbers of the probes
  f('probe-status-swapped', 'status-numbers', 'API maintenance answers 50001 (not 50003)', ['status:50001'], {
    admission: { account: (s) => (s === STATUS.API_MAINTENANCE ? STATUS.GRPC_MAINTENANCE : s) },
  }),
  f(
    'probe-restricted-as-suspended',
    'status-numbers',
    'a restricted account answers 50100 (not 50007)',
    ['status:50100'],
    {
      admission: { account: (s) => (s === STATUS.RESTRICTED_USER ? STATUS.SUSPENDED : s) },
    },
  ),
] as const satisfies readonly Fault[];
