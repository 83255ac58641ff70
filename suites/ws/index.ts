/** The WebSocket suite (issue 5): every check of the stream, in a fixed order. */
import type { Check } from '../../src/check.ts';
import { pingChecks } from './ping.ts';

export const wsChecks: readonly Check[] = [
  ...pingChecks,
];
