/**
 * What the records of several areas share: changes of an answer's body, the spelling of the key
 * header, and the reasons a dialect masks a fault.
 */
import { API_KEY_HEADER } from '../../src/spec.ts';
import { resolveConfig, type ReferenceConfig } from '../config.ts';
import { applyDialect } from '../dialect-config.ts';
import type { Dialect } from '../dialect.ts';
import { type keyHeader, keyHeaderSpelled } from '../key-header.ts';
import type { KeyRecord, ServiceView } from '../model.ts';
import type { Outcome } from '../seams.ts';

/** `out` with its envelope changed by `change` (a copy: key order kept, fields replaced in place). */
export const withBody = (out: Outcome, change: (body: Record<string, unknown>) => void): Outcome => {
  const body = { ...out.body };
  change(body);
  return { ...out, body };
};

/** `value` without its field `field` (a copy). */
export const without = (value: Record<string, unknown>, field: string): Record<string, unknown> => {
  const { [field]: _dropped, ...rest } = value;
  return rest;
};

/** The key of the header spelled exactly `X-API-Key` (`exact`) or spelled any other way. */
export const keyOfSpelling = (
  svc: ServiceView,
  req: Parameters<typeof keyHeader>[0],
  exact: boolean,
): KeyRecord | undefined => svc.keyFor(keyHeaderSpelled(req, (name) => (name === API_KEY_HEADER) === exact));

/** Whether the /v1/pairs parameter `name` is given and is not a positive integer. */
export const invalidPaging = (params: URLSearchParams, name: string): boolean => {
  const raw = params.get(name);
  return raw !== null && !/^[1-9][0-9]*$/.test(raw);
};

/** The reference's configuration under a dialect (its catalogue and allowances). */
export const referenceConfig = (d: Readonly<Dialect>): ReferenceConfig => applyDialect(resolveConfig({}), d);

/** Masks a rule that needs `n` active pairs in the catalogue. */
export function fewerPairsThan(d: Readonly<Dialect>, n: number): string | undefined {
  const size = referenceConfig(d).pairs.filter((p) => (p.state ?? 'active') === 'active').length;
  return size < n ? `a catalogue of ${size} active pairs has fewer than the ${n} the rule needs` : undefined;
}
