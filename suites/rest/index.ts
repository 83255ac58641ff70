/** The REST suite: every REST check, in a fixed order. */
import type { Check } from '../../src/check.ts';
import { authChecks } from './auth.ts';
import { catalogueChecks } from './catalogue.ts';
import { entitlementChecks } from './entitlements.ts';
import { envelopeChecks } from './envelope.ts';
import { observeChecks } from './observe.ts';
import { pairsChecks } from './pairs.ts';
import { priceChecks } from './price.ts';
import { probeChecks } from './probes.ts';
import { rateLimitChecks } from './rate-limit.ts';

export const restChecks: readonly Check[] = [
  ...envelopeChecks,
  ...authChecks,
  ...pairsChecks,
  ...priceChecks,
  ...catalogueChecks,
  ...entitlementChecks,
  ...probeChecks,
  ...rateLimitChecks,
  ...observeChecks,
];
