/**
 * The requests of the spec and the notices that answer them: send a request and read its notice,
 * and compare a notice with what the spec requires.
 */
import type { CheckContext } from '../../src/check.ts';
import { METHOD } from '../../src/spec.ts';
import { isNotice, jsonObject, type JsonObject, type StreamSession } from '../../src/transports/stream.ts';
import { isSilence, silence } from './sessions.ts';

/** A sent message, short, for a violation line. */
const preview = (message: unknown): string => {
  const text = typeof message === 'string' ? message : JSON.stringify(message);
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
};

/**
 * Whether `notice` answers `message`: it echoes the id, or it carries no id (or the request had
 * none) and its method is the request's or `error`. Ids are judged by ws.notice.id-echo alone, so
 * a target that drops them fails that check, not every check; a notice about something else
 * (another id, another method) is not taken for the answer.
 */
export function answers(message: unknown, notice: JsonObject): boolean {
  const sent = message !== null && typeof message === 'object' ? (message as JsonObject) : {};
  const sentId = typeof sent.id === 'string' ? sent.id : undefined;
  if (sentId !== undefined && notice.id === sentId) return true;
  if (sentId !== undefined && notice.id !== undefined) return false;
  return notice.method === METHOD.error || (sent.method !== undefined && notice.method === sent.method);
}

/** Sends `message` and resolves with the notice that answers it (see `answers`). */
export async function ask(
  ctx: CheckContext,
  session: StreamSession,
  message: unknown,
  expected: string,
  timeoutMs = ctx.waits.noticeMs,
): Promise<JsonObject> {
  const reply = session.next((f) => isNotice(f) && answers(message, jsonObject(f)!), timeoutMs);
  reply.catch(() => undefined);
  try {
    // A send on a connection the target already closed is the target's doing too.
    if (typeof message === 'string') session.sendText(message);
    else session.send(message);
    return jsonObject(await reply)!;
  } catch (err) {
    if (isSilence(err))
      ctx.fail({
        received: `${silence(err, timeoutMs)} answering ${preview(message)}`,
        expected: `a notice: ${expected}`,
      });
    throw err;
  }
}

/** What a notice must carry; `message` a string or a rule. */
export interface NoticeExpectation {
  method: string;
  code: string;
  message?: string | { test(s: string): boolean; describe: string };
  id?: string;
  /** `data` must be null when present (the notice table marks it not required). */
  dataNull?: boolean;
  /** Compare `code` by value only (200 and "200" alike): its type is ws.notice.schema's rule. */
  looseCode?: boolean;
}

/** Records a violation for every field of `notice` that differs from `want`; returns whether all matched. */
export function expectNotice(ctx: CheckContext, notice: JsonObject, want: NoticeExpectation, what: string): boolean {
  let ok = true;
  const bad = (field: string, expected: string): void => {
    ok = false;
    ctx.violation({
      received:
        `${what}: ${field} ${field in notice ? JSON.stringify(notice[field]) : 'absent'} ` +
        `in ${JSON.stringify(notice)}`,
      expected: `${field} ${expected}`,
    });
  };
  if (notice.method !== want.method) bad('method', JSON.stringify(want.method));
  if (want.looseCode ? String(notice.code) !== want.code : notice.code !== want.code)
    bad('code', want.looseCode ? JSON.stringify(want.code) : `${JSON.stringify(want.code)} (a string)`);
  if (typeof want.message === 'string' && notice.message !== want.message) bad('message', JSON.stringify(want.message));
  if (
    want.message &&
    typeof want.message === 'object' &&
    !(typeof notice.message === 'string' && want.message.test(notice.message))
  )
    bad('message', want.message.describe);
  if (want.id !== undefined && notice.id !== want.id) bad('id', `${JSON.stringify(want.id)} (echoed)`);
  if (want.dataNull && 'data' in notice && notice.data !== null) bad('data', 'null when present');
  return ok;
}

/** The subscribe request of the spec. */
export const subscribe = (pairs: unknown, id?: string): JsonObject => ({
  ...(id ? { id } : {}),
  method: METHOD.subscribe,
  params: { pairs },
});
export const unsubscribe = (pairs: unknown, id?: string): JsonObject => ({
  ...(id ? { id } : {}),
  method: METHOD.unsubscribe,
  params: { pairs },
});
