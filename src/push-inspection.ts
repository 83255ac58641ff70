/**
 * Every push frame a check's sessions receive is held to the push-frame schema and the quote rules
 * (bid <= price <= ask), whichever check receives it: a service that sends a bad frame only on a
 * pair or a connection state the push checks never see still fails. Each violation names the
 * statement it breaks (a field of the push frame), so it fails the check that owns that statement
 * (src/ownership.ts) and the check whose session received the frame only cites it. Pure: no socket
 * here.
 */
import type { Violation } from './check.ts';
import type { Validator } from './validator.ts';
import type { JsonObject } from './transports/stream.ts';
import { priceProblems } from './quote-rules.ts';
import { schemaErrorRule } from './schema-rules.ts';
import type { StatementKey } from './statements.ts';

/** The statement the quote rules judge on the stream: the push frame's mid-price. */
export const PUSH_QUOTE_RULE: StatementKey = 'field:push:price';

/**
 * Push frames with problems a check lists in full; later pushes are only counted, in one closing
 * line (a flood stays cheap).
 */
export const MAX_LISTED_PUSHES = 5;

/** The expectations, worded as the push checks word theirs, so a frame judged twice reads as one violation. */
export const PUSH_EXPECTED = {
  schema: 'each push frame matches the push-frame schema',
  quote: 'bid <= price <= ask: the mid-price lies within the spread',
} as const;

/** Every violation of one push frame: its schema errors, then its quote problems. `text` is the frame as received. */
export function pushViolations(
  validator: Validator,
  value: JsonObject,
  text: string,
  redactValue: (v: unknown) => unknown = (v) => v,
): Violation[] {
  const shown = `push ${text.slice(0, 200)}`;
  const out: Violation[] = [];
  // Validated as received first (the common, valid case costs one pass); the messages come from
  // the redacted value, since the validator quotes values and a quoted key would escape redaction.
  if (!validator.validate('push-frame', value).ok) {
    for (const line of validator.validate('push-frame', redactValue(value)).errors)
      out.push({
        received: `${shown}: ${line}`,
        expected: PUSH_EXPECTED.schema,
        ...schemaErrorRule('push-frame', line),
      });
  }
  for (const why of priceProblems(value))
    out.push({ received: `${shown}: ${why}`, expected: PUSH_EXPECTED.quote, rule: PUSH_QUOTE_RULE });
  return out;
}

/** The push inspection of one check: `inspect` on every push its sessions receive, `finish` when it ends. */
export function pushInspector(
  validator: Validator,
  report: (v: Violation) => void,
  redactValue?: (v: unknown) => unknown,
): { inspect(push: { value: JsonObject; text: string }): void; finish(): void } {
  let listed = 0;
  let unlisted = 0;
  let finished = false;
  let lastRule: StatementKey | undefined;
  return {
    inspect(push) {
      if (finished) return;
      if (listed >= MAX_LISTED_PUSHES) {
        unlisted++;
        return;
      }
      const violations = pushViolations(validator, push.value, push.text, redactValue);
      if (violations.length === 0) return;
      listed++;
      for (const v of violations) report(v);
      lastRule = violations.at(-1)!.rule;
    },
    finish() {
      if (unlisted > 0)
        report({
          received: `${unlisted} more push frame(s) received after ${MAX_LISTED_PUSHES} with problems, not inspected`,
          expected: `${PUSH_EXPECTED.schema}; ${PUSH_EXPECTED.quote}`,
          ...(lastRule ? { rule: lastRule } : {}),
        });
      unlisted = 0;
      finished = true;
    },
  };
}

/**
 * Whether a violation is the push inspection's (or worded as it), so a caller can tell a check
 * failing only through it.
 */
export const isPushInspection = (v: Violation): boolean =>
  v.expected === PUSH_EXPECTED.schema ||
  v.expected === PUSH_EXPECTED.quote ||
  v.expected === `${PUSH_EXPECTED.schema}; ${PUSH_EXPECTED.quote}`;
