/** The one registry: every check that exists, in the order it runs. Nothing else decides. */
import type { Check } from '../src/check.ts';
import { restChecks } from './rest/index.ts';
import { wsChecks } from './ws/index.ts';

export const CHECKS: readonly Check[] = [...restChecks, ...wsChecks];
