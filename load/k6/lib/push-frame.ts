/** The push-frame rules the schema holds, kept dependency-free for k6 (no ajv in a k6 VU). */
import { DECIMAL_PATTERN } from '../../../src/spec.ts';

const DECIMAL = new RegExp(DECIMAL_PATTERN);

/** What is wrong with a push frame, one sentence each; empty when nothing is. */
export function pushFrameProblems(f: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (typeof f.code !== 'string') problems.push('code must be a string');
  for (const k of ['ask', 'bid', 'price'])
    if (typeof f[k] !== 'string' || !DECIMAL.test(f[k] as string)) problems.push(`${k} must be a decimal string`);
  for (const k of ['last_updated', 'sent_at'])
    if (f[k] !== undefined && !Number.isInteger(f[k])) problems.push(`${k} must be an integer`);
  return problems;
}
