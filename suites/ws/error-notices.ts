/**
 * The shape every error notice shares, whatever provoked it (spec: WebSocket notice frame; Method
 * subscribe, Error reply; Errors, WebSocket notice `code` values; Handshake errors).
 */
import type { Check, CheckContext } from '../../src/check.ts';
import { LIMITS, METHOD, STATUS } from '../../src/spec.ts';
import { errorNoticesTimeoutMs } from '../../src/timing/index.ts';
import { isNotice, jsonObject, type JsonObject, type StreamSession } from '../../src/transports/stream.ts';
import { answers, subscribe } from './notices.ts';
import { pairsByAccess, streamPairs, UNKNOWN_PAIR } from './pair-choice.ts';
import { isSilence, openSession } from './sessions.ts';

/** Unanswered requests in a row after which a connection is given up. */
const MAX_SILENT = 2;

/** One request the spec answers with an error notice, and the code it names. */
interface Provocation {
  what: string;
  code: string;
  message: JsonObject | string;
}

/** The requests of the primary key's connection: every kind of 50004 the spec lists, and 50104. */
async function primaryProvocations(ctx: CheckContext): Promise<Provocation[]> {
  const pairs = await streamPairs(ctx, LIMITS.maxPairsPerSubscribe + 1);
  const bad = STATUS.INVALID_REQUEST;
  const list: Provocation[] = [
    { what: 'malformed JSON', code: bad, message: '{"id":"conform-err-json","method":"subscribe","params":{' },
    {
      what: 'an unknown method',
      code: bad,
      message: { id: 'conform-err-method', method: 'conform-unknown', params: {} },
    },
    { what: 'a subscribe without params', code: bad, message: { id: 'conform-err-params', method: METHOD.subscribe } },
    { what: 'params.pairs a string', code: bad, message: subscribe(pairs[0] ?? UNKNOWN_PAIR, 'conform-err-string') },
    { what: 'params.pairs empty', code: bad, message: subscribe([], 'conform-err-empty') },
    { what: 'an unknown pair', code: STATUS.PAIR_NOT_FOUND, message: subscribe([UNKNOWN_PAIR], 'conform-err-unknown') },
    // Apart from the other unknown method, so that a target ignoring unknown methods is not taken for a silent one.
    { what: 'an unknown method, without id', code: bad, message: { method: 'conform-unknown' } },
  ];
  if (pairs.length > LIMITS.maxPairsPerSubscribe)
    list.push({ what: `${pairs.length} pairs`, code: bad, message: subscribe(pairs, 'conform-err-too-many') });
  else
    ctx.note(
      `the primary key lists ${pairs.length} pairs: too few to exceed the pair limit, so that 50004 is not provoked`,
    );
  return list;
}

/**
 * Judges one reply: `method` "error", `code` a string, `id` echoed when sent, `data` null when
 * present (the notice table marks it not required), a non-empty `message`, no `status_number`.
 * The code's value is each error check's own rule.
 */
function judge(ctx: CheckContext, p: Provocation, notice: JsonObject): void {
  const what = `the notice answering ${p.what} (${p.code} expected)`;
  const bad = (received: string, expected: string): void =>
    ctx.violation({ received: `${what}: ${received} in ${JSON.stringify(notice).slice(0, 300)}`, expected });
  if (notice.method !== METHOD.error)
    bad(`method ${JSON.stringify(notice.method)}`, 'method "error" on every error notice');
  if (typeof notice.code !== 'string')
    bad(`code ${JSON.stringify(notice.code)}`, 'code a string (not an HTTP status, not a number)');
  const sentId = typeof p.message === 'object' && typeof p.message.id === 'string' ? p.message.id : undefined;
  if (sentId !== undefined && notice.id !== sentId)
    bad(`id ${'id' in notice ? JSON.stringify(notice.id) : 'absent'}`, `id ${JSON.stringify(sentId)} echoed`);
  if ('data' in notice && notice.data !== null)
    bad(`data ${JSON.stringify(notice.data)?.slice(0, 120)}`, 'data null when present (it is not required)');
  else ctx.observe(`data ${p.code}`, 'data' in notice ? 'null' : 'absent', 'error notice data: not required');
  if (typeof notice.message !== 'string' || notice.message.trim() === '')
    bad(`message ${JSON.stringify(notice.message)}`, 'a non-empty message');
  if ('status_number' in notice) bad('a field status_number', 'no status_number after connecting (notices use code)');
}

/** The notice answering `message`, or undefined when none comes (timeout or close). */
async function reply(
  ctx: CheckContext,
  session: StreamSession,
  message: JsonObject | string,
): Promise<JsonObject | undefined> {
  const answer = session.next((f) => isNotice(f) && answers(message, jsonObject(f)!), ctx.waits.noticeMs);
  answer.catch(() => undefined);
  try {
    if (typeof message === 'string') session.sendText(message);
    else session.send(message);
    return jsonObject(await answer);
  } catch (err) {
    if (isSilence(err)) return undefined;
    throw err;
  }
}

/** Sends each provocation on `session` in turn and judges its reply; returns how many were error notices. */
async function provoke(ctx: CheckContext, session: StreamSession, list: readonly Provocation[]): Promise<number> {
  let judged = 0;
  let silent = 0;
  for (const p of list) {
    if (!session.isOpen) {
      ctx.note(`the connection closed before ${p.what} could be sent`);
      break;
    }
    // Two requests in a row without an answer: the target answers nothing this check can read, so
    // waiting out the rest is no use.
    if (silent >= MAX_SILENT) {
      ctx.note(`${p.what} not sent: the last ${MAX_SILENT} requests went unanswered`);
      continue;
    }
    const notice = await reply(ctx, session, p.message);
    // An unanswered request is the rule of its own check (ws.request.*, ws.subscribe.*), not of this one.
    if (!notice) {
      silent++;
      ctx.note(`no notice answered ${p.what} within ${ctx.waits.noticeMs} ms (left to its own check)`);
      continue;
    }
    silent = 0;
    // A success here is the rule of the check about that request, not of this one.
    if (notice.method !== METHOD.error && String(notice.code) === STATUS.OK) {
      ctx.note(`${p.what} answered with a success (left to its own check): ${JSON.stringify(notice)}`);
      continue;
    }
    judged++;
    judge(ctx, p, notice);
  }
  return judged;
}

/**
 * Opens a connection of `key` alone (the primary one is closed by then), subscribes to `outside`, a
 * pair the key may not read, and judges the error notice; returns 1 when there was one to judge.
 */
async function provokeAs(
  ctx: CheckContext,
  keyName: string,
  key: string,
  outside: string | undefined,
  code: string,
): Promise<number> {
  if (!outside) {
    ctx.note(`the primary key lists no pair that ${keyName} may not read: ${code} not provoked`);
    return 0;
  }
  const session = await openSession(ctx, { key });
  try {
    return await provoke(ctx, session, [
      { what: `${keyName} subscribing ${outside}`, code, message: subscribe([outside], `conform-err-${code}`) },
    ]);
  } finally {
    await session.close();
  }
}

/**
 * A denial the check did not provoke is no denial it judged: 50010 needs keys.whitelisted and a
 * pair outside its list, 50109 keys.cryptoOnly and a pair of another asset type.
 */
function unprovokedDenials(ctx: CheckContext, accessDenied: boolean, assetDenied: boolean): void {
  if (!accessDenied)
    ctx.notJudged?.(`no ${STATUS.ACCESS_DENIED} notice provoked (keys.whitelisted and a pair outside its list)`, [
      'notice:50010',
    ]);
  if (!assetDenied)
    ctx.notJudged?.(
      `no ${STATUS.ASSET_TYPE_DENIED} notice provoked (keys.cryptoOnly and a pair of another asset type)`,
      ['notice:50109'],
    );
  if (!accessDenied && !assetDenied)
    ctx.notJudged?.('no denial after connection provoked', ['rule:auth:after-connection']);
  else if (!accessDenied || !assetDenied)
    ctx.partly(`one of the denials after connection (${STATUS.ACCESS_DENIED}, ${STATUS.ASSET_TYPE_DENIED}) judged`, [
      'rule:auth:after-connection',
    ]);
}

export const errorNoticeChecks: readonly Check[] = [
  {
    id: 'ws.notice.error-shape',
    enforces: [
      'event:notice-error',
      'notice:50004',
      'notice:50010',
      'notice:50104',
      'notice:50109',
      'rule:auth:after-connection',
      'rule:handshake:no-status-after-connect',
      'rule:subscribe:unknown-pair-message',
      'field:notice:method',
      'field:notice:message',
      'field:notice:code',
      'field:notice:id',
      'field:notice:data',
    ],
    catches: ['notice-code-number', 'notice-id-not-echoed', 'notice-status-number', 'notice-denied-shape'],
    clause: {
      section: 'Method subscribe',
      rule:
        'Error reply: method error, message, code as in Errors (a string), id echoed, ' +
        'data null; post-connect frames never carry status_number',
    },
    title:
      'provokes every error notice it can, one request at a time: each kind of 50004, 50104, and ' +
      'with keys.whitelisted 50010 and keys.cryptoOnly 50109, one connection at a time',
    expectation:
      'every error notice has method "error", code a string, id echoed when one was ' +
      'sent, data null or absent, a non-empty message, and no status_number',
    severity: 'must',
    tags: ['ws', 'session'],
    needs: ['ws'],
    timeoutMs: (_p, w) => errorNoticesTimeoutMs(w),
    async run(ctx) {
      let judged = 0;
      const primary = await openSession(ctx);
      judged += await provoke(ctx, primary, await primaryProvocations(ctx));
      await primary.close();
      const { whitelisted, cryptoOnly } = ctx.profile.keys;
      let denied = 0;
      if (whitelisted) {
        const allowed = new Set(whitelisted.pairs);
        const outside = (await streamPairs(ctx, whitelisted.pairs.length + 1)).find((c) => !allowed.has(c));
        denied = await provokeAs(ctx, 'keys.whitelisted', whitelisted.key, outside, STATUS.ACCESS_DENIED);
      } else ctx.note(`no keys.whitelisted in the profile: ${STATUS.ACCESS_DENIED} not provoked`);
      let assetDenied = 0;
      if (cryptoOnly)
        assetDenied = await provokeAs(
          ctx,
          'keys.cryptoOnly',
          cryptoOnly.key,
          (await pairsByAccess(ctx, cryptoOnly.assetTypes)).other[0],
          STATUS.ASSET_TYPE_DENIED,
        );
      else ctx.note(`no keys.cryptoOnly in the profile: ${STATUS.ASSET_TYPE_DENIED} not provoked`);
      judged += denied + assetDenied;
      unprovokedDenials(ctx, denied > 0, assetDenied > 0);
      if (judged === 0) ctx.skip('no request was answered with an error notice, so there is no error notice to judge');
    },
  },
];
