/**
 * How discovery reads what the target shows: status numbers, timestamp units, pagination
 * metadata, push cadence, the pair a refusal names (pure).
 */
import { TEXT } from '../spec.ts';

/** The `status_number` of a JSON body, if it has one. */
export const statusOf = (json: unknown): unknown =>
  json !== null && typeof json === 'object' ? (json as Record<string, unknown>).status_number : undefined;

/** `ms` or `s` by the size of an epoch timestamp; undefined when it is neither near now. */
export function timestampUnit(value: unknown, nowMs = Date.now()): 'ms' | 's' | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  const day = 86_400_000;
  if (Math.abs(value - nowMs) < 365 * day) return 'ms';
  if (Math.abs(value * 1000 - nowMs) < 365 * day) return 's';
  return undefined;
}

/** Pagination metadata beside `data` in a /v1/pairs answer (the spec does not show any). */
export function paginationFields(json: unknown): string[] {
  if (json === null || typeof json !== 'object') return [];
  const envelope = new Set(['status_number', 'ts', 'data', 'message']);
  return Object.keys(json as object).filter((k) => !envelope.has(k));
}

/** The pair `pair not found: X` names, if the notice names one. */
export function refusedPair(notice: Record<string, unknown>, pairs: readonly string[]): string | undefined {
  const message = typeof notice.message === 'string' ? notice.message : '';
  const named = message.startsWith(TEXT.pairNotFoundPrefix) ? message.slice(TEXT.pairNotFoundPrefix.length).trim() : '';
  return pairs.find((p) => p === named) ?? pairs.find((p) => message.includes(p));
}
