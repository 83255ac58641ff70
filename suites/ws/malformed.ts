/**
 * Malformed messages of every shape the spec rules out (spec: WebSocket connection, "Messages are
 * JSON objects with a `method` field"; Method subscribe and unsubscribe, the request fields; Errors,
 * 50004 for a malformed message or missing or invalid pairs): each gets an error notice 50004.
 */
import type { FaultName } from '../../src/fault-name.ts';
import type { Check, CheckContext } from '../../src/check.ts';
import type { StatementKey } from '../../src/statements.ts';
import { METHOD, STATUS } from '../../src/spec.ts';
import type { JsonObject } from '../../src/transports/stream.ts';
import { ask, expectNotice, unsubscribe } from './notices.ts';
import { needPairs, subscribeOk } from './pair-choice.ts';
import { openSession } from './sessions.ts';

/** One malformed request and what it breaks. */
interface MalformedCase {
  id: string;
  title: string;
  enforces: readonly StatementKey[];
  catches: readonly FaultName[];
  clause: { section: string; rule: string };
  /** Subscribe first, so that the unsubscribe has a subscription to act on. */
  subscribed?: boolean;
  build(pairs: string[]): JsonObject | string;
}

const UNSUBSCRIBE_STATEMENTS: readonly StatementKey[] = ['rule:unsubscribe:request-fields', 'notice:50004'];
const MESSAGE_STATEMENTS: readonly StatementKey[] = [
  'rule:connection:messages-are-objects',
  'event:notice-error',
  'notice:50004',
];
const unsubscribeClause = { section: 'Method unsubscribe', rule: 'Request: same fields as subscribe' };
const messageClause = { section: 'WebSocket connection', rule: 'Messages are JSON objects with a `method` field' };

const CASES: readonly MalformedCase[] = [
  {
    id: 'ws.unsubscribe.invalid.missing-params',
    title: 'subscribes to one pair, then sends an unsubscribe without params',
    enforces: UNSUBSCRIBE_STATEMENTS,
    catches: ['unsubscribe-invalid-pairs-accepted'],
    clause: unsubscribeClause,
    subscribed: true,
    build: () => ({ id: 'conform-unsub-no-params', method: METHOD.unsubscribe }),
  },
  {
    id: 'ws.unsubscribe.invalid.pairs-not-array',
    title: 'subscribes to one pair, then unsubscribes with params.pairs that pair as a string, not an array',
    enforces: UNSUBSCRIBE_STATEMENTS,
    catches: ['unsubscribe-invalid-pairs-accepted'],
    clause: unsubscribeClause,
    subscribed: true,
    build: (pairs) => unsubscribe(pairs[0], 'conform-unsub-not-array'),
  },
  {
    id: 'ws.unsubscribe.invalid.pairs-not-strings',
    title: 'subscribes to one pair, then unsubscribes with params.pairs [42, null], elements that are not strings',
    enforces: UNSUBSCRIBE_STATEMENTS,
    catches: ['unsubscribe-invalid-pairs-accepted'],
    clause: unsubscribeClause,
    subscribed: true,
    build: () => unsubscribe([42, null], 'conform-unsub-not-strings'),
  },
  {
    id: 'ws.subscribe.invalid.params-without-pairs',
    title: 'subscribes with params {} (no pairs)',
    enforces: ['parameter:subscribe:params.pairs', 'notice:50004'],
    catches: ['subscribe-params-without-pairs-accepted'],
    clause: { section: 'Method subscribe', rule: 'params.pairs: array of string, required' },
    build: () => ({ id: 'conform-params-empty', method: METHOD.subscribe, params: {} }),
  },
  {
    id: 'ws.request.not-object.array',
    title: 'sends a text frame holding a JSON array',
    enforces: MESSAGE_STATEMENTS,
    catches: ['notice-not-object-ignored'],
    clause: messageClause,
    build: () => JSON.stringify(['conform-not-an-object']),
  },
  {
    id: 'ws.request.not-object.string',
    title: 'sends a text frame holding a JSON string',
    enforces: MESSAGE_STATEMENTS,
    catches: ['notice-not-object-ignored'],
    clause: messageClause,
    build: () => JSON.stringify('conform-not-an-object'),
  },
  {
    id: 'ws.request.missing-method',
    title: 'sends a JSON object with an id and params but no method',
    enforces: MESSAGE_STATEMENTS,
    catches: ['notice-missing-method-ignored'],
    clause: messageClause,
    build: () => ({ id: 'conform-no-method', params: {} }),
  },
];

async function judgeCase(ctx: CheckContext, c: MalformedCase): Promise<void> {
  const pairs = c.subscribed ? await needPairs(ctx, 1) : [];
  const session = await openSession(ctx);
  if (c.subscribed) await subscribeOk(ctx, session, pairs, 'conform-before-malformed');
  const notice = await ask(ctx, session, c.build(pairs), `method "error", code "${STATUS.INVALID_REQUEST}"`);
  expectNotice(ctx, notice, { method: METHOD.error, code: STATUS.INVALID_REQUEST, looseCode: true }, 'the reply');
}

export const malformedChecks: readonly Check[] = CASES.map(
  (c): Check => ({
    id: c.id,
    enforces: c.enforces,
    catches: c.catches,
    clause: c.clause,
    title: c.title,
    expectation: `an error notice: method "error", code "${STATUS.INVALID_REQUEST}"`,
    severity: 'must',
    tags: ['ws', 'session'],
    needs: ['ws'],
    run: (ctx) => judgeCase(ctx, c),
  }),
);
