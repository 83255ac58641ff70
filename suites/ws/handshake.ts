/**
 * Handshake: authentication and stream access before or right after the upgrade
 * (spec: Authentication 3 and 4; Errors, Handshake errors).
 */
import type { Check, CheckContext } from '../../src/check.ts';
import type { StatementKey } from '../../src/statements.ts';
import { METHOD, STATUS } from '../../src/spec.ts';
import { UNSOLICITED_WAIT_MS } from '../../src/timing/index.ts';
import { jsonObject, type JsonObject, type Refusal } from '../../src/transports/stream.ts';
import { refusalStatus } from '../../src/limit-refusal.ts';
import { ask, subscribe } from './notices.ts';
import { needPairs, streamPairs, subscribeListed, UNKNOWN_PAIR } from './pair-choice.ts';
import { describeRefusal, tryOpen } from './sessions.ts';
import { HEADER_CASES } from '../key-headers.ts';

/** The id of the request a key refused after connecting is asked with. */
const AUTH_REQUEST_ID = 'conform-auth';
/** A key no target issues. */
const INVALID_KEY = 'conform-invalid-key-0000000000';

const clause = (rule: string) => ({ section: 'Authentication', rule });

/** What a notice after connecting is judged by besides its code. */
const AUTH_NOTICE_STATEMENTS: readonly StatementKey[] = [
  'field:notice:method',
  'field:notice:message',
  'field:notice:id',
  'rule:handshake:no-status-after-connect',
];

/** Checks the body of a handshake refusal: `status_number` `want` and `message`, never `code`. */
function judgeRefusal(ctx: CheckContext, refusal: Refusal, want: string, what: string): void {
  ctx.observe('http-status', refusal.status, `HTTP status of the refused handshake (${what})`);
  if (refusal.json === undefined) {
    ctx.violation({
      received: `${describeRefusal(refusal)} (not JSON)`,
      expected: `a JSON body with status_number "${want}" and message (spec: Authentication 3)`,
    });
    return;
  }
  ctx.expectSchema('handshake-error', refusal.json, `handshake refusal body (${what})`);
  if (refusalStatus(refusal) !== want)
    ctx.violation({
      received: `${what}: status_number ${JSON.stringify(refusalStatus(refusal))} in ${refusal.text}`,
      expected: `status_number "${want}"`,
    });
}

/**
 * Authentication 3 and 4 give two acceptable outcomes: refused in the HTTP handshake with the
 * status in a JSON body, or accepted and answered with a notice carrying it as `code` on the
 * first request. Anything else fails.
 */
async function refusedOrNotice(ctx: CheckContext, key: string | null, want: string, what: string): Promise<void> {
  const result = await tryOpen(ctx, { key });
  if (!result.ok) {
    judgeRefusal(ctx, result, want, what);
    return;
  }
  ctx.observe('outcome', 'accepted; answered after connecting', `${what}: the upgrade succeeded`);
  const session = result.session;
  const [pair = UNKNOWN_PAIR] = await streamPairs(ctx, 1);
  // A target may send the notice unsolicited on connect (and close): that one answers too, known by
  // its method or, whatever its method, by the code it carries.
  const isAuthNotice = (o: JsonObject | undefined): boolean =>
    o !== undefined && (o.method === METHOD.error || String(o.code) === want);
  const early = await session.find((f) => isAuthNotice(jsonObject(f)), UNSOLICITED_WAIT_MS).catch(() => undefined);
  const notice = early
    ? jsonObject(early)!
    : await ask(ctx, session, subscribe([pair], AUTH_REQUEST_ID), `code "${want}" after ${what}`);
  if (notice.code !== want) {
    ctx.fail({
      received: `${what} accepted; answered ${JSON.stringify(notice)}`,
      expected:
        `either a handshake refusal with status_number "${want}", or a notice ` +
        `with code "${want}" (spec: Authentication 3, 4)`,
    });
  }
  judgeAuthNotice(ctx, notice, early ? undefined : AUTH_REQUEST_ID, what);
}

/**
 * The rest of an error notice after connecting (spec: WebSocket notice frame; Handshake errors):
 * method `error`, a message, no `status_number`, and the id echoed when the notice answers a
 * request that carried one. `data` is not required.
 */
function judgeAuthNotice(ctx: CheckContext, notice: JsonObject, sentId: string | undefined, what: string): void {
  const bad = (field: string, expected: string): void =>
    ctx.violation({
      received:
        `${what}: the notice's ${field} ${field in notice ? JSON.stringify(notice[field]) : 'absent'} ` +
        `in ${JSON.stringify(notice).slice(0, 300)}`,
      expected,
    });
  if (notice.method !== METHOD.error) bad('method', 'method "error" (the notice reports a failure)');
  if (typeof notice.message !== 'string' || notice.message.trim() === '') bad('message', 'a non-empty message');
  if ('status_number' in notice)
    bad('status_number', 'no status_number after connecting (post-connect frames use code)');
  if (sentId !== undefined && notice.id !== sentId) bad('id', `id ${JSON.stringify(sentId)} echoed`);
}

export const handshakeChecks: readonly Check[] = [
  {
    id: 'ws.handshake.missing-key',
    enforces: ['status:50005', 'notice:50005', 'rule:auth:after-connection', ...AUTH_NOTICE_STATEMENTS],
    catches: ['handshake-body-code', 'handshake-missing-key-accepted', 'auth-notice-status-number'],
    catchesUnderDialects: ['notice-code-number', 'notice-status-number'],
    clause: clause('a connection without a key: 50005 in the handshake body, or a 50005 notice after connecting'),
    title: 'opens a WebSocket connection with no X-API-Key header',
    expectation:
      'refused with a JSON body {status_number "50005", message} without code, or accepted ' +
      'and the first request answered with a notice: method "error", code "50005", a message, ' +
      'its id echoed, no status_number',
    severity: 'must',
    tags: ['ws', 'handshake', 'auth'],
    needs: ['ws'],
    run: (ctx) => refusedOrNotice(ctx, null, STATUS.UNAUTHORIZED, 'no key'),
  },
  {
    id: 'ws.handshake.invalid-key',
    enforces: ['status:50005', 'notice:50005', ...AUTH_NOTICE_STATEMENTS],
    catches: ['handshake-body-code', 'auth-notice-status-number'],
    catchesUnderDialects: ['notice-code-number', 'notice-status-number'],
    clause: clause('an invalid key: 50005 in the handshake body, or a 50005 notice after connecting'),
    title: 'opens a WebSocket connection with a key the target never issued',
    expectation:
      'refused with a JSON body {status_number "50005", message} without code, or accepted ' +
      'and the first request answered with a notice: method "error", code "50005", a message, ' +
      'its id echoed, no status_number',
    severity: 'must',
    tags: ['ws', 'handshake', 'auth'],
    needs: ['ws'],
    run: (ctx) => refusedOrNotice(ctx, INVALID_KEY, STATUS.UNAUTHORIZED, 'an invalid key'),
  },
  {
    id: 'ws.handshake.no-stream',
    enforces: ['status:50010', 'notice:50010', 'rule:auth:handshake-failures', ...AUTH_NOTICE_STATEMENTS],
    catches: ['handshake-body-code', 'handshake-no-stream-accepted'],
    clause: clause('a key without V1 source-stream access: 50010'),
    title: 'opens a WebSocket connection with keys.noStream',
    expectation:
      'refused with a JSON body {status_number "50010", message}, or accepted and ' +
      'the first request answered with a notice: method "error", code "50010", a message, ' +
      'its id echoed, no status_number',
    severity: 'must',
    tags: ['ws', 'handshake', 'auth', 'entitlements'],
    needs: ['ws', 'keys.noStream'],
    run: (ctx) => refusedOrNotice(ctx, ctx.profile.keys.noStream!.key, STATUS.ACCESS_DENIED, 'the noStream key'),
  },
  {
    id: 'ws.handshake.header-case',
    enforces: ['rule:auth:header'],
    catches: ['auth-header-case-sensitive', 'handshake-header-case-sensitive'],
    clause: clause(
      '1. every WebSocket connection is authenticated with the key in X-API-Key (also ' +
        'written X-API-KEY); header names are case-insensitive',
    ),
    title:
      `opens a connection with the primary key in each spelling of the header ` +
      `(${HEADER_CASES.map((c) => c.header).join(', ')}), one at a time, closing ` +
      `each before the next, and subscribes on each`,
    expectation:
      'each handshake is accepted and its subscribe succeeds (code "200"): no 50005, in the handshake or after it',
    severity: 'must',
    tags: ['ws', 'handshake', 'auth'],
    needs: ['ws'],
    async run(ctx) {
      const pairs = await needPairs(ctx, 1);
      for (const { header } of HEADER_CASES) {
        const result = await tryOpen(ctx, { keyHeader: header });
        if (!result.ok) {
          ctx.violation({
            received: `key in "${header}": ${describeRefusal(result)}`,
            expected: `the primary key is accepted in "${header}" (header names are case-insensitive)`,
          });
          continue;
        }
        // A target may check the key after connecting (Authentication 4), so the first request is the proof.
        // A listed pair refused with 50104 (inactive or suspended) is replaced, not blamed on the header.
        const { notice } = await subscribeListed(ctx, result.session, pairs, 'conform-header-case');
        if (String(notice.code) !== STATUS.OK)
          ctx.violation({
            received: `key in "${header}": accepted, then the subscribe answered ${JSON.stringify(notice)}`,
            expected: `the key in "${header}" authenticates the connection: the subscribe succeeds`,
          });
        await result.session.close();
      }
    },
  },
  {
    id: 'ws.handshake.error-body',
    enforces: [
      'field:handshake:status_number',
      'field:handshake:message',
      'rule:auth:handshake-failures',
      'rule:handshake:never-code',
    ],
    catches: ['handshake-body-code'],
    clause: {
      section: 'Errors',
      rule: 'Handshake errors: the HTTP phase returns status_number and message, never code',
    },
    title: 'collects every handshake refusal it can provoke: no key, an invalid key, the noStream key',
    expectation: 'each refusal body is JSON with a documented status_number and a message, and no field code',
    severity: 'must',
    tags: ['ws', 'handshake'],
    needs: ['ws'],
    async run(ctx) {
      const attempts: [string, string | null][] = [
        ['no key', null],
        ['an invalid key', INVALID_KEY],
      ];
      if (ctx.profile.keys.noStream) attempts.push(['the noStream key', ctx.profile.keys.noStream.key]);
      let refused = 0;
      for (const [what, key] of attempts) {
        const result = await tryOpen(ctx, { key });
        if (result.ok) {
          await result.session.close();
          continue;
        }
        refused++;
        if (result.json === undefined)
          ctx.violation({
            received: `${what}: ${describeRefusal(result)} (not JSON)`,
            expected: 'a JSON body with status_number and message',
          });
        else ctx.expectSchema('handshake-error', result.json, `handshake refusal body (${what})`);
      }
      if (refused === 0)
        ctx.skip(
          'the target refused none of these handshakes (it answers after connecting, which the spec also allows)',
        );
    },
  },
];
