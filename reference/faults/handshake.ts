/** Faults of the stream's handshake: who is admitted, and how a refusal is told. */
import { STATUS } from '../../src/spec.ts';
import { keyHeader } from '../key-header.ts';
import { f, type Fault } from './record.ts';
import { keyOfSpelling } from './support.ts';

/** The faults of the stream's handshake: who is admitted, and how a refusal is told. */
export const HANDSHAKE_FAULTS = [
  f(
    'handshake-body-code',
    'handshake',
    'handshake refusals carry status_number and message, never code',
    ['rule:handshake:never-code', 'field:handshake:status_number'],
    {
      admission: { body: (_body, { refusal }) => ({ code: refusal.status, message: refusal.message }) },
    },
  ),
  f(
    'handshake-no-stream-accepted',
    'handshake',
    'a key without V1 stream access is refused with 50010',
    ['rule:auth:handshake-failures', 'status:50010'],
    {
      admission: {
        refusal: (refusal, { key }) =>
          key.stream === false && refusal?.status === STATUS.ACCESS_DENIED ? undefined : refusal,
      },
    },
  ),
  f(
    'handshake-missing-key-accepted',
    'handshake',
    'a connection without a key is refused with 50005 (or gets a 50005 notice)',
    ['rule:auth:after-connection', 'notice:50005'],
    {
      // A keyless connection gets the primary key's entitlements but its own count, so it breaks only
      // the missing-key rule and not primary's allowance.
      admission: {
        caller: (key, { req, surface, svc }) =>
          key ??
          (surface === 'stream' && keyHeader(req) === undefined
            ? { ...svc.primary, name: 'anonymous', key: '\u0000anonymous', connections: Number.MAX_SAFE_INTEGER }
            : undefined),
      },
    },
  ),
  f(
    'handshake-header-case-sensitive',
    'handshake',
    'the stream handshake takes the key header in any spelling (here only X-API-Key)',
    ['rule:auth:header'],
    {
      admission: {
        caller: (key, { req, surface, svc }) => (surface === 'stream' ? keyOfSpelling(svc, req, true) : key),
      },
    },
  ),
  f(
    'auth-notice-status-number',
    'handshake',
    'post-connect frames never carry status_number (here a keyless or invalid-key connection is ' +
      'told after connecting, with a 50005 notice that also carries status_number)',
    ['rule:handshake:no-status-after-connect', 'notice:50005'],
    {
      // Told after connecting (a legitimate choice), with the handshake body's field beside code.
      admission: { unauthorized: () => 'after-connect' },
      notice: (n, { code }) => (code === STATUS.UNAUTHORIZED ? { ...n, status_number: code } : n),
    },
  ),
] as const satisfies readonly Fault[];
