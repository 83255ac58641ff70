/**
 * The WebSocket suite: every check of the stream, in a fixed order. The slow keep-alive
 * checks come first so that a runner taking checks in order starts them before the rest.
 */
import type { Check } from '../../src/check.ts';
import { keepaliveChecks } from './keepalive.ts';
import { handshakeChecks } from './handshake.ts';
import { limitChecks } from './limits.ts';
import { subscribeChecks } from './subscribe.ts';
import { errorNoticeChecks } from './error-notices.ts';
import { pushChecks } from './push.ts';
import { unsubscribeChecks } from './unsubscribe.ts';
import { pingChecks } from './ping.ts';
import { consistencyChecks } from './consistency.ts';
import { idLessChecks } from './id-less.ts';
import { malformedChecks } from './malformed.ts';
import { perKeyChecks } from './per-key.ts';
import { exploreCheck } from './explore/index.ts';

export const wsChecks: readonly Check[] = [
  ...keepaliveChecks,
  ...handshakeChecks,
  ...limitChecks,
  ...subscribeChecks,
  ...errorNoticeChecks,
  ...pushChecks,
  ...unsubscribeChecks,
  ...pingChecks,
  ...consistencyChecks,
  ...idLessChecks,
  ...malformedChecks,
  ...perKeyChecks,
  exploreCheck,
];
